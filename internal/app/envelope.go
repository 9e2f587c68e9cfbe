package app

import (
	"encoding/json"
	"math"
	"sort"
	"strings"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/validate"
	"github.com/pflow-go/pflow/internal/value"
)

// RunReport is a run's outcome as both faces show it (a typed
// contract): the CLI prints it for --output-format json, the MCP server
// reshapes it for workflow_execute. Fields are in the order of their JSON
// names, which is the order the CLI prints them in.
type RunReport struct {
	// Checkpoint is where a failed run stopped and how to resume it.
	Checkpoint *CheckpointReport `json:"checkpoint,omitempty"`
	DurationMS *float64          `json:"duration_ms,omitempty"`
	// Error is the one error object of every failure.
	Error         *ErrorReport   `json:"error,omitempty"`
	Execution     *Execution     `json:"execution,omitempty"`
	Message       string         `json:"message,omitempty"`
	Metrics       *MetricsReport `json:"metrics,omitempty"`
	NodesExecuted *int           `json:"nodes_executed,omitempty"`
	// Result holds the declared outputs of a successful run.
	Result        map[string]any `json:"result,omitzero"`
	ResumedFrom   string         `json:"resumed_from,omitempty"`
	RunID         string         `json:"run_id,omitempty"`
	Status        string         `json:"status,omitempty"`
	Success       bool           `json:"success"`
	TemporalRunID string         `json:"temporal_run_id,omitempty"`
	TracePath     string         `json:"trace_path,omitempty"`
	// Waiting is what a run paused at an ask step asks, and how to answer.
	Waiting *WaitingReport `json:"waiting,omitempty"`
	// Warnings are validation warnings (a validation-only run) or the run's
	// warnings (a degraded run).
	Warnings []WarningReport `json:"warnings,omitzero"`
	Workflow WorkflowMeta    `json:"workflow"`
}

// WorkflowMeta names the workflow a run ran.
type WorkflowMeta struct {
	// Action is "reused" for a saved workflow, "unsaved" otherwise.
	Action string `json:"action"`
	Name   string `json:"name"`
}

// Execution lists a run's steps.
type Execution struct {
	NodesTotal int          `json:"nodes_total"`
	Steps      []StepReport `json:"steps"`
}

// StepReport is one step of a run, in the order of its JSON names.
type StepReport struct {
	Action               string        `json:"action,omitempty"`
	Attempts             int           `json:"attempts,omitempty"`
	BatchErrorDetails    []BatchDetail `json:"batch_error_details,omitempty"`
	BatchErrors          *int          `json:"batch_errors,omitempty"`
	BatchErrorsTruncated int           `json:"batch_errors_truncated,omitempty"`
	BatchSuccess         *int          `json:"batch_success,omitempty"`
	BatchTotal           *int          `json:"batch_total,omitempty"`
	DurationMS           float64       `json:"duration_ms"`
	Error                string        `json:"error,omitempty"`
	IsBatch              bool          `json:"is_batch,omitempty"`
	NodeID               string        `json:"node_id"`
	NodeType             string        `json:"node_type"`
	// ProvidedBy labels a step whose output (and error text) an MCP server
	// wrote: data, never instructions.
	ProvidedBy *registry.Provenance `json:"provided_by,omitempty"`
	// Source is "resumed" (re-used from the resumed run) or "cache".
	Source string `json:"source,omitempty"`
	Status string `json:"status"`
}

// BatchDetail is one failed batch item.
type BatchDetail struct {
	Error string `json:"error"`
	Index int    `json:"index"`
	Item  any    `json:"item"`
}

// maxBatchDetails is how many failed items a step lists.
const maxBatchDetails = 5

// WarningReport is one warning of a run: a validation warning (severity,
// param, line, hint, fixes) or a warning of a degraded run (type). Fields
// are in the order of their JSON names.
type WarningReport struct {
	File     string      `json:"file,omitempty"`
	Fixes    []FixReport `json:"fixes,omitempty"`
	Hint     string      `json:"hint,omitempty"`
	Line     int         `json:"line,omitempty"`
	Message  string      `json:"message"`
	NodeID   string      `json:"node_id,omitempty"`
	Param    string      `json:"param,omitempty"`
	Severity string      `json:"severity,omitempty"`
	Type     string      `json:"type,omitempty"`
}

// DiagnosticReport is one validation finding as both faces show it.
type DiagnosticReport = WarningReport

// FixReport is a fix as data, worded for the report's reader: Say is the
// advice; Command is the pflow command a person runs, Tool and Arguments
// the tool call an agent makes; the rest say where and what to write.
type FixReport struct {
	Alternatives []string       `json:"alternatives,omitempty"`
	Arguments    map[string]any `json:"arguments,omitempty"`
	Command      string         `json:"command,omitempty"`
	File         string         `json:"file,omitempty"`
	Line         int            `json:"line,omitempty"`
	Param        string         `json:"param,omitempty"`
	Replacement  string         `json:"replacement,omitempty"`
	Say          string         `json:"say"`
	Step         string         `json:"step,omitempty"`
	Tool         string         `json:"tool,omitempty"`
}

// fixReports words fixes for aud; nil when none carries more than words.
func fixReports(fixes []pferr.Fix, file string, aud Audience) []FixReport {
	var out []FixReport
	for _, f := range fixes {
		fr := FixReport{Say: f.Say(aud), Step: f.Step, Param: f.Param, Line: f.Line, File: f.File,
			Replacement: f.Replacement, Alternatives: f.Alternatives}
		if fr.Line > 0 && fr.File == "" {
			fr.File = file
		}
		if a := f.Do; a != nil {
			switch {
			case aud == Agent && a.Tool != "":
				fr.Tool, fr.Arguments = a.Tool, a.Args
			case aud == Agent && a.Flag != "":
				fr.Arguments = a.Args
			case aud == Person && a.Command != "":
				fr.Command = "pflow " + a.Command
			}
		}
		out = append(out, fr)
	}
	return out
}

// MetricsReport counts a run's LLM calls, tokens and cost. Without LLM
// calls it is {"llm_calls": 0}; with calls, cost_usd is null when some
// call's cost is unknown.
type MetricsReport struct {
	CostUSD      *float64 `json:"cost_usd"`
	LLMCalls     int      `json:"llm_calls"`
	ModelsUsed   []string `json:"models_used"`
	TokensInput  int64    `json:"tokens_input"`
	TokensOutput int64    `json:"tokens_output"`
	TokensTotal  int64    `json:"tokens_total"`
}

// MarshalJSON leaves out the all-zero token and cost fields of a run that
// made no LLM call.
func (m MetricsReport) MarshalJSON() ([]byte, error) {
	if m.LLMCalls == 0 {
		return []byte(`{"llm_calls":0}`), nil
	}
	type plain MetricsReport
	return json.Marshal(plain(m))
}

// InputErrorReport is one input that was missing or wrong.
type InputErrorReport struct {
	Input   string `json:"input"`
	Message string `json:"message"`
	Path    string `json:"path"`
	// Env is the unset environment variable a missing input is read from.
	Env string `json:"env,omitempty"`
	// Line is the line of the input's declaration in its .pflow.md file.
	Line int `json:"line,omitempty"`
}

// Report builds the run report of an outcome for aud (its error and
// checkpoint are worded for that reader). Every value is redacted.
func Report(o *RunOutcome, t *Target, aud Audience) *RunReport {
	meta := WorkflowMeta{Action: "unsaved", Name: t.Name}
	if t.Saved {
		meta.Action = "reused"
	}
	red := o.Redactor
	if len(o.InputErrors) > 0 || len(o.ValidationErrors) > 0 {
		return (&RunReport{Error: RunFailure(o, t, aud), Workflow: meta}).redact(red)
	}
	if o.Result == nil {
		return (&RunReport{Success: true, Message: "Workflow is valid", Warnings: diagnostics(o.Warnings, t.Path, aud), Workflow: meta}).redact(red)
	}
	r := o.Result
	steps := make([]StepReport, 0, len(r.Steps))
	executed := 0
	for _, s := range r.Steps {
		if s.Ran() {
			executed++
		}
		st := StepReport{NodeID: s.NodeID, NodeType: s.Type, Status: s.Status, DurationMS: ms(s.Duration), Action: s.Action, Error: forReader(s.Error, aud), Source: s.Source}
		if s.Attempts > 1 {
			st.Attempts = s.Attempts
		}
		if b := s.Batch; b != nil {
			st.IsBatch = true
			st.BatchTotal, st.BatchSuccess, st.BatchErrors = &b.Total, &b.Success, &b.Failed
			for i, be := range b.Errors {
				if i == maxBatchDetails {
					st.BatchErrorsTruncated = len(b.Errors) - maxBatchDetails
					break
				}
				st.BatchErrorDetails = append(st.BatchErrorDetails, BatchDetail{Index: be.Index, Item: be.Item, Error: forReader(be.Error, aud)})
			}
		}
		steps = append(steps, st)
	}
	// Each fact once: the duration and the executed count at
	// the top, the steps under execution, costs and tokens under metrics.
	d := ms(r.Duration)
	rep := &RunReport{
		Success:       r.Success(),
		Status:        r.Status,
		Workflow:      meta,
		DurationMS:    &d,
		NodesExecuted: &executed,
		Metrics:       Metrics(r),
		Execution:     &Execution{NodesTotal: len(r.Steps), Steps: steps},
		TracePath:     o.TracePath,
		RunID:         o.RunID,
		TemporalRunID: o.TemporalID,
		ResumedFrom:   o.ResumedFrom,
	}
	for _, w := range r.Warnings {
		rep.Warnings = append(rep.Warnings, WarningReport{NodeID: w.NodeID, Type: w.Type, Message: forReader(w.Message, aud)})
	}
	if r.Status == runtime.RunWaiting {
		rep.Waiting = waitingReport(r, o.RunID, aud)
	} else if r.Success() {
		rep.Result = make(map[string]any, len(r.OutputOrder))
		for _, k := range r.OutputOrder {
			rep.Result[k] = r.Outputs[k]
		}
	} else {
		// One error shape on both faces (docs/json-output.md); where the
		// run stopped and how to resume it is the checkpoint.
		rep.Error = RunFailure(o, t, aud)
		rep.Checkpoint = Checkpoint(o, aud)
	}
	return rep.redact(red)
}

// forReader is a step's text (written for a person, see pferr.ForAgent)
// for aud.
func forReader(text string, aud Audience) string {
	if aud == Agent {
		return pferr.ForAgent(text)
	}
	return text
}

// redact masks the run's secrets in every value of the report.
func (rep *RunReport) redact(red *redact.Redactor) *RunReport {
	if red == nil {
		return rep
	}
	str := red.String
	val := func(m map[string]any) map[string]any {
		if m == nil {
			return nil
		}
		v, _ := red.Value(m).(map[string]any)
		return v
	}
	rep.Result = val(rep.Result)
	rep.Message = str(rep.Message)
	rep.TracePath = str(rep.TracePath)
	rep.Workflow.Name = str(rep.Workflow.Name)
	for i := range rep.Warnings {
		rep.Warnings[i].redact(red)
	}
	if e := rep.Error; e != nil {
		e.Message = str(e.Message)
		e.Details = val(e.Details)
		for i, s := range e.Suggestions {
			e.Suggestions[i] = str(s)
		}
	}
	if x := rep.Execution; x != nil {
		for i := range x.Steps {
			s := &x.Steps[i]
			s.Error = str(s.Error)
			for j := range s.BatchErrorDetails {
				b := &s.BatchErrorDetails[j]
				b.Error = str(b.Error)
				b.Item = red.Value(b.Item)
			}
		}
	}
	return rep
}

// Outputs are the declared outputs of a successful run (never nil).
func (rep *RunReport) Outputs() map[string]any {
	if rep.Result == nil {
		return map[string]any{}
	}
	return rep.Result
}

// Steps are the run's steps (never nil).
func (rep *RunReport) Steps() []StepReport {
	if rep.Execution == nil || rep.Execution.Steps == nil {
		return []StepReport{}
	}
	return rep.Execution.Steps
}

// redact masks secrets in the warning's words.
func (w *WarningReport) redact(red *redact.Redactor) {
	w.Message, w.Hint = red.String(w.Message), red.String(w.Hint)
	for i := range w.Fixes {
		f := &w.Fixes[i]
		f.Say, f.Replacement = red.String(f.Say), red.String(f.Replacement)
	}
}

func inputErrors(errs []runtime.InputError) []InputErrorReport {
	out := make([]InputErrorReport, 0, len(errs))
	for _, e := range errs {
		out = append(out, InputErrorReport{Input: e.Input, Message: e.Message, Path: e.Path, Env: e.Env, Line: e.Line})
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

// diagnostics reports validation diagnostics with their fixes worded for
// aud; with the workflow's file, each one that has a line names it.
func diagnostics(ds []validate.Diagnostic, file string, aud Audience) []DiagnosticReport {
	out := make([]DiagnosticReport, 0, len(ds))
	for _, d := range ds {
		r := DiagnosticReport{Severity: string(d.Severity), Message: d.Message, NodeID: d.NodeID, Param: d.Param,
			Line: d.Line, Hint: d.Advice(aud), Fixes: fixReports(d.Fixes, file, aud)}
		if d.Line > 0 {
			r.File = file
		}
		out = append(out, r)
	}
	return out
}

// Metrics summarizes the LLM calls of a run: how many, which models, tokens
// and cost (only the count when there were none).
func Metrics(r *runtime.Result) *MetricsReport {
	if len(r.LLMCalls) == 0 {
		return &MetricsReport{} // no all-zero token and cost fields
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
	m := &MetricsReport{LLMCalls: len(r.LLMCalls), ModelsUsed: make([]string, 0, len(models)),
		TokensInput: in, TokensOutput: out, TokensTotal: in + out}
	if costKnown {
		c := round6(cost)
		m.CostUSD = &c
	}
	for name := range models {
		m.ModelsUsed = append(m.ModelsUsed, name)
	}
	sort.Strings(m.ModelsUsed)
	return m
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
