//go:build unix

package library

import "syscall"

// syscallUmask sets the process umask (0 shows the modes pflow asks for).
func syscallUmask(mask int) int { return syscall.Umask(mask) }
