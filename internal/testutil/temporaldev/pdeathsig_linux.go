package temporaldev

import (
	"os/exec"
	"syscall"
)

// setPdeathsig has the kernel kill cmd's process if the test process dies,
// so that a server never outlives the test that started it.
func setPdeathsig(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
