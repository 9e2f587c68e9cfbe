// Package nested describes the nested-workflow node, `type: workflow`: a
// step that runs another workflow (a file, a saved workflow, or inline IR)
// with mapped inputs and publishes its declared outputs. Its spec is listed
// and described like every other node's; the engine runs it itself, since a
// child run shares the parent's run (scope, journal, depth), which a node's
// Run does not see.
package nested

import (
	"context"
	"errors"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/workflow"
)

// Spec is the nested-workflow node type.
func Spec() *node.Spec {
	return &node.Spec{
		Type:     workflow.NestedType,
		Group:    "workflow",
		Attempts: 1, // a failed child is not run again: its steps have their own retries
		Interface: node.Interface{
			Description: "Run another workflow as one step: its inputs come from param_mapping, its declared outputs appear on the step (${step.<output>}). Runs in the same run (MCP sessions are shared); a workflow that calls itself is refused.",
			Params:      node.NestedParams,
			Outputs: []node.Field{
				{Key: "<output>", Type: "any", Description: "Each output the child workflow declares, by name (renamed by output_mapping)."},
				{Key: "error", Type: "str", Description: "Why the child failed, naming its failed step."},
			},
			Actions: []string{"default", "error"},
		},
		Node: node.Func(func(context.Context, *node.Request) (*node.Result, error) {
			return nil, errors.New("a nested workflow step is run by the engine, not as a node")
		}),
	}
}
