package bench

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/builtin"
	"github.com/pflow-go/pflow/internal/nodes/echo"
	"github.com/pflow-go/pflow/internal/registry"
	pfruntime "github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/workflow"
)

// The engine benchmarks (see docs/decisions.md, "Measured targets") side by
// side with their floor:
// a batch of a cheap node (echo) with max_concurrent 50 through pflow's
// engine, and the same node called directly from a bounded goroutine pool
// (errgroup, limit 50) that keeps every result — what a Go programmer
// would write by hand. Each reports items/s, the peak heap during the run
// and the heap still held by the results afterwards, per item, at 1,000,
// 10,000 and 100,000 items, so "flat memory" can be read off: per-item
// memory that does not grow with the batch.
//
//	go test -run '^$' -bench Batch -benchtime 5x ./internal/bench

var batchSizes = []int{1000, 10000, 100000}

func items(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

func batchWorkflow() *workflow.Workflow {
	n := &workflow.Node{ID: "each", Type: "echo", Params: map[string]any{"message": "item ${__index__}", "data": "${item}"}}
	n.Batch = &workflow.Batch{Items: "${list}", Parallel: true, MaxConcurrent: 50}
	w := &workflow.Workflow{Nodes: []*workflow.Node{n}}
	w.Normalize()
	return w
}

// peakHeap samples the live heap every 100µs until stop is called and
// returns the maximum seen (runtime/metrics reads do not stop the world).
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); <-finished; return peak.Load() }
}

func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// measure runs f b.N times and reports throughput and memory per item.
func measure(b *testing.B, n int, f func() any) {
	var peak, held uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		base := heapAlloc()
		stop := peakHeap()
		b.StartTimer()
		res := f()
		b.StopTimer()
		p := stop()
		h := heapAlloc()
		runtime.KeepAlive(res)
		if p > base {
			peak = max(peak, p-base)
		}
		if h > base {
			held = max(held, h-base)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "items/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peak)/float64(n), "peak-B/item")
	b.ReportMetric(float64(held)/float64(n), "held-B/item")
}

// BenchmarkBatchEngine is a parallel batch (max_concurrent 50) of echo
// through pflow's engine with the real built-in catalog.
func BenchmarkBatchEngine(b *testing.B) {
	cat := registry.NewCatalog(builtin.Specs(builtin.Config{}))
	w := batchWorkflow()
	for _, n := range batchSizes {
		b.Run("items="+strconv.Itoa(n), func(b *testing.B) {
			list := items(n)
			measure(b, n, func() any {
				res := pfruntime.Run(context.Background(), w, map[string]any{"list": list}, pfruntime.Options{Catalog: cat})
				if !res.Success() {
					b.Fatalf("batch failed: %+v", res.Failure)
				}
				return res
			})
		})
	}
}

// BenchmarkBatchFloor calls the same node directly from an errgroup
// limited to 50 goroutines, keeping every result in a slice.
func BenchmarkBatchFloor(b *testing.B) {
	spec := echo.Spec()
	for _, n := range batchSizes {
		b.Run("items="+strconv.Itoa(n), func(b *testing.B) {
			list := items(n)
			measure(b, n, func() any {
				results := make([]*node.Result, n)
				g, ctx := errgroup.WithContext(context.Background())
				g.SetLimit(50)
				for i, it := range list {
					g.Go(func() error {
						r, err := spec.Node.Run(ctx, &node.Request{NodeID: "each", Type: "echo",
							Params: map[string]any{"message": "item " + strconv.Itoa(i), "data": it}})
						if err != nil {
							return fmt.Errorf("item %d: %w", i, err)
						}
						results[i] = r
						return nil
					})
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
				return results
			})
		})
	}
}
