package workflow

import "testing"

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
