//go:build linux

package proc

import (
	"context"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"
)

// A process caught in the middle of an exec shows an empty environment for
// an instant: the tracker's Close looks again instead of missing it. Here
// the first reads of the marked process's environment come back empty, as
// they would mid-exec.
func TestCloseReadsAgainAProcessCaughtMidExec(t *testing.T) {
	ctx, tr := Track(context.Background())
	defer tr.Close()
	cmd := exec.CommandContext(context.Background(), "sleep", "300")
	cmd.Env = MarkEnv(nil, ContextTokens(ctx)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	go cmd.Wait()
	tr.used.Store(true)
	pid := strconv.Itoa(cmd.Process.Pid)
	var blanks atomic.Int32
	real := environOf
	environOf = func(p string) ([]byte, error) {
		if p == pid && blanks.Add(1) <= 2 {
			return nil, nil // mid-exec
		}
		return real(p)
	}
	t.Cleanup(func() { environOf = real })
	if n := tr.Close(); n != 1 {
		t.Fatalf("Close killed %d processes, want the one read as blank at first", n)
	}
	if Alive(cmd.Process.Pid) {
		t.Fatal("the process outlived the tracker")
	}
}
