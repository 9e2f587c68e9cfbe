//go:build !linux

package proc

import (
	"syscall"
	"time"
)

// Outside Linux there is no /proc to scan for TrackingVar: processes are
// still marked, but only their process group is stopped (see Run). The
// functions below are no-ops so the package builds everywhere.

// MarkedPIDs returns nil on this platform.
func MarkedPIDs(token string) []int { return nil }

// KillMarked does nothing on this platform and returns 0.
func KillMarked(token string) int { return 0 }

// ReapMarked does nothing on this platform and returns 0.
func ReapMarked(token string, grace time.Duration) int { return 0 }

func killAny(tokens map[string]bool) int { return 0 }

func signalMarked(token string, sig syscall.Signal, skipPgid int) {}

func waitMarkedGone(token string, d time.Duration) bool { return true }

// MemoryMeter measures a process tree's resident memory; on this platform
// it always reports 0.
type MemoryMeter struct{}

// NewMemoryMeter returns a meter that reports 0 on this platform.
func NewMemoryMeter(token string, pgid int) *MemoryMeter { return &MemoryMeter{} }

// RSS returns 0 on this platform.
func (m *MemoryMeter) RSS() int64 { return 0 }
