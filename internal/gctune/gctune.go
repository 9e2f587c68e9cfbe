// Package gctune sets the garbage collector's pace for the two kinds of
// pflow process: a short command, which should not collect at all, and a
// long-lived one (pflow mcp serve), whose small heap would otherwise be
// collected every few requests.
package gctune

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
)

// startupGCPercent is the GC percent pflow runs with until its first
// collection. Go's first collection comes when the heap reaches
// 4 MiB × GOGC/100; loading a registry of 1,000 MCP tools crosses the default
// 4 MiB, so a short command like 'pflow registry list' paid a full mark phase
// (with write barriers on every allocation) just before exiting — about 2 ms
// of a 12 ms command (docs/BENCHMARKS.md, start-up). At 400 the first
// collection waits for 16 MiB, which short commands never reach.
const startupGCPercent = 400

// Startup raises the GC percent for the start of the process and puts
// the previous value back as soon as the first collection has run, so a
// long-lived process (a large batch, 'pflow mcp serve') collects exactly as
// it would have — only its first collection comes later. A GOGC set by the
// user is respected: nothing changes then. It returns whether it changed
// anything.
func Startup(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	prev := debug.SetGCPercent(startupGCPercent)
	// The cleanup runs after the first collection that finds the sentinel
	// unreachable, i.e. the first one. 64 bytes keeps it out of the tiny
	// allocator, whose blocks may never be cleaned up.
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, restore, prev)
	return true
}

// restore puts the GC percent p back after the first collection, unless
// the process has become long-lived since.
func restore(p int) {
	if !longLived.Load() {
		debug.SetGCPercent(p)
	}
}

// LongLivedPercent is the GC percent of a long-lived process. Its live heap
// is small (a few MB: the catalog, the sessions), so at the default 100 it
// collected every two or three workflow_execute requests, and the
// collection's work landed in the middle of the next request's MCP calls:
// on 2 cores a warm workflow of 3 calls took 2.6–3.2 ms at 100 and
// 2.4–2.5 ms at 400, its calls 1.4–1.6 ms and 1.25–1.3 ms (docs/BENCHMARKS.md,
// warm hub). The heap may grow to 5× what is live before a collection: tens
// of MB.
const LongLivedPercent = 400

var longLived atomic.Bool

// LongLived sets the GC percent of a long-lived process to
// LongLivedPercent, for good (Startup's restore is cancelled). A GOGC set
// by the user is respected. It reports whether it changed anything.
func LongLived(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	longLived.Store(true)
	debug.SetGCPercent(LongLivedPercent)
	return true
}
