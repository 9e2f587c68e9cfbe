package runtime

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/switchnode"
	"github.com/pflow-go/pflow/internal/workflow"
)

// barrier is a node type whose steps each wait until `n` of them are
// running at once, so a test sees concurrency by an event, not by the
// clock: run one at a time, the first never returns before its context
// ends.
type barrier struct {
	mu      sync.Mutex
	running int
	peak    int
	arrived chan struct{}
	order   []string
}

func newBarrier() *barrier { return &barrier{arrived: make(chan struct{}, 100)} }

func (b *barrier) spec() *node.Spec {
	return &node.Spec{Type: "meet", Attempts: 1, Interface: node.Interface{
		Params:  []node.Field{{Key: "n", Type: "int"}, {Key: "value", Type: "any"}},
		Outputs: []node.Field{{Key: "out", Type: "any"}}},
		Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
			n, _ := node.Int(r.Params, "n", 1)
			b.mu.Lock()
			b.running++
			b.peak = max(b.peak, b.running)
			b.order = append(b.order, "start "+r.NodeID)
			b.mu.Unlock()
			b.arrived <- struct{}{}
			defer func() {
				b.mu.Lock()
				b.running--
				b.order = append(b.order, "end "+r.NodeID)
				b.mu.Unlock()
			}()
			for {
				b.mu.Lock()
				enough := b.peak >= n // n were running together at some point
				b.mu.Unlock()
				if enough {
					return node.Ok(map[string]any{"out": r.Params["value"]}), nil
				}
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-b.arrived:
					b.arrived <- struct{}{} // let the others see it too
					time.Sleep(time.Millisecond)
				}
			}
		})}
}

func graphCatalog(b *barrier) fakeCatalog {
	c := testCatalog(nil)
	c["meet"] = b.spec()
	c["switch"] = switchnode.Spec()
	return c
}

func TestWhenSkipsAStep(t *testing.T) {
	w := chain(
		&workflow.Node{ID: "a", Type: "echo", Params: map[string]any{"value": int64(3)}},
		&workflow.Node{ID: "b", Type: "echo", Params: map[string]any{"value": "ran", "when": "${a.out} > 5"}},
		&workflow.Node{ID: "c", Type: "echo", Params: map[string]any{"value": "after", "when": "${a.out} > 1"}},
	)
	w.Outputs = workflow.Outputs{{Name: "b", Source: "${b.out}"}, {Name: "c", Source: "${c.out}"}}
	res := Run(context.Background(), w, nil, Options{Catalog: graphCatalog(newBarrier())})
	if res.Status != RunSuccess {
		t.Fatalf("status %s: %+v", res.Status, res.Failure)
	}
	status := map[string]string{}
	for _, s := range res.Steps {
		status[s.NodeID] = s.Status
	}
	if status["b"] != StatusSkipped || status["c"] != StatusCompleted {
		t.Fatalf("statuses %v", status)
	}
	if _, ok := res.Outputs["b"]; ok {
		t.Fatalf("an output from a skipped step must be absent, got %v", res.Outputs)
	}
	if res.Outputs["c"] != "after" {
		t.Fatalf("outputs %v", res.Outputs)
	}
}

func TestWhenThatCannotBeEvaluatedFailsTheStep(t *testing.T) {
	w := chain(&workflow.Node{ID: "a", Type: "echo", Params: map[string]any{"value": "x", "when": "${missing.out} > 1"}})
	res := Run(context.Background(), w, nil, Options{Catalog: graphCatalog(newBarrier())})
	if res.Status != RunFailed || res.Failure.Category != CategoryTemplate {
		t.Fatalf("got %s %+v", res.Status, res.Failure)
	}
}

func TestSwitchRoutesAndSkipsOtherBranches(t *testing.T) {
	for _, c := range []struct {
		count int64
		want  string
	}{{0, "none"}, {4, "some"}, {12, "many"}} {
		w := &workflow.Workflow{
			Inputs: workflow.Inputs{{Name: "count", Type: "integer"}},
			Nodes: []*workflow.Node{
				{ID: "size", Type: "switch", Params: map[string]any{
					"cases":   []any{map[string]any{"none": "${count} == 0"}, map[string]any{"some": "${count} < 10"}},
					"default": "many"}},
				{ID: "say-none", Type: "echo", Params: map[string]any{"value": "none"}},
				{ID: "say-some", Type: "echo", Params: map[string]any{"value": "some"}},
				{ID: "say-many", Type: "echo", Params: map[string]any{"value": "many"}},
			},
			Edges: []workflow.Edge{{From: "size", To: "say-none", Action: "none"}, {From: "size", To: "say-some", Action: "some"}, {From: "size", To: "say-many", Action: "many"}},
			Mappings: map[string]*workflow.Mapping{
				"say-none": {OutputMappings: map[string]string{"out": "verdict"}},
				"say-some": {OutputMappings: map[string]string{"out": "verdict"}},
				"say-many": {OutputMappings: map[string]string{"out": "verdict"}},
			},
			Outputs: workflow.Outputs{{Name: "verdict"}},
		}
		w.Normalize()
		res := Run(context.Background(), w, map[string]any{"count": c.count}, Options{Catalog: graphCatalog(newBarrier())})
		if res.Status != RunSuccess || res.Outputs["verdict"] != c.want {
			t.Fatalf("count %d: %s %v %+v", c.count, res.Status, res.Outputs, res.Failure)
		}
		for _, s := range res.Steps {
			taken := s.NodeID == "size" || s.NodeID == "say-"+c.want
			if taken != (s.Status == StatusCompleted) || !taken && s.Status != StatusSkipped {
				t.Fatalf("count %d: step %s is %s", c.count, s.NodeID, s.Status)
			}
		}
	}
}

func fanOut(limit int, n int64) *workflow.Workflow {
	w := chain(
		&workflow.Node{ID: "a", Type: "meet", Params: map[string]any{"n": n, "value": "a"}},
		&workflow.Node{ID: "b", Type: "meet", Params: map[string]any{"n": n, "value": "b"}},
		&workflow.Node{ID: "c", Type: "meet", Params: map[string]any{"n": n, "value": "c"}},
		&workflow.Node{ID: "join", Type: "echo", Params: map[string]any{"value": "${a.out} ${b.out} ${c.out}"}},
	)
	w.Parallel = limit
	w.Outputs = workflow.Outputs{{Name: "joined", Source: "${join.out}"}}
	return w
}

func TestParallelStepsRunAtOnce(t *testing.T) {
	b := newBarrier()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Each of a, b, c returns only once all three are running: in order,
	// the run would end on the timeout.
	res := Run(ctx, fanOut(8, 3), nil, Options{Catalog: graphCatalog(b)})
	if res.Status != RunSuccess || res.Outputs["joined"] != "a b c" {
		t.Fatalf("%s %v %+v %v", res.Status, res.Outputs, res.Failure, b.order)
	}
	if b.peak != 3 {
		t.Fatalf("peak concurrency %d, want 3", b.peak)
	}
	// The results read as in order.
	var ids []string
	for _, s := range res.Steps {
		ids = append(ids, s.NodeID)
	}
	if got := ids; len(got) != 4 || got[0] != "a" || got[1] != "b" || got[2] != "c" || got[3] != "join" {
		t.Fatalf("steps %v", ids)
	}
}

func TestParallelLimit(t *testing.T) {
	b := newBarrier()
	res := Run(context.Background(), fanOut(2, 1), nil, Options{Catalog: graphCatalog(b)})
	if res.Status != RunSuccess {
		t.Fatalf("%s %+v", res.Status, res.Failure)
	}
	if b.peak > 2 {
		t.Fatalf("peak concurrency %d over the limit 2", b.peak)
	}
}

func TestParallelAfterOrdersBySideEffect(t *testing.T) {
	b := newBarrier()
	w := chain(
		&workflow.Node{ID: "write", Type: "meet", Params: map[string]any{"n": int64(1), "value": "w"}},
		&workflow.Node{ID: "other", Type: "meet", Params: map[string]any{"n": int64(1), "value": "o"}},
		&workflow.Node{ID: "read", Type: "meet", Params: map[string]any{"n": int64(1), "value": "r", "after": "write"}},
	)
	w.Parallel = 8
	res := Run(context.Background(), w, nil, Options{Catalog: graphCatalog(b)})
	if res.Status != RunSuccess {
		t.Fatalf("%s %+v", res.Status, res.Failure)
	}
	endWrite, startRead := -1, -1
	for i, e := range b.order {
		switch e {
		case "end write":
			endWrite = i
		case "start read":
			startRead = i
		}
	}
	if endWrite < 0 || startRead < endWrite {
		t.Fatalf("read started before write ended: %v", b.order)
	}
}

func TestParallelFailureStopsTheRun(t *testing.T) {
	w := chain(
		&workflow.Node{ID: "a", Type: "echo", Params: map[string]any{"value": "a"}},
		&workflow.Node{ID: "bad", Type: "fail", Params: map[string]any{"msg": "broken", "retries": int64(0)}},
		&workflow.Node{ID: "join", Type: "echo", Params: map[string]any{"value": "${a.out} ${bad.out}"}},
	)
	w.Parallel = 8
	res := Run(context.Background(), w, nil, Options{Catalog: graphCatalog(newBarrier())})
	if res.Status != RunFailed || res.Failure.NodeID != "bad" {
		t.Fatalf("%s %+v", res.Status, res.Failure)
	}
	for _, s := range res.Steps {
		if s.NodeID == "join" && s.Status != StatusNotExecuted {
			t.Fatalf("join ran after a failure: %s", s.Status)
		}
	}
}

func TestParallelHandledFailureContinues(t *testing.T) {
	w := &workflow.Workflow{
		Nodes: []*workflow.Node{
			{ID: "a", Type: "echo", Params: map[string]any{"value": "a"}},
			{ID: "bad", Type: "fail", Params: map[string]any{"msg": "broken", "retries": int64(0)}},
			{ID: "c", Type: "echo", Params: map[string]any{"value": "c"}},
			{ID: "fix", Type: "echo", Params: map[string]any{"value": "fixed"}},
		},
		Edges:    []workflow.Edge{{From: "a", To: "bad"}, {From: "bad", To: "c"}, {From: "bad", To: "fix", Action: "error"}},
		Parallel: 8,
	}
	w.Normalize()
	res := Run(context.Background(), w, nil, Options{Catalog: graphCatalog(newBarrier())})
	if res.Status != RunDegraded {
		t.Fatalf("%s %+v", res.Status, res.Failure)
	}
	status := map[string]string{}
	for _, s := range res.Steps {
		status[s.NodeID] = s.Status
	}
	if status["fix"] != StatusCompleted || status["c"] != StatusSkipped {
		t.Fatalf("statuses %v", status)
	}
}

func TestParallelSameResultsAsInOrder(t *testing.T) {
	mk := func(limit int) *Result {
		w := fanOut(limit, 1)
		return Run(context.Background(), w, nil, Options{Catalog: graphCatalog(newBarrier())})
	}
	seq, par := mk(0), mk(8)
	if seq.Status != par.Status || seq.Outputs["joined"] != par.Outputs["joined"] || len(seq.Steps) != len(par.Steps) {
		t.Fatalf("in order %s %v, parallel %s %v", seq.Status, seq.Outputs, par.Status, par.Outputs)
	}
	for i := range seq.Steps {
		if seq.Steps[i].NodeID != par.Steps[i].NodeID || seq.Steps[i].Status != par.Steps[i].Status {
			t.Fatalf("step %d: %s/%s vs %s/%s", i, seq.Steps[i].NodeID, seq.Steps[i].Status, par.Steps[i].NodeID, par.Steps[i].Status)
		}
	}
}

func TestParallelInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := chain(
		&workflow.Node{ID: "a", Type: "wait"},
		&workflow.Node{ID: "b", Type: "wait"},
	)
	w.Parallel = 4
	var started atomic.Int64
	cat := graphCatalog(newBarrier())
	inner := cat["wait"].Node
	spec := *cat["wait"]
	spec.Node = node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
		if started.Add(1) == 2 {
			cancel()
		}
		return inner.Run(ctx, r)
	})
	cat["wait"] = &spec
	res := Run(ctx, w, nil, Options{Catalog: cat})
	if !res.Interrupted || res.Status != RunFailed {
		t.Fatalf("%s interrupted=%v", res.Status, res.Interrupted)
	}
}

// BenchmarkFanOut runs N independent steps of 200 ms (a node that waits)
// and a join, in order and with parallel: N, side by side; it reports the
// run's time as a multiple of one step's wait (docs/BENCHMARKS.md, "Fan-out").
func BenchmarkFanOut(b *testing.B) {
	const wait = 200 * time.Millisecond
	cat := graphCatalog(newBarrier())
	cat["nap"] = &node.Spec{Type: "nap", Attempts: 1, Interface: node.Interface{Outputs: []node.Field{{Key: "out", Type: "any"}}},
		Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-t.C:
			}
			return node.Ok(map[string]any{"out": r.NodeID}), nil
		})}
	for _, n := range []int{4, 8} {
		for _, mode := range []string{"in-order", "parallel"} {
			b.Run(fmt.Sprintf("N=%d/%s", n, mode), func(b *testing.B) {
				var nodes []*workflow.Node
				join := ""
				for i := range n {
					id := fmt.Sprintf("s%d", i)
					nodes = append(nodes, &workflow.Node{ID: id, Type: "nap"})
					join += "${" + id + ".out} "
				}
				nodes = append(nodes, &workflow.Node{ID: "join", Type: "echo", Params: map[string]any{"value": join}})
				w := chain(nodes...)
				if mode == "parallel" {
					w.Parallel = n
				}
				var total time.Duration
				for b.Loop() {
					start := time.Now()
					if res := Run(context.Background(), w, nil, Options{Catalog: cat}); res.Status != RunSuccess {
						b.Fatal(res.Failure)
					}
					total += time.Since(start)
				}
				b.ReportMetric(float64(total)/float64(b.N)/float64(wait), "x-one-step")
			})
		}
	}
}
