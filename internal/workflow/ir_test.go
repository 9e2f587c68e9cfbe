package workflow

import (
	"reflect"
	"testing"

	"github.com/pflow-go/pflow/internal/template"
)

// TestLookupsSkipNilEntries: a hand-built IR (MCP workflow_ir, tests) may
// hold nil entries; lookups skip them instead of panicking.
func TestLookupsSkipNilEntries(t *testing.T) {
	w := &Workflow{
		Nodes:   []*Node{nil, {ID: "a", Type: "shell"}},
		Inputs:  Inputs{nil, {Name: "x"}},
		Outputs: Outputs{nil, {Name: "y"}},
	}
	if w.Node("a") == nil || w.Node("b") != nil {
		t.Error("Node")
	}
	if w.Inputs.Get("x") == nil || w.Inputs.Get("z") != nil {
		t.Error("Inputs.Get")
	}
	if w.Outputs.Get("y") == nil || w.Outputs.Get("z") != nil {
		t.Error("Outputs.Get")
	}
}

// EachRef finds a step's references in its params (key order) and batch
// items, never in a nested step's own workflow, and not an escaped $${x}.
func TestNodeEachRef(t *testing.T) {
	heads := func(n *Node) []string {
		var out []string
		n.EachRef(func(r template.Ref) { out = append(out, r.Head) })
		return out
	}
	n := &Node{ID: "s", Type: "shell", Params: map[string]any{
		"z":       "${last}",
		"command": "echo ${a.out} $${not_a_ref}",
		"env":     map[string]any{"K": []any{"${b}", int64(1)}},
	}, Batch: &Batch{Items: []any{"${items.list}", "plain"}}}
	if got, want := heads(n), []string{"a", "b", "last", "items"}; !reflect.DeepEqual(got, want) {
		t.Errorf("heads = %q, want %q", got, want)
	}
	nested := &Node{ID: "call", Type: NestedType, Params: map[string]any{
		"workflow_ir":   map[string]any{"nodes": []any{map[string]any{"id": "x", "params": map[string]any{"v": "${child_input}"}}}},
		"param_mapping": map[string]any{"child_input": "${parent}"},
	}}
	if got, want := heads(nested), []string{"parent"}; !reflect.DeepEqual(got, want) {
		t.Errorf("nested heads = %q, want %q", got, want)
	}
}
