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
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal cancels the work: steps and MCP servers get
		// SIGTERM, the run's record and trace are written, pflow exits 130.
		sig := <-sigs
		cancel(cli.SignalCause(sig))
		// A second one (terminals and `timeout -s INT` often send two)
		// hastens that cleanup without cutting it short: every process the
		// work started is killed at once, the trace is still written.
		<-sigs
		proc.KillTracked()
		// A third forces the exit.
		<-sigs
		proc.KillTracked()
		os.Exit(cli.ExitCodeForSignal(sig))
	}()
	os.Exit(cli.Main(ctx, os.Args[1:], cli.System(), os.Environ()))
}
