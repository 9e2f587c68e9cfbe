package durable

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/runtime"
	pwf "github.com/pflow-go/pflow/internal/workflow"
)

// Activity settings. A node execution is bounded by its step's timeout plus
// a minute (see startToClose), a day without one; a worker that dies is
// noticed by its missing heartbeat, and the execution is then given to
// another worker.
const (
	heartbeatTimeout = 5 * time.Second
	nodeStartToClose = 24 * time.Hour
	// infraAttempts bounds how often an execution is handed to another
	// worker after the one running it was lost.
	infraAttempts = 10
)

// Memo fields of a run, readable by pflow runs --temporal.
const (
	memoStatus     = "pflow_status"
	memoFailedStep = "pflow_failed_step"
	memoWorkflow   = "pflow_workflow"
)

// Run is the Temporal workflow: it walks the pflow graph with the engine
// of a local run, each node execution an activity.
func (wk *Worker) Run(wctx workflow.Context, in wire.RunInput) (*wire.Report, error) {
	root, err := in.Bundle.Root.Parse()
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("the workflow sent with the run does not parse: %v", err), "pflow.parse", nil)
	}
	actx := workflow.WithActivityOptions(wctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: infraAttempts},
	})
	var prep wire.PrepareOutput
	if err := workflow.ExecuteActivity(actx, wire.ActivityPrepare, in.Bundle.Root, in.Params).Get(actx, &prep); err != nil {
		return nil, err
	}
	if len(prep.InputErrors) > 0 {
		_ = workflow.UpsertMemo(wctx, map[string]any{memoStatus: runtime.RunFailed})
		return &wire.Report{InputErrors: prep.InputErrors, Missing: prep.Missing, Status: runtime.RunFailed}, nil
	}

	prog := &progress{}
	if err := workflow.SetQueryHandler(wctx, wire.QueryProgress, func(from int) ([]wire.Event, error) {
		if from < 0 || from > len(prog.events) {
			from = len(prog.events)
		}
		return prog.events[from:], nil
	}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = withWorkflowContext(ctx, wctx, cancel)
	ctx = node.WithAsker(ctx, signalAsker{})
	jr := newJournal(in)
	opts := runtime.Options{
		Journal:    jr,
		Catalog:    proxyCatalog{Catalog: wk.catalog, paths: in.Paths},
		Permissive: in.Permissive,
		Network:    in.Network,
		Observer:   prog,
		Scheduler:  scheduler{},
		LoadWorkflow: func(name string) (*pwf.Workflow, error) {
			d, ok := in.Bundle.Saved[name]
			if !ok {
				return nil, fmt.Errorf("saved workflow '%s' was not sent with the run (it is looked up on the submitting machine before the run starts; a name made by a template cannot be): write the name literally or use workflow_ref", name)
			}
			return d.Parse()
		},
		ParseFile: func(path string) (*pwf.Workflow, error) {
			d, ok := in.Bundle.Files[filepath.Clean(path)]
			if !ok {
				return nil, fmt.Errorf("workflow file %s was not sent with the run (files are read on the submitting machine before the run starts; a path made by a template cannot be): write the workflow_ref literally", path)
			}
			return d.Parse()
		},
	}
	inputs := wire.MapOf(prep.Values)
	if inputs == nil {
		inputs = map[string]any{}
	}
	res := runtime.Run(ctx, root, inputs, opts)
	// pflow's own status (a run that completed on Temporal may have failed
	// in pflow's terms), for pflow runs --temporal.
	memo := map[string]any{memoStatus: res.Status}
	if res.Interrupted {
		memo[memoStatus] = "interrupted"
	}
	if res.Failure != nil && res.Failure.NodeID != "" {
		memo[memoFailedStep] = res.Failure.NodeID
	}
	if err := workflow.UpsertMemo(wctx, memo); err != nil {
		workflow.GetLogger(wctx).Warn("could not record the run's status", "error", err)
	}
	rep := wire.ReportOf(res)
	maskReport(rep, secretsOf(inputs, prep.FromWorker))
	var why string
	rep.Records, why = jr.report()
	if why != "" {
		rep.Warnings = append(rep.Warnings, runtime.Warning{Type: "not_resumable", Message: why})
	}
	return rep, nil
}

// progress records the engine's events for the submitter's queries.
type progress struct{ events []wire.Event }

func (p *progress) StepStarted(ev runtime.StepEvent) {
	p.events = append(p.events, wire.Event{Kind: "started", Depth: ev.Depth, NodeID: ev.NodeID, Type: ev.Type})
}

func (p *progress) StepFinished(ev runtime.StepEvent, s *runtime.Step) {
	p.events = append(p.events, wire.Event{Kind: "finished", Depth: ev.Depth, NodeID: ev.NodeID, Type: ev.Type,
		Status: s.Status, Action: s.Action, Error: s.Error, Source: s.Source, Duration: s.Duration})
}

func (p *progress) BatchProgress(ev runtime.StepEvent, done, total int) {
	// One event per item would flood the history of a big batch: keep the
	// latest count of each batch step.
	if n := len(p.events); n > 0 {
		last := &p.events[n-1]
		if last.Kind == "batch" && last.NodeID == ev.NodeID && last.Depth == ev.Depth {
			last.Done, last.Total = done, total
			return
		}
	}
	p.events = append(p.events, wire.Event{Kind: "batch", Depth: ev.Depth, NodeID: ev.NodeID, Type: ev.Type, Done: done, Total: total})
}

// The engine's context carries the workflow context of the coroutine it
// runs in: an activity must be scheduled, and waited for, from its own.
type wctxKey struct{}

type wctxValue struct {
	wctx   workflow.Context
	cancel context.CancelFunc
}

func withWorkflowContext(ctx context.Context, wctx workflow.Context, cancel context.CancelFunc) context.Context {
	return context.WithValue(ctx, wctxKey{}, wctxValue{wctx: wctx, cancel: cancel})
}

func workflowContext(ctx context.Context) (wctxValue, bool) {
	v, ok := ctx.Value(wctxKey{}).(wctxValue)
	return v, ok
}

// scheduler runs parallel batch items as workflow coroutines and retry
// pauses as durable timers.
type scheduler struct{}

func (scheduler) Parallel(ctx context.Context, n int, fn func(ctx context.Context)) {
	v, _ := workflowContext(ctx)
	wg := workflow.NewWaitGroup(v.wctx)
	for range n {
		wg.Add(1)
		workflow.Go(v.wctx, func(c workflow.Context) {
			defer wg.Done()
			fn(withWorkflowContext(ctx, c, v.cancel))
		})
	}
	wg.Wait(v.wctx)
}

func (scheduler) Sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	if d <= 0 {
		return true
	}
	v, _ := workflowContext(ctx)
	if err := workflow.Sleep(v.wctx, d); err != nil {
		v.cancel()
		return false
	}
	return ctx.Err() == nil
}

// proxyCatalog is the worker's catalog whose nodes run as activities.
// paths is the run's file bound, carried to each activity.
type proxyCatalog struct {
	node.Catalog
	paths *wire.PathLimit
}

func (c proxyCatalog) Lookup(t string) (*node.Spec, bool) {
	spec, ok := c.Catalog.Lookup(t)
	if !ok {
		return nil, false
	}
	if spec.Inline {
		// It computes over its params and the run's data only: it runs in
		// workflow code, deterministically, like a condition.
		return spec, true
	}
	proxy := *spec
	proxy.Node = activityNode{paths: c.paths}
	// A fingerprint reads the world (a file's size and time): not in
	// workflow code, whose every replay must decide the same.
	proxy.Fingerprint = nil
	return &proxy, true
}

// activityNode runs a node execution as an activity on some worker.
type activityNode struct{ paths *wire.PathLimit }

func (a activityNode) Run(ctx context.Context, req *node.Request) (*node.Result, error) {
	v, ok := workflowContext(ctx)
	if !ok {
		return nil, errors.New("durable: a node ran outside a Temporal workflow")
	}
	actx := workflow.WithActivityOptions(v.wctx, workflow.ActivityOptions{
		StartToCloseTimeout: startToClose(req.Params),
		HeartbeatTimeout:    heartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: infraAttempts},
	})
	in := wire.NodeInput{NodeID: req.NodeID, Type: req.Type, Params: wire.Value{V: req.Params}, TemplateEnv: req.TemplateEnv,
		WorkflowDir: req.WorkflowDir, WorkflowFile: req.WorkflowFile, SourceLines: req.SourceLines, Attempt: req.Attempt, Network: req.Network, Routed: req.Routed, Paths: a.paths}
	var out wire.NodeOutput
	if err := workflow.ExecuteActivity(actx, wire.ActivityNode, in).Get(actx, &out); err != nil {
		if temporal.IsCanceledError(err) {
			v.cancel() // the engine reports the run as interrupted
			return nil, errors.New("interrupted")
		}
		return nil, fmt.Errorf("step '%s' could not be run on a Temporal worker: %s", req.NodeID, activityError(err))
	}
	if out.Err != "" {
		return nil, errors.New(out.Err)
	}
	return &node.Result{Outputs: wire.MapOf(out.Outputs), Action: out.Action, Retryable: out.Retryable, Permanent: out.Permanent,
		Class: out.Class, RetryAfter: out.RetryAfter, Warnings: out.Warnings, Logs: out.Logs}, nil
}

// startToClose bounds one node execution on Temporal: the step's own
// timeout with a minute's grace for its node to stop and report,
// or a day for a step without one (a lost worker is noticed sooner, by its
// heartbeat).
func startToClose(params map[string]any) time.Duration {
	if d, err := node.Duration(params, "timeout", 0); err == nil && d > 0 {
		return d + time.Minute
	}
	return nodeStartToClose
}

// activityError is the innermost message of an activity failure.
func activityError(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// secretsOf is what the run's report must not show: the inputs that came
// from the worker's environment or settings (API keys live there), and
// secret-named inputs. The submitter masks what it knows; these only the
// worker knew.
func secretsOf(inputs map[string]any, fromWorker []string) *redact.Redactor {
	red := redact.NewRedactor()
	red.AddSecretsIn(inputs)
	for _, name := range fromWorker {
		if s, ok := inputs[name].(string); ok {
			red.AddSecret(name, s)
		}
	}
	return red
}

// maskReport masks secrets in everything the report shows (its records for a
// resume stay as they are: they are sealed and never shown).
func maskReport(rep *wire.Report, red *redact.Redactor) {
	rep.Outputs = wire.Value{V: red.Value(rep.Outputs.V)}
	if f := rep.Failure; f != nil {
		f.Message = red.String(f.Message)
		f.Details = wire.Value{V: red.Value(f.Details.V)}
	}
	for i := range rep.Warnings {
		rep.Warnings[i].Message = red.String(rep.Warnings[i].Message)
	}
	var steps func([]wire.StepReport)
	steps = func(ss []wire.StepReport) {
		for i := range ss {
			s := &ss[i]
			s.Params = wire.Value{V: red.Value(s.Params.V)}
			s.Outputs = wire.Value{V: red.Value(s.Outputs.V)}
			s.Error = red.String(s.Error)
			for j, l := range s.Logs {
				s.Logs[j] = red.String(l)
			}
			steps(s.Children)
		}
	}
	steps(rep.Steps)
}
