//go:build !unix

package proc

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process groups are a Unix feature; elsewhere only the child itself is
// signalled (best effort, so the package still builds).

const (
	sigTerm = syscall.Signal(0xf)
	sigKill = syscall.Signal(0x9)
)

// SetProcessGroup is a no-op on this platform.
func SetProcessGroup(cmd *exec.Cmd) {}

// KillGroup kills the process pid (no process groups on this platform).
func KillGroup(pid int, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	_ = p.Kill()
	return nil
}

// GroupAlive is not supported on this platform and reports false.
func GroupAlive(pid int) bool { return false }

// Alive is not supported on this platform and reports false.
func Alive(pid int) bool { return false }

// Terminate kills cmd's process.
func Terminate(cmd *exec.Cmd, grace time.Duration) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Kill()
}

// TerminateTree kills cmd's process (see Terminate).
func TerminateTree(cmd *exec.Cmd, token string, grace time.Duration) { Terminate(cmd, grace) }

func signaled(ps *os.ProcessState) (int, bool) { return 0, false }
