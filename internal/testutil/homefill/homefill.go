// Package homefill prepares a pflow home for benchmarks as someone who has
// used pflow for a while has it: as many run records and traces as
// retention keeps, so that each new run's record and trace replace the
// oldest (a run's record re-uses the directory of the run retention
// removes) instead of being made in an empty store.
package homefill

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/settings"
)

// Runs records settings.DefaultRetentionCount+1 runs, with their traces,
// of a one-step workflow through a, and waits for a's work after them.
func Runs(tb testing.TB, a *app.App) {
	tb.Helper()
	wf := filepath.Join(tb.TempDir(), "one.pflow.md")
	if err := os.WriteFile(wf, []byte("# One\nOne step.\n\n## Steps\n\n### s\nEcho.\n- type: echo\n- message: hi\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	t, err := a.ResolveTarget(wf)
	if err != nil {
		tb.Fatal(err)
	}
	for range settings.DefaultRetentionCount + 1 {
		if out, err := a.Run(context.Background(), app.RunRequest{Target: t}); err != nil || !out.Result.Success() {
			tb.Fatalf("fill the home: %v", err)
		}
	}
	if a.Afterwards != nil {
		a.Afterwards.Settle()
	}
}
