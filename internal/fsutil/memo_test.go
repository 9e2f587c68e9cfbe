package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Memo decodes a file once per version: an unchanged file is served from
// memory; a file replaced by rename, rewritten in place to the same size
// with its mtime put back, or changed in any other way is read again; a
// version too new to trust, and a decode error, are never remembered.
func TestMemoDecodesEachVersionOnce(t *testing.T) {
	defer func(d time.Duration) { settled = d }(settled)
	settled = 0
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	decodes := 0
	var m Memo[string]
	load := func() string {
		t.Helper()
		v, err := m.Load(path, func(b []byte) (string, error) {
			decodes++
			if string(b) == "bad" {
				return "", errors.New("bad content")
			}
			return string(b), nil
		})
		if err != nil && err.Error() != "bad content" {
			t.Fatal(err)
		}
		return v
	}
	os.WriteFile(path, []byte("one"), 0o600)
	if first, second := load(), load(); first != "one" || second != "one" || decodes != 1 {
		t.Fatalf("an unchanged file was decoded %d times (loads %q, %q)", decodes, first, second)
	}

	tmp := path + ".tmp" // replaced by rename: same size, new inode
	os.WriteFile(tmp, []byte("two"), 0o600)
	st, _ := os.Stat(path)
	os.Chtimes(tmp, st.ModTime(), st.ModTime())
	os.Rename(tmp, path)
	if got := load(); got != "two" {
		t.Fatalf("after a replace: %q", got)
	}

	st, _ = os.Stat(path) // rewritten in place, same size, mtime put back
	os.WriteFile(path, []byte("six"), 0o600)
	os.Chtimes(path, st.ModTime(), st.ModTime())
	if got := load(); got != "six" {
		t.Fatalf("after an in-place rewrite with the old mtime: %q", got)
	}

	os.WriteFile(path, []byte("bad"), 0o600)
	n := decodes
	load()
	load()
	if decodes != n+2 {
		t.Fatal("a decode error was remembered")
	}
	os.Remove(path)
	if _, err := m.Load(path, func(b []byte) (string, error) { return string(b), nil }); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}

	settled = time.Hour // a version newer than that is read every time
	os.WriteFile(path, []byte("new"), 0o600)
	n = decodes
	load()
	load()
	if decodes != n+2 {
		t.Fatal("a version written just now was remembered")
	}
}
