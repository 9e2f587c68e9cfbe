package runtime

import (
	"context"
	"runtime"
	"testing"

	"github.com/pflow-go/pflow/internal/workflow"
)

// BenchmarkBatch10000 runs a 10,000-item parallel batch (max_concurrent 50)
// of a cheap node. Target (docs/decisions.md, "Measured targets"): ≥ 20,000
// items/s with flat memory.
func BenchmarkBatch10000(b *testing.B) {
	items := make([]any, 10000)
	for i := range items {
		items[i] = int64(i)
	}
	cat := testCatalog(nil)
	b.ReportAllocs()
	for b.Loop() {
		n := step("each", "echo", map[string]any{"value": "${item}", "text": "item ${__index__}"})
		n.Batch = &workflow.Batch{Items: "${list}", Parallel: true, MaxConcurrent: 50}
		res := Run(context.Background(), chain(n), map[string]any{"list": items}, Options{Catalog: cat})
		if !res.Success() {
			b.Fatal(res.Failure)
		}
	}
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "items/s")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
}

// BenchmarkChain1000 runs a 1,000-step linear workflow where each step reads
// the previous one's output.
func BenchmarkChain1000(b *testing.B) {
	nodes := make([]*workflow.Node, 1000)
	for i := range nodes {
		v := any("start")
		if i > 0 {
			v = "${s" + itoa(i-1) + ".out}"
		}
		nodes[i] = step("s"+itoa(i), "echo", map[string]any{"value": v})
	}
	w := chain(nodes...)
	cat := testCatalog(nil)
	b.ReportAllocs()
	for b.Loop() {
		res := Run(context.Background(), w, nil, Options{Catalog: cat})
		if !res.Success() {
			b.Fatal(res.Failure)
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var buf [20]byte
	p := len(buf)
	for i > 0 {
		p--
		buf[p] = byte('0' + i%10)
		i /= 10
	}
	return string(buf[p:])
}
