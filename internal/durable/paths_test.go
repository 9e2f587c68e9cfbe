package durable

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/node"
)

// TestWorkerBoundsFilePaths: a run submitted by pflow mcp serve --http
// --allow-dir carries its directories to the worker, which refuses a file
// step outside them before the node runs (a symlink inside that leads out
// included), and lets one inside run.
func TestWorkerBoundsFilePaths(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	os.Symlink(outside, filepath.Join(allowed, "escape"))
	ran := 0
	spec := &node.Spec{Type: "touch", Interface: node.Interface{Params: []node.Field{{Key: "file_path", Type: "str", Sink: node.SinkPath}}},
		Node: node.Func(func(_ context.Context, req *node.Request) (*node.Result, error) {
			ran++
			return node.Ok(nil), nil
		})}
	wk := &Worker{catalog: oneNode{spec}}
	limit := &wire.PathLimit{AllowDirs: []string{allowed}}
	run := func(path string) *wire.NodeOutput {
		t.Helper()
		out, err := wk.RunNode(context.Background(), wire.NodeInput{NodeID: "w", Type: "touch", Params: wire.Value{V: map[string]any{"file_path": path}}, WorkflowDir: allowed, Paths: limit})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, path := range []string{filepath.Join(outside, "x.txt"), "../x.txt", "escape/x.txt"} {
		out := run(path)
		msg, _ := wire.MapOf(out.Outputs)["error"].(string)
		if out.Action != "error" || !out.Permanent || !strings.Contains(msg, "--allow-dir "+allowed) {
			t.Errorf("%s: %+v", path, out)
		}
	}
	if ran != 0 {
		t.Fatalf("a refused step ran its node %d times", ran)
	}
	if out := run("inside/x.txt"); out.Action == "error" || ran != 1 {
		t.Fatalf("a path inside: %+v (ran %d)", out, ran)
	}
	// Without a bound (a run from a terminal), the worker does not check.
	if out, _ := wk.RunNode(context.Background(), wire.NodeInput{NodeID: "w", Type: "touch", Params: wire.Value{V: map[string]any{"file_path": filepath.Join(outside, "y")}}}); out.Action == "error" {
		t.Fatalf("unbounded run refused: %+v", out)
	}
}
