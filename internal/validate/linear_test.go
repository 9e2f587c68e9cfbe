package validate

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/workflow"
)

// templateShapes are the kinds of "${" a long param can be made of; each
// lands in a different branch of the template checks (valid reference,
// undefined input, unclosed, shell syntax, missing output key, dict spliced
// into a shell command, escape, nested index).
var templateShapes = []struct {
	name string
	one  func(i int) string
}{
	{"valid", func(int) string { return "${a.stdout}" }},
	{"undefined", func(i int) string { return fmt.Sprintf("${in%05d}", i) }},
	{"unclosed", func(int) string { return "${a.stdout" }},
	{"shell", func(int) string { return "${HOME:-x}" }},
	{"missing-key", func(i int) string { return fmt.Sprintf("${a.k%05d}", i) }},
	{"dict-in-shell", func(i int) string { return fmt.Sprintf("${g.summary} %05d", i) }},
	{"escaped", func(int) string { return "$${a.stdout}" }},
	{"nested-index", func(int) string { return "${g.commits[${a.exit_code}].sha}" }},
	{"spaces", func(int) string { return "${ a.stdout }" }},
}

// templatesWorkflow puts n templates of one shape into one shell command and
// into a workflow output's source.
func templatesWorkflow(one func(int) string, n int) *workflow.Workflow {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = one(i)
	}
	s := strings.Join(parts, " ")
	w := wf(nd("a", "shell", map[string]any{"command": "echo"}), nd("g", "git-log", map[string]any{}), nd("b", "shell", map[string]any{"command": s}))
	w.Outputs = workflow.Outputs{{Name: "o", Source: s}}
	return w
}

// allocatedBytes is the mean number of bytes f allocates per call.
func allocatedBytes(f func()) uint64 {
	f() // warm up (lazily compiled regexps and the like)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 3
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

// TestValidateLinearInTemplates: with four times the templates in one param,
// the scanning work, the allocations and the bytes allocated by validation
// grow at most 4.4× (linear, +10% for the geometric growth of slices and
// maps; quadratic would be 16×). It counts work instead of timing it. Before
// the fix the check for malformed templates compared every "${" with every
// reference, searched the rest of the text for a '}' at every unclosed "${",
// and clipped (and quoted) the whole text in each reference's diagnostic.
func TestValidateLinearInTemplates(t *testing.T) {
	cat := testCatalog()
	const n, factor, maxRatio = 256, 4, 4.4
	for _, shape := range templateShapes {
		t.Run(shape.name, func(t *testing.T) {
			small, large := templatesWorkflow(shape.one, n), templatesWorkflow(shape.one, factor*n)
			opts := Options{Catalog: cat}
			check := func(what string, a, b float64) {
				t.Helper()
				if a == 0 {
					t.Fatalf("%s: nothing counted at n=%d", what, n)
				}
				if r := b / a; r > maxRatio {
					t.Errorf("%s grows %.2f× when the templates grow %d× (%.0f at n=%d, %.0f at n=%d); want ≤ %.1f×", what, r, factor, a, n, b, factor*n, maxRatio)
				}
			}
			check("scan steps", float64(validate(context.Background(), small, opts).work), float64(validate(context.Background(), large, opts).work))
			check("allocations",
				testing.AllocsPerRun(3, func() { Validate(context.Background(), small, opts) }),
				testing.AllocsPerRun(3, func() { Validate(context.Background(), large, opts) }))
			check("bytes allocated",
				float64(allocatedBytes(func() { Validate(context.Background(), small, opts) })),
				float64(allocatedBytes(func() { Validate(context.Background(), large, opts) })))
		})
	}
}

// BenchmarkValidateTemplates: validation time against the number of
// templates in one param (docs/BENCHMARKS.md: linear).
func BenchmarkValidateTemplates(b *testing.B) {
	cat := testCatalog()
	for _, n := range []int{1000, 2000, 4000} {
		w := templatesWorkflow(templateShapes[0].one, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Validate(context.Background(), w, Options{Catalog: cat})
			}
		})
	}
}
