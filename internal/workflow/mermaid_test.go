package workflow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMermaid pins the graph of three examples (branches, a batch, a nested
// workflow) in testdata/mermaid/*.mmd; run with -update to rewrite
// them after an intended change.
func TestMermaid(t *testing.T) {
	for _, ex := range []string{"error-handling", "batch-parallel", "nested/publish"} {
		src := filepath.Join("..", "..", "examples", ex+".pflow.md")
		w, err := ParseFile(src)
		if err != nil {
			t.Fatal(err)
		}
		got := Mermaid(w)
		golden := filepath.Join("testdata", "mermaid", strings.ReplaceAll(ex, "/", "-")+".mmd")
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			os.WriteFile(golden, []byte(got), 0o644)
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test -run TestMermaid -update creates it)", err)
		}
		if got != string(want) {
			t.Errorf("%s: graph differs from %s (-update rewrites it):\n%s", ex, golden, got)
		}
	}
	// Ids that Mermaid would not accept are rewritten, without collisions.
	w := &Workflow{Nodes: []*Node{{ID: "a-b", Type: "echo"}, {ID: "a_b", Type: "echo"}}, Edges: []Edge{{From: "a-b", To: "a_b"}}}
	g := Mermaid(w)
	if !strings.Contains(g, `s_a_b["a-b<br/>echo"]`) || !strings.Contains(g, `s_a_b_["a_b<br/>echo"]`) || !strings.Contains(g, "s_a_b --> s_a_b_") {
		t.Errorf("ids:\n%s", g)
	}
}

// The graph reads a step's templates as the engine does: batch items that
// are a list count, a nested step's own workflow and an escaped $${x} do
// not (the graph used its own scanner over the params alone).
func TestMermaidReadsTemplatesAsTheEngine(t *testing.T) {
	w := &Workflow{
		Parallel: 2,
		Inputs:   Inputs{{Name: "topic"}, {Name: "shown"}},
		Nodes: []*Node{
			{ID: "a", Type: "echo", Params: map[string]any{"value": "$${topic}"}},
			{ID: "b", Type: "echo", Params: map[string]any{"value": "x"}, Batch: &Batch{Items: []any{"${shown}", "${a.value}"}}},
			{ID: "call", Type: NestedType, Params: map[string]any{"workflow_ir": map[string]any{"nodes": []any{map[string]any{"id": "in", "type": "echo", "params": map[string]any{"value": "${a.value} ${topic}"}}}}}},
		},
	}
	g := Mermaid(w)
	for _, want := range []string{"in_shown -.-> s_b", "s_a ==> s_b"} {
		if !strings.Contains(g, want) {
			t.Errorf("no %q in:\n%s", want, g)
		}
	}
	for _, not := range []string{"in_topic -.->", "==> s_call"} {
		if strings.Contains(g, not) {
			t.Errorf("%q in:\n%s", not, g)
		}
	}
}
