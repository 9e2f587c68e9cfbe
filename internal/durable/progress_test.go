package durable

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/testutil/temporaldev"
	"github.com/pflow-go/pflow/internal/value"
)

type catalog map[string]*node.Spec

func (c catalog) Lookup(t string) (*node.Spec, bool) { s, ok := c[t]; return s, ok }
func (c catalog) Types() []string                    { return value.SortedKeys(c) }

// observer records the progress the submitter replays, and opens the gate
// once it has seen the gated step start.
type observer struct {
	mu      sync.Mutex
	events  []string
	started chan struct{}
	once    sync.Once
}

func (o *observer) add(s string) {
	o.mu.Lock()
	o.events = append(o.events, s)
	o.mu.Unlock()
}

func (o *observer) StepStarted(ev runtime.StepEvent) {
	o.add("started " + ev.NodeID)
	if ev.NodeID == "gated" {
		o.once.Do(func() { close(o.started) })
	}
}

func (o *observer) StepFinished(ev runtime.StepEvent, s *runtime.Step) {
	o.add("finished " + ev.NodeID + " " + s.Status)
}

func (o *observer) BatchProgress(ev runtime.StepEvent, done, total int) {}

// TestSubmitStreamsProgressWhileTheRunRuns: the submitter sees a step start
// while it is still running on the worker (the step only finishes once the
// submitter has seen it start), then the run's result.
func TestSubmitStreamsProgressWhileTheRunRuns(t *testing.T) {
	srv := temporaldev.Start(t)
	key, _ := wire.NewKey("progress-test")
	conn := wire.Conn{HostPort: srv.HostPort, TaskQueue: "progress", Key: key}
	obs := &observer{started: make(chan struct{})}
	cat := catalog{
		"echo": {Type: "echo", Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
			return node.Ok(map[string]any{"out": r.Params["value"]}), nil
		}), Interface: node.Interface{Params: []node.Field{{Key: "value", Type: "any"}}, Outputs: []node.Field{{Key: "out", Type: "any"}}}},
		"gate": {Type: "gate", Node: node.Func(func(ctx context.Context, r *node.Request) (*node.Result, error) {
			select {
			case <-obs.started:
				return node.Ok(map[string]any{"out": "through"}), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}), Interface: node.Interface{Outputs: []node.Field{{Key: "out", Type: "str"}}}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	served := make(chan error, 1)
	go func() {
		served <- Engine{}.Serve(ctx, wire.WorkerConfig{Conn: conn, Catalog: cat, Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-served:
		t.Fatalf("worker: %v", err)
	}
	ir := `{"ir_version": "0.1.0", "nodes": [{"id": "first", "type": "echo", "params": {"value": 41}}, {"id": "gated", "type": "gate", "params": {}}],
		"edges": [{"from": "first", "to": "gated"}], "outputs": {"got": {"source": "${gated.out}"}, "n": {"source": "${first.out}"}}}`
	out, err := Engine{}.Submit(ctx, wire.Submission{Conn: conn, Observer: obs, Poll: 20 * time.Millisecond,
		Input: wire.RunInput{Bundle: wire.Bundle{Root: wire.Doc{Raw: ir}}, Params: wire.Value{V: map[string]any{}}, Name: "progress"}})
	if err != nil {
		t.Fatal(err)
	}
	res := out.Report.Result()
	if res.Status != runtime.RunSuccess || res.Outputs["got"] != "through" || res.Outputs["n"] != int64(41) {
		t.Fatalf("result: %s %v %+v", res.Status, res.Outputs, res.Failure)
	}
	want := []string{"started first", "finished first completed", "started gated", "finished gated completed"}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.events) != len(want) {
		t.Fatalf("progress = %q, want %q", obs.events, want)
	}
	for i := range want {
		if obs.events[i] != want[i] {
			t.Fatalf("progress = %q, want %q", obs.events, want)
		}
	}
}
