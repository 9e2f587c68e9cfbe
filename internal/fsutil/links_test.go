package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// ResolveLinks resolves links as the kernel does: relative and absolute
// targets, chains, '..' after a link (taken from the link's target), and a
// part that does not exist yet; check sees every link on the way, chains
// included, and its error stops the walk.
func TestResolveLinks(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755)
	os.Symlink("a/b", filepath.Join(dir, "rel"))
	os.Symlink(filepath.Join(dir, "rel"), filepath.Join(dir, "abs"))
	for in, c := range map[string]struct {
		want  string
		links []string
	}{
		"rel":               {"a/b", []string{"rel"}},
		"abs/new/file":      {"a/b/new/file", []string{"abs", "rel"}},
		"abs/../x":          {"a/x", []string{"abs", "rel"}},
		"rel/./../b/../../": {"", []string{"rel"}},
		"a/b":               {"a/b", nil},
	} {
		var seen []string
		got, err := ResolveLinks(dir+"/"+in, func(link, in string, info fs.FileInfo) error { // not cleaned, as the kernel reads it
			rel, _ := filepath.Rel(dir, link)
			seen = append(seen, rel)
			if in != dir || info.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("check(%s, %s, %v)", link, in, info.Mode())
			}
			return nil
		})
		if err != nil || got != filepath.Join(dir, c.want) || len(seen) != len(c.links) {
			t.Errorf("%s: %q %v (links %v), want %q (links %v)", in, got, err, seen, filepath.Join(dir, c.want), c.links)
		}
	}
	stop := errors.New("stop")
	if _, err := ResolveLinks(filepath.Join(dir, "abs"), func(string, string, fs.FileInfo) error { return stop }); err != stop {
		t.Errorf("check's error: %v", err)
	}
	os.Symlink("loop", filepath.Join(dir, "loop"))
	if got, err := ResolveLinks(filepath.Join(dir, "loop"), nil); err != nil || got != filepath.Join(dir, "loop") {
		t.Errorf("a loop: %q %v, want the path as it is", got, err)
	}
}
