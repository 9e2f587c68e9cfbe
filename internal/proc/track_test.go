//go:build linux

package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// escapeScripts start a descendant that leaves the step's process group and
// ignores SIGTERM, write its pid to $1, then finish as the case says.
var escapeScripts = map[string]string{
	// setsid: a new session, as a daemon (or Node's detached: true) does.
	"setsid": `setsid sh -c 'trap "" TERM; echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 300' "$1" &`,
	// Double fork: the intermediate calls setsid, starts the descendant and
	// exits, so the descendant is orphaned outside the group.
	"double fork": `setsid sh -c '(trap "" TERM; echo $$ > /dev/null; sh -c "echo \$\$ > \"$0.tmp\"; mv \"$0.tmp\" \"$0\"; exec sleep 300" "$0" &) ; exit 0' "$1" &`,
}

// endings are how the step ends once its descendant has escaped.
var endings = map[string]string{
	"success": `exit 0`,
	"failure": `exit 3`,
	"timeout": `sleep 300`,
	"cancel":  `sleep 300`,
}

// TestEscapedDescendantsNeverOutliveTheRun: whatever way a descendant leaves
// the group, and however the step ends, nothing is left once the run's
// tracker is closed; a timeout or a cancellation stops the descendant with
// the step itself, before Run returns.
func TestEscapedDescendantsNeverOutliveTheRun(t *testing.T) {
	for escName, esc := range escapeScripts {
		for endName, end := range endings {
			t.Run(escName+"/"+endName, func(t *testing.T) {
				t.Parallel()
				pidFile := filepath.Join(t.TempDir(), "pid")
				script := esc + ` while [ ! -s "$1" ]; do sleep 0.01; done; ` + end
				cmd := exec.Command("/bin/sh", "-c", script, "sh", pidFile)
				runCtx, tr := Track(context.Background())
				defer tr.Close()
				ctx, cancel := context.WithCancel(runCtx)
				defer cancel()
				opts := Options{Grace: 200 * time.Millisecond}
				if endName == "timeout" {
					opts.Timeout = 500 * time.Millisecond
				}
				done := make(chan error, 1)
				go func() { done <- Run(ctx, cmd, opts) }()
				pid := readPid(t, pidFile)
				defer syscall.Kill(pid, syscall.SIGKILL)
				if endName == "cancel" {
					cancel()
				}
				var err error
				select {
				case err = <-done:
				case <-time.After(bound):
					t.Fatal("Run did not return")
				}
				var te *TimeoutError
				var ce *CanceledError
				switch endName {
				case "timeout":
					if !errors.As(err, &te) {
						t.Fatalf("err = %v, want a timeout", err)
					}
				case "cancel":
					if !errors.As(err, &ce) {
						t.Fatalf("err = %v, want a cancellation", err)
					}
				}
				if endName == "timeout" || endName == "cancel" {
					// Stopped with the step: SIGTERM is ignored, so SIGKILL.
					if Alive(pid) {
						t.Fatalf("descendant %d survived the stopped step", pid)
					}
					return
				}
				if !Alive(pid) {
					t.Fatalf("descendant %d was stopped by the step; under a tracker it lives until the run ends", pid)
				}
				// At least the descendant; under load the shell that forked
				// it may not have exited yet, and goes too.
				if n := tr.Close(); n < 1 {
					t.Errorf("tracker killed %d processes, want the escaped descendant at least", n)
				}
				if Alive(pid) {
					t.Fatalf("descendant %d outlived the run", pid)
				}
				if left := MarkedPIDs(tr.Token()); len(left) != 0 {
					t.Fatalf("processes left with the run's token: %v", left)
				}
			})
		}
	}
}

// A tracker under which nothing was started closes without a scan, and
// nested trackers mark processes with both tokens.
func TestTrackerNesting(t *testing.T) {
	outerCtx, outer := Track(context.Background())
	innerCtx, inner := Track(outerCtx)
	cmd := exec.Command("sleep", "300")
	token := MarkCmd(innerCtx, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	go cmd.Wait()
	for _, tok := range []string{outer.Token(), inner.Token(), token} {
		if pids := MarkedPIDs(tok); len(pids) != 1 || pids[0] != cmd.Process.Pid {
			t.Fatalf("token %s marks %v, want [%d]", tok, pids, cmd.Process.Pid)
		}
	}
	if !inner.used.Load() || !outer.used.Load() {
		t.Fatal("starting a process must mark every enclosing tracker as used")
	}
	if n := outer.Close(); n != 1 {
		t.Fatalf("outer tracker killed %d, want 1", n)
	}
	if n := inner.Close(); n != 0 {
		t.Fatalf("inner tracker killed %d after the outer one, want 0", n)
	}
	_, idle := Track(context.Background())
	if idle.used.Load() {
		t.Fatal("an idle tracker is marked used")
	}
	if n := idle.Close(); n != 0 {
		t.Fatal(n)
	}
}

// MemoryMeter counts a marked descendant outside the group.
func TestMemoryMeterCountsEscapedDescendant(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The descendant holds ~64 MB of touched memory outside the group
	// until it is killed: tail keeps what it read while its input stays
	// open (sleep holds it), so a meter that samples late still sees it.
	script := `setsid sh -c 'echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; { head -c 67108864 /dev/zero; exec sleep 300; } | tail' "$1" & while [ ! -s "$1" ]; do sleep 0.01; done; sleep 300`
	cmd := exec.Command("/bin/sh", "-c", script, "sh", pidFile)
	SetProcessGroup(cmd)
	token := MarkCmd(context.Background(), cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { KillGroup(cmd.Process.Pid, syscall.SIGKILL); KillMarked(token); cmd.Wait() }()
	readPid(t, pidFile)
	groupOnly := NewMemoryMeter("", cmd.Process.Pid)
	tree := NewMemoryMeter(token, cmd.Process.Pid)
	deadline := time.Now().Add(bound)
	for tree.RSS()-groupOnly.RSS() < 32<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the meter never counted the escaped descendant's memory (tree %d, group %d)", tree.RSS(), groupOnly.RSS())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// MemoryMeter counts pages that processes share once: a parent that touched
// 96 MB and forked three children (copy-on-write, nothing written since) is
// ~96 MB, not 4 × 96 MB as the sum of their RSS says. A browser's renderers
// share most of their pages the same way, and a server was stopped for a
// limit it did not reach.
func TestMemoryMeterCountsSharedPagesOnce(t *testing.T) {
	dir := t.TempDir()
	script := `import os, sys, time
buf = bytearray(96 << 20)
for i in range(0, len(buf), 4096):
    buf[i] = 1
for _ in range(3):
    if os.fork() == 0:
        time.sleep(300)
        os._exit(0)
open(sys.argv[1] + ".tmp", "w").close()
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(300)
`
	ready := filepath.Join(dir, "ready")
	cmd := exec.Command("python3", "-c", script, ready)
	SetProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { KillGroup(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
	deadline := time.Now().Add(bound)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the forking process never got ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	rss := NewMemoryMeter("", cmd.Process.Pid).RSS()
	if rss < 90<<20 || rss > 200<<20 {
		t.Fatalf("the tree of 4 processes sharing 96 MB measures %d MB, want about 96", rss>>20)
	}
}
