package app

import (
	"math"
	"sort"
	"strings"

	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/validate"
	"github.com/pflow-go/pflow/internal/value"
)

// Envelope builds the JSON document describing a run outcome (the CLI's
// --output-format json and the MCP server's workflow_execute share it).
// Every value is redacted.
func Envelope(o *RunOutcome, t *Target) map[string]any {
	meta := map[string]any{"action": "unsaved", "name": t.Name}
	if t.Saved {
		meta["action"] = "reused"
	}
	if len(o.InputErrors) > 0 || len(o.ValidationErrors) > 0 {
		return o.Redactor.Value(map[string]any{"success": false, "error": RunFailure(o, t, Person), "workflow": meta}).(map[string]any)
	}
	if o.Result == nil {
		return map[string]any{"success": true, "message": "Workflow is valid", "warnings": diagnostics(o.Warnings, t.Path), "workflow": meta}
	}
	r := o.Result
	red := o.Redactor
	steps := make([]any, 0, len(r.Steps))
	executed := 0
	for _, s := range r.Steps {
		if s.Status != runtime.StatusNotExecuted {
			executed++
		}
		st := map[string]any{"node_id": s.NodeID, "node_type": s.Type, "status": s.Status, "duration_ms": ms(s.Duration)}
		if s.Action != "" {
			st["action"] = s.Action
		}
		if s.Attempts > 1 {
			st["attempts"] = s.Attempts
		}
		if s.Batch != nil {
			st["is_batch"] = true
			st["batch_total"] = s.Batch.Total
			st["batch_success"] = s.Batch.Success
			st["batch_errors"] = s.Batch.Failed
			if len(s.Batch.Errors) > 0 {
				var details []any
				for i, be := range s.Batch.Errors {
					if i == 5 {
						st["batch_errors_truncated"] = len(s.Batch.Errors) - 5
						break
					}
					details = append(details, map[string]any{"index": be.Index, "item": be.Item, "error": be.Error})
				}
				st["batch_error_details"] = details
			}
		}
		if s.Error != "" {
			st["error"] = s.Error
		}
		if s.Source != "" {
			st["source"] = s.Source // re-used from the resumed run, or served from the step cache
		}
		steps = append(steps, st)
	}
	// Each fact once (issue #16): the duration and the executed count at
	// the top, the steps under execution, costs and tokens under metrics.
	env := map[string]any{
		"success":        r.Success(),
		"status":         r.Status,
		"workflow":       meta,
		"duration_ms":    ms(r.Duration),
		"nodes_executed": executed,
		"metrics":        Metrics(r),
		"execution":      map[string]any{"nodes_total": len(r.Steps), "steps": steps},
	}
	if len(r.Warnings) > 0 {
		var ws []any
		for _, w := range r.Warnings {
			ws = append(ws, map[string]any{"node_id": w.NodeID, "type": w.Type, "message": w.Message})
		}
		env["warnings"] = ws
	}
	if o.TracePath != "" {
		env["trace_path"] = o.TracePath
	}
	if o.RunID != "" {
		env["run_id"] = o.RunID
	}
	if o.TemporalID != "" {
		env["temporal_run_id"] = o.TemporalID
	}
	if o.ResumedFrom != "" {
		env["resumed_from"] = o.ResumedFrom
	}
	if r.Success() {
		result := map[string]any{}
		for _, k := range r.OutputOrder {
			result[k] = r.Outputs[k]
		}
		env["result"] = result
	} else {
		// One error shape on both faces (docs/json-output.md); where the
		// run stopped and how to resume it is the checkpoint.
		env["error"] = RunFailure(o, t, Person)
		env["checkpoint"] = Checkpoint(o, Person)
	}
	return red.Value(env).(map[string]any)
}

func inputErrors(errs []runtime.InputError) []any {
	out := make([]any, 0, len(errs))
	for _, e := range errs {
		out = append(out, map[string]any{"message": e.Message, "path": e.Path, "input": e.Input})
	}
	return out
}

// missingInputs names the required inputs that were not given.
func missingInputs(errs []runtime.InputError) []string {
	out := []string{}
	for _, e := range errs {
		if e.Missing {
			out = append(out, e.Input)
		}
	}
	return out
}

// Diagnostics renders validation diagnostics as JSON objects.
func Diagnostics(ds []validate.Diagnostic) []any { return diagnostics(ds, "") }

// diagnostics renders validation diagnostics as JSON objects; with the
// workflow's file, each one that has a line names it.
func diagnostics(ds []validate.Diagnostic, file string) []any {
	out := make([]any, 0, len(ds))
	for _, d := range ds {
		m := map[string]any{"severity": string(d.Severity), "message": d.Message}
		if d.NodeID != "" {
			m["node_id"] = d.NodeID
		}
		if d.Param != "" {
			m["param"] = d.Param
		}
		if d.Line > 0 {
			m["line"] = d.Line
			if file != "" {
				m["file"] = file
			}
		}
		if d.Hint != "" {
			m["hint"] = d.Hint
		}
		out = append(out, m)
	}
	return out
}

// Metrics summarizes the LLM calls of a run: how many, which models, tokens
// and cost (only the count when there were none).
func Metrics(r *runtime.Result) map[string]any {
	if len(r.LLMCalls) == 0 {
		return map[string]any{"llm_calls": 0} // no all-zero token and cost fields
	}
	var in, out int64
	var cost float64
	costKnown := true
	models := map[string]bool{}
	for _, c := range r.LLMCalls {
		in += asInt(c["input_tokens"])
		out += asInt(c["output_tokens"])
		if m, ok := c["model"].(string); ok && m != "" {
			models[m] = true
		}
		switch v := c["cost_usd"].(type) {
		case float64:
			cost += v
		case int64:
			cost += float64(v)
		default:
			costKnown = false
		}
	}
	var costV any = round6(cost)
	if !costKnown {
		costV = nil
	}
	modelList := make([]string, 0, len(models))
	for m := range models {
		modelList = append(modelList, m)
	}
	sort.Strings(modelList)
	return map[string]any{"llm_calls": len(r.LLMCalls), "models_used": modelList,
		"tokens_input": in, "tokens_output": out, "tokens_total": in + out, "cost_usd": costV}
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

func ms(d interface{ Microseconds() int64 }) float64 {
	return float64(d.Microseconds()) / 1000
}

func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// OutputValue picks the value a text-mode run prints: the key asked for, else
// the first declared output that resolved, else the most relevant output of
// the last step that ran. ok is false when there is nothing to print.
func OutputValue(r *runtime.Result, key string) (v any, label string, ok bool) {
	if key != "" {
		if v, ok := r.Outputs[key]; ok {
			return v, key, true
		}
		if v, found := lookupPath(r.Shared, key); found {
			return v, key, true
		}
		return nil, key, false
	}
	if len(r.OutputOrder) > 0 {
		k := r.OutputOrder[0]
		return r.Outputs[k], k, true
	}
	for i := len(r.Steps) - 1; i >= 0; i-- {
		s := r.Steps[i]
		if s.Status != runtime.StatusCompleted {
			continue
		}
		ns, _ := r.Shared[s.NodeID].(map[string]any)
		for _, k := range []string{"response", "output", "result", "text", "stdout", "content"} {
			if v, ok := ns[k]; ok && v != nil && v != "" {
				return v, s.NodeID + "." + k, true
			}
		}
	}
	return nil, "", false
}

func lookupPath(root map[string]any, path string) (any, bool) {
	cur := any(root)
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			if s, isStr := cur.(string); isStr {
				if p, ok := value.TryParseContainer(s); ok {
					m, _ = p.(map[string]any)
				}
			}
			if m == nil {
				return nil, false
			}
		}
		cur, ok = m[part]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}
