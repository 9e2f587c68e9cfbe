// Package wire holds what a pflow submitter and its Temporal workers
// exchange (see docs/decisions.md, "Scale-out on Temporal"): the run's input,
// its nested workflows, each node
// execution, the run's report and progress, the key that seals all of it,
// and the engine interface the Temporal binary implements. It does not
// import the Temporal SDK: the pflow binary links only this package and
// hands Temporal commands to pflow-temporal, so its start-up stays fast.
package wire

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// Names registered with Temporal.
const (
	WorkflowName    = "pflow.run"
	ActivityNode    = "pflow.node"
	ActivityPrepare = "pflow.prepare"
	QueryProgress   = "pflow.progress"
	// SignalAnswer carries a person's answer (Answer) to a run waiting at
	// an ask step.
	SignalAnswer     = "pflow.answer"
	DefaultTaskQueue = "pflow"
	DefaultNamespace = "default"
)

// Value carries a pflow value through Temporal's JSON payloads without
// losing its type: integers stay int64 (plain JSON decoding would make them
// float64).
type Value struct{ V any }

// MarshalJSON encodes the value as pflow does everywhere.
func (v Value) MarshalJSON() ([]byte, error) { return value.MarshalJSON(v.V) }

// UnmarshalJSON decodes into pflow's value model.
func (v *Value) UnmarshalJSON(b []byte) error {
	x, err := value.DecodeJSON(b)
	if err != nil {
		return err
	}
	v.V = x
	return nil
}

// MapOf is v as a map (nil when it is not one).
func MapOf(v Value) map[string]any {
	m, _ := v.V.(map[string]any)
	return m
}

// Doc is a workflow's text, as read on the submitting machine.
type Doc struct {
	Path string `json:"path,omitempty"`
	Raw  string `json:"raw"`
}

// Bundle is a workflow and every workflow it nests that could be found
// before the run (saved ones by name, files by absolute path): workers read
// them from here, not from their own disk, so every worker and every replay
// sees the same definitions.
type Bundle struct {
	Root  Doc            `json:"root"`
	Saved map[string]Doc `json:"saved,omitempty"`
	Files map[string]Doc `json:"files,omitempty"`
}

// Parse reads a Doc back into a workflow.
func (d Doc) Parse() (*workflow.Workflow, error) {
	if isJSON(d.Raw) {
		return workflow.ParseJSON([]byte(d.Raw), d.Path)
	}
	return workflow.ParseMarkdown([]byte(d.Raw), d.Path)
}

func isJSON(s string) bool {
	for _, r := range s {
		switch r {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

// DocOf is the Doc of a parsed workflow.
func DocOf(w *workflow.Workflow) (Doc, error) {
	if w.Source != nil && w.Source.Raw != "" {
		return Doc{Path: w.Source.Path, Raw: w.Source.Raw}, nil
	}
	b, err := json.Marshal(w)
	if err != nil {
		return Doc{}, err
	}
	d := Doc{Raw: string(b)}
	if w.Source != nil {
		d.Path = w.Source.Path
	}
	return d, nil
}

// RunInput starts a Temporal run.
type RunInput struct {
	Bundle Bundle `json:"bundle"`
	// Params are the caller's inputs as given; the worker prepares them
	// (defaults, its own environment and settings for the rest).
	Params     Value `json:"params"`
	Permissive bool  `json:"permissive,omitempty"`
	// Network is where the run's network nodes may connect (the submitter's
	// origin and settings).
	Network *node.NetPolicy `json:"network,omitempty"`
	// Name is the workflow's name as the submitter called it.
	Name string `json:"name,omitempty"`
	// Paths, when set, bounds the files the run's steps may read and write
	// (pflow mcp serve --http --allow-dir); the worker that runs a step
	// checks them, where the files are.
	Paths *PathLimit `json:"paths,omitempty"`
	// Resume holds the completed node executions of the run being resumed
	// (ResumedFrom): those that are unchanged are re-used, not run again.
	Resume      []Record `json:"resume,omitempty"`
	ResumedFrom string   `json:"resumed_from,omitempty"`
}

// Record is one completed node execution of a Temporal run: where it is in
// the run, a digest of what it received, and what it produced. A resume
// re-uses it when the same execution receives the same params and none of
// the steps it reads from ran again.
type Record struct {
	Path       string `json:"path"`
	Occurrence int    `json:"occurrence"`
	Item       int    `json:"item"`
	Digest     string `json:"digest"`
	Action     string `json:"action,omitempty"`
	Outputs    Value  `json:"outputs"`
}

// Key identifies the execution a record is of.
func (r Record) Key() string { return fmt.Sprintf("%s#%d[%d]", r.Path, r.Occurrence, r.Item) }

// PriorRun is a finished Temporal run, read back for a resume.
type PriorRun struct {
	ID     string
	Input  RunInput
	Report *Report
}

// PrepareOutput is what the worker's input preparation produced.
type PrepareOutput struct {
	Values      Value                `json:"values"`
	InputErrors []runtime.InputError `json:"input_errors,omitempty"`
	// Missing marks which of InputErrors are missing required inputs.
	Missing []bool `json:"missing,omitempty"`
	// FromWorker names the inputs whose values came from the worker's
	// environment or settings: secrets, masked in what the run reports.
	FromWorker []string `json:"from_worker,omitempty"`
}

// NodeInput is one node execution.
type NodeInput struct {
	NodeID       string            `json:"node_id"`
	Type         string            `json:"type"`
	Params       Value             `json:"params"`
	TemplateEnv  map[string]string `json:"template_env,omitempty"`
	WorkflowDir  string            `json:"workflow_dir,omitempty"`
	WorkflowFile string            `json:"workflow_file,omitempty"`
	SourceLines  map[string]int    `json:"source_lines,omitempty"`
	Attempt      int               `json:"attempt"`
	Network      *node.NetPolicy   `json:"network,omitempty"`
	// Routed is node.Request.Routed: the workflow routes the step's
	// failures (workflow.RoutedSteps, decided by the engine that walks the
	// graph and carried to the worker that runs the step).
	Routed bool `json:"routed,omitempty"`
	// Paths is RunInput.Paths, carried to the worker that runs the step.
	Paths *PathLimit `json:"paths,omitempty"`
}

// PathLimit is the directories a run's file steps must stay under.
type PathLimit struct {
	AllowDirs []string `json:"allow_dirs"`
}

// NodeOutput is a node execution's outcome. Err is set when the node could
// not run (a Go error: the engine's retries apply to it).
type NodeOutput struct {
	Outputs    Value         `json:"outputs"`
	Action     string        `json:"action,omitempty"`
	Retryable  bool          `json:"retryable,omitempty"`
	Permanent  bool          `json:"permanent,omitempty"`
	Class      string        `json:"class,omitempty"`
	RetryAfter time.Duration `json:"retry_after,omitempty"`
	Warnings   []string      `json:"warnings,omitempty"`
	Logs       []string      `json:"logs,omitempty"`
	Err        string        `json:"err,omitempty"`
}

// Report is a Temporal run's outcome, the engine's Result in a form that
// survives serialization.
type Report struct {
	InputErrors []runtime.InputError `json:"input_errors,omitempty"`
	Missing     []bool               `json:"missing,omitempty"`
	Status      string               `json:"status"`
	Interrupted bool                 `json:"interrupted,omitempty"`
	Outputs     Value                `json:"outputs"`
	OutputOrder []string             `json:"output_order,omitempty"`
	Steps       []StepReport         `json:"steps"`
	Failure     *FailureReport       `json:"failure,omitempty"`
	Warnings    []runtime.Warning    `json:"warnings,omitempty"`
	LLMCalls    Value                `json:"llm_calls"`
	// Records are the run's completed node executions (for a resume).
	Records  []Record      `json:"records,omitempty"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
}

// FailureReport is runtime.Failure with typed details.
type FailureReport struct {
	NodeID   string `json:"node_id,omitempty"`
	NodeType string `json:"node_type,omitempty"`
	Line     int    `json:"line,omitempty"`
	Category string `json:"category"`
	Message  string `json:"message"`
	Details  Value  `json:"details"`
}

// StepReport is runtime.Step in a form that survives serialization.
type StepReport struct {
	NodeID   string                `json:"node_id"`
	Type     string                `json:"type"`
	Status   string                `json:"status"`
	Action   string                `json:"action,omitempty"`
	Duration time.Duration         `json:"duration"`
	Started  time.Time             `json:"started"`
	Attempts int                   `json:"attempts,omitempty"`
	Params   Value                 `json:"params"`
	Outputs  Value                 `json:"outputs"`
	Error    string                `json:"error,omitempty"`
	Class    string                `json:"class,omitempty"`
	Logs     []string              `json:"logs,omitempty"`
	Batch    *runtime.BatchSummary `json:"batch,omitempty"`
	Children []StepReport          `json:"children,omitempty"`
	Source   string                `json:"source,omitempty"`
}

// ReportOf is the report of an engine result.
func ReportOf(res *runtime.Result) *Report {
	r := &Report{Status: res.Status, Interrupted: res.Interrupted, Outputs: Value{res.Outputs}, OutputOrder: res.OutputOrder,
		Warnings: res.Warnings, Started: res.Started, Duration: res.Duration, Steps: stepReports(res.Steps)}
	if res.LLMCalls != nil {
		calls := make([]any, len(res.LLMCalls))
		for i, c := range res.LLMCalls {
			calls[i] = c
		}
		r.LLMCalls = Value{calls}
	}
	if f := res.Failure; f != nil {
		r.Failure = &FailureReport{NodeID: f.NodeID, NodeType: f.NodeType, Line: f.Line, Category: f.Category, Message: f.Message, Details: Value{f.Details}}
	}
	return r
}

func stepReports(steps []*runtime.Step) []StepReport {
	if len(steps) == 0 {
		return nil
	}
	out := make([]StepReport, len(steps))
	for i, s := range steps {
		out[i] = StepReport{NodeID: s.NodeID, Type: s.Type, Status: s.Status, Action: s.Action, Duration: s.Duration, Started: s.Started,
			Attempts: s.Attempts, Params: Value{s.Params}, Outputs: Value{s.Outputs}, Error: s.Error, Class: s.Class, Logs: s.Logs,
			Batch: s.Batch, Children: stepReports(s.Children), Source: s.Source}
	}
	return out
}

// Result turns the report back into the engine's result.
func (r *Report) Result() *runtime.Result {
	res := &runtime.Result{Status: r.Status, Interrupted: r.Interrupted, Outputs: MapOf(r.Outputs), OutputOrder: r.OutputOrder,
		Warnings: r.Warnings, Started: r.Started, Duration: r.Duration, Steps: r.steps(r.Steps), Shared: map[string]any{}}
	if calls, ok := r.LLMCalls.V.([]any); ok {
		for _, c := range calls {
			if m, ok := c.(map[string]any); ok {
				res.LLMCalls = append(res.LLMCalls, m)
			}
		}
	}
	if f := r.Failure; f != nil {
		res.Failure = &runtime.Failure{NodeID: f.NodeID, NodeType: f.NodeType, Line: f.Line, Category: f.Category, Message: f.Message, Details: MapOf(f.Details)}
	}
	return res
}

func (r *Report) steps(in []StepReport) []*runtime.Step {
	if len(in) == 0 {
		return nil
	}
	out := make([]*runtime.Step, len(in))
	for i, s := range in {
		out[i] = &runtime.Step{NodeID: s.NodeID, Type: s.Type, Status: s.Status, Action: s.Action, Duration: s.Duration, Started: s.Started,
			Attempts: s.Attempts, Params: MapOf(s.Params), Outputs: MapOf(s.Outputs), Error: s.Error, Class: s.Class, Logs: s.Logs,
			Batch: s.Batch, Children: r.steps(s.Children), Source: s.Source}
	}
	return out
}

// Event is one progress event of a Temporal run (see QueryProgress).
type Event struct {
	Kind     string        `json:"kind"` // "started", "finished", "batch"
	Depth    int           `json:"depth"`
	NodeID   string        `json:"node_id"`
	Type     string        `json:"type"`
	Status   string        `json:"status,omitempty"`
	Action   string        `json:"action,omitempty"`
	Error    string        `json:"error,omitempty"`
	Source   string        `json:"source,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	Done     int           `json:"done,omitempty"`
	Total    int           `json:"total,omitempty"`
}

// Answer is the payload of SignalAnswer: the choice and the typed input,
// checked against the question by the ask step.
type Answer struct {
	Choice string         `json:"choice"`
	Input  map[string]any `json:"input,omitempty"`
}
