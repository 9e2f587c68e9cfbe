package app

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/workflow"
)

// Caller says who names a workflow, for Resolve: a person at a shell
// (the zero value) or an agent talking to pflow mcp serve.
type Caller struct {
	// Agent is an MCP client: files must be .pflow.md and allowed by
	// Policy, and a saved workflow or draft wins over a file of the same
	// name in the server's working directory.
	Agent  bool
	Policy PathPolicy
}

// ResolveTarget finds the workflow a command-line argument names (Resolve
// for a person).
func (a *App) ResolveTarget(arg string) (*Target, error) { return a.Resolve(arg, Caller{}) }

// ResolveAgentWorkflow finds the workflow a tool argument names (Resolve
// for an agent under pol).
func (a *App) ResolveAgentWorkflow(ref any, pol PathPolicy) (*Target, error) {
	return a.Resolve(ref, Caller{Agent: true, Policy: pol})
}

// Resolve is the one resolver of both faces (see docs/decisions.md, "The MCP
// server's tool set"). It tries, in
// order: inline JSON IR (an object, or text holding one); inline .pflow.md
// markdown (text with a newline); a file path (a person's: any existing
// path with a separator or a .pflow.md/.json name; an agent's: a .pflow.md
// path with a separator, allowed by its policy); a saved workflow; a draft
// (an agent's); and last an agent's existing .pflow.md file named without
// a directory. Anything else that looks like a path is refused as a name.
func (a *App) Resolve(ref any, c Caller) (*Target, error) {
	var s string
	switch v := ref.(type) {
	case map[string]any:
		data, err := json.Marshal(v)
		if err != nil {
			return nil, pferr.Newf(pferr.Validation, "workflow IR is not JSON-encodable: %v", err)
		}
		return inlineIR(data)
	case string:
		s = v
	case nil:
		return nil, pferr.New(pferr.Validation, "no workflow given").
			WithHint("Pass a saved workflow name, .pflow.md markdown text, or a JSON IR object.")
	default:
		return nil, pferr.Newf(pferr.Validation, "workflow must be a string or an object, got %T", ref).
			WithHint("Pass a saved workflow name, .pflow.md markdown text, or a JSON IR object.")
	}
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return nil, pferr.New(pferr.Validation, "workflow is empty").
			WithHint("Pass a saved workflow name, .pflow.md markdown text, or a JSON IR object.")
	case strings.HasPrefix(t, "{"):
		return inlineIR([]byte(t))
	case strings.Contains(s, "\n"):
		w, err := workflow.ParseMarkdown([]byte(s), "")
		if err != nil {
			return nil, parseError("the inline workflow markdown", err)
		}
		return &Target{Workflow: w, Name: inlineName(w)}, nil
	}
	if !c.Agent {
		return a.resolvePersonArg(t)
	}
	if isPflowMDPath(t) && strings.ContainsAny(t, `/\`) {
		return a.agentLoadFile(t, c.Policy)
	}
	name := t
	if isPflowMDPath(t) {
		name = t[:len(t)-len(library.Ext)]
	}
	if err := library.ValidateName(name); err != nil {
		if isPflowMDPath(t) && pferr.KindOf(err) != pferr.Security {
			return a.agentLoadFile(t, c.Policy)
		}
		return nil, err
	}
	return a.agentLoadSavedOrDraft(name, t, c.Policy)
}

// resolvePersonArg finds a file path (preferred: the argument is typed in
// a shell, in the directory the person is in) or a saved workflow.
func (a *App) resolvePersonArg(arg string) (*Target, error) {
	if looksLikePath(arg) {
		if _, err := os.Stat(arg); err == nil {
			w, err := workflow.ParseFile(arg)
			if err != nil {
				return nil, parseError(arg, err)
			}
			return &Target{Workflow: w, Name: arg, Path: w.Source.Path}, nil
		}
		if strings.ContainsAny(arg, `/\`) {
			return nil, &pferr.Error{Kind: pferr.NotFound, Message: fmt.Sprintf("workflow file '%s' does not exist", arg),
				Hint:  "Check the path (relative paths are relative to the current directory), or run a saved workflow by name.",
				Fixes: []pferr.Fix{{Text: "{do} to see the saved workflows.", Do: pferr.ListWorkflows()}}}
		}
	}
	name := strings.TrimSuffix(arg, library.Ext)
	s, err := a.Library().Load(name)
	if err != nil {
		if pferr.KindOf(err) == pferr.Validation && strings.ContainsAny(strings.TrimSpace(arg), " \t") {
			return nil, a.wordsNotAName(strings.TrimSpace(arg)) // words, not a name
		}
		return nil, err
	}
	return &Target{Workflow: s.Workflow, Name: s.Name, Saved: true, Path: s.Path}, nil
}

// looksLikePath reports whether a person's argument names a file rather
// than a saved workflow.
func looksLikePath(arg string) bool {
	l := strings.ToLower(arg)
	return strings.ContainsAny(arg, `/\`) || strings.HasSuffix(l, ".md") || strings.HasSuffix(l, ".json")
}

func inlineIR(data []byte) (*Target, error) {
	w, err := workflow.ParseJSON(data, "")
	if err != nil {
		return nil, parseError("the inline workflow IR", err)
	}
	return &Target{Workflow: w, Name: "inline"}, nil
}

// inlineName names an inline markdown workflow for its trace file.
func inlineName(w *workflow.Workflow) string {
	if w.Source != nil && w.Source.Title != "" {
		if n := library.SuggestName(w.Source.Title); n != "" {
			return n
		}
	}
	return "inline"
}
