package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/validate"
)

// Audience is who reads a failure: the same problem is worded with a pflow
// command for a person at a shell and with a tool call for an agent that
// talks to `pflow mcp serve` (an agent never gets a CLI command).
// Fixes are data (pferr.Fix); each is worded for its reader here, never
// rewritten from one reader's words into the other's.
type Audience = pferr.Reader

const (
	// Person reads the CLI's text or --output-format json / --json output.
	Person = pferr.Person
	// Agent reads the MCP server's structuredContent.
	Agent = pferr.Agent
)

// Error types of ErrorReport.Type: the one enum of both faces
// (docs/json-output.md, docs/schemas/failure.schema.json).
const (
	ErrValidation = "validation" // the input, the command line or the workflow is wrong
	ErrExecution  = "execution"  // running failed (or pflow itself did)
	ErrNotFound   = "not_found"  // a named thing does not exist
	ErrSecurity   = "security"   // a name or path was refused
)

// ErrorReport is the error object of every JSON failure pflow prints: the
// CLI's (--output-format json, --json) and every MCP tool's. Its fields are
// always present; Details depends on the error.
type ErrorReport struct {
	Type        string         `json:"type"`
	Message     string         `json:"message"`
	Details     map[string]any `json:"details"`
	Suggestions []string       `json:"suggestions"`
}

// Failure is the whole JSON document of a failure that has no more to say
// than its error: {"success": false, "error": {...}}.
func Failure(e *ErrorReport) *FailureReport {
	return &FailureReport{Error: e}
}

// FailureReport is {"success": false, "error": {...}}, fields in the order
// of their JSON names.
type FailureReport struct {
	Error   *ErrorReport `json:"error"`
	Success bool         `json:"success"`
}

// ReportError turns any error into the error object, worded for aud.
func ReportError(err error, aud Audience) *ErrorReport {
	pe := pferr.As(err)
	details := map[string]any{}
	for k, v := range pe.Details {
		details[k] = v
	}
	if inv, ok := pe.Details[DetailInvalid].(*InvalidWorkflow); ok {
		// The diagnostics' fixes are worded for the same reader.
		delete(details, DetailInvalid)
		details["diagnostics"] = diagnostics(inv.Diagnostics, inv.File, aud)
	}
	if pe.Where != "" {
		details["where"] = pe.Where
	}
	var sugg []string
	sugg = appendLines(sugg, pe.Advice(aud))
	for _, s := range pe.Suggestions {
		sugg = appendLines(sugg, s)
	}
	msg := forReader(pe.Message, aud) // a step's failure inside (registry_run) is worded for a person
	if pe.Kind == pferr.Internal && !strings.HasPrefix(msg, "internal error") {
		msg = "internal error: " + msg
	}
	return newReport(ErrorType(pe.Kind), msg, details, sugg)
}

// ErrorType maps a pferr kind to the type of the error object.
func ErrorType(kind string) string {
	switch kind {
	case pferr.Validation, pferr.Usage:
		return ErrValidation
	case pferr.NotFound:
		return ErrNotFound
	case pferr.Security:
		return ErrSecurity
	default:
		return ErrExecution
	}
}

func newReport(typ, msg string, details map[string]any, sugg []string) *ErrorReport {
	if details == nil {
		details = map[string]any{}
	}
	if sugg == nil {
		sugg = []string{}
	}
	return &ErrorReport{Type: typ, Message: msg, Details: details, Suggestions: sugg}
}

// appendLines adds each non-empty line of s to l, once.
func appendLines(l []string, s string) []string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" && !slices.Contains(l, line) {
			l = append(l, line)
		}
	}
	return l
}

// RunFailure is the error object of a failed run outcome (missing or wrong
// inputs, validation, a failed or interrupted step), nil when it did not
// fail. Both faces print it; the person's suggestions are pflow commands,
// the agent's are tool calls.
func RunFailure(o *RunOutcome, t *Target, aud Audience) *ErrorReport {
	switch {
	case len(o.InputErrors) > 0 && len(o.ValidationErrors) == 0:
		return inputFailure(o, t, aud)
	case len(o.ValidationErrors) > 0:
		return validationFailure(o, t, aud)
	case o.Result == nil || o.Result.Success():
		return nil
	}
	return executionFailure(o, t, aud)
}

func inputFailure(o *RunOutcome, t *Target, aud Audience) *ErrorReport {
	missing := missingInputs(o.InputErrors)
	// Every problem in the message, one per mistake: whoever reads it fixes
	// them all from one reply.
	var parts []string
	if len(missing) > 0 {
		named := make([]string, len(missing))
		copy(named, missing)
		for _, e := range o.InputErrors {
			if i := slices.Index(missing, e.Input); i >= 0 && e.Env != "" {
				named[i] = fmt.Sprintf("%s (environment variable %s is not set)", e.Input, e.Env)
			}
		}
		parts = append(parts, "missing required inputs: "+strings.Join(named, ", "))
	}
	for _, e := range o.InputErrors {
		if !slices.Contains(missing, e.Input) {
			parts = append(parts, e.Message)
		}
	}
	sugg := InputAdvice(t, o.InputErrors, aud)
	if aud == Agent {
		sugg = append(sugg, "workflow_describe shows each input's type and whether it is required.")
	} else {
		sugg = append(sugg, fmt.Sprintf("pflow %s --help shows each input's type and whether it is required.", t.Name))
	}
	return newReport(ErrValidation, strings.Join(parts, "; "),
		map[string]any{"missing_inputs": missing, "input_errors": inputErrors(o.InputErrors)}, sugg)
}

// runOptions are the options of a run that people and agents pass as if
// they were inputs (resume=last), with how to pass them.
var runOptions = map[string]*pferr.Action{
	"resume":       pferr.Pass("--resume <run_id|last>", "resume", "<run_id>"),
	"rerun_unsafe": pferr.Pass("--rerun-unsafe", "rerun_unsafe", true),
	"no_cache":     pferr.PersonOnly("--no-cache <workflow>"),
	"no_trace":     pferr.PersonOnly("--no-trace <workflow>"),
	"no_record":    pferr.PersonOnly("--no-record <workflow>"),
}

// InputAdvice says how to give the inputs a run lacks, worded for aud. An
// input read from an environment variable ('- env: GITHUB_TOKEN') that is
// not set is fixed by setting that variable, in the environment or in
// pflow's settings; it is usually a secret, so it is never suggested as a
// parameter, and an agent asks its user to set it. Any other input is
// passed as a parameter (key=value, or in an agent's `parameters`).
func InputAdvice(t *Target, errs []runtime.InputError, aud Audience) []string {
	var out []string
	envs := map[string]bool{}
	example := ""
	for _, e := range errs {
		if opt, ok := runOptions[strings.ReplaceAll(e.Input, "-", "_")]; ok && t.Workflow != nil && t.Workflow.Inputs.Get(e.Input) == nil {
			fix := pferr.Fix{Text: fmt.Sprintf("'%s' is an option of the run, not an input of the workflow: {do}.", e.Input), Do: opt}
			out = append(out, fix.Say(aud))
			continue
		}
		switch {
		case e.Env != "":
			if envs[e.Env] {
				continue
			}
			envs[e.Env] = true
			// Only a person sets it: the value is theirs (usually a secret).
			fix := pferr.Fix{Do: pferr.PersonOnly("settings set-env " + e.Env + "=…"),
				Text: fmt.Sprintf("Input '%s' is read from the environment variable %s, which is not set: export %s=… in the shell that runs pflow, or {do}.", e.Input, e.Env, e.Env)}
			if aud == Agent {
				fix.Text = fmt.Sprintf("Input '%s' is read from the environment variable %s, which is not set (it is not passed in `parameters`): {do} (or to export %s=… where pflow runs), then call workflow_execute again.", e.Input, e.Env, e.Env)
			}
			out = append(out, fix.Say(aud))
		case example == "" && t.Workflow != nil && t.Workflow.Inputs.Get(e.Input) != nil:
			example = e.Input
		}
	}
	if example == "" && len(envs) == 0 && t.Workflow != nil {
		for _, in := range t.Workflow.Inputs {
			if in.Env == "" {
				example = in.Name
				break
			}
		}
	}
	if example == "" && len(envs) == 0 {
		example = "name"
	}
	if example != "" {
		if aud == Agent {
			out = append(out, "Pass every required input in `parameters`, e.g. {\""+example+"\": ...}.")
		} else {
			out = append(out, fmt.Sprintf("Pass inputs as key=value, e.g. pflow %s %s=<value>", t.Name, example))
		}
	}
	return out
}

func validationFailure(o *RunOutcome, t *Target, aud Audience) *ErrorReport {
	at := func(d validate.Diagnostic) string {
		if d.Line > 0 {
			return fmt.Sprintf("Line %d: %s", d.Line, d.Message)
		}
		return d.Message
	}
	first := o.ValidationErrors[0]
	msg := "workflow validation failed: " + at(first)
	if n := len(o.ValidationErrors); n > 1 {
		// Every problem is in the message, one line each, so an agent
		// fixes them all in one pass.
		msg = fmt.Sprintf("workflow validation failed: %d problems:", n)
		for i, d := range o.ValidationErrors {
			msg += fmt.Sprintf("\n%d. %s", i+1, at(d))
		}
	}
	var sugg []string
	for _, d := range o.ValidationErrors {
		sugg = appendLines(sugg, d.Advice(aud))
	}
	details := map[string]any{
		"diagnostics": diagnostics(o.ValidationErrors, t.Path, aud),
		"warnings":    diagnostics(o.Warnings, t.Path, aud),
	}
	if len(o.InputErrors) > 0 {
		details["missing_inputs"] = missingInputs(o.InputErrors)
		details["input_errors"] = inputErrors(o.InputErrors)
		for _, e := range o.InputErrors {
			if e.Env != "" {
				// An unset variable is fixed by setting it, whatever else is wrong.
				sugg = appendLines(sugg, strings.Join(InputAdvice(t, o.InputErrors, aud), "\n"))
				break
			}
		}
	}
	return newReport(ErrValidation, msg, details, sugg)
}

func executionFailure(o *RunOutcome, t *Target, aud Audience) *ErrorReport {
	r := o.Result
	fl := r.Failure
	if fl == nil {
		fl = &runtime.Failure{Category: runtime.CategoryException, Message: "workflow failed"}
	}
	msg := forReader(fl.Message, aud)
	if fl.NodeID != "" && !strings.Contains(msg, fl.NodeID) {
		msg = fmt.Sprintf("step '%s' failed: %s", fl.NodeID, msg)
	}
	if r.Interrupted {
		msg = "workflow interrupted: " + msg
	}
	details := map[string]any{"category": fl.Category, "node_id": fl.NodeID, "node_type": fl.NodeType,
		"fixable": fl.Category != runtime.CategoryInterrupted}
	if fl.Line > 0 {
		details["line"] = fl.Line
		if t.Path != "" {
			details["file"] = t.Path
		}
	}
	for k, v := range fl.Details {
		details[k] = v
	}
	var sugg []string
	switch {
	case aud == Agent && o.RunID != "":
		sugg = append(sugg, fmt.Sprintf("Fix the failed step (or its inputs), then call workflow_execute with the fixed workflow and resume: %q. "+
			"The completed steps (checkpoint.completed_nodes) are re-used, not run again.", o.RunID))
	case aud == Agent && o.TemporalID != "":
		sugg = append(sugg, fmt.Sprintf("Fix the failed step (or its inputs), then call workflow_execute with the fixed workflow and resume: %q. "+
			"The completed steps are re-used from the run's history on Temporal, not run again.", o.TemporalID))
	case aud == Agent:
		sugg = append(sugg, "Fix the failed step (or its inputs) and run workflow_execute again; earlier steps are listed in checkpoint.completed_nodes.")
	case o.RunID != "":
		sugg = append(sugg, "Fix the failed step (or its inputs), then resume the run; its completed steps do not run again: pflow --resume "+o.RunID)
	case o.TemporalID != "":
		sugg = append(sugg, fmt.Sprintf("Fix the failed step (or its inputs), then resume the run on Temporal; its completed steps do not run again: %s. "+
			"Its history: temporal workflow show --workflow-id %s", o.temporalResume(), o.TemporalID))
	default:
		sugg = append(sugg, "Fix the failed step (or its inputs) and run the workflow again.")
	}
	if o.TracePath != "" {
		if aud == Agent {
			sugg = append(sugg, "trace_read with trace_file \"latest\" shows every step's params and outputs.")
		} else {
			sugg = append(sugg, "The trace file (trace_path) shows every step's params and outputs.")
		}
	}
	return newReport(ErrExecution, msg, details, sugg)
}

// temporalResume is the command that resumes a failed Temporal run.
func (o *RunOutcome) temporalResume() string {
	return fmt.Sprintf("pflow --temporal %s --resume %s", o.TemporalAddr, o.TemporalID)
}

// Checkpoint is where a failed run stopped: the steps that completed, the
// one that failed and, when the run was recorded, how to resume it.
func Checkpoint(o *RunOutcome, aud Audience) *CheckpointReport {
	r := o.Result
	if r == nil || r.Success() {
		return nil
	}
	cp := &CheckpointReport{CompletedNodes: []string{}, Resumable: o.RunID != "" || o.TemporalID != ""}
	for _, s := range r.Steps {
		if s.Status == runtime.StatusCompleted {
			cp.CompletedNodes = append(cp.CompletedNodes, s.NodeID)
		}
	}
	if r.Failure != nil {
		cp.FailedNode = r.Failure.NodeID
	}
	resume, command := "", ""
	switch {
	case o.RunID != "":
		// The failure is a checkpoint: fix the workflow and resume the run;
		// its completed steps that are unchanged do not run again (see
		// docs/decisions.md, "Recorded, resumable runs and the step cache").
		cp.RunID, resume, command = o.RunID, o.RunID, "pflow --resume "+o.RunID
	case o.TemporalID != "":
		cp.TemporalRunID, resume, command = o.TemporalID, o.TemporalID, o.temporalResume()
	}
	if resume != "" {
		if aud == Agent {
			cp.ResumeWith = &ResumeWith{Workflow: "<the fixed workflow>", Resume: resume}
		} else {
			cp.ResumeCommand = command
		}
	}
	return cp
}

// CheckpointReport is where a failed run stopped, and how to resume it: a
// command for a person, the workflow_execute arguments for an agent.
type CheckpointReport struct {
	CompletedNodes []string    `json:"completed_nodes"`
	FailedNode     string      `json:"failed_node"`
	Resumable      bool        `json:"resumable"`
	ResumeCommand  string      `json:"resume_command,omitempty"`
	ResumeWith     *ResumeWith `json:"resume_with,omitempty"`
	RunID          string      `json:"run_id,omitempty"`
	TemporalRunID  string      `json:"temporal_run_id,omitempty"`
}

// ResumeWith are the workflow_execute arguments that resume a run.
type ResumeWith struct {
	Resume   string `json:"resume"`
	Workflow string `json:"workflow"`
}

// DetailInvalid is the pferr detail key under which an error carries the
// diagnostics of an invalid workflow (*InvalidWorkflow); ReportError words
// them for its reader as details.diagnostics.
const DetailInvalid = "invalid_workflow"

// InvalidWorkflow are the diagnostics of a workflow that was refused, and
// its file.
type InvalidWorkflow struct {
	Diagnostics []validate.Diagnostic
	File        string
}
