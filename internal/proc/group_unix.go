//go:build unix

package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// SetProcessGroup makes cmd's process the leader of a new process group, so
// that KillGroup and Terminate reach everything it starts. Existing
// SysProcAttr settings are kept.
func SetProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
}

// KillGroup sends sig to every process in the group led by pid. A group
// that no longer exists is not an error.
func KillGroup(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return errors.New("proc: invalid process group id")
	}
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// GroupAlive reports whether any process (including an unreaped zombie) is
// left in the group led by pid.
func GroupAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(-pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Alive reports whether a process with this pid exists and is not a zombie
// (on Linux the zombie state is read from /proc; elsewhere a zombie counts as
// alive).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat"); err == nil {
		// "pid (comm) S ..." — comm may contain spaces and parens.
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] == ')' {
				if i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X') {
					return false
				}
				break
			}
		}
	}
	return true
}

// Terminate stops cmd's process group: SIGTERM to the group, a wait of up to
// grace for the leader to exit, then SIGKILL to the group (which also takes
// out descendants that ignored SIGTERM or outlived the leader).
//
// On Linux an exited, unreaped leader counts as exited; elsewhere the leader
// must be reaped, so callers should have a goroutine blocked in cmd.Wait (as
// every long-lived child has), or Terminate waits the full grace. Calling it
// for a process that was never started, or whose group is gone, does nothing.
func Terminate(cmd *exec.Cmd, grace time.Duration) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	pid := cmd.Process.Pid
	if !GroupAlive(pid) {
		return
	}
	_ = KillGroup(pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	poll := time.Millisecond
	for time.Now().Before(deadline) && Alive(pid) {
		time.Sleep(poll)
		if poll < 50*time.Millisecond {
			poll *= 2
		}
	}
	_ = KillGroup(pid, syscall.SIGKILL)
}

// TerminateTree is Terminate for a child marked with token (MarkCmd): the
// descendants that left the group get SIGTERM with it, the wait of up to
// grace lasts until the leader and every marked process are gone, and the
// SIGKILL reaches the marked ones too (KillMarked). An empty token is plain
// Terminate.
func TerminateTree(cmd *exec.Cmd, token string, grace time.Duration) {
	if token == "" {
		Terminate(cmd, grace)
		return
	}
	if cmd == nil || cmd.Process == nil {
		return
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(grace)
	_ = KillGroup(pid, syscall.SIGTERM)
	signalMarked(token, syscall.SIGTERM, pid)
	poll := time.Millisecond
	for time.Now().Before(deadline) && Alive(pid) {
		time.Sleep(poll)
		if poll < 50*time.Millisecond {
			poll *= 2
		}
	}
	waitMarkedGone(token, time.Until(deadline))
	_ = KillGroup(pid, syscall.SIGKILL)
	KillMarked(token)
}

func signaled(ps *os.ProcessState) (int, bool) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return int(ws.Signal()), true
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
