package validate

import (
	"context"
	"os"
	"testing"

	"github.com/pflow-go/pflow/internal/workflow"
)

// TestMarkdownLines validates a real .pflow.md and checks that every
// finding points at the line a user has to edit.
func TestMarkdownLines(t *testing.T) {
	src, err := os.ReadFile("testdata/broken.pflow.md")
	if err != nil {
		t.Fatal(err)
	}
	w, err := workflow.ParseMarkdown(src, "testdata/broken.pflow.md")
	if err != nil {
		t.Fatal(err)
	}
	errs, _ := Validate(context.Background(), w, Options{Catalog: testCatalog()})
	want := []struct {
		prefix string
		line   int
	}{
		// Findings about one param point at the param's line,
		// not at the step's heading.
		{"Node 'log' (type: git-log) does not output 'sumary'", 25}, // the '- headers:' of 'fetch'
		{"Node 'fetch' (type: http) does not output 'respose'", 32},
		{"Declared input(s) never used as template variable: since", 11},
		{"Unknown node type: 'shel'", 31},
		{"Node 'fetch' (type: http) does not output 'status'", 36},
	}
	for _, wnt := range want {
		d := find(t, errs, wnt.prefix)
		if d.Line != wnt.line {
			t.Errorf("%q: line %d, want %d", wnt.prefix, d.Line, wnt.line)
		}
	}
	if len(errs) != len(want) {
		t.Errorf("want %d errors:\n%s", len(want), dump(errs))
	}
}
