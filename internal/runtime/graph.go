package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/pflow-go/pflow/internal/cond"
	"github.com/pflow-go/pflow/internal/stepkeys"
	"github.com/pflow-go/pflow/internal/workflow"
)

// skipByCondition evaluates a step's `when` over the shared store. It
// reports whether the step is skipped, or the failure of a condition that
// cannot be evaluated.
func (e *executor) skipByCondition(f *frame, n *workflow.Node) (bool, *Failure) {
	raw, ok := n.Params[stepkeys.When]
	if !ok {
		return false, nil
	}
	if spec, found := e.opts.Catalog.Lookup(n.Type); found {
		if _, declared := spec.Interface.Param(stepkeys.When); declared {
			return false, nil // the node's own param
		}
	}
	failf := func(cat, msg string) *Failure {
		return &Failure{NodeID: n.ID, NodeType: n.Type, Line: n.Line, Category: cat, Message: msg}
	}
	x, err := stepkeys.ParseWhen(raw)
	if err != nil {
		return false, failf(CategoryException, fmt.Sprintf("step '%s': %v", n.ID, err))
	}
	holds, err := x.Eval(f.shared)
	if err != nil {
		var u *cond.UnresolvedError
		if errors.As(err, &u) {
			return false, failf(CategoryTemplate, fmt.Sprintf("step '%s': its condition reads %s, which has no value (its step was skipped or has not run, or the path is wrong). Give a default with ??: 'when: (%s ?? \"\") != \"\"'.", n.ID, u.Refs[0], u.Refs[0]))
		}
		return false, failf(CategoryException, fmt.Sprintf("step '%s': %v", n.ID, err))
	}
	return !holds, nil
}

// skipped records a step whose condition was false (fail nil: it takes the
// default action without running) or could not be evaluated.
func (e *executor) skipped(f *frame, n *workflow.Node, ev StepEvent, step *Step, fail *Failure) (*Step, *Failure) {
	if fail != nil {
		step.Status, step.Action, step.Error = StatusFailed, "error", fail.Message
	} else {
		step.Status, step.Action = StatusSkipped, "default"
	}
	if e.opts.Journal != nil {
		// The record shows the decision; nothing ran, so nothing is
		// re-used or cached from it.
		rec := e.newRecord(f, n, KindNode, -1)
		rec.Status, rec.Action, rec.Started = step.Status, step.Action, step.Started
		if fail != nil {
			rec.Error = fail.Message
		}
		e.opts.Journal.End(rec)
	}
	e.mu.Lock()
	f.res.Steps = append(f.res.Steps, step)
	e.mu.Unlock()
	if e.opts.Observer != nil {
		e.opts.Observer.StepFinished(ev, step)
	}
	return step, fail
}

// walkParallel runs a workflow that opted in to parallel steps. It runs in
// waves: each wave starts every step that the flow has reached and whose
// dependencies (the steps its templates read, and its `after`) have
// finished, at most w.Parallel at once, and waits for all of them. The flow
// reaches a step the way it does in order (an edge for the action its
// source took), except that a step whose only way on is its default edge
// hands the flow on when it starts rather than when it ends: the next step
// does not wait for it unless it depends on it. So independent steps of a
// chain run together, and a step with routes (on_error, on, a switch)
// decides before anything after it starts.
//
// Each step of a wave reads a snapshot of the shared store and publishes
// into its own copy; the waves' results are merged in file order, so
// outputs, records and the exit code are those of an in-order run.
func (e *executor) walkParallel(ctx context.Context, f *frame, byID map[string]*workflow.Node, succ map[string]map[string]string) {
	w := f.w
	deps := w.WaitsFor()
	start := w.Nodes[0]
	if n, ok := byID[w.StartNode]; ok {
		start = n
	}
	reached := map[string]bool{start.ID: true}
	done := map[string]bool{}     // finished (ran, failed or skipped)
	given := map[string]bool{}    // will never run: the flow cannot reach it any more
	executed := map[string]bool{} // started
	limit := w.Parallel
	for {
		if err := ctx.Err(); err != nil {
			var next *workflow.Node
			for _, n := range w.Nodes {
				if reached[n.ID] && !done[n.ID] {
					next = n
					break
				}
			}
			if next == nil {
				next = start
			}
			e.interrupt(f, next)
			break
		}
		wave := e.nextWave(w, reached, done, given, deps, succ, limit, f.routed)
		if len(wave) == 0 {
			// Nothing can start: the steps still waiting read steps the flow
			// can no longer reach. Those are given up, and the waiting steps
			// run without them (validation refuses reading such a step
			// without a default).
			progress := false
			for _, n := range w.Nodes {
				if !reached[n.ID] && !given[n.ID] {
					given[n.ID] = true
					progress = true
				}
			}
			if progress {
				continue
			}
			for _, n := range w.Nodes {
				if reached[n.ID] && !done[n.ID] {
					f.res.Status = RunFailed
					f.res.Failure = &Failure{NodeID: n.ID, NodeType: n.Type, Line: n.Line, Category: CategoryException,
						Message: fmt.Sprintf("step '%s' waits for steps that wait for it (%v): break the cycle of templates and 'after' lists", n.ID, deps[n.ID])}
					break
				}
			}
			break
		}
		stop := e.runWave(ctx, f, wave, reached, done, executed, succ, byID)
		if stop {
			break
		}
	}
	e.listUnrun(f, executed)
}

// nextWave picks the steps to start together, in file order.
func (e *executor) nextWave(w *workflow.Workflow, reached, done, given map[string]bool, deps map[string][]string, succ map[string]map[string]string, limit int, routed map[string]bool) []*workflow.Node {
	var wave []*workflow.Node
	in := map[string]bool{}
	for grew := true; grew; {
		grew = false
		for _, n := range w.Nodes {
			if len(wave) >= limit {
				return wave
			}
			if in[n.ID] || done[n.ID] || !reached[n.ID] {
				continue
			}
			ready := true
			for _, d := range deps[n.ID] {
				if !done[d] && !given[d] {
					ready = false
					break
				}
			}
			if !ready {
				continue
			}
			wave = append(wave, n)
			in[n.ID] = true
			grew = true
			// A step whose only way on is its default edge hands the flow
			// on as it starts.
			if !routed[n.ID] && len(succ[n.ID]) == 1 {
				if next, ok := succ[n.ID]["default"]; ok && !reached[next] {
					reached[next] = true
				}
			}
		}
	}
	return wave
}

// runWave runs the steps of one wave at once and merges their results in
// file order. It reports whether the run stops (a failure with no edge).
func (e *executor) runWave(ctx context.Context, f *frame, wave []*workflow.Node, reached, done, executed map[string]bool, succ map[string]map[string]string, byID map[string]*workflow.Node) bool {
	type outcome struct {
		view *frame
		step *Step
		fail *Failure
	}
	out := make([]outcome, len(wave))
	snapshot := make(map[string]any, len(f.shared))
	for k, v := range f.shared {
		snapshot[k] = v
	}
	for i, n := range wave {
		if f.occ != nil {
			f.occ[n.ID]++
		}
		executed[n.ID] = true
		shared := make(map[string]any, len(snapshot)+1)
		for k, v := range snapshot {
			shared[k] = v
		}
		view := *f
		view.shared = shared
		view.res = &Result{Shared: shared}
		view.touched = []string{}
		out[i].view = &view
	}
	run := func(ctx context.Context, i int) {
		out[i].step, out[i].fail = e.runStep(ctx, out[i].view, wave[i])
	}
	if len(wave) == 1 {
		run(ctx, 0)
	} else {
		next := make(chan int, len(wave))
		for i := range wave {
			next <- i
		}
		close(next)
		e.opts.Scheduler.Parallel(ctx, len(wave), func(ctx context.Context) {
			run(ctx, <-next)
		})
	}
	stop := false
	for i, n := range wave {
		o := out[i]
		for _, k := range o.view.touched {
			f.shared[k] = o.view.shared[k]
		}
		f.res.Steps = append(f.res.Steps, o.view.res.Steps...)
		f.res.Warnings = append(f.res.Warnings, o.view.res.Warnings...)
		f.res.LLMCalls = append(f.res.LLMCalls, o.view.res.LLMCalls...)
		done[n.ID] = true
		if f.ran != nil && o.step.executed {
			f.ran[n.ID] = true
		}
		if stop {
			continue
		}
		if ctx.Err() != nil {
			o.step.Status, o.step.Error = StatusFailed, "interrupted"
			e.interrupt(f, n)
			stop = true
			continue
		}
		if isWaiting(o.fail) { // an ask step that reaches nobody now (ask.go)
			e.pause(f, n, o.fail)
			stop = true
			continue
		}
		action := o.step.Action
		failed := isErrorAction(action)
		if failed && o.step.Class != "" {
			if _, ok := succ[n.ID][o.step.Class]; ok {
				action = o.step.Class
				o.step.Action = action
			}
		}
		target, ok := succ[n.ID][action]
		if !ok {
			if failed {
				f.res.Status = RunFailed
				f.res.Failure = o.fail
				if f.res.Failure == nil {
					f.res.Failure = &Failure{NodeID: n.ID, NodeType: n.Type, Line: n.Line, Category: CategoryExecution,
						Message: fmt.Sprintf("Workflow failed with action: %s", action)}
				}
				stop = true
			}
			continue
		}
		if failed {
			f.res.Warnings = append(f.res.Warnings, Warning{NodeID: n.ID, Type: "handled_error",
				Message: fmt.Sprintf("step '%s' failed and the workflow continued on its '%s' edge to '%s': %s", n.ID, action, target, o.step.Error)})
		}
		if _, known := byID[target]; known {
			reached[target] = true
		}
	}
	return stop
}
