package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// SaveRequest asks to save a workflow into the library from an agent-facing
// source (the MCP server's workflow_save; usable by any caller).
type SaveRequest struct {
	// Source is raw .pflow.md markdown (contains a newline), a draft name, or
	// a path to an existing .pflow.md file allowed by Policy.
	Source      string
	Name        string
	Description string
	Force       bool
	Policy      PathPolicy
}

// SaveOutcome is what SaveFrom did.
type SaveOutcome struct {
	Saved *library.Saved
	// DraftDeleted is the draft file removed after saving ("" when none).
	DraftDeleted string
	Warnings     []string
}

// SaveFrom validates a workflow (structure, node types, templates: every
// static check a run does) and writes it atomically to the library as
// req.Name, refusing to overwrite without Force. A workflow that came from a
// draft has its draft deleted after the save.
func (a *App) SaveFrom(ctx context.Context, req SaveRequest) (*SaveOutcome, error) {
	if err := library.ValidateName(req.Name); err != nil {
		return nil, err
	}
	content, srcPath, err := a.agentSaveSource(req.Source, req.Policy)
	if err != nil {
		return nil, err
	}
	label := srcPath
	if label == "" {
		label = req.Name + library.Ext
	}
	w, content, err := parseForSave(content, req.Name, label, srcPath)
	if err != nil {
		return nil, err
	}
	isDraft := srcPath != "" && a.Library().IsDraft(srcPath)
	return a.saveWorkflow(ctx, w, content, req.Name, label, library.SaveOptions{
		Force: req.Force, DeleteDraft: isDraft, Description: req.Description, SourcePath: srcPath,
	})
}

// saveSource reads what SaveRequest.Source names.
func (a *App) agentSaveSource(src string, pol PathPolicy) ([]byte, string, error) {
	if strings.Contains(src, "\n") || strings.HasPrefix(strings.TrimSpace(src), "{") {
		return []byte(src), "", nil // markdown text or JSON IR
	}
	t := strings.TrimSpace(src)
	if t == "" {
		return nil, "", pferr.New(pferr.Validation, "no workflow given to save").
			WithHint("Pass the .pflow.md markdown text, a draft name, or the path of a .pflow.md file.")
	}
	if !isPflowMDPath(t) || !strings.ContainsAny(t, `/\`) {
		name := strings.TrimSuffix(t, library.Ext)
		if err := library.ValidateName(name); err != nil {
			if !isPflowMDPath(t) || pferr.KindOf(err) == pferr.Security {
				return nil, "", err
			}
		} else {
			p := a.Library().DraftPath(name)
			if data, err := os.ReadFile(p); err == nil {
				return data, p, nil
			}
			if !isPflowMDPath(t) {
				return nil, "", pferr.Newf(pferr.NotFound, "draft '%s' not found", name).WithWhere(p).
					WithHint("Pass the .pflow.md markdown text itself, a draft name from " + a.Paths.Drafts + ", or the path of a .pflow.md file.")
			}
		}
	}
	if !isPflowMDPath(t) {
		return nil, "", &pferr.Error{Kind: pferr.Security,
			Message: fmt.Sprintf("%q is neither a draft name nor a .pflow.md file path", t)}
	}
	abs, err := pol.Check(t)
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", pferr.Newf(pferr.NotFound, "workflow file not found: %s", t).
			WithHint("Check the path (relative paths are relative to the server's working directory), or pass the markdown text itself.")
	}
	if err != nil {
		return nil, "", pferr.Newf(pferr.Execution, "cannot read %s: %v", t, err)
	}
	return data, abs, nil
}

// SavedInput describes one declared workflow input.
type SavedInput struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Required    bool   `json:"required"`
	Default     any    `json:"default,omitempty"`
	Description string `json:"description,omitempty"`
}

// SavedOutput describes one declared workflow output.
type SavedOutput struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
}

// SavedInfo describes a saved workflow for listings and describe.
type SavedInfo struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Path        string        `json:"path,omitempty"`
	Inputs      []SavedInput  `json:"inputs"`
	Outputs     []SavedOutput `json:"outputs"`
	// NodeTypes are the distinct node types used, in first-use order.
	NodeTypes []string `json:"node_types"`
	// Nodes are the steps (describe only).
	Nodes []StepBrief `json:"nodes,omitempty"`
	// TemplateInputs are the ${names} the steps read that are neither
	// declared inputs nor step ids (describe only).
	TemplateInputs []string          `json:"template_inputs,omitempty"`
	Execution      *ExecutionStats   `json:"execution,omitempty"`
	Example        string            `json:"example,omitempty"`
	Metadata       *library.Metadata `json:"-"`
}

// StepBrief is one step of a saved workflow.
type StepBrief struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Purpose string `json:"purpose,omitempty"`
}

// ExecutionStats are a saved workflow's run statistics (the last_* fields
// once it has run).
type ExecutionStats struct {
	ExecutionCount                  int            `json:"execution_count"`
	LastExecutionTimestamp          string         `json:"last_execution_timestamp,omitempty"`
	LastExecutionSuccess            *bool          `json:"last_execution_success,omitempty"`
	LastExecutionDurationSeconds    *float64       `json:"last_execution_duration_seconds,omitempty"`
	AverageExecutionDurationSeconds *float64       `json:"average_execution_duration_seconds,omitempty"`
	LastExecutionParams             map[string]any `json:"last_execution_params,omitempty"`
	CreatedAt                       string         `json:"created_at,omitempty"`
}

// SavedInfoOf summarizes a saved workflow; full adds steps, template inputs,
// execution statistics and an example command.
func SavedInfoOf(s *library.Saved, full bool) *SavedInfo {
	w := s.Workflow
	info := &SavedInfo{Name: s.Name, Description: s.Description, Path: s.Path, Inputs: []SavedInput{}, Outputs: []SavedOutput{}, NodeTypes: []string{}}
	for _, in := range w.Inputs {
		info.Inputs = append(info.Inputs, SavedInput{Name: in.Name, Type: in.Type, Required: in.IsRequired(), Default: in.Default, Description: in.Description})
	}
	for _, o := range w.Outputs {
		info.Outputs = append(info.Outputs, SavedOutput{Name: o.Name, Type: o.Type, Description: o.Description})
	}
	seen := map[string]bool{}
	for _, n := range w.Nodes {
		if !seen[n.Type] {
			seen[n.Type] = true
			info.NodeTypes = append(info.NodeTypes, n.Type)
		}
	}
	if !full {
		return info
	}
	for _, n := range w.Nodes {
		info.Nodes = append(info.Nodes, StepBrief{ID: n.ID, Type: n.Type, Purpose: n.Purpose})
	}
	info.TemplateInputs = UndeclaredTemplateInputs(w)
	meta := s.Meta
	info.Execution = &ExecutionStats{ExecutionCount: meta.ExecutionCount, LastExecutionParams: meta.LastExecutionParams, CreatedAt: meta.CreatedAt}
	if meta.LastExecutionTimestamp != "" {
		ok := meta.LastExecutionSuccess != nil && *meta.LastExecutionSuccess
		last, avg := meta.LastExecutionDurationSeconds, meta.AverageExecutionDurationSeconds
		info.Execution.LastExecutionTimestamp, info.Execution.LastExecutionSuccess = meta.LastExecutionTimestamp, &ok
		info.Execution.LastExecutionDurationSeconds, info.Execution.AverageExecutionDurationSeconds = &last, &avg
	}
	info.Example = SavedExampleCommand(s.Name, w)
	return info
}

// UndeclaredTemplateInputs returns, sorted, the heads of ${...} references
// in step params, batch items and output sources that are neither step ids
// nor declared inputs nor batch item aliases: values the workflow expects
// from its caller without declaring them.
func UndeclaredTemplateInputs(w *workflow.Workflow) []string {
	known := map[string]bool{}
	for _, n := range w.Nodes {
		known[n.ID] = true
		if n.Batch != nil {
			known[n.Batch.Alias()] = true
		}
	}
	for _, in := range w.Inputs {
		known[in.Name] = true
	}
	out := []string{}
	for h := range templateHeads(w) {
		if h != "" && !known[h] {
			out = append(out, h)
		}
	}
	sort.Strings(out)
	return out
}

// SavedExampleCommand renders "pflow <name> key=<hint> ..." with required inputs first.
func SavedExampleCommand(name string, w *workflow.Workflow) string {
	parts := []string{"pflow", name}
	for pass := 0; pass < 2; pass++ {
		for _, in := range w.Inputs {
			if in.IsRequired() != (pass == 0) {
				continue
			}
			hint := "<value>"
			switch value.CanonicalType(in.Type) {
			case "int", "float":
				hint = "<number>"
			case "bool":
				hint = "<true/false>"
			case "list":
				hint = "'[...]'"
			case "dict":
				hint = "'{...}'"
			}
			parts = append(parts, in.Name+"="+hint)
		}
	}
	return strings.Join(parts, " ")
}

// DescribeSaved describes a saved workflow: declared inputs and outputs,
// template inputs, steps, execution statistics and an example command.
func (a *App) DescribeSaved(name string) (*SavedInfo, error) {
	a.RunHistory.Flush() // the runs that answered already
	s, err := a.Library().Load(name)
	if err != nil {
		return nil, err
	}
	return SavedInfoOf(s, true), nil
}

// ListSaved lists saved workflows matching every word of filter.
func (a *App) ListSaved(filter string) ([]*SavedInfo, int, error) {
	a.RunHistory.Flush()
	list, files, err := a.Library().ListCounted(filter)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*SavedInfo, 0, len(list))
	for _, s := range list {
		out = append(out, SavedInfoOf(s, false))
	}
	total := len(list)
	if strings.TrimSpace(filter) != "" {
		total = files
	}
	return out, total, nil
}
