package app

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/value"
)

// OutputPath is one template path found in an actual node output.
type OutputPath struct {
	// Path is relative to the step: "stdout", "result.items[0].id".
	Path string `json:"path"`
	Type string `json:"type"`
	// Example is a short preview of the value (strings cut at 80 characters;
	// containers summarized).
	Example any `json:"example,omitempty"`
}

// NodeTrial is the outcome of running one node on its own.
type NodeTrial struct {
	NodeType string
	// Spec is the node type that ran.
	Spec     *node.Spec
	Outputs  map[string]any
	Paths    []OutputPath
	Duration time.Duration
}

// LookupNodeType finds a usable node type by name (exact, or an unambiguous
// normalized form). Unknown, ambiguous and denied types are errors with
// did-you-mean suggestions.
func LookupNodeType(cat *registry.Catalog, name string) (*node.Spec, error) {
	if s, cands := cat.Resolve(name); s != nil {
		if reason, denied := cat.DeniedReason(s.Type); denied {
			return nil, pferr.Newf(pferr.Validation, "node type '%s' is disabled by settings: %s", s.Type, reason)
		}
		return s, nil
	} else if len(cands) > 1 {
		return nil, &pferr.Error{Kind: pferr.NotFound, Message: fmt.Sprintf("node type '%s' is ambiguous", name),
			Details: map[string]any{"candidates": cands}, Suggestions: []string{"Use one of: " + strings.Join(cands, ", ")}}
	}
	if reason, denied := cat.DeniedReason(name); denied {
		return nil, pferr.Newf(pferr.Validation, "node type '%s' is disabled by settings: %s", name, reason)
	}
	e := &pferr.Error{Kind: pferr.NotFound, Message: fmt.Sprintf("node type '%s' not found in the registry", name)}
	if s := cat.Suggest(name, 5); len(s) > 0 {
		e.Suggestions = []string{"Did you mean: " + strings.Join(s, ", ") + "?"}
		e.Details = map[string]any{"similar": s}
	}
	return nil, e
}

// TryNode runs one node type once with params, outside any workflow, and
// returns its complete output with every template path it offers (JSON text
// outputs are parsed, so nested structure shows). Runs go through the same
// validation and engine as workflows; no trace is written. pol bounds the
// files the node may name; origin is RunRequest.Origin ("mcp" for an agent).
func (a *App) TryNode(ctx context.Context, nodeType string, params map[string]any, pol PathPolicy, origin string) (*NodeTrial, error) {
	cat, _, err := a.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	spec, err := LookupNodeType(cat, nodeType)
	if err != nil {
		return nil, err
	}
	// The one-step workflow of a direct call 'pflow <node>': no templates
	// apply, so "${HOME}" reaches the node as typed.
	w, err := NodeWorkflow([]NodeCall{{Spec: spec, Params: params}}, false)
	if err != nil {
		return nil, err
	}
	step := w.Nodes[0].ID
	t := &Target{Workflow: w, Name: "registry-run-" + spec.Type}
	out, err := a.Run(ctx, RunRequest{Target: t, NoTrace: true, Policy: pol, Origin: origin})
	if err != nil {
		return nil, err
	}
	if len(out.InputErrors) > 0 || len(out.ValidationErrors) > 0 {
		var msgs []string
		for _, d := range out.ValidationErrors {
			msgs = append(msgs, d.Message)
		}
		for _, e := range out.InputErrors {
			msgs = append(msgs, e.Message)
		}
		return nil, &pferr.Error{Kind: pferr.Validation,
			Message: fmt.Sprintf("cannot run node '%s': %s", spec.Type, strings.Join(msgs, "; ")),
			Details: map[string]any{"validation_errors": msgs, "params": spec.Interface.Params},
			Fixes:   []pferr.Fix{{Text: "Check the parameters against the node's interface: {do}.", Do: pferr.DescribeNode(spec.Type)}}}
	}
	res := out.Result
	if !res.Success() {
		msg := "the node failed"
		var details map[string]any
		if res.Failure != nil {
			msg = res.Failure.Message
			details = res.Failure.Details
		}
		return nil, &pferr.Error{Kind: pferr.Execution, Message: fmt.Sprintf("node '%s' failed: %s", spec.Type, out.Redactor.String(msg)),
			Details: details, Fixes: []pferr.Fix{{Text: "Check the parameters ({do} to see them) and any credentials the node needs.", Do: pferr.DescribeNode(spec.Type)}}}
	}
	outputs, _ := res.Shared[step].(map[string]any)
	if outputs == nil {
		outputs = map[string]any{}
	}
	if v, ok := out.Redactor.Value(outputs).(map[string]any); ok {
		outputs = v
	}
	tr := &NodeTrial{NodeType: spec.Type, Spec: spec, Outputs: outputs, Paths: TrialOutputPaths(outputs)}
	if len(res.Steps) > 0 {
		tr.Duration = res.Steps[0].Duration
	}
	return tr, nil
}

// TrialOutputPaths lists every template path in v (map keys sorted; lists
// addressed by their first item; JSON text parsed), capped at 500 paths.
func TrialOutputPaths(v map[string]any) []OutputPath {
	var out []OutputPath
	var walk func(prefix string, v any, depth int)
	walk = func(prefix string, v any, depth int) {
		if len(out) >= 500 || depth > 12 {
			return
		}
		if s, ok := v.(string); ok {
			if p, ok := value.TryParseContainer(s); ok {
				out = append(out, OutputPath{Path: prefix, Type: "str (JSON " + value.TypeName(p) + ")", Example: trialPreview(s)})
				trialWalkChildren(prefix, p, depth, walk)
				return
			}
		}
		if prefix != "" {
			out = append(out, OutputPath{Path: prefix, Type: value.TypeName(v), Example: trialPreview(v)})
		}
		trialWalkChildren(prefix, v, depth, walk)
	}
	walk("", v, 0)
	return out
}

func trialWalkChildren(prefix string, v any, depth int, walk func(string, any, int)) {
	switch x := v.(type) {
	case map[string]any:
		keys := value.SortedKeys(x)
		for _, k := range keys {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			walk(p, x[k], depth+1)
		}
	case []any:
		if len(x) > 0 {
			walk(prefix+"[0]", x[0], depth+1)
		}
	}
}

func trialPreview(v any) any {
	switch x := v.(type) {
	case string:
		if r := []rune(x); len(r) > 80 {
			return string(r[:80]) + "..."
		}
		return x
	case map[string]any:
		return "{" + strconv.Itoa(len(x)) + " keys}"
	case []any:
		return "[" + strconv.Itoa(len(x)) + " items]"
	}
	return v
}

// escapeTemplates turns every "${" in strings into the template escape "$${",
// which the engine renders back as "${".
func escapeTemplates(v any) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "${", "$${")
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = escapeTemplates(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = escapeTemplates(e)
		}
		return out
	}
	return v
}
