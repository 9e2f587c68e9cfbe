package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pflow-go/pflow/internal/discovery"
	"github.com/pflow-go/pflow/internal/instructions"
	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/nodes/llm"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// PlanRepairs is how many times a planned workflow that fails validation
// is sent back to the model with the errors before planning gives up.
const PlanRepairs = 2

// planMaxTokens bounds one planning answer (a whole .pflow.md).
const planMaxTokens = 8192

// IsPlanRequest reports whether a command-line name is a request in words
// (it holds a space or tab) rather than a name, or a workflow given as its
// text (markdown has a newline, JSON IR starts with '{').
func IsPlanRequest(name string) bool {
	t := strings.TrimSpace(name)
	return strings.ContainsAny(t, " \t") && !strings.Contains(name, "\n") && !strings.HasPrefix(t, "{")
}

// PlanRequest asks the configured LLM to write a workflow for a request
// in words.
type PlanRequest struct {
	Request string
	// Progress, when set, hears what planning is doing (one line each).
	Progress func(string)
}

// PlanOutcome is a planned workflow that passed every static check.
type PlanOutcome struct {
	// Target is the workflow, read from the draft file it was written to.
	Target *Target
	// Markdown is the workflow's .pflow.md text.
	Markdown string
	// Model is the provider/model that wrote it.
	Model string
	// Repairs is how many times validation errors were sent back.
	Repairs int
	// DraftPath is where the workflow was written ($PFLOW_HOME/drafts).
	DraftPath string
}

// plannerModel is the model planning uses: settings' llm.default_model,
// else the one the configured API keys select. ok is false when neither
// is set.
func (a *App) plannerModel() (model string, env func(string) (string, bool), ok bool, err error) {
	st, err := a.Settings()
	if err != nil {
		return "", nil, false, err
	}
	env = a.EnvLookup(st)
	if m := strings.TrimSpace(st.LLM.DefaultModel); m != "" {
		return m, env, true, nil
	}
	m, ok := llm.DefaultModel(env)
	return m, env, ok, nil
}

// PlannerConfigured reports whether an LLM is configured to plan workflows
// from words (a default model in settings or a detected API key).
func (a *App) PlannerConfigured() bool {
	_, _, ok, err := a.plannerModel()
	return err == nil && ok
}

// Plan asks the configured LLM for a complete .pflow.md for req.Request,
// given a compact part of the agent guide and the saved workflows and node
// types that discovery ranks best for the request. The answer (a
// ```markdown fence or the whole text) is parsed and validated exactly as
// --validate-only does; validation errors go back to the model for at most
// PlanRepairs repairs. Each draft is written to $PFLOW_HOME/drafts; a plan
// still invalid after the repairs fails with the last validation message
// and that draft's path.
func (a *App) Plan(ctx context.Context, req PlanRequest) (*PlanOutcome, error) {
	request := strings.TrimSpace(req.Request)
	if request == "" {
		return nil, pferr.New(pferr.Usage, "the request is empty").WithHint(`Describe the task in words, e.g. pflow "count the lines of README.md".`)
	}
	model, env, ok, err := a.plannerModel()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, planFromWordsError(request)
	}
	progress := req.Progress
	if progress == nil {
		progress = func(string) {}
	}
	system := plannerSystem()
	found, err := a.planContext(ctx, request)
	if err != nil {
		return nil, err
	}
	prompt := "Request: " + request + "\n\n" + found +
		"\nWrite the complete .pflow.md workflow for the request, in one ```markdown fence, and nothing else."
	draft := filepath.Join(a.Paths.Drafts, planDraftName(request)+library.Ext)
	var lastErr string
	for attempt := 0; attempt <= PlanRepairs; attempt++ {
		if attempt == 0 {
			progress(fmt.Sprintf("Planning a workflow with %s…", model))
		} else {
			progress(fmt.Sprintf("The plan is invalid; asking %s to repair it (%d of %d)…", model, attempt, PlanRepairs))
		}
		c, err := llm.Complete(ctx, llm.CompletionRequest{Model: model, System: system, Prompt: prompt, MaxTokens: planMaxTokens}, env)
		if err != nil {
			return nil, planLLMError(model, err)
		}
		md := ExtractPlannedMarkdown(c.Text)
		if err := os.MkdirAll(a.Paths.Drafts, 0o700); err != nil {
			return nil, pferr.Newf(pferr.Internal, "cannot create the drafts directory %s: %v", a.Paths.Drafts, err)
		}
		if err := os.WriteFile(draft, []byte(md), 0o600); err != nil {
			return nil, pferr.Newf(pferr.Internal, "cannot write the planned workflow to %s: %v", draft, err)
		}
		t, problems, err := a.checkPlanned(ctx, md, draft)
		if err != nil {
			return nil, err
		}
		if problems == "" {
			return &PlanOutcome{Target: t, Markdown: md, Model: model, Repairs: attempt, DraftPath: draft}, nil
		}
		lastErr = problems
		prompt = "Request: " + request + "\n\n" + found +
			"\nYour previous workflow:\n\n````markdown\n" + md + "\n````\n\n" +
			"It failed validation:\n\n" + problems + "\n\n" +
			"Fix every error listed and write the complete corrected .pflow.md in one ```markdown fence, and nothing else."
	}
	return nil, &pferr.Error{Kind: pferr.Validation,
		Message: fmt.Sprintf("the workflow %s planned for %q is still invalid after %d repairs:\n%s", model, request, PlanRepairs, lastErr),
		Where:   draft,
		Details: map[string]any{"draft": draft, "model": model},
		Hint: fmt.Sprintf("The last draft is %s: fix it by hand and run it with 'pflow %s', or ask again in other words "+
			"(name the steps or node types you expect). A stronger model may plan better: pflow settings llm set-default <provider/model>.", draft, draft)}
}

// checkPlanned parses md (written at path) and runs every static check
// --validate-only runs. problems is "" when the workflow is valid, else
// the errors, one per line with their fixes.
func (a *App) checkPlanned(ctx context.Context, md, path string) (*Target, string, error) {
	w, err := workflow.ParseMarkdown([]byte(md), path)
	if err != nil {
		return nil, pferr.As(parseError(path, err)).Error(), nil
	}
	t := &Target{Workflow: w, Name: inlineName(w), Path: path}
	if w.Source != nil && w.Source.Path != "" {
		t.Path = w.Source.Path
	}
	ro, err := a.Run(ctx, RunRequest{Target: t, ValidateOnly: true, CheckLive: true, NoTrace: true, NoRecord: true})
	if err != nil {
		return nil, "", err
	}
	if len(ro.ValidationErrors) == 0 {
		return t, "", nil
	}
	lines := make([]string, len(ro.ValidationErrors))
	for i, d := range ro.ValidationErrors {
		lines[i] = "- " + d.Message
		if d.Line > 0 {
			lines[i] = fmt.Sprintf("- Line %d: %s", d.Line, d.Message)
		}
		if h := d.Advice(pferr.Person); h != "" {
			lines[i] += "\n  Fix: " + strings.ReplaceAll(h, "\n", "\n  ")
		}
	}
	return nil, strings.Join(lines, "\n"), nil
}

// planLLMError words a failed planning call: what the model said, and
// that planning needs it.
func planLLMError(model string, err error) error {
	if pe, ok := err.(*pferr.Error); ok {
		return pe
	}
	msg := err.Error()
	if le, ok := err.(*llm.Error); ok {
		msg = le.Message
	}
	return &pferr.Error{Kind: pferr.Execution, Err: err,
		Message: fmt.Sprintf("planning the workflow failed: the LLM call to %s failed: %s", model, msg),
		Hint:    "Check the model and its API key ('pflow settings llm set-default <provider/model>', 'pflow settings set-env KEY=value'), then ask again."}
}

// ExtractPlannedMarkdown takes the workflow out of a model's answer: the
// content of its ```markdown fence (up to the last line that closes a
// fence of the same length, so inner fences stay), or else the whole
// answer.
func ExtractPlannedMarkdown(answer string) string {
	lines := strings.Split(strings.ReplaceAll(answer, "\r\n", "\n"), "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		tag := strings.TrimLeft(t, "`")
		fence := t[:len(t)-len(tag)]
		if len(fence) < 3 || !slices.Contains([]string{"markdown", "md", "pflow.md"}, strings.ToLower(strings.TrimSpace(tag))) {
			continue
		}
		body := lines[i+1:]
		for j := len(body) - 1; j >= 0; j-- {
			if strings.TrimSpace(body[j]) == fence {
				body = body[:j]
				break
			}
		}
		return strings.TrimSpace(strings.Join(body, "\n")) + "\n"
	}
	return strings.TrimSpace(answer) + "\n"
}

// planDraftName names the draft a plan is written to, after the request.
func planDraftName(request string) string {
	n := library.SuggestName(request)
	if len(n) > 40 {
		n = strings.TrimRight(n[:40], "-")
	}
	if n == "" {
		return "planned"
	}
	return "planned-" + n
}

// plannerSystem is the planner's system prompt: its task and a compact
// part of the agent guide (the format, templates, and choosing nodes).
func plannerSystem() string {
	guide := instructions.Agent()
	if i := strings.Index(guide, "## 3. The `.pflow.md` format"); i >= 0 {
		guide = guide[i:]
	}
	if i := strings.Index(guide, "## 5."); i >= 0 {
		guide = guide[:i]
	}
	if i, j := strings.Index(guide, "### When a run fails"), strings.Index(guide, "### Branches"); i >= 0 && j > i {
		guide = guide[:i] + guide[j:]
	}
	return "You plan pflow workflows. Given a request in words, you write one complete, valid .pflow.md " +
		"workflow that does it, using only the node types listed (and the saved workflows listed, as a step of '- type: workflow'). Declare an input for every value the person must give; do not invent values. " +
		"Prefer a few plain steps. Answer with the workflow in one ```markdown fence (use a longer fence of four " +
		"backticks when the workflow holds code blocks), and nothing else.\n\n" + strings.TrimSpace(guide)
}

// planNodeTypes are node types every plan may need, listed even when the
// request does not rank them.
var planNodeTypes = []string{"shell", "llm", "http", "read-file", "write-file"}

// planContext is the part of the prompt discovery fills: the saved
// workflows and node types that rank best for the request, with their
// inputs and params.
func (a *App) planContext(ctx context.Context, request string) (string, error) {
	var b strings.Builder
	query := request
	if discovery.CheckQueryLen(query) != nil {
		query = string([]rune(query)[:discovery.MaxQueryLen])
	}
	if ms, _, err := a.RankSavedWorkflows(query, 5); err == nil && len(ms) > 0 {
		lib := a.Library()
		b.WriteString("Saved workflows that may already do part of it (run one as a step with '- type: workflow', '- workflow_name: <name>' and '- param_mapping: {input: value}'):\n")
		for _, m := range ms {
			if m.Confidence < 0.3 {
				continue
			}
			s, err := lib.Load(m.Name)
			if err != nil {
				continue
			}
			info := SavedInfoOf(s, false)
			fmt.Fprintf(&b, "- %s: %s\n", m.Name, firstLineOf(s.Description))
			for _, in := range info.Inputs {
				fmt.Fprintf(&b, "    input %s (%s, %s): %s\n", in.Name, orAny(in.Type), requiredWord(in.Required), firstLineOf(in.Description))
			}
		}
		b.WriteString("\n")
	}
	cat, _, err := a.Catalog(ctx)
	if err != nil {
		return "", err
	}
	var specs []string
	visible := cat.Types()[:0:0]
	for _, t := range cat.Types() {
		if s, _ := cat.Lookup(t); s != nil && (!s.Hidden || cat.IncludeHidden) {
			visible = append(visible, t)
		}
	}
	for _, t := range planNodeTypes {
		if slices.Contains(visible, t) {
			specs = append(specs, t)
		}
	}
	var docs []discovery.Doc
	for _, t := range visible {
		s, _ := cat.Lookup(t)
		docs = append(docs, discovery.NodeDoc(s))
	}
	for _, m := range discovery.Rank(query, docs, 8) {
		if !slices.Contains(specs, m.Name) {
			specs = append(specs, m.Name)
		}
	}
	b.WriteString("Node types (use only these; params are '- key: value' items or fenced blocks):\n")
	for _, t := range specs {
		writeNodeBrief(&b, cat, t)
	}
	return b.String(), nil
}

func writeNodeBrief(b *strings.Builder, cat *registry.Catalog, t string) {
	s, _ := cat.Lookup(t)
	if s == nil {
		return
	}
	fmt.Fprintf(b, "\n### %s\n%s\n", s.Type, firstLineOf(s.Interface.Description))
	for _, p := range s.Interface.Params {
		fmt.Fprintf(b, "- param %s (%s, %s): %s", p.Key, orAny(p.Type), requiredWord(p.Required), firstLineOf(p.Description))
		if p.Default != nil {
			fmt.Fprintf(b, " Default: %s.", value.Stringify(p.Default))
		}
		b.WriteString("\n")
	}
	var outs []string
	for _, o := range s.Interface.Outputs {
		outs = append(outs, o.Key)
	}
	if len(outs) > 0 {
		fmt.Fprintf(b, "- outputs: %s\n", strings.Join(outs, ", "))
	}
}

func orAny(t string) string {
	if t == "" {
		return "any"
	}
	return t
}

func requiredWord(r bool) string {
	if r {
		return "required"
	}
	return "optional"
}

// SavePlan keeps a planned workflow in the library as name, its text as
// the model wrote it, after every static check a save does.
func (a *App) SavePlan(ctx context.Context, p *PlanOutcome, name string) (*SaveOutcome, error) {
	if err := a.CheckSaveName(name); err != nil {
		return nil, err
	}
	return a.saveWorkflow(ctx, p.Target.Workflow, []byte(p.Markdown), name, name+library.Ext, library.SaveOptions{})
}
