//go:build unix

package file

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestMoveFileAcrossDevices(t *testing.T) {
	other := "/dev/shm"
	srcDir := t.TempDir()
	var a, b syscall.Stat_t
	if syscall.Stat(srcDir, &a) != nil || syscall.Stat(other, &b) != nil || a.Dev == b.Dev {
		t.Skip("no second file system available (need /dev/shm on another device than the temp dir)")
	}
	dstDir, err := os.MkdirTemp(other, "pflow-move-*")
	if err != nil {
		t.Skipf("cannot use %s: %v", other, err)
	}
	defer os.RemoveAll(dstDir)
	write(t, filepath.Join(srcDir, "a.txt"), "cross")
	dst := filepath.Join(dstDir, "b.txt")
	for _, overwrite := range []bool{false, true} {
		res, err := call(t, "move-file", srcDir, map[string]any{"source_path": "a.txt", "dest_path": dst, "overwrite": overwrite})
		if err != nil || res.Action != "" || res.Outputs["moved"] != true {
			t.Fatalf("overwrite=%v: res=%+v err=%v", overwrite, res, err)
		}
		if readBack(t, dst) != "cross" {
			t.Fatal("content not moved")
		}
		if _, err := os.Stat(filepath.Join(srcDir, "a.txt")); !os.IsNotExist(err) {
			t.Fatal("source not removed")
		}
		write(t, filepath.Join(srcDir, "a.txt"), "cross")
		if !overwrite {
			os.Remove(dst)
		}
	}
}
