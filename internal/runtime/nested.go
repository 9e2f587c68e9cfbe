package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// execNested runs a `type: workflow` step: it loads the child (by library
// name, by path relative to the parent file, or inline IR), prepares the
// child's inputs from param_mapping, runs it in the same run scope and
// returns the child's outputs (renamed by output_mapping).
func (e *executor) execNested(ctx context.Context, f *frame, n *workflow.Node, root map[string]any, step *Step, item int) (map[string]any, *Failure) {
	failf := func(msg string) (map[string]any, *Failure) {
		return map[string]any{"error": msg}, &Failure{NodeID: n.ID, NodeType: n.Type, Line: n.Line, Category: CategoryException, Message: msg}
	}
	// The child is written out: data never chooses the code that runs
	// (validation says so first; this holds when it was skipped).
	if splice, _ := n.Params[node.UnsafeSpliceParam].(bool); !splice {
		for _, k := range []string{"workflow_name", "workflow_ref", "workflow_ir"} {
			if s, ok := n.Params[k].(string); ok && template.HasTemplate(s) {
				return failf(fmt.Sprintf("Nested workflow step '%s': %s must be written out, not a template (a value from a web page, a file or an LLM answer would choose which code runs)", n.ID, k))
			}
		}
	}
	// Resolve everything but the child's own definition: templates inside
	// workflow_ir belong to the child and resolve against its inputs.
	params := make(map[string]any, len(n.Params))
	for k, v := range n.Params {
		if k != "workflow_ir" {
			params[k] = v
		}
	}
	if template.HasTemplate(params) {
		resolved, unresolved := template.Resolve(params, root)
		if len(unresolved) > 0 && !e.opts.Permissive {
			return failf(template.UnresolvedError("param_mapping", unresolved, root).Error())
		}
		params = resolved.(map[string]any)
	}
	if ir, ok := n.Params["workflow_ir"]; ok {
		params["workflow_ir"] = ir
	}
	step.Params = params
	e.sawParams(params)
	child, label, err := e.loadChild(f, params)
	if err != nil {
		return failf(fmt.Sprintf("Nested workflow step '%s': %s", n.ID, err.Error()))
	}
	maxDepth := e.opts.MaxDepth
	if v, ok := params["max_depth"]; ok {
		d, derr := node.Int(params, "max_depth", maxDepth)
		if derr != nil || d < 1 {
			return failf(fmt.Sprintf("Nested workflow step '%s': max_depth must be a positive whole number, got %s", n.ID, value.Stringify(v)))
		}
		maxDepth = d
	}
	if f.depth+1 > maxDepth {
		return failf(fmt.Sprintf("Nested workflow step '%s': maximum nesting depth %d reached (%s). Check for runaway recursion or raise max_depth.", n.ID, maxDepth, strings.Join(append(f.stack, label), " -> ")))
	}
	for _, s := range f.stack {
		if s == label {
			return failf(fmt.Sprintf("Circular workflow reference detected: %s", strings.Join(append(f.stack, label), " -> ")))
		}
	}

	childParams := map[string]any{}
	mode, _ := params["storage_mode"].(string)
	switch mode {
	case "", "mapped", "isolated":
	default:
		return failf(fmt.Sprintf("Nested workflow step '%s': storage_mode '%s' is not supported. Use 'mapped' (default: only param_mapping values are passed) or 'isolated'.", n.ID, mode))
	}
	if mode != "isolated" {
		pm, perr := node.Map(params, "param_mapping")
		if perr != nil {
			return failf(fmt.Sprintf("Nested workflow step '%s': %s", n.ID, perr.Error()))
		}
		for k, v := range pm {
			childParams[k] = v
		}
	}
	prepared, ierrs := PrepareInputs(child, childParams, EnvLookup{})
	e.sawParams(prepared.Values)
	if len(ierrs) > 0 {
		var msgs []string
		for _, ie := range ierrs {
			msgs = append(msgs, ie.Message)
		}
		return failf(fmt.Sprintf("Nested workflow '%s' (step '%s') cannot start: %s. Pass it with param_mapping: {%s: ${...}}.", label, n.ID, strings.Join(msgs, "; "), ierrs[0].Input))
	}
	stack := append(append([]string{}, f.stack...), f.label())
	dir := f.dir // inline IR resolves relative refs against the parent's file
	if child.Source != nil && child.Source.Path != "" {
		dir = filepath.Dir(child.Source.Path)
	}
	// The child's steps are recorded under this step's path; when a step this
	// one reads ran in this run, none of the child's earlier results is re-used.
	prefix, forced := "", false
	if e.opts.Journal != nil {
		prefix = f.prefix + n.ID
		if item >= 0 {
			prefix += fmt.Sprintf("[%d]", item)
		}
		prefix += "/"
		rec := e.newRecord(f, n, KindWorkflow, item)
		forced = rec.UpstreamRan
		ReleaseRecord(rec)
	}
	cres := e.run(ctx, child, prepared.Values, f.depth+1, stack, dir, prefix, forced)
	step.Children = cres.Steps
	resumed, cached := false, false
	for _, c := range cres.Steps {
		step.executed = step.executed || c.executed
		resumed = resumed || c.Source == SourceResumed
		cached = cached || c.Source == SourceCache
	}
	if !step.executed && e.opts.Journal != nil {
		if resumed {
			step.Source = SourceResumed
		} else if cached {
			step.Source = SourceCache
		}
	}
	e.mu.Lock()
	f.res.LLMCalls = append(f.res.LLMCalls, cres.LLMCalls...)
	for _, w := range cres.Warnings {
		w.Message = fmt.Sprintf("in nested workflow '%s': %s", label, w.Message)
		f.res.Warnings = append(f.res.Warnings, w)
	}
	e.mu.Unlock()
	if fl := childWaiting(n, cres); fl != nil { // ask.go
		return map[string]any{}, fl
	}
	if !cres.Success() {
		fl := cres.Failure
		msg := "nested workflow failed"
		if fl != nil {
			msg = fl.Message
		}
		full := fmt.Sprintf("Nested workflow '%s' failed at step '%s': %s", label, failedID(fl), msg)
		if cres.Interrupted {
			full = "interrupted"
		}
		errAction := "error"
		if a, ok := params["error_action"].(string); ok && a != "" {
			errAction = a
		}
		step.Action = errAction
		out := map[string]any{"error": full}
		f2 := &Failure{NodeID: n.ID, NodeType: n.Type, Line: n.Line, Category: CategoryExecution, Message: full}
		if fl != nil {
			f2.Details = map[string]any{"nested_node_id": fl.NodeID, "nested_workflow": label}
		}
		return out, f2
	}
	out := map[string]any{}
	om, oerr := node.Map(params, "output_mapping")
	if oerr != nil {
		return failf(fmt.Sprintf("Nested workflow step '%s': %s", n.ID, oerr.Error()))
	}
	if len(om) > 0 {
		for childKey, parentKey := range om {
			pk := value.Stringify(parentKey)
			if v, ok := cres.Outputs[childKey]; ok {
				out[pk] = v
			} else if v, ok := template.Lookup(cres.Shared, childKey); ok {
				out[pk] = v
			}
		}
	} else {
		for k, v := range cres.Outputs {
			out[k] = v
		}
	}
	return out, nil
}

func failedID(f *Failure) string {
	if f == nil || f.NodeID == "" {
		return "?"
	}
	return f.NodeID
}

func (f *frame) label() string {
	if f.w.Source != nil && f.w.Source.Path != "" {
		return f.w.Source.Path
	}
	return "<inline>"
}

func (e *executor) loadChild(f *frame, params map[string]any) (*workflow.Workflow, string, error) {
	name, _ := params["workflow_name"].(string)
	ref, _ := params["workflow_ref"].(string)
	inline, hasInline := params["workflow_ir"]
	count := 0
	for _, set := range []bool{name != "", ref != "", hasInline} {
		if set {
			count++
		}
	}
	if count != 1 {
		return nil, "", fmt.Errorf("give exactly one of workflow_name (a saved workflow), workflow_ref (a .pflow.md path, relative to this file) or workflow_ir (inline)")
	}
	switch {
	case name != "":
		if e.opts.LoadWorkflow == nil {
			return nil, "", fmt.Errorf("saved workflows are not available here; use workflow_ref with a path")
		}
		w, err := e.opts.LoadWorkflow(name)
		if err != nil {
			return nil, "", err
		}
		label := name
		if w.Source != nil && w.Source.Path != "" {
			label = w.Source.Path
		}
		return w, label, nil
	case ref != "":
		path, err := node.ResolvePath(ref, f.dir)
		if err != nil {
			return nil, "", err
		}
		if e.opts.PathGuard != nil {
			if err := e.opts.PathGuard(path); err != nil {
				return nil, "", fmt.Errorf("workflow_ref: %w", err)
			}
		}
		w, err := e.opts.ParseFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("cannot load workflow_ref '%s' (%s): %w", ref, path, err)
		}
		return w, path, nil
	default:
		var w *workflow.Workflow
		var err error
		switch x := inline.(type) {
		case string:
			w, err = workflow.ParseJSON([]byte(x), "")
		case map[string]any:
			b, merr := value.MarshalJSON(x)
			if merr != nil {
				return nil, "", merr
			}
			w, err = workflow.ParseJSON(b, "")
		default:
			err = fmt.Errorf("workflow_ir must be a workflow object")
		}
		if err != nil {
			return nil, "", fmt.Errorf("invalid workflow_ir: %w", err)
		}
		return w, "<inline workflow_ir of step " + f.label() + ">", nil
	}
}
