package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/nodes/builtin"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/validate"
	"github.com/pflow-go/pflow/internal/workflow"
)

// thousandSteps is a 1,000-step .pflow.md where each step reads the
// previous one's output (echo nodes, so the figure is the engine's own cost).
func thousandSteps() []byte {
	var b strings.Builder
	b.WriteString("# Big\nA long chain.\n\n## Inputs\n\n### seed\nStart value.\n- type: string\n\n## Steps\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "\n### s%d\nStep %d.\n- type: echo\n", i, i)
		if i == 0 {
			b.WriteString("- message: ${seed}\n")
		} else {
			fmt.Fprintf(&b, "- message: ${s%d.echo}\n", i-1)
		}
	}
	b.WriteString("\n## Outputs\n\n### last\nThe end.\n- source: ${s999.echo}\n")
	return []byte(b.String())
}

// BenchmarkParseValidateRun1000 parses, statically validates and runs a
// 1,000-step workflow with the real built-in catalog. Target
// (docs/decisions.md, "Measured targets"):
// a 1,000-node workflow validates and runs in ≤ 100 ms.
func BenchmarkParseValidateRun1000(b *testing.B) {
	src := thousandSteps()
	cat := registry.NewCatalog(builtin.Specs(builtin.Config{}))
	b.ReportAllocs()
	for b.Loop() {
		w, err := workflow.ParseMarkdown(src, "big.pflow.md")
		if err != nil {
			b.Fatal(err)
		}
		inputs := map[string]any{"seed": "x"}
		if errs, _ := validate.Validate(context.Background(), w, validate.Options{Catalog: cat, Provided: inputs}); len(errs) > 0 {
			b.Fatal(errs[0].Message)
		}
		res := runtime.Run(context.Background(), w, inputs, runtime.Options{Catalog: cat})
		if !res.Success() || res.Outputs["last"] != "x" {
			b.Fatal(res.Failure, res.Outputs)
		}
	}
}

// BenchmarkParseValidate1000 is the static part alone.
func BenchmarkParseValidate1000(b *testing.B) {
	src := thousandSteps()
	cat := registry.NewCatalog(builtin.Specs(builtin.Config{}))
	b.ReportAllocs()
	for b.Loop() {
		w, err := workflow.ParseMarkdown(src, "big.pflow.md")
		if err != nil {
			b.Fatal(err)
		}
		if errs, _ := validate.Validate(context.Background(), w, validate.Options{Catalog: cat, Provided: map[string]any{"seed": "x"}}); len(errs) > 0 {
			b.Fatal(errs[0].Message)
		}
	}
}
