// Package runtime executes workflows: it walks the node graph by actions,
// resolves templates into params, applies retries, batches, nested
// workflows and proxy mappings, and reports every step.
//
// The shared store is a map: workflow inputs live at its root, each node's
// outputs under shared[nodeID] (namespacing, the default). Templates resolve
// against that root, so ${name} and ${node.key} both work.
package runtime

import (
	"context"
	"fmt"
	"github.com/pflow-go/pflow/internal/stepkeys"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// Step statuses.
const (
	StatusCompleted   = "completed"
	StatusFailed      = "failed"
	StatusNotExecuted = "not_executed"
	// StatusSkipped is a step that did not run because the workflow decided
	// so: its `when` was false, or it is on a branch the run did not take.
	// Its outputs are absent.
	StatusSkipped = "skipped"
)

// Run statuses.
const (
	RunSuccess  = "success"
	RunDegraded = "degraded"
	RunFailed   = "failed"
)

// Failure categories.
const (
	CategoryExecution   = "execution_failure"
	CategoryTemplate    = "template_error"
	CategoryException   = "exception"
	CategoryInterrupted = "interrupted"
)

// Options configure a run.
type Options struct {
	// Catalog resolves node types.
	Catalog node.Catalog
	// Env is where inputs and nodes look up configuration.
	Env EnvLookup
	// Log receives diagnostics for humans (may be nil).
	Log io.Writer
	// Permissive keeps unresolved templates as text (with a warning) instead
	// of failing the node (strict, the default).
	Permissive bool
	// PathGuard, when set, must accept every file path a step names before
	// the step runs: each param of sink node.SinkPath (the file nodes'
	// paths) and a nested workflow's workflow_ref, made absolute (pflow mcp
	// serve --http bounds them by --allow-dir). Its error says why and how
	// to fix it.
	PathGuard func(path string) error
	// Network bounds where network nodes may connect (node.Request.Network).
	Network *node.NetPolicy
	// LoadWorkflow resolves `workflow_name` of a nested workflow step (the
	// library). Paths (`workflow_ref`) are read by the runtime itself.
	LoadWorkflow func(name string) (*workflow.Workflow, error)
	// Observer receives progress events (may be nil).
	Observer Observer
	// MaxDepth bounds nested workflows (default 10).
	MaxDepth int
	// MaxSteps bounds node executions per workflow, protecting against
	// endless action loops (default 10,000 or 100 × nodes, whichever is larger).
	MaxSteps int
	// OnParams, when set, sees every step's resolved params (and a nested
	// workflow's inputs) before the step runs, so the caller can register
	// secret values with its redactor before anything can print them. It
	// may be called from several goroutines and must not keep params.
	OnParams func(params map[string]any)
	// Redact, when set, masks the run's known secrets in a text; nodes get
	// it as node.Request.Redact.
	Redact func(string) string
	// Journal is the step boundary (may be nil): the run record, resume and
	// the step cache (see Journal).
	Journal Journal
	// Scheduler runs parallel batch items and the pauses between retries
	// (nil: goroutines and timers). A durable engine supplies its own, so a
	// run can be replayed (internal/durable).
	Scheduler Scheduler
	// ParseFile reads the workflow_ref of a nested workflow step (nil:
	// workflow.ParseFile).
	ParseFile func(path string) (*workflow.Workflow, error)
}

// Scheduler runs the engine's concurrency and waiting.
type Scheduler interface {
	// Parallel runs n copies of fn concurrently, each with a context derived
	// from ctx, and returns when all have returned.
	Parallel(ctx context.Context, n int, fn func(ctx context.Context))
	// Sleep pauses for d; it returns false when ctx ended first.
	Sleep(ctx context.Context, d time.Duration) bool
}

// goScheduler is the default Scheduler: goroutines and timers.
type goScheduler struct{}

func (goScheduler) Parallel(ctx context.Context, n int, fn func(ctx context.Context)) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(ctx)
		}()
	}
	wg.Wait()
}

func (goScheduler) Sleep(ctx context.Context, d time.Duration) bool { return sleepCtx(ctx, d) }

// Observer receives progress events. Calls may come from several goroutines.
type Observer interface {
	StepStarted(ev StepEvent)
	StepFinished(ev StepEvent, s *Step)
	BatchProgress(ev StepEvent, done, total int)
}

// StepEvent identifies a step; Depth is 0 for top-level steps.
type StepEvent struct {
	Depth  int
	NodeID string
	Type   string
}

// Step reports one executed (or skipped) node.
type Step struct {
	NodeID   string         `json:"node_id"`
	Type     string         `json:"node_type"`
	Status   string         `json:"status"`
	Action   string         `json:"action,omitempty"`
	Duration time.Duration  `json:"-"`
	Started  time.Time      `json:"-"`
	Attempts int            `json:"attempts,omitempty"`
	Params   map[string]any `json:"-"`
	Outputs  map[string]any `json:"-"`
	Error    string         `json:"error,omitempty"`
	// Class is the error class of a failed http or MCP step (node.Class*).
	Class string `json:"error_class,omitempty"`
	// Logs are what the node's service logged while it ran.
	Logs  []string      `json:"logs,omitempty"`
	Batch *BatchSummary `json:"-"`
	// Children are the steps of a nested workflow.
	Children []*Step `json:"-"`
	// Source says where the outcome came from: "" when the node ran,
	// SourceResumed when it was re-used from the run being resumed,
	// SourceCache when the step cache served it.
	Source string `json:"source,omitempty"`

	// omitted is set on a batch item the journal keeps nothing of (see
	// OmittingJournal); on a batch step, omittedItems counts its items that
	// completed so.
	omitted      bool
	omittedItems int

	// executed is set when a node of this step ran in this run (for a batch,
	// any item; for a nested workflow, any of its steps) and what it gave
	// may differ from the run being resumed: a pure node run again on
	// inputs that were all re-used (a replay) gives what it gave before,
	// and does not count, so the steps after it may still be re-used.
	executed bool
}

// Ran reports whether the step ran (completed or failed): not skipped and
// not left unexecuted by a run that stopped.
func (s *Step) Ran() bool { return s.Status != StatusNotExecuted && s.Status != StatusSkipped }

// BatchSummary summarizes a batch step.
type BatchSummary struct {
	Total    int          `json:"total"`
	Success  int          `json:"success"`
	Failed   int          `json:"failed"`
	Errors   []BatchError `json:"errors,omitempty"`
	Parallel bool         `json:"parallel"`
}

// Value is s as a canonical value, as traces and run records write it, with
// the first maxErrors failed items (each with the item itself when
// withItems).
func (s *BatchSummary) Value(maxErrors int, withItems bool) map[string]any {
	m := map[string]any{"total": int64(s.Total), "success": int64(s.Success), "failed": int64(s.Failed), "parallel": s.Parallel}
	if len(s.Errors) > 0 {
		errs := make([]any, 0, min(len(s.Errors), maxErrors))
		for _, e := range s.Errors[:min(len(s.Errors), maxErrors)] {
			em := map[string]any{"index": int64(e.Index), "error": e.Error}
			if withItems {
				em["item"] = e.Item
			}
			errs = append(errs, em)
		}
		m["errors"] = errs
	}
	return m
}

// BatchError is one failed batch item.
type BatchError struct {
	Index int    `json:"index"`
	Item  any    `json:"item"`
	Error string `json:"error"`
}

// Failure describes why a run failed.
type Failure struct {
	NodeID   string         `json:"node_id,omitempty"`
	NodeType string         `json:"node_type,omitempty"`
	Line     int            `json:"line,omitempty"`
	Category string         `json:"category"`
	Message  string         `json:"message"`
	Details  map[string]any `json:"details,omitempty"`
}

// Warning is a non-fatal problem that makes a run "degraded".
type Warning struct {
	NodeID  string `json:"node_id,omitempty"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Result is the outcome of a run.
type Result struct {
	Status      string
	Interrupted bool
	// Outputs are the declared outputs that resolved, in declaration order.
	Outputs     map[string]any
	OutputOrder []string
	Shared      map[string]any
	Steps       []*Step
	Failure     *Failure
	Warnings    []Warning
	// LLMCalls are the llm_usage records of every LLM call, with node_id.
	LLMCalls []map[string]any
	// Waiting is set when the run paused at an ask step (Status RunWaiting).
	Waiting  *Waiting
	Started  time.Time
	Duration time.Duration
}

// Success reports whether the run succeeded (possibly degraded).
func (r *Result) Success() bool { return r.Status != RunFailed }

// Run executes w with already prepared inputs (see PrepareInputs).
func Run(ctx context.Context, w *workflow.Workflow, inputs map[string]any, opts Options) *Result {
	sc := newScope()
	defer sc.Close()
	e := &executor{opts: opts, scope: sc, reuses: opts.Journal != nil}
	if rj, ok := opts.Journal.(ReuseJournal); ok {
		e.reuses = rj.Reuses()
	}
	e.omitter, _ = opts.Journal.(OmittingJournal)
	if e.opts.Log == nil {
		e.opts.Log = io.Discard
	}
	if e.opts.MaxDepth == 0 {
		e.opts.MaxDepth = 10
	}
	if e.opts.Scheduler == nil {
		e.opts.Scheduler = goScheduler{}
	}
	if e.opts.ParseFile == nil {
		e.opts.ParseFile = workflow.ParseFile
	}
	dir := ""
	if w.Source != nil && w.Source.Path != "" {
		dir = filepath.Dir(w.Source.Path)
	}
	return e.run(ctx, w, inputs, 0, nil, dir, "", false)
}

type executor struct {
	opts  Options
	scope *scope
	mu    sync.Mutex // guards result slices written from batch goroutines
	deps  depsCache  // step dependencies, for the journal
	// reuses is set when the journal may re-use earlier outcomes (it needs
	// records' Deps and UpstreamRan; see ReuseJournal).
	reuses bool
	// omitter, when the journal is one, may keep nothing of batch items.
	omitter OmittingJournal
}

// frame is one (possibly nested) workflow execution.
type frame struct {
	w      *workflow.Workflow
	shared map[string]any
	res    *Result
	depth  int
	stack  []string // workflow files on the nesting stack
	dir    string   // directory of the workflow file
	// For the journal: prefix of step paths ("" at the top, "build/" in a
	// nested workflow), forced when the nested step's upstream ran, how often
	// each step started, and which steps ran (were not re-used). Written by
	// the sequential walk only.
	prefix string
	forced bool
	occ    map[string]int
	ran    map[string]bool
	// routed holds the steps with an edge for a failure (error or an error
	// class): their failures are handled by the workflow.
	routed map[string]bool
	// touched, when non-nil, collects the shared-store keys publish wrote:
	// a step of a parallel wave publishes into its own copy of the store,
	// merged into the frame's after the wave (see walkParallel).
	touched []string
}

// occurrence is how many times the walk has started step id.
func (f *frame) occurrence(id string) int { return f.occ[id] }

// hasRun reports whether step id ran (was not re-used) in this run.
func (f *frame) hasRun(id string) bool { return f.ran[id] }

func (e *executor) run(ctx context.Context, w *workflow.Workflow, inputs map[string]any, depth int, stack []string, dir, prefix string, forced bool) *Result {
	res := &Result{Started: time.Now(), Shared: make(map[string]any, len(inputs)+len(w.Nodes))}
	for k, v := range inputs {
		res.Shared[k] = v
	}
	f := &frame{w: w, shared: res.Shared, res: res, depth: depth, stack: stack, dir: dir, prefix: prefix, forced: forced, routed: w.RoutedSteps()}
	if e.opts.Journal != nil {
		f.occ = make(map[string]int, len(w.Nodes))
		if e.reuses {
			f.ran = map[string]bool{}
		}
	}
	e.walk(ctx, f)
	res.Duration = time.Since(res.Started)
	if res.Status == "" {
		res.Status = RunSuccess
		if len(res.Warnings) > 0 {
			res.Status = RunDegraded
		}
		e.resolveOutputs(f)
	}
	return res
}

func (e *executor) walk(ctx context.Context, f *frame) {
	w := f.w
	if len(w.Nodes) == 0 {
		f.res.Status = RunFailed
		f.res.Failure = &Failure{Category: CategoryException, Message: "workflow has no steps"}
		return
	}
	byID := make(map[string]*workflow.Node, len(w.Nodes))
	for _, n := range w.Nodes {
		byID[n.ID] = n
	}
	succ := make(map[string]map[string]string, len(w.Nodes))
	for _, ed := range w.Edges {
		m := succ[ed.From]
		if m == nil {
			m = map[string]string{}
			succ[ed.From] = m
		}
		m[ed.ActionOrDefault()] = ed.To
	}
	if w.Parallel > 0 {
		e.walkParallel(ctx, f, byID, succ)
		return
	}
	cur := w.Nodes[0]
	if w.StartNode != "" {
		if n, ok := byID[w.StartNode]; ok {
			cur = n
		}
	}
	maxSteps := e.opts.MaxSteps
	if maxSteps == 0 {
		maxSteps = max(10000, 100*len(w.Nodes))
	}
	executed := map[string]bool{}
	for count := 0; cur != nil; count++ {
		if count >= maxSteps {
			f.res.Status = RunFailed
			f.res.Failure = &Failure{NodeID: cur.ID, Line: cur.Line, Category: CategoryException,
				Message: fmt.Sprintf("workflow stopped after %d steps: the action edges form an endless loop through '%s'. Make the loop end on some action (e.g. route 'error' to a step without a path back).", maxSteps, cur.ID)}
			break
		}
		if err := ctx.Err(); err != nil {
			e.interrupt(f, cur)
			break
		}
		if f.occ != nil {
			f.occ[cur.ID]++
		}
		step, fail := e.runStep(ctx, f, cur)
		executed[cur.ID] = true
		if f.ran != nil && step.executed {
			f.ran[cur.ID] = true
		}
		if ctx.Err() != nil {
			// The node was cut short by cancellation: report the interruption,
			// not whatever error the killed process produced.
			step.Status = StatusFailed
			step.Error = "interrupted"
			e.interrupt(f, cur)
			break
		}
		if isWaiting(fail) { // an ask step that reaches nobody now (ask.go)
			e.pause(f, cur, fail)
			break
		}
		action := step.Action
		failed := isErrorAction(action)
		if failed && step.Class != "" {
			// A failure's class routes it when the step has an edge for it
			// ('on: {rate_limited: wait}'); otherwise the error edge does.
			if _, ok := succ[cur.ID][step.Class]; ok {
				action = step.Class
				step.Action = action
			}
		}
		next, ok := succ[cur.ID][action]
		if !ok {
			if isErrorAction(action) {
				f.res.Status = RunFailed
				f.res.Failure = fail
				if f.res.Failure == nil {
					f.res.Failure = &Failure{NodeID: cur.ID, NodeType: cur.Type, Line: cur.Line, Category: CategoryExecution,
						Message: fmt.Sprintf("Workflow failed with action: %s", action)}
				}
			}
			break
		}
		if failed {
			f.res.Warnings = append(f.res.Warnings, Warning{NodeID: cur.ID, Type: "handled_error",
				Message: fmt.Sprintf("step '%s' failed and the workflow continued on its '%s' edge to '%s': %s", cur.ID, action, next, step.Error)})
		}
		cur = byID[next]
	}
	e.listUnrun(f, executed)
}

// listUnrun lists the steps that never ran, so a reader sees the whole
// plan: skipped when the run finished (it did not take their branch; the
// record shows them too), not executed when it stopped (or paused) before
// them.
func (e *executor) listUnrun(f *frame, executed map[string]bool) {
	status := StatusSkipped
	if f.res.Status == RunFailed || f.res.Status == RunWaiting {
		status = StatusNotExecuted
	}
	now := time.Now()
	for _, n := range f.w.Nodes {
		if executed[n.ID] {
			continue
		}
		step := &Step{NodeID: n.ID, Type: n.Type, Status: status}
		f.res.Steps = append(f.res.Steps, step)
		if status == StatusSkipped && e.opts.Observer != nil {
			e.opts.Observer.StepFinished(StepEvent{Depth: f.depth, NodeID: n.ID, Type: n.Type}, step)
		}
		if status == StatusSkipped && e.opts.Journal != nil {
			rec := e.newRecord(f, n, KindNode, -1)
			rec.Status, rec.Action, rec.Started = StatusSkipped, "default", now
			e.opts.Journal.End(rec)
		}
	}
}

func (e *executor) interrupt(f *frame, cur *workflow.Node) {
	f.res.Status = RunFailed
	f.res.Interrupted = true
	f.res.Failure = &Failure{NodeID: cur.ID, NodeType: cur.Type, Line: cur.Line, Category: CategoryInterrupted,
		Message: "Workflow interrupted: the run was cancelled; every child process was stopped."}
}

func isErrorAction(a string) bool { return strings.HasPrefix(a, "error") }

// maxRetryAfter bounds the wait a Retry-After header may impose on a retry.
const maxRetryAfter = 10 * time.Minute

// runStep executes one node (or batch) and records its step.
func (e *executor) runStep(ctx context.Context, f *frame, n *workflow.Node) (*Step, *Failure) {
	ev := StepEvent{Depth: f.depth, NodeID: n.ID, Type: n.Type}
	if e.opts.Observer != nil {
		e.opts.Observer.StepStarted(ev)
	}
	step := &Step{NodeID: n.ID, Type: n.Type, Started: time.Now()}
	if skip, fail := e.skipByCondition(f, n); skip || fail != nil {
		return e.skipped(f, n, ev, step, fail)
	}
	var fail *Failure
	var rec *StepRecord
	if n.Batch != nil {
		fail = e.runBatch(ctx, f, n, step, ev)
	} else {
		var outputs map[string]any
		outputs, rec, fail = e.execNode(ctx, f, n, f.shared, step, -1)
		e.publish(f, n, outputs)
	}
	step.Duration = time.Since(step.Started)
	if fail != nil {
		step.Status = StatusFailed
		step.Error = fail.Message
		if step.Action == "" || !isErrorAction(step.Action) {
			step.Action = "error"
		}
	} else {
		step.Status = StatusCompleted
		if step.Action == "" {
			step.Action = "default"
		}
	}
	markWaiting(step, fail) // ask.go
	if e.opts.Journal != nil {
		if rec == nil { // a batch, a nested workflow, or a step that failed before its node could run
			kind := KindNode
			switch {
			case n.Batch != nil:
				kind = KindBatch
			case n.Nested():
				kind = KindWorkflow
			}
			rec = e.newRecord(f, n, kind, -1)
			if kind == KindBatch {
				if spec, ok := e.opts.Catalog.Lookup(n.Type); ok {
					rec.Effects = spec.Effects // a batch of a pure node is pure
				}
				rec.Omitted = step.omittedItems
			}
		}
		e.finishRecord(rec, step, fail)
	}
	e.mu.Lock()
	f.res.Steps = append(f.res.Steps, step)
	e.mu.Unlock()
	if e.opts.Observer != nil {
		e.opts.Observer.StepFinished(ev, step)
	}
	return step, fail
}

// publish writes a node's outputs into the shared store and applies its
// output mappings.
func (e *executor) publish(f *frame, n *workflow.Node, outputs map[string]any) {
	if outputs == nil {
		outputs = map[string]any{}
	}
	set := func(k string, v any) {
		f.shared[k] = v
		if f.touched != nil {
			f.touched = append(f.touched, k)
		}
	}
	if f.w.Namespacing() {
		set(n.ID, outputs)
	} else {
		for k, v := range outputs {
			set(k, v)
		}
	}
	if m := f.w.Mappings[n.ID]; m != nil {
		for out, target := range m.OutputMappings {
			if v, ok := outputs[out]; ok {
				set(target, v)
			}
		}
	}
}

// execNode prepares params, runs the node with retries and returns its
// outputs. root is the template context (the shared store, or a batch item's
// overlay of it); item is the batch item index (-1 for a plain step). With a
// journal, it returns the execution's record (nil when the node could not be
// prepared), which the caller finishes; the journal may supply an earlier
// outcome instead of running the node.
func (e *executor) execNode(ctx context.Context, f *frame, n *workflow.Node, root map[string]any, step *Step, item int) (map[string]any, *StepRecord, *Failure) {
	failf := func(cat, msg string) *Failure {
		return &Failure{NodeID: n.ID, NodeType: n.Type, Line: n.Line, Category: cat, Message: msg}
	}
	if n.Nested() {
		out, fail := e.execNested(ctx, f, n, root, step, item)
		return out, nil, fail
	}
	spec, ok := e.opts.Catalog.Lookup(n.Type)
	if !ok {
		return map[string]any{"error": "unknown node type"}, nil, failf(CategoryException,
			fmt.Sprintf("Unknown node type '%s': it is not in the registry (validation names the available node types).", n.Type))
	}
	p, perr := e.prepareParams(f, n, spec, root)
	if perr != nil {
		return map[string]any{"error": perr.Message}, nil, perr
	}
	params, attempts, wait := p.params, p.attempts, p.wait
	step.Params = params
	e.sawParams(params)
	req := &node.Request{
		NodeID:      n.ID,
		Type:        n.Type,
		Params:      params,
		Extra:       spec.Extra,
		TemplateEnv: p.bound,
		Shared:      root,
		WorkflowDir: f.dir,
		Env:         e.lookupEnv,
		Log:         e.opts.Log,
		Scope:       e.scope,
		SourceLines: n.SourceLines,
		Redact:      e.opts.Redact,
		Routed:      f.routed[n.ID],
		Network:     e.opts.Network,
	}
	if f.w.Source != nil {
		req.WorkflowFile = f.w.Source.Path
	}
	var rec *StepRecord
	if item >= 0 && e.omitter != nil && e.omitter.Omits(spec.Effects, p.cache) {
		step.omitted = true
	} else if e.opts.Journal != nil {
		rec = e.newRecord(f, n, KindNode, item)
		rec.Params, rec.TemplateEnv, rec.Effects, rec.Cache = params, p.bound, spec.Effects, p.cache
		if spec.Fingerprint != nil {
			rec.Fingerprint = spec.Fingerprint(req)
		}
		prior, err := e.opts.Journal.Begin(ctx, rec)
		if err != nil {
			step.executed = true // it may not be re-used: its dependants run too
			out := map[string]any{"error": err.Error()}
			step.Outputs = out
			return out, rec, failf(CategoryException, err.Error())
		}
		if prior != nil {
			out := prior.Outputs
			if out == nil {
				out = map[string]any{}
			}
			step.Source, step.Outputs, step.Action = prior.Source, out, prior.Action
			rec.Outputs, rec.SourceRun = out, prior.SourceRun
			return out, rec, nil
		}
	}
	// A replayed node whose inputs were all re-used gives what it gave
	// before (the record keeps nothing of it; see node.Effects.Replayed).
	step.executed = !(spec.Effects.Replayed() && rec != nil && !rec.UpstreamRan)
	_, explicitRetries := n.Params["retries"]
	var res *node.Result
	var err error
	for attempt := 1; ; attempt++ {
		req.Attempt = attempt
		step.Attempts = attempt
		res, err = safeRun(ctx, spec.Node, req)
		retry := err != nil || (res != nil && isErrorAction(res.Action) && !res.Permanent && (res.Retryable || explicitRetries))
		if !retry || attempt >= attempts || ctx.Err() != nil {
			break
		}
		pause := wait
		if res != nil && res.RetryAfter > pause {
			// The service said when to come back (HTTP Retry-After).
			pause = min(res.RetryAfter, maxRetryAfter)
		}
		if !e.opts.Scheduler.Sleep(ctx, pause) {
			break
		}
	}
	if fl := waitingFailure(n, err); fl != nil { // ask.go
		return map[string]any{}, rec, fl
	}
	if err != nil {
		msg := err.Error()
		if attempts > 1 {
			msg = fmt.Sprintf("%s (after %d attempts)", msg, step.Attempts)
		}
		out := map[string]any{"error": msg}
		step.Outputs = out
		return out, rec, failf(CategoryException, msg)
	}
	if res == nil {
		res = &node.Result{}
	}
	if res.Outputs == nil {
		res.Outputs = map[string]any{}
	}
	step.Outputs = res.Outputs
	step.Action = res.Action
	step.Class = res.Class
	step.Logs = res.Logs
	if len(res.Warnings) > 0 {
		e.mu.Lock()
		for _, w := range res.Warnings {
			f.res.Warnings = append(f.res.Warnings, Warning{NodeID: n.ID, Type: "node_warning", Message: w})
		}
		e.mu.Unlock()
	}
	e.collectLLM(f, n.ID, res.Outputs)
	if isErrorAction(res.Action) {
		msg, _ := res.Outputs["error"].(string)
		if msg == "" {
			msg = fmt.Sprintf("step '%s' returned action '%s'", n.ID, res.Action)
		}
		fl := failf(CategoryExecution, msg)
		fl.Details = failureDetails(res.Outputs)
		return res.Outputs, rec, fl
	}
	return res.Outputs, rec, nil
}

func (e *executor) sawParams(params map[string]any) {
	if e.opts.OnParams != nil {
		e.opts.OnParams(params)
	}
}

// safeRun runs a node, turning a panic into an error that names the node
// type instead of crashing the whole run.
func safeRun(ctx context.Context, nd node.Node, req *node.Request) (res *node.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in node type '%s': %v. This is a bug in pflow, not in your workflow: please report it with the workflow file", req.Type, r)
		}
	}()
	return nd.Run(ctx, req)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (e *executor) lookupEnv(key string) (string, bool) {
	if e.opts.Env.Process != nil {
		if v, ok := e.opts.Env.Process(key); ok {
			return v, true
		}
	}
	if e.opts.Env.Settings != nil {
		return e.opts.Env.Settings(key)
	}
	return "", false
}

// prepared is what prepareParams builds for one node execution.
type prepared struct {
	params   map[string]any
	bound    map[string]string
	attempts int
	wait     time.Duration
	cache    CacheSetting
}

// prepareParams builds the params a node receives: the step's params with
// input mappings applied, engine controls removed, internal params
// injected, templates resolved and values coerced to declared types.
func (e *executor) prepareParams(f *frame, n *workflow.Node, spec *node.Spec, root map[string]any) (prepared, *Failure) {
	failf := func(cat, msg string) *Failure {
		return &Failure{NodeID: n.ID, NodeType: n.Type, Line: n.Line, Category: cat, Message: msg}
	}
	params, bound, attempts, wait, fail := e.prepareParamsSinks(f, n, spec, root, failf)
	if fail != nil {
		return prepared{}, fail
	}
	p := prepared{params: params, bound: bound, attempts: attempts, wait: wait}
	if v, ok := params[stepkeys.Cache]; ok {
		if _, declared := spec.Interface.Param(stepkeys.Cache); !declared {
			cs, err := stepkeys.ParseCache(v)
			if err != nil {
				return prepared{}, failf(CategoryException, fmt.Sprintf("step '%s': %s", n.ID, err.Error()))
			}
			p.cache = cs
			delete(params, stepkeys.Cache)
		}
	}
	return p, nil
}

func (e *executor) prepareParamsSinks(f *frame, n *workflow.Node, spec *node.Spec, root map[string]any, failf func(cat, msg string) *Failure) (map[string]any, map[string]string, int, time.Duration, *Failure) {
	attempts := max(spec.Attempts, 1)
	wait := spec.RetryWait
	params := make(map[string]any, len(n.Params)+4)
	for k, v := range n.Params {
		params[k] = v
	}
	// The condition and the ordering were read by the walk.
	for _, k := range [...]string{stepkeys.When, stepkeys.After} {
		if _, ok := params[k]; ok {
			if _, declared := spec.Interface.Param(k); !declared {
				delete(params, k)
			}
		}
	}
	if m := f.w.Mappings[n.ID]; m != nil {
		for param, path := range m.InputMappings {
			if _, set := params[param]; set {
				continue
			}
			params[param] = "${" + strings.TrimSuffix(strings.TrimPrefix(path, "${"), "}") + "}"
		}
	}
	// Params whose text is executed or parsed (a command, code, a URL) take
	// their template values through their sink, never pasted as text.
	sinkParams, bound, sinkUnresolved, serr := bindSinks(params, spec, root, n.SourceLines)
	if serr != nil {
		return nil, nil, 0, 0, failf(CategoryTemplate, serr.Error())
	}
	// Resolve templates first so that controls may be templated too.
	if template.HasTemplate(params) || len(sinkUnresolved) > 0 {
		resolved, unresolved := template.Resolve(params, root)
		unresolved = append(unresolved, sinkUnresolved...)
		if len(unresolved) > 0 {
			if !e.opts.Permissive {
				var msgs []string
				for _, p := range sortedParamsWith(n.Params, unresolved) {
					msgs = append(msgs, template.UnresolvedError(p, unresolvedIn(n.Params[p], unresolved), root).Error())
				}
				if len(msgs) == 0 {
					msgs = append(msgs, template.UnresolvedError("params", unresolved, root).Error())
				}
				return nil, nil, 0, 0, failf(CategoryTemplate, strings.Join(msgs, "\n\n"))
			}
			e.mu.Lock()
			f.res.Warnings = append(f.res.Warnings, Warning{NodeID: n.ID, Type: "template_resolution",
				Message: fmt.Sprintf("unresolved template(s) kept as text in step '%s': %s", n.ID, strings.Join(unresolved, ", "))})
			e.mu.Unlock()
		}
		params = resolved.(map[string]any)
	}
	for k, v := range sinkParams {
		params[k] = v
	}
	if v, ok := params[stepkeys.Retries]; ok {
		r, err := stepkeys.ParseRetries(v)
		if err != nil {
			return nil, nil, 0, 0, failf(CategoryException, fmt.Sprintf("step '%s': %s", n.ID, err))
		}
		attempts = r + 1
		delete(params, stepkeys.Retries)
	}
	if v, ok := params[stepkeys.RetryWait]; ok {
		d, err := stepkeys.ParseRetryWait(v)
		if err != nil {
			return nil, nil, 0, 0, failf(CategoryException, fmt.Sprintf("step '%s': %s", n.ID, err))
		}
		if v != nil {
			wait = d
		}
		delete(params, stepkeys.RetryWait)
	}
	if err := coerceParams(params, spec); err != nil {
		return nil, nil, 0, 0, failf(CategoryException, err.Error())
	}
	if err := e.guardPaths(params, spec, f.dir); err != nil {
		return nil, nil, 0, 0, failf(CategoryExecution, err.Error())
	}
	return params, bound, attempts, wait, nil
}

// guardPaths checks every file path param against Options.PathGuard.
func (e *executor) guardPaths(params map[string]any, spec *node.Spec, dir string) error {
	return node.GuardPaths(params, spec, dir, e.opts.PathGuard)
}

// coerceParams converts values to the types the node declares: containers
// given to a str param become JSON text; JSON text given to a dict/list param
// becomes the container.
func coerceParams(params map[string]any, spec *node.Spec) error {
	for _, fld := range spec.Interface.Params {
		v, ok := params[fld.Key]
		if !ok || v == nil {
			continue
		}
		t := NormalizeType(baseType(fld.Type))
		switch t {
		case "str":
			switch v.(type) {
			case map[string]any, []any:
				params[fld.Key] = value.Stringify(v)
			}
		case "dict", "list":
			s, isStr := v.(string)
			if !isStr {
				continue
			}
			trimmed := strings.TrimSpace(s)
			if trimmed == "" || (trimmed[0] != '{' && trimmed[0] != '[') {
				continue
			}
			p, ok := value.TryParseContainer(trimmed)
			if !ok {
				return fmt.Errorf("Parameter '%s' expects %s but received malformed JSON string: %q. Fix: make the source output valid JSON (double-quoted keys, no trailing commas).", fld.Key, t, value.Truncate(s, 80, "..."))
			}
			if (t == "dict") == (value.TypeName(p) == "dict") {
				params[fld.Key] = p
			}
		}
	}
	return nil
}

// baseType strips unions and generics: "dict|str" → "dict" only when
// unambiguous; "list[dict]" → "list".
func baseType(t string) string {
	if strings.Contains(t, "|") {
		return "any"
	}
	if i := strings.IndexByte(t, '['); i > 0 {
		return t[:i]
	}
	return t
}

func sortedParamsWith(params map[string]any, unresolved []string) []string {
	var out []string
	for _, k := range value.SortedKeys(params) {
		if len(unresolvedIn(params[k], unresolved)) > 0 {
			out = append(out, k)
		}
	}
	return out
}

// unresolvedIn returns the unresolved variables that appear in v.
func unresolvedIn(v any, unresolved []string) []string {
	var out []string
	var walk func(any)
	seen := map[string]bool{}
	walk = func(x any) {
		switch t := x.(type) {
		case string:
			for _, u := range unresolved {
				if !seen[u] && strings.Contains(t, u) {
					seen[u] = true
					out = append(out, u)
				}
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		case map[string]any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// failureDetails picks the outputs that explain a failure (shell and http).
func failureDetails(out map[string]any) map[string]any {
	d := map[string]any{}
	pick := func(from, to string, limit int) {
		if v, ok := out[from]; ok && v != nil {
			if s, isStr := v.(string); isStr && limit > 0 {
				v = value.Truncate(s, limit, "...")
			}
			d[to] = v
		}
	}
	if _, ok := out["exit_code"]; ok {
		pick("command", "shell_command", 500)
		pick("exit_code", "shell_exit_code", 0)
		pick("stdout", "shell_stdout", 2000)
		pick("stderr", "shell_stderr", 2000)
	}
	if _, ok := out["status_code"]; ok {
		pick("status_code", "status_code", 0)
		pick("response", "raw_response", 0)
	}
	if len(d) == 0 {
		return nil
	}
	return d
}

func (e *executor) collectLLM(f *frame, id string, out map[string]any) {
	u, ok := out["llm_usage"].(map[string]any)
	if !ok || len(u) == 0 {
		return
	}
	rec := make(map[string]any, len(u)+1)
	for k, v := range u {
		rec[k] = v
	}
	rec["node_id"] = id
	e.mu.Lock()
	f.res.LLMCalls = append(f.res.LLMCalls, rec)
	e.mu.Unlock()
}

// resolveOutputs evaluates declared output sources after a successful run.
// A source is a template ("${node.key}", or text around templates) or a bare
// path ("node.key").
func (e *executor) resolveOutputs(f *frame) {
	f.res.Outputs = map[string]any{}
	for _, o := range f.w.Outputs {
		src := o.SourceTemplate()
		if src == "" {
			// An output without a source reads the root key of its name
			// (e.g. one published by an output mapping).
			if v, ok := f.shared[o.Name]; ok {
				f.res.Outputs[o.Name] = v
				f.res.OutputOrder = append(f.res.OutputOrder, o.Name)
			}
			continue
		}
		v, unresolved := template.Resolve(src, f.shared)
		if len(unresolved) > 0 && f.fromSkippedStep(unresolved) {
			continue // its step was on a branch that did not run
		}
		if len(unresolved) > 0 {
			f.res.Warnings = append(f.res.Warnings, Warning{Type: "output_unresolved",
				Message: fmt.Sprintf("output '%s' could not be resolved: %s is not available after the run", o.Name, strings.Join(unresolved, ", "))})
			if f.res.Status == RunSuccess {
				f.res.Status = RunDegraded
			}
			continue
		}
		f.res.Outputs[o.Name] = v
		f.res.OutputOrder = append(f.res.OutputOrder, o.Name)
		f.shared[o.Name] = v
	}
}

// fromSkippedStep reports whether an unresolved reference points into a
// step that exists but did not run.
func (f *frame) fromSkippedStep(unresolved []string) bool {
	for _, u := range unresolved {
		path := strings.TrimSuffix(strings.TrimPrefix(u, "${"), "}")
		head, _, _ := strings.Cut(path, ".")
		if i := strings.IndexByte(head, '['); i >= 0 {
			head = head[:i]
		}
		if f.w.Node(head) == nil {
			return false
		}
		if _, ran := f.shared[head]; ran {
			return false
		}
	}
	return true
}
