package validate

import (
	"context"
	"testing"

	"github.com/pflow-go/pflow/internal/workflow"
)

// FuzzValidate feeds arbitrary param text and batch/output templates through
// every layer: validation must never panic, whatever a user writes.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{"echo ${a.stdout}", "${", "${b.results[${__index__}].x}", "$${x}", "${log.commits[0].sha.x[1]}", "${item}", "${x:-y}"} {
		f.Add(s, s)
	}
	cat := testCatalog()
	f.Fuzz(func(t *testing.T, cmd, src string) {
		b := nd("b", "shell", map[string]any{"command": cmd, "env": map[string]any{"K": []any{cmd}}})
		b.Batch = &workflow.Batch{Items: src}
		w := wf(nd("a", "git-log", map[string]any{"since": src}), b, nd("c", "http", map[string]any{"url": cmd, "timeout": src}))
		w.Outputs = workflow.Outputs{{Name: "o", Source: src}}
		w.Inputs = workflow.Inputs{{Name: "x"}}
		Validate(context.Background(), w, Options{Catalog: cat, Provided: map[string]any{}})
	})
}
