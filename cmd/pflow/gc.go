package main

import (
	"runtime"
	"runtime/debug"
)

// startupGCPercent is the GC percent pflow runs with until its first
// collection. Go's first collection comes when the heap reaches
// 4 MiB × GOGC/100; loading a registry of 1,000 MCP tools crosses the default
// 4 MiB, so a short command like 'pflow registry list' paid a full mark phase
// (with write barriers on every allocation) just before exiting — about 2 ms
// of a 12 ms command (docs/BENCHMARKS.md, start-up). At 400 the first
// collection waits for 16 MiB, which short commands never reach.
const startupGCPercent = 400

// tuneStartupGC raises the GC percent for the start of the process and puts
// the previous value back as soon as the first collection has run, so a
// long-lived process (a large batch, 'pflow mcp serve') collects exactly as
// it would have — only its first collection comes later. A GOGC set by the
// user is respected: nothing changes then. It returns whether it changed
// anything.
func tuneStartupGC(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	prev := debug.SetGCPercent(startupGCPercent)
	// The cleanup runs after the first collection that finds the sentinel
	// unreachable, i.e. the first one. 64 bytes keeps it out of the tiny
	// allocator, whose blocks may never be cleaned up.
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(p int) { debug.SetGCPercent(p) }, prev)
	return true
}
