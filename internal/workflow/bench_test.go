package workflow

import (
	"fmt"
	"strings"
	"testing"
)

func bigWorkflow(n int) []byte {
	var b strings.Builder
	b.WriteString("# Big\n\nMany steps.\n\n## Steps\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "### step-%d\nStep %d.\n- type: shell\n- timeout: 30\n- env: {A: \"1\"}\n\n```shell command\necho %d\n```\n\n", i, i, i)
	}
	return []byte(b.String())
}

func BenchmarkParseMarkdown1000(b *testing.B) {
	src := bigWorkflow(1000)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := ParseMarkdown(src, ""); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBigWorkflowParses(t *testing.T) {
	t.Parallel()
	w, err := ParseMarkdown(bigWorkflow(1000), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Nodes) != 1000 || len(w.Edges) != 999 || w.Nodes[999].Params["command"] != "echo 999" {
		t.Fatalf("nodes=%d edges=%d", len(w.Nodes), len(w.Edges))
	}
}
