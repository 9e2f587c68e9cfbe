package proc

import (
	"syscall"
	"unsafe"
)

// Exited reports whether the child process pid has exited, whether or not
// it has been reaped yet: waitid with WNOWAIT sees a zombie without reaping
// it, so the goroutine that waits for the child still gets its status. A
// pid that is no longer a child (already reaped) has exited too.
func Exited(pid int) bool {
	const pPID = 1 // P_PID
	// siginfo_t: si_signo is its first field; the kernel zeroes the struct
	// when no child is waitable.
	var info struct {
		signo int32
		_     [124]byte
	}
	_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info)),
		syscall.WEXITED|syscall.WNOHANG|syscall.WNOWAIT, 0, 0)
	if errno == syscall.ECHILD {
		return true
	}
	return errno == 0 && info.signo == int32(syscall.SIGCHLD)
}
