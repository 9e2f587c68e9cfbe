package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pflow-go/pflow/internal/stepkeys"
	"github.com/pflow-go/pflow/internal/value"
)

// overwrittenPublish refuses a name that a step publishes with
// output_mappings when a later step always publishes the same name before
// anything reads it: the first value can never be seen. Two branches that
// publish one name (a step and its on_error recovery) are fine; the same
// two steps on one path are the usual trace of a lost on_error or next.
//
// "Always" is the chain of default successors from the first step through
// steps that cannot route elsewhere and are never skipped (no 'when'); in
// a parallel workflow the order is not fixed, so nothing is refused.
func (v *validator) overwrittenPublish() {
	if v.w.Parallel > 0 || len(v.w.Mappings) < 2 {
		return
	}
	n := len(v.nodes)
	next := make([]int, n)
	routes := make([][]string, n) // the actions a step routes besides default
	for i := range next {
		next[i] = -1
	}
	for _, e := range v.w.Edges {
		f, ok1 := v.index[e.From]
		t, ok2 := v.index[e.To]
		if !ok1 || !ok2 {
			continue
		}
		if a := e.ActionOrDefault(); a != "default" {
			routes[f] = append(routes[f], a)
		} else if next[f] == -1 {
			next[f] = t
		} else {
			next[f] = -2 // two default successors: not a chain
		}
	}
	publishes := func(i int) []string {
		m := v.w.Mappings[v.nodes[i].ID]
		if m == nil {
			return nil
		}
		var names []string
		for _, k := range value.SortedKeys(m.OutputMappings) {
			names = append(names, m.OutputMappings[k])
		}
		return names
	}
	reads := func(i int, name string) bool {
		for _, r := range v.stepRefs(v.nodes[i], nil) {
			if r.Head == name {
				return true
			}
		}
		return false
	}
	for i := range v.nodes {
		for _, name := range publishes(i) {
			// The step itself may route its failure elsewhere (then it
			// published nothing); any other route leaves the chain.
			if slices.ContainsFunc(routes[i], func(a string) bool { return a != "error" }) {
				continue
			}
			for x, hops := next[i], 0; x >= 0 && hops < n; x, hops = next[x], hops+1 {
				if _, ok := v.nodes[x].Params[stepkeys.When]; ok || reads(x, name) {
					break
				}
				if slices.Contains(publishes(x), name) {
					a, b := v.nodes[i].ID, v.nodes[x].ID
					v.add(layerOutputs, Diagnostic{
						Message: fmt.Sprintf("Steps '%s' and '%s' both publish '%s' (output_mappings), and '%s' always runs after '%s' with nothing reading '%s' in between, so the value of '%s' is never seen",
							a, b, name, b, a, name, a),
						NodeID: a, Param: "output_mappings", Line: v.nodes[i].Line,
						Hint: fmt.Sprintf("If '%s' handles a failure, route the step that can fail to it with '- on_error: %s' (then it no longer follows '%s'); otherwise remove one of the two output_mappings.", b, b, a),
					})
					break
				}
				if len(routes[x]) > 0 {
					break
				}
			}
		}
	}
}

// failureReads warns about a read of a step's exit_code (or stderr) where
// that step cannot have failed: it has no on_error route, no
// ignore_errors and no batch that continues on errors, so a run that
// reaches the reader went through it successfully: its exit_code is 0.
// The usual trace of an on_error moved to another step or removed.
func (v *validator) failureReads() {
	for _, n := range v.nodes {
		for _, r := range v.stepRefs(n, nil) {
			field, _, _ := strings.Cut(strings.TrimPrefix(r.Path, r.Head+"."), ".")
			if r.Path == r.Head || field != "exit_code" || r.Head == n.ID {
				continue
			}
			x, ok := v.byID[r.Head]
			if !ok || x.Type != "shell" || v.mayContinueAfterFailure(x.ID) {
				continue
			}
			v.add(layerOutputs, Diagnostic{Severity: SeverityWarning,
				Message: fmt.Sprintf("Step '%s' reads %s, but '%s' cannot have failed when '%s' runs: it has no on_error and no ignore_errors, so a failure ends the run there, and the value is always 0", n.ID, r.Raw, x.ID, n.ID),
				NodeID:  n.ID, Line: n.Line,
				Hint: fmt.Sprintf("If '%s' handles the failure of '%s', add '- on_error: %s' to '%s'; to go on after a failing exit, add '- ignore_errors: true' to '%s'.", n.ID, x.ID, n.ID, x.ID, x.ID)})
		}
	}
}

// mayContinueAfterFailure reports whether a run can go on after step id
// failed: it routes its error, ignores errors or continues its batch.
func (v *validator) mayContinueAfterFailure(id string) bool {
	for _, e := range v.w.Edges {
		if e.From == id && e.ActionOrDefault() != "default" {
			return true
		}
	}
	n := v.byID[id]
	if b, _ := n.Params["ignore_errors"].(bool); b {
		return true
	}
	if _, ok := n.Params["ignore_errors"].(string); ok {
		return true // a template: it may be true
	}
	return n.Batch != nil
}
