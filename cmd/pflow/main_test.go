package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/testutil/pflowbin"
)

// buildPflow returns the real binary, built once for every test package.
func buildPflow(t *testing.T) string {
	t.Helper()
	return pflowbin.Path(t)
}

// TestCtrlCStopsTheRunAndItsChildren sends SIGINT to pflow while a shell
// step runs a process tree; pflow must exit 130, say it was interrupted,
// leave no process behind and still write the trace.
func TestCtrlCStopsTheRunAndItsChildren(t *testing.T) {
	bin := buildPflow(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	wf := filepath.Join(dir, "slow.pflow.md")
	os.WriteFile(wf, []byte(`# Slow
Starts a process tree that would run for minutes.
## Steps
### tree
Child and grandchild that record their pids.
- type: shell
- timeout: 600
`+"```shell command\nsh -c 'echo $$ >> "+pidFile+"; sleep 300' &\necho $$ >> "+pidFile+"\nsleep 300\n```\n"), 0o644)
	home := filepath.Join(dir, "home")
	cmd := exec.Command(bin, wf)
	cmd.Env = append(os.Environ(), "PFLOW_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until both processes have started.
	var pids []int
	deadline := time.Now().Add(20 * time.Second)
	for len(pids) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		pids = readPids(pidFile)
	}
	if len(pids) < 2 {
		cmd.Process.Kill()
		t.Fatalf("the workflow's processes did not start: %s", stderr.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("exit: %v, want 130; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("pflow did not exit after SIGINT")
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr should say the run was interrupted:\n%s", stderr.String())
	}
	for _, pid := range pids {
		waitGone(t, pid)
	}
	traces, _ := filepath.Glob(filepath.Join(home, "debug", "workflow-trace-slow-*.json"))
	if len(traces) != 1 {
		t.Errorf("want one trace for the interrupted run, got %v", traces)
	}
}

func readPids(path string) []int {
	data, _ := os.ReadFile(path)
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// waitGone fails unless pid disappears (or is a zombie) within a few seconds.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("process %d is still running after the run ended", pid)
	syscall.Kill(pid, syscall.SIGKILL)
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// State is the field after the ")"; Z means zombie (already dead).
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i > 0 && i+2 < len(s) && s[i+2] == 'Z' {
		return false
	}
	return true
}
