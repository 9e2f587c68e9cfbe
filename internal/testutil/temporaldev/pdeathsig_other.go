//go:build !linux

package temporaldev

import "os/exec"

// setPdeathsig does nothing: only Linux has a parent-death signal. The
// server is still stopped by the test's cleanup.
func setPdeathsig(cmd *exec.Cmd) {}
