// Command pflow runs .pflow.md workflows and manages their library, node
// registry, settings and MCP servers.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pflow-go/pflow/internal/cli"
	"github.com/pflow-go/pflow/internal/proc"
)

func main() {
	tuneStartupGC(os.Getenv)
	// Writing to a closed pipe returns EPIPE instead of killing pflow; the CLI
	// turns that into a quiet exit.
	signal.Ignore(syscall.SIGPIPE)
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		cancel(cli.SignalCause(sig))
		// A second signal exits at once, killing every process the
		// running work started (steps, MCP servers and their descendants).
		<-sigs
		proc.KillTracked()
		os.Exit(cli.ExitCodeForSignal(sig))
	}()
	os.Exit(cli.Main(ctx, os.Args[1:], cli.System(), os.Environ()))
}
