package runs

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/echo"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/workflow"
)

// The record's cost in the engine alone (no parse, validation or CLI): the
// engine targets' workloads run by runtime.Run with the record as journal
// (record=on) and without (record=off). BenchmarkRecordOverhead* in
// internal/app is the figure the recording target is measured by; these show
// what is left of it in the engine, and where (-cpuprofile).
func benchEngineRecord(b *testing.B, w *workflow.Workflow, inputs map[string]any) {
	cat := registry.NewCatalog([]*node.Spec{echo.Spec()})
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("record=%v", map[bool]string{false: "off", true: "on"}[on]), func(b *testing.B) {
			s := Open(b.TempDir())
			key, err := s.Key()
			if err != nil {
				b.Fatal(err)
			}
			red := redact.NewRedactor()
			b.ReportAllocs()
			for b.Loop() {
				opts := runtime.Options{Catalog: cat}
				var r *Run
				if on {
					if r, err = s.Create(Options{Key: key, Redactor: red, MakeIR: func() []byte { return []byte("{}") }}); err != nil {
						b.Fatal(err)
					}
					opts.Journal = r
				}
				res := runtime.Run(context.Background(), w, inputs, opts)
				if !res.Success() {
					b.Fatal(res.Failure)
				}
				if r != nil {
					if err := r.Close(res, ""); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			os.RemoveAll(s.Dir)
		})
	}
}

// BenchmarkEngineRecordChain1000 is a 1,000-step chain of echo steps, each
// reading the previous one's output.
func BenchmarkEngineRecordChain1000(b *testing.B) {
	w := &workflow.Workflow{}
	for i := 0; i < 1000; i++ {
		msg := "${seed}"
		if i > 0 {
			msg = fmt.Sprintf("${s%d.echo}", i-1)
		}
		w.Nodes = append(w.Nodes, &workflow.Node{ID: fmt.Sprintf("s%d", i), Type: "echo", Params: map[string]any{"message": msg}})
		if i > 0 {
			w.Edges = append(w.Edges, workflow.Edge{From: fmt.Sprintf("s%d", i-1), To: fmt.Sprintf("s%d", i)})
		}
	}
	benchEngineRecord(b, w, map[string]any{"seed": "x"})
}

// BenchmarkEngineRecordBatch10000 is a 10,000-item parallel batch
// (max_concurrent 50) of echo.
func BenchmarkEngineRecordBatch10000(b *testing.B) {
	items := make([]any, 10000)
	for i := range items {
		items[i] = int64(i)
	}
	n := &workflow.Node{ID: "each", Type: "echo", Params: map[string]any{"message": "item ${__index__}", "data": "${item}"},
		Batch: &workflow.Batch{Items: "${list}", Parallel: true, MaxConcurrent: 50}}
	benchEngineRecord(b, &workflow.Workflow{Nodes: []*workflow.Node{n}}, map[string]any{"list": items})
}
