package fsutiltest

import (
	"os"
	"syscall"
	"testing"
)

// Inode returns the inode number of path (to tell a re-used file or
// directory from a new one).
func Inode(t testing.TB, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}
