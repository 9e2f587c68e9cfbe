package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pflow-go/pflow/internal/discovery"
	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/nodes/llm"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/workflow"
)

// WorkflowIndex is the discovery cache of the saved workflows
// ($PFLOW_HOME/cache/discovery-workflows.idx).
func (a *App) WorkflowIndex() *discovery.Index {
	return &discovery.Index{Path: filepath.Join(a.Paths.Cache, "discovery-workflows.idx")}
}

// SaveFileRequest asks to save a workflow file into the library (CLI
// 'pflow workflow save').
type SaveFileRequest struct {
	Path        string
	Name        string
	Description string
	Force       bool
	// DeleteDraft removes Path after saving when it is a draft in $PFLOW_HOME/drafts.
	DeleteDraft bool
}

// SaveFile validates a .pflow.md file (or a JSON IR file, stored as its
// .pflow.md rendering) with every static check a run does and saves it to
// the library (atomic; refuses to overwrite without Force).
// Overwritten reports whether an existing workflow was replaced.
func (a *App) SaveFile(ctx context.Context, req SaveFileRequest) (out *SaveOutcome, overwritten bool, err error) {
	if err := library.ValidateName(req.Name); err != nil {
		return nil, false, err
	}
	lib := a.Library()
	content, err := os.ReadFile(req.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, pferr.Newf(pferr.NotFound, "workflow file not found: %s", req.Path).
			WithHint("Check the path; relative paths are relative to the current directory.")
	}
	if err != nil {
		return nil, false, pferr.Newf(pferr.Config, "cannot read %s: %v", req.Path, err)
	}
	abs, _ := filepath.Abs(req.Path)
	w, content, err := parseForSave(content, req.Name, req.Path, abs)
	if err != nil {
		return nil, false, err
	}
	if !req.Force && lib.Exists(req.Name) {
		return nil, false, &pferr.Error{Kind: pferr.Validation,
			Message: fmt.Sprintf("Workflow '%s' already exists", req.Name), Where: lib.Path(req.Name),
			Fixes: []pferr.Fix{library.OverwriteFix()}}
	}
	overwritten = req.Force && lib.Exists(req.Name)
	out, err = a.saveWorkflow(ctx, w, content, req.Name, req.Path, library.SaveOptions{
		Force: req.Force, DeleteDraft: req.DeleteDraft, Description: req.Description, SourcePath: abs,
	})
	return out, overwritten, err
}

// parseForSave parses what is about to be saved, for both faces: .pflow.md
// markdown as it is, or JSON IR (see docs/decisions.md, "Workflow formats"; a
// .json path or text starting with
// '{'), validated as JSON and stored as its .pflow.md rendering. It returns
// the workflow and the markdown to store. label names the source in
// errors; path is the file it came from ("" for text).
func parseForSave(content []byte, name, label, path string) (*workflow.Workflow, []byte, error) {
	isJSON := strings.HasSuffix(strings.ToLower(label), ".json") || strings.HasPrefix(strings.TrimSpace(string(content)), "{")
	if !isJSON {
		w, err := workflow.ParseMarkdown(content, path)
		if err != nil {
			return nil, nil, parseError(label, err)
		}
		return w, content, nil
	}
	w, err := workflow.ParseJSON(content, path)
	if err != nil {
		return nil, nil, parseError(label, err)
	}
	if errs := w.CheckStructure(); len(errs) > 0 {
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Error())
		}
		return nil, nil, &pferr.Error{Kind: pferr.Validation, Where: label,
			Message: fmt.Sprintf("cannot save '%s': the workflow is invalid:\n  %s", name, strings.Join(msgs, "\n  "))}
	}
	md, err := workflow.FormatMarkdown(w)
	if err != nil {
		return nil, nil, pferr.Newf(pferr.Validation, "cannot save %s to the library: %v", label, err).
			WithHint("The library stores .pflow.md files; this JSON workflow has no markdown form. Run it from its file or text instead.")
	}
	return w, md, nil
}

// saveWorkflow is the one save path of the CLI and the MCP server: it runs
// every static check a run does on the parsed workflow w and, when it is
// valid, stores content (its markdown) in the library under name. label
// names the source in errors.
func (a *App) saveWorkflow(ctx context.Context, w *workflow.Workflow, content []byte, name, label string, opts library.SaveOptions) (*SaveOutcome, error) {
	ro, err := a.Run(ctx, RunRequest{Target: &Target{Workflow: w, Name: name, Path: opts.SourcePath}, ValidateOnly: true, NoTrace: true})
	if err != nil {
		return nil, err
	}
	if len(ro.ValidationErrors) > 0 {
		lines := make([]string, len(ro.ValidationErrors))
		var fixes []pferr.Fix
		for i, d := range ro.ValidationErrors {
			lines[i] = d.Message
			if d.Line > 0 {
				lines[i] = fmt.Sprintf("Line %d: %s", d.Line, d.Message)
			}
			// Each error's fix stays beside it.
			if h := strings.TrimSpace(d.Hint); h != "" {
				lines[i] += "\n    Fix: " + strings.ReplaceAll(h, "\n", "\n    ")
			}
			fixes = append(fixes, d.Fixes...)
		}
		return nil, &pferr.Error{Kind: pferr.Validation,
			Message: fmt.Sprintf("cannot save '%s': the workflow is invalid:\n  %s", name, strings.Join(lines, "\n  ")),
			Where:   label,
			Details: map[string]any{DetailInvalid: &InvalidWorkflow{Diagnostics: ro.ValidationErrors, File: opts.SourcePath}},
			Hint:    "Fix every error listed, then save again.",
			Fixes:   fixes}
	}
	saved, err := a.Library().Save(ctx, content, name, opts)
	if err != nil {
		return nil, err
	}
	out := &SaveOutcome{Saved: saved}
	for _, d := range ro.Warnings {
		out.Warnings = append(out.Warnings, d.Message)
	}
	if opts.DeleteDraft && opts.SourcePath != "" {
		if _, err := os.Stat(opts.SourcePath); errors.Is(err, fs.ErrNotExist) {
			out.DraftDeleted = opts.SourcePath
		}
	}
	return out, nil
}

// RankSavedWorkflows ranks every saved workflow against query with the
// local relevance model, using the discovery index so unchanged workflows
// are not re-parsed. It returns the matches and how many were searched.
func (a *App) RankSavedWorkflows(query string, limit int) ([]discovery.Match, int, error) {
	if strings.TrimSpace(query) == "" {
		return nil, 0, pferr.New(pferr.Usage, "the query is empty").WithFix(pferr.Fix{Text: "Describe the task: {do}.",
			Do: pferr.Run(`workflow discover "summarize the open pull requests of a repo"`, "workflow_discover", map[string]any{"query": "summarize the open pull requests of a repo"})})
	}
	if err := discovery.CheckQueryLen(query); err != nil {
		return nil, 0, err
	}
	docs, err := a.WorkflowIndex().Workflows(a.Library())
	if err != nil {
		return nil, 0, err
	}
	return discovery.RankPrepared(query, docs, limit), len(docs), nil
}

// LLMComplete returns a discovery.CompleteFunc backed by the configured LLM
// (settings llm.discovery_model, then llm.default_model, then auto-detect
// from API keys).
func (a *App) LLMComplete() (discovery.CompleteFunc, error) {
	st, err := a.Settings()
	if err != nil {
		return nil, err
	}
	model := st.LLM.DiscoveryModel
	if model == "" {
		model = st.LLM.DefaultModel
	}
	env := a.EnvLookup(st)
	return func(ctx context.Context, system, prompt string) (string, error) {
		zero := 0.0
		c, err := llm.Complete(ctx, llm.CompletionRequest{Model: model, System: system, Prompt: prompt, MaxTokens: 1024, Temperature: &zero}, env)
		if err != nil {
			return "", err
		}
		return c.Text, nil
	}, nil
}

// RerankWorkflows lets the configured LLM rerank the top local matches. On
// failure it warns on a.Log and keeps the local ranking.
func (a *App) RerankWorkflows(ctx context.Context, query string, ms []discovery.Match) []discovery.Match {
	lib := a.Library()
	describe := func(name string) string {
		s, err := lib.Load(name)
		if err != nil {
			return ""
		}
		info := SavedInfoOf(s, false)
		var ins []string
		for _, in := range info.Inputs {
			ins = append(ins, in.Name)
		}
		return fmt.Sprintf("description: %s\n inputs: %s\n node types: %s", firstLineOf(s.Description), strings.Join(ins, ", "), strings.Join(info.NodeTypes, ", "))
	}
	return a.RerankNodes(ctx, query, ms, describe)
}

// RerankNodes lets the configured LLM rerank matches, describing each one to
// it with describe(name). On failure it warns on a.Log and keeps the local
// ranking. RerankWorkflows uses it for saved workflows.
func (a *App) RerankNodes(ctx context.Context, query string, ms []discovery.Match, describe func(string) string) []discovery.Match {
	complete, err := a.LLMComplete()
	if err != nil {
		fmt.Fprintf(a.Log, "Warning: --llm ignored: %v\n", err)
		return ms
	}
	out, err := discovery.Rerank(ctx, query, ms, describe, complete)
	if err != nil {
		fmt.Fprintf(a.Log, "Warning: LLM rerank failed, showing the local ranking: %v\n", err)
	}
	return out
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// SavedValidation is one saved workflow checked against the current
// registry (`pflow registry validate --all`).
type SavedValidation struct {
	Name   string   `json:"name"`
	Path   string   `json:"path"`
	Valid  bool     `json:"valid"`
	Errors []string `json:"errors,omitempty"`
}

// ValidateSaved runs every static check a run does on each saved workflow
// (all of them, or the named ones) against the registry as it is now, e.g.
// after an MCP sync removed or changed a tool. A file that does not parse
// is reported, not skipped.
func (a *App) ValidateSaved(ctx context.Context, names []string) ([]SavedValidation, error) {
	lib := a.Library()
	if len(names) == 0 {
		entries, err := os.ReadDir(lib.Dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for _, e := range entries {
			if n, ok := strings.CutSuffix(e.Name(), library.Ext); ok && !e.IsDir() && !strings.HasPrefix(n, ".") {
				names = append(names, n)
			}
		}
	}
	out := make([]SavedValidation, 0, len(names))
	for _, name := range names {
		v := SavedValidation{Name: name, Path: lib.Path(name)}
		s, err := lib.Load(name)
		if err != nil {
			v.Errors = []string{pferr.As(err).Error()}
			out = append(out, v)
			continue
		}
		ro, err := a.Run(ctx, RunRequest{Target: &Target{Workflow: s.Workflow, Name: name, Path: v.Path, Saved: true}, ValidateOnly: true, NoTrace: true})
		if err != nil {
			v.Errors = []string{pferr.As(err).Error()}
		} else {
			for _, d := range ro.ValidationErrors {
				msg := d.Message
				if d.Line > 0 {
					msg = fmt.Sprintf("line %d: %s", d.Line, msg)
				}
				v.Errors = append(v.Errors, msg)
			}
		}
		v.Valid = len(v.Errors) == 0
		out = append(out, v)
	}
	return out, nil
}
