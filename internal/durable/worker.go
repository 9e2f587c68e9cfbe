package durable

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/proc"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/value"
)

// Worker runs pflow workflows for a Temporal task queue.
type Worker struct {
	catalog node.Catalog
	env     runtime.EnvLookup
	log     io.Writer
	scope   node.Scope
	// onParams sees every node execution's params (the secrets masker).
	onParams func(map[string]any)
	redact   func(string) string
}

// Serve runs a worker until ctx ends.
func (Engine) Serve(ctx context.Context, cfg wire.WorkerConfig) error {
	c, err := dial(ctx, cfg.Conn)
	if err != nil {
		return err
	}
	defer c.Close()
	wk := &Worker{catalog: cfg.Catalog, env: cfg.Env, log: cfg.Log, scope: cfg.Scope, onParams: cfg.OnParams, redact: cfg.Redact}
	if wk.log == nil {
		wk.log = io.Discard
	}
	w := worker.New(c, cfg.Conn.Queue(), worker.Options{
		MaxConcurrentActivityExecutionSize: cfg.MaxConcurrent,
		BackgroundActivityContext:          ctx,
	})
	w.RegisterWorkflowWithOptions(wk.Run, workflow.RegisterOptions{Name: wire.WorkflowName})
	w.RegisterActivityWithOptions(wk.RunNode, activity.RegisterOptions{Name: wire.ActivityNode})
	w.RegisterActivityWithOptions(wk.Prepare, activity.RegisterOptions{Name: wire.ActivityPrepare})
	if err := w.Start(); err != nil {
		return fmt.Errorf("the worker could not start polling task queue '%s' on %s: %w", cfg.Conn.Queue(), cfg.Conn.HostPort, err)
	}
	if cfg.Ready != nil {
		cfg.Ready()
	}
	<-ctx.Done()
	w.Stop()
	return nil
}

// Prepare reads the run's inputs on the worker: the caller's values, then
// the worker's environment and settings, then defaults. Secrets that come
// from the worker's environment are never sent by the submitter.
func (wk *Worker) Prepare(ctx context.Context, root wire.Doc, params wire.Value) (*wire.PrepareOutput, error) {
	w, err := root.Parse()
	if err != nil {
		return nil, err
	}
	p, errs := runtime.PrepareInputs(w, wire.MapOf(params), wk.env)
	out := &wire.PrepareOutput{InputErrors: errs}
	for _, e := range errs {
		out.Missing = append(out.Missing, e.Missing)
	}
	if len(errs) == 0 {
		out.Values = wire.Value{V: p.Values}
		for _, name := range value.SortedKeys(p.Sources) {
			if src := p.Sources[name]; src == runtime.FromEnv || src == runtime.FromSettings {
				out.FromWorker = append(out.FromWorker, name)
			}
		}
		if wk.onParams != nil {
			wk.onParams(p.Values)
		}
	}
	return out, nil
}

// RunNode runs one node execution on this worker.
func (wk *Worker) RunNode(ctx context.Context, in wire.NodeInput) (*wire.NodeOutput, error) {
	spec, ok := wk.catalog.Lookup(in.Type)
	if !ok {
		return &wire.NodeOutput{Err: fmt.Sprintf("node type '%s' is not known to this worker: give every worker the same MCP servers and pflow version as the machine that submits the run (pflow mcp sync on the worker)", in.Type)}, nil
	}
	params := wire.MapOf(in.Params)
	if params == nil {
		params = map[string]any{}
	}
	if wk.onParams != nil {
		wk.onParams(params)
	}
	if in.Paths != nil {
		// The run's file bound (mcp serve --http --allow-dir), checked here,
		// on the machine whose files the step would touch.
		if err := node.GuardPaths(params, spec, in.WorkflowDir, node.DirGuard(in.Paths.AllowDirs)); err != nil {
			return &wire.NodeOutput{Outputs: wire.Value{V: map[string]any{"error": err.Error()}}, Action: "error", Permanent: true}, nil
		}
	}
	stop := heartbeat(ctx)
	defer stop()
	// Every process the step starts, and its descendants, end with it.
	ctx, tracker := proc.Track(ctx)
	defer tracker.Close()
	req := &node.Request{NodeID: in.NodeID, Type: in.Type, Params: params, Extra: spec.Extra, TemplateEnv: in.TemplateEnv,
		WorkflowDir: in.WorkflowDir, WorkflowFile: in.WorkflowFile, SourceLines: in.SourceLines, Attempt: in.Attempt,
		Env: wk.lookupEnv, Log: wk.log, Scope: wk.scope, Redact: wk.redact, Network: in.Network, Routed: in.Routed}
	res, err := safeRun(ctx, spec.Node, req)
	if ctx.Err() != nil {
		return nil, ctx.Err() // cancelled: Temporal records the cancellation
	}
	if err != nil {
		return &wire.NodeOutput{Err: err.Error()}, nil
	}
	if res == nil {
		res = &node.Result{}
	}
	return &wire.NodeOutput{Outputs: wire.Value{V: res.Outputs}, Action: res.Action, Retryable: res.Retryable, Permanent: res.Permanent,
		Class: res.Class, RetryAfter: res.RetryAfter, Warnings: res.Warnings, Logs: res.Logs}, nil
}

func (wk *Worker) lookupEnv(key string) (string, bool) {
	if wk.env.Process != nil {
		if v, ok := wk.env.Process(key); ok {
			return v, true
		}
	}
	if wk.env.Settings != nil {
		return wk.env.Settings(key)
	}
	return "", false
}

// heartbeat tells Temporal the execution is alive until stop is called;
// a cancelled run reaches the step through the heartbeat's answer. Steps
// shorter than a second never heartbeat.
func heartbeat(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// safeRun runs a node, turning a panic into an error.
func safeRun(ctx context.Context, nd node.Node, req *node.Request) (res *node.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in node type '%s': %v. This is a bug in pflow, not in your workflow: please report it with the workflow file", req.Type, r)
		}
	}()
	return nd.Run(ctx, req)
}
