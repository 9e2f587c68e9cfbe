// Package racechild shortens the exit of the race-built test binaries that
// tests run again as child processes (the kill loop's writers, a hostile
// MCP server, another user's process).
//
// A binary built with -race sleeps atexit_sleep_ms (1 s by default) when it
// exits with status 0, before its final race report, to give goroutines
// still running a last chance to race. A test that starts such a child per
// command or per MCP server waits that second every time: a script of 20
// commands waited 20 s when its pflow was the test binary, and an MCP client
// closing a fake server waited its stop grace for a server that had already
// finished. The children get
// atexit_sleep_ms=10 instead (the value go-internal's testscript suggests).
// Everything else the race detector does is unchanged: a race in a child is
// still reported on its stderr when it happens, and the child still exits
// with status 66 when it found one. Options the test run itself was given
// in GORACE are kept, and an atexit_sleep_ms among them wins.
package racechild

import (
	"os"
	"strings"
)

// Value is the GORACE value for a child: this process's GORACE options
// with atexit_sleep_ms=10 unless they set it.
func Value() string {
	g := strings.TrimSpace(os.Getenv("GORACE"))
	if strings.Contains(g, "atexit_sleep_ms=") {
		return g
	}
	return strings.TrimSpace(g + " atexit_sleep_ms=10")
}

// Env is "GORACE=" + Value(), for a child's explicit environment.
func Env() string { return "GORACE=" + Value() }

// Setenv sets GORACE to Value in this process's environment, for the
// children that inherit it (testscript passes GORACE on to its commands).
// Call it from TestMain, before any test runs: this process read GORACE
// when it started and keeps its own options.
func Setenv() { os.Setenv("GORACE", Value()) }
