// Package switchnode implements the `switch` node: it tries conditions in
// order over the run's data and takes the action of the first that holds,
// so a workflow branches on data with ordinary `on` edges.
package switchnode

import (
	"context"
	"errors"
	"fmt"

	"github.com/pflow-go/pflow/internal/cond"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/value"
)

// Type is the node type name.
const Type = "switch"

// DefaultAction is the action taken when no case holds and the step sets
// no default.
const DefaultAction = "default"

// Spec returns the switch node type.
func Spec() *node.Spec {
	return &node.Spec{
		Type:        Type,
		Group:       "control",
		Interface:   iface,
		Attempts:    1,
		Node:        node.Func(run),
		Effects:     node.Effects{ReadOnly: true, Idempotent: true, Pure: true},
		Inline:      true,
		StepActions: actionsOf,
	}
}

var iface = node.Interface{
	Description: "Choose a branch by the run's data: try each case's condition in order and take the action of the first that holds (else the default); route the actions with `on` edges.",
	Params: []node.Field{
		{Key: "cases", Type: "list", Required: true, Sink: node.SinkExpr, Description: "A list of '<action>: <condition>' items, tried in order: [{none: \"${count} == 0\"}, {some: \"${count} < 10\"}]."},
		{Key: "default", Type: "str", Default: DefaultAction, Description: "The action when no case holds."},
	},
	Outputs: []node.Field{
		{Key: "branch", Type: "str", Description: "The action taken: the first case that held, or the default."},
	},
	Actions: []string{DefaultAction},
}

func actionsOf(params map[string]any) []string {
	var out []string
	if d, ok := params["default"].(string); !ok || d == "" || d == DefaultAction {
		out = append(out, DefaultAction) // unless the default is renamed, it is taken when no case holds
	}
	if cases, err := cond.ParseCases(params["cases"]); err == nil {
		for _, c := range cases {
			out = append(out, c.Action)
		}
	} else if m, ok := params["cases"].(map[string]any); ok {
		// Cases written as an object are refused for their order; their
		// keys are still the actions meant, so their edges are not
		// reported as well.
		out = append(out, value.SortedKeys(m)...)
	}
	if d, ok := params["default"].(string); ok && d != "" && d != DefaultAction {
		out = append(out, d)
	}
	return out
}

func run(_ context.Context, req *node.Request) (*node.Result, error) {
	cases, err := cond.ParseCases(req.Params["cases"])
	if err != nil {
		return nil, &node.ParamError{Param: "cases", Message: err.Error()}
	}
	def := node.String(req.Params, "default", DefaultAction)
	if def == "" {
		def = DefaultAction
	}
	for _, c := range cases {
		x, err := cond.Compile(c.When)
		if err != nil {
			return nil, &node.ParamError{Param: "cases", Message: fmt.Sprintf("case '%s': %v", c.Action, err)}
		}
		ok, err := x.Eval(req.Shared)
		if err != nil {
			var u *cond.UnresolvedError
			if errors.As(err, &u) {
				return nil, fmt.Errorf("case '%s' reads %s, which has no value (its step was skipped, or the path is wrong); give a default with ??, e.g. '(%s ?? 0) > 1'", c.Action, u.Refs[0], u.Refs[0])
			}
			return nil, fmt.Errorf("case '%s': %v", c.Action, err)
		}
		if ok {
			return &node.Result{Outputs: map[string]any{"branch": c.Action}, Action: c.Action}, nil
		}
	}
	return &node.Result{Outputs: map[string]any{"branch": def}, Action: def}, nil
}
