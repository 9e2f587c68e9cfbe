package cli

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run the test binary as the `pflow` command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"pflow": func() {
			signal.Ignore(syscall.SIGPIPE)
			ctx, cancel := context.WithCancelCause(context.Background())
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			go func() { sig := <-sigs; cancel(SignalCause(sig)) }()
			os.Exit(Main(ctx, os.Args[1:], System(), os.Environ()))
		},
	})
}

// TestScripts runs the CLI end-to-end scripts in testdata/script. Each
// script gets its own PFLOW_HOME; $REPO points at the repository root (for
// examples/).
func TestScripts(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PFLOW_HOME", filepath.Join(env.WorkDir, ".pflow-home"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("REPO", repo)
			return nil
		},
	})
}
