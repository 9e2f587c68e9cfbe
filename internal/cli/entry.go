package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/proc"
)

// temporalEngine is the Temporal engine of this binary (nil in pflow).
var temporalEngine wire.Engine

// handOff, set by Run in pflow, replaces the process with pflow-temporal
// for a command that needs Temporal (nil in tests and in pflow-temporal).
var handOff func(args []string) error

// Run is a pflow binary's main: it runs the command line of this process
// and returns its exit code. engine is the Temporal engine the binary links
// (nil: Temporal commands are handed to pflow-temporal).
func Run(engine wire.Engine) int {
	temporalEngine = engine
	if engine == nil {
		handOff = execTemporalBinary
	}
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
		cancel(SignalCause(sig))
		// A second one (terminals and `timeout -s INT` often send two)
		// hastens that cleanup without cutting it short: every process the
		// work started is killed at once, the trace is still written.
		<-sigs
		proc.KillTracked()
		// A third forces the exit.
		<-sigs
		proc.KillTracked()
		os.Exit(ExitCodeForSignal(sig))
	}()
	return Main(ctx, os.Args[1:], System(), os.Environ())
}

// needTemporal makes sure this process can talk to Temporal: in pflow it
// hands the whole command line to pflow-temporal (and does not return when
// it could); a failure says how to install it.
func needTemporal(f *Factory) error {
	if f.App.Temporal != nil {
		return nil
	}
	if handOff == nil {
		return noTemporalBinary()
	}
	return handOff(f.Args)
}

func execTemporalBinary(args []string) error {
	bin := ""
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "pflow-temporal")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			bin = p
		}
	}
	if bin == "" {
		p, err := exec.LookPath("pflow-temporal")
		if err != nil {
			return noTemporalBinary()
		}
		bin = p
	}
	if err := syscall.Exec(bin, append([]string{bin}, args...), os.Environ()); err != nil {
		return &pferr.Error{Kind: pferr.Internal, Message: fmt.Sprintf("cannot start %s: %v", bin, err)}
	}
	return nil
}

func noTemporalBinary() error {
	return &pferr.Error{Kind: pferr.Config, Message: "running on Temporal needs pflow-temporal, pflow's Temporal engine (a separate binary, so that pflow itself starts fast), and it is neither next to pflow nor on PATH",
		Hint: "Install it: go install github.com/pflow-go/pflow/cmd/pflow-temporal@latest (from a checkout: make install)"}
}
