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
