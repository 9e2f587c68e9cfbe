package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func examplePath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// An agent gets the same verdicts as the CLI, and the branches not taken
// are reported as skipped.
func TestWorkflowExecuteBranchesOnData(t *testing.T) {
	f := newFixture(t, nil)
	for count, want := range map[int]string{0: "none", 4: "some", 10: "many"} {
		r := f.call("workflow_execute", map[string]any{"workflow": examplePath(t, "branch-on-data.pflow.md"), "parameters": map[string]any{"count": count}}).mustOK(t)
		data, _ := r.Env["data"].(map[string]any)
		outputs, _ := data["outputs"].(map[string]any)
		if outputs["verdict"] != want {
			t.Fatalf("count %d: %s", count, r.Text)
		}
		if n := strings.Count(r.Text, `"status":"skipped"`); n != 2 {
			t.Fatalf("count %d: %d skipped steps reported, want 2: %s", count, n, r.Text)
		}
	}
}

// A fan-out reports progress for each branch, skipped steps included, so
// the progress reaches its total.
func TestWorkflowExecuteFanOutProgress(t *testing.T) {
	f := newFixture(t, nil)
	r := f.callCtx(context.Background(), "workflow_execute", map[string]any{"workflow": examplePath(t, "fan-out.pflow.md"), "parameters": map[string]any{"delay": 0.1}}, "tok-fan").mustOK(t)
	data, _ := r.Env["data"].(map[string]any)
	outputs, _ := data["outputs"].(map[string]any)
	if outputs["joined"] != "a b c" {
		t.Fatalf("joined: %s", r.Text)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.progMu.Lock()
		n := len(f.progress)
		f.progMu.Unlock()
		if n >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.progMu.Lock()
	defer f.progMu.Unlock()
	seen := map[string]bool{}
	for _, p := range f.progress {
		for _, id := range []string{"'a'", "'b'", "'c'", "'join'"} {
			if strings.Contains(p.Message, id) {
				seen[id] = true
			}
		}
	}
	if len(seen) != 4 {
		t.Fatalf("progress per branch: %+v", f.progress)
	}
}
