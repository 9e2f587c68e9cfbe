//go:build unix

package proc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bound is the most any test here waits for something that should be prompt.
const bound = 10 * time.Second

// readPid waits for a pid file written by a child script.
func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("bad pid file %q", b)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("child never wrote %s", path)
	return 0
}

// waitGone asserts that pid disappears (or becomes a zombie) within bound.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		if !Alive(pid) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("%s (pid %d) is still running", what, pid)
}

// grandchildScript starts a backgrounded sleep that holds stdout, records its
// pid, then sleeps itself.
func grandchildScript(pidFile string) string {
	return "sleep 300 & echo $! > " + pidFile + "; echo started; sleep 300"
}

func TestRunTimeoutKillsGrandchild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	var out CappedBuffer
	cmd := exec.Command("/bin/sh", "-c", grandchildScript(pidFile))
	cmd.Stdout = &out
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), cmd, Options{Timeout: 300 * time.Millisecond, Grace: 200 * time.Millisecond})
	}()
	grandchild := readPid(t, pidFile)
	var err error
	select {
	case err = <-done:
	case <-time.After(bound):
		t.Fatal("Run did not return after the timeout (a grandchild holding stdout blocks Wait)")
	}
	var te *TimeoutError
	if !errors.As(err, &te) || te.Timeout != 300*time.Millisecond {
		t.Fatalf("err = %v, want *TimeoutError(300ms)", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) || IsCanceled(err) || !IsTimeout(err) {
		t.Fatalf("timeout misclassified: %v", err)
	}
	if got := out.String(); got != "started\n" {
		t.Fatalf("stdout = %q, want output captured before the timeout", got)
	}
	waitGone(t, grandchild, "grandchild")
}

func TestRunCancelKillsGrandchild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.Command("/bin/sh", "-c", grandchildScript(pidFile))
	cmd.Stdout = &CappedBuffer{}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cmd, Options{Timeout: time.Minute, Grace: 200 * time.Millisecond}) }()
	grandchild := readPid(t, pidFile)
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(bound):
		t.Fatal("Run did not return after cancel")
	}
	if !errors.Is(err, context.Canceled) || !IsCanceled(err) || IsTimeout(err) {
		t.Fatalf("err = %v, want a CanceledError wrapping context.Canceled", err)
	}
	waitGone(t, grandchild, "grandchild")
	waitGone(t, cmd.Process.Pid, "child")
}

func TestRunAlreadyCanceledDoesNotStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := exec.Command("/bin/sh", "-c", "touch "+marker)
	if err := Run(ctx, cmd, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("command ran although the context was already cancelled")
	}
}

func TestRunBackgroundJobDoesNotBlockAndIsReaped(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	var out CappedBuffer
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 & echo $! > "+pidFile+"; echo hi")
	cmd.Stdout = &out
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), cmd, Options{WaitDelay: time.Minute}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(bound):
		t.Fatal("Run blocked on a background job holding stdout")
	}
	if out.String() != "hi\n" {
		t.Fatalf("stdout = %q", out.String())
	}
	waitGone(t, readPid(t, pidFile), "background job")
}

func TestRunKeepGroupLeavesBackgroundJob(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $! > "+pidFile)
	if err := Run(context.Background(), cmd, Options{KeepGroup: true}); err != nil {
		t.Fatal(err)
	}
	pid := readPid(t, pidFile)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if !Alive(pid) {
		t.Fatal("KeepGroup: background job was killed")
	}
}

func TestRunEscalatesToSIGKILL(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	// The shell ignores SIGTERM; only the SIGKILL after grace stops it.
	cmd := exec.Command("/bin/sh", "-c", "trap '' TERM; echo $$ > "+ready+"; while :; do sleep 0.05; done")
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), cmd, Options{Timeout: 200 * time.Millisecond, Grace: 200 * time.Millisecond})
	}()
	readPid(t, ready)
	select {
	case err := <-done:
		if !IsTimeout(err) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(bound):
		t.Fatal("a child ignoring SIGTERM was never killed")
	}
	if sig, ok := Signal(cmd); !ok || sig != int(syscall.SIGKILL) {
		t.Fatalf("signal = %d,%v, want SIGKILL", sig, ok)
	}
	if ExitCode(cmd) != 128+9 {
		t.Fatalf("ExitCode = %d", ExitCode(cmd))
	}
}

func TestRunExitCodeAndStreams(t *testing.T) {
	tests := []struct {
		name       string
		script     string
		stdin      string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"success", "echo out; echo err >&2", "", 0, "out\n", "err\n"},
		{"exit code", "echo partial; exit 3", "", 3, "partial\n", ""},
		{"stdin", "tr a-z A-Z", "hello", 0, "HELLO", ""},
		{"stdin not read", "exit 0", strings.Repeat("x", 1<<20), 0, "", ""},
		{"killed by signal", "kill -9 $$", "", 128 + 9, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr CappedBuffer
			cmd := exec.Command("/bin/sh", "-c", tt.script)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if tt.stdin != "" {
				cmd.Stdin = strings.NewReader(tt.stdin)
			}
			err := Run(context.Background(), cmd, Options{Timeout: bound})
			if tt.wantCode == 0 && err != nil {
				t.Fatalf("err = %v", err)
			}
			if tt.wantCode != 0 {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatalf("err = %v, want *exec.ExitError", err)
				}
			}
			if got := ExitCode(cmd); got != tt.wantCode {
				t.Errorf("exit code = %d, want %d", got, tt.wantCode)
			}
			if stdout.String() != tt.wantStdout || stderr.String() != tt.wantStderr {
				t.Errorf("stdout=%q stderr=%q", stdout.String(), stderr.String())
			}
		})
	}
}

func TestRunLargeStdinRoundTrip(t *testing.T) {
	in := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, far beyond a pipe buffer
	var out CappedBuffer
	cmd := exec.Command("cat")
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stdout = &out
	if err := Run(context.Background(), cmd, Options{Timeout: bound}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), in) {
		t.Fatalf("got %d bytes back, want %d", len(out.Bytes()), len(in))
	}
}

func TestRunSharedWriterForStdoutAndStderr(t *testing.T) {
	var both CappedBuffer
	cmd := exec.Command("/bin/sh", "-c", "echo a; echo b >&2; echo c")
	cmd.Stdout, cmd.Stderr = &both, &both
	if err := Run(context.Background(), cmd, Options{Timeout: bound}); err != nil {
		t.Fatal(err)
	}
	if both.String() != "a\nb\nc\n" {
		t.Fatalf("combined = %q", both.String())
	}
}

func TestRunStartError(t *testing.T) {
	cmd := exec.Command("/nonexistent/pflow-test-binary")
	cmd.Stdout = &CappedBuffer{}
	err := Run(context.Background(), cmd, Options{})
	var se *StartError
	if !errors.As(err, &se) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want *StartError wrapping ErrNotExist", err)
	}
}

func TestTerminateStopsGroupOfLongLivedChild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("/bin/sh", "-c", "trap '' TERM; sleep 300 & echo $! > "+pidFile+"; wait")
	SetProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	grandchild := readPid(t, pidFile)
	Terminate(cmd, 300*time.Millisecond)
	select {
	case <-waited:
	case <-time.After(bound):
		t.Fatal("leader still running after Terminate")
	}
	waitGone(t, grandchild, "grandchild")
	// Terminating again is harmless.
	Terminate(cmd, time.Second)
}

func TestKillGroupMissingGroupIsNotAnError(t *testing.T) {
	cmd := exec.Command("true")
	SetProcessGroup(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := KillGroup(cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatalf("KillGroup on a finished group: %v", err)
	}
	if err := KillGroup(0, syscall.SIGKILL); err == nil {
		t.Fatal("KillGroup(0) must refuse: it would signal our own group")
	}
}

func TestRunEscapedDescendantCannotBlock(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	var out CappedBuffer
	// The descendant leaves the process group (setsid) but keeps stdout.
	// The pid file is written after setsid, and the shell waits for it.
	cmd := exec.Command("/bin/sh", "-c", "setsid sh -c 'echo $$ > "+pidFile+".tmp; mv "+pidFile+".tmp "+pidFile+"; exec sleep 300' & "+
		"while [ ! -s "+pidFile+" ]; do sleep 0.01; done; echo hi")
	cmd.Stdout = &out
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), cmd, Options{WaitDelay: 300 * time.Millisecond}) }()
	pid := readPid(t, pidFile)
	defer syscall.Kill(pid, syscall.SIGKILL)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(bound):
		t.Fatal("Run blocked on a descendant that escaped the group")
	}
	// It left the group, but it carries the step's token: without a
	// tracker in the context, Run stops it before returning.
	if Alive(pid) {
		t.Fatal("the escaped descendant outlived the step")
	}
	if out.String() != "hi\n" {
		t.Fatalf("stdout = %q", out.String())
	}
}

func TestTerminateNeverStartedIsNoop(t *testing.T) {
	Terminate(nil, time.Second)
	Terminate(exec.Command("true"), time.Second) // never started: no process, no signal
	if ExitCode(exec.Command("true")) != -1 {
		t.Fatal("ExitCode of a command that never ran must be -1")
	}
}

// Exited sees a child's exit before it is reaped, without reaping it (the
// goroutine waiting for the child still gets its status), and after.
func TestExitedSeesAnUnreapedChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Exited knows of an exit before it is reaped only on Linux")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if Exited(pid) {
		t.Fatal("a running child is reported exited")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	deadline := time.Now().Add(30 * time.Second)
	for !Exited(pid) {
		if time.Now().After(deadline) {
			t.Fatal("a killed child is not reported exited")
		}
		time.Sleep(5 * time.Millisecond)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("Wait after Exited: %v; want the child's status (killed)", err)
	}
	if !Exited(pid) {
		t.Error("a reaped child is not reported exited")
	}
}
