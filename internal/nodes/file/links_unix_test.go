//go:build unix

package file

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pflow-go/pflow/internal/fsutil"
)

// plantedLink makes a symlink to target that another user planted in a
// sticky folder every user may write, and returns it: as root, one owned by
// nobody in a fresh sticky folder; otherwise, one of ours in the system's
// sticky temporary folder (/tmp) while the steps take us for another user.
func plantedLink(t *testing.T, target string) string {
	t.Helper()
	if os.Geteuid() == 0 {
		shared := filepath.Join(t.TempDir(), "shared")
		os.Mkdir(shared, 0o700)
		os.Chmod(shared, 0o777|os.ModeSticky)
		link := filepath.Join(shared, "link")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(link, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		return link
	}
	tmp := os.TempDir()
	st, err := os.Stat(tmp)
	if err != nil || st.Mode()&os.ModeSticky == 0 || st.Mode().Perm()&0o002 == 0 || int(st.Sys().(*syscall.Stat_t).Uid) == os.Geteuid() {
		t.Skipf("%s is not a sticky folder of another user that every user may write", tmp)
	}
	link := filepath.Join(tmp, "pflow-planted-"+filepath.Base(t.TempDir()))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(link) })
	me := os.Geteuid()
	fsutil.Geteuid = func() int { return me + 1 }
	t.Cleanup(func() { fsutil.Geteuid = os.Geteuid })
	return link
}

// A symlink another user planted in a shared sticky folder (/tmp) is not
// followed by any file step, whatever fs.protected_symlinks says: the step
// fails before touching anything and names the link, its owner and the
// folder. Deleting the link itself removes the link.
func TestPlantedLinkIsNotFollowed(t *testing.T) {
	mine := t.TempDir()
	target := filepath.Join(mine, "target.txt")
	write(t, target, "mine")
	link := plantedLink(t, target)
	dirLink := plantedLink(t, mine)
	src := filepath.Join(mine, "src.txt")
	write(t, src, "src")
	for _, c := range []struct {
		typ    string
		params map[string]any
		link   string
	}{
		{"write-file", map[string]any{"file_path": link, "content": "theirs"}, link},
		{"write-file", map[string]any{"file_path": link, "content": "theirs", "append": true}, link},
		{"write-file", map[string]any{"file_path": dirLink + "/new.txt", "content": "theirs"}, dirLink},
		{"read-file", map[string]any{"file_path": link}, link},
		{"copy-file", map[string]any{"source_path": src, "dest_path": dirLink + "/"}, dirLink},
		{"copy-file", map[string]any{"source_path": link, "dest_path": filepath.Join(mine, "copy.txt")}, link},
		{"move-file", map[string]any{"source_path": src, "dest_path": dirLink + "/moved.txt"}, dirLink},
		{"delete-file", map[string]any{"file_path": dirLink + "/target.txt", "confirm": true}, dirLink},
	} {
		res, err := call(t, c.typ, mine, c.params)
		msg, _ := res.Outputs["error"].(string)
		if err != nil || res.Action != "error" || !res.Permanent || !strings.Contains(msg, "the path goes through the symlink "+c.link+", which ") ||
			!strings.Contains(msg, "a folder every user may write") || !strings.Contains(msg, "(uid ") {
			t.Errorf("%s %v: res=%+v err=%v, want the planted link refused", c.typ, c.params, res, err)
		}
	}
	if readBack(t, target) != "mine" {
		t.Fatalf("the target was written through the planted link")
	}
	if es, _ := os.ReadDir(mine); len(es) != 2 {
		t.Fatalf("the folder the planted link leads to changed: %v", es)
	}
	res, err := call(t, "delete-file", mine, map[string]any{"file_path": link, "confirm": true})
	if err != nil || res.Outputs["deleted"] != true {
		t.Fatalf("deleting the planted link itself: res=%+v err=%v", res, err)
	}
	if _, err := os.Lstat(link); err == nil || readBack(t, target) != "mine" {
		t.Fatalf("the link was not removed, or its target was")
	}
}
