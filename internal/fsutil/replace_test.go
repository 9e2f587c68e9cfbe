package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// ReplaceExisting replaces a file that is there (leaving no temp file) and
// refuses, with fs.ErrNotExist, to make one that is not: a file deleted
// while its new content was prepared stays deleted.
func TestReplaceExisting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.pflow.md")
	os.WriteFile(path, []byte("old"), 0o644)
	if err := ReplaceExisting(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("content %q", b)
	}
	os.Remove(path)
	if err := ReplaceExisting(path, []byte("again"), 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("replacing a deleted file: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left in the directory: %v", ents)
	}
}
