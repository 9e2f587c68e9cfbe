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

// Params are the params of a nested-workflow step.
var Params = []node.Field{
	{Key: "workflow_ref", Type: "str", Sink: node.SinkLiteral, Description: "The child's .pflow.md (or .json) file, relative to this workflow's file, or absolute. Give exactly one of workflow_ref, workflow_name, workflow_ir."},
	{Key: "workflow_name", Type: "str", Sink: node.SinkLiteral, Description: "Instead: the name of a saved workflow."},
	{Key: "workflow_ir", Type: "dict", Sink: node.SinkLiteral, Description: "Instead: the child workflow inline, as JSON IR (its templates resolve against its own inputs)."},
	{Key: "param_mapping", Type: "dict", Description: "The child's inputs by name, as templates of this workflow: {title: \"${title}\"}. The child sees only these (and its own defaults)."},
	{Key: "output_mapping", Type: "dict", Description: "Renames child outputs on this step: {slug: post_slug} makes ${step.post_slug}."},
	{Key: "storage_mode", Type: "str", Description: "mapped (default: only param_mapping values are passed) or isolated (nothing is passed).", Enum: []any{"mapped", "isolated"}},
	{Key: "scope_prefix", Type: "str", Description: "Accepted for compatibility; has no effect."},
	{Key: "max_depth", Type: "int", Description: "The deepest nesting allowed below this step (default 10)."},
	{Key: "error_action", Type: "str", Description: "The action this step takes when the child fails (default error)."},
}

// ParamNames are the keys of Params.
func ParamNames() []string {
	names := make([]string, len(Params))
	for i, f := range Params {
		names[i] = f.Key
	}
	return names
}

// Spec is the nested-workflow node type.
func Spec() *node.Spec {
	return &node.Spec{
		Type:     workflow.NestedType,
		Group:    "workflow",
		Attempts: 1, // a failed child is not run again: its steps have their own retries
		Interface: node.Interface{
			Description: "Run another workflow as one step: its inputs come from param_mapping, its declared outputs appear on the step (${step.<output>}). Runs in the same run (MCP sessions are shared); a workflow that calls itself is refused.",
			Params:      Params,
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
