package node

// NestedParams are the params of a nested-workflow step (type: workflow,
// workflow.NestedType). The engine runs such a step itself, so these are
// facts of the contract that the engine, the validator and the node's spec
// share.
var NestedParams = []Field{
	{Key: "workflow_ref", Type: "str", Sink: SinkLiteral, Description: "The child's .pflow.md (or .json) file, relative to this workflow's file, or absolute. Give exactly one of workflow_ref, workflow_name, workflow_ir."},
	{Key: "workflow_name", Type: "str", Sink: SinkLiteral, Description: "Instead: the name of a saved workflow."},
	{Key: "workflow_ir", Type: "dict", Sink: SinkLiteral, Description: "Instead: the child workflow inline, as JSON IR (its templates resolve against its own inputs)."},
	{Key: "param_mapping", Type: "dict", Description: "The child's inputs by name, as templates of this workflow: {title: \"${title}\"}. The child sees only these (and its own defaults)."},
	{Key: "output_mapping", Type: "dict", Description: "Renames child outputs on this step: {slug: post_slug} makes ${step.post_slug}."},
	{Key: "storage_mode", Type: "str", Description: "mapped (default: only param_mapping values are passed) or isolated (nothing is passed).", Enum: []any{"mapped", "isolated"}},
	{Key: "scope_prefix", Type: "str", Description: "Accepted for compatibility; has no effect."},
	{Key: "max_depth", Type: "int", Description: "The deepest nesting allowed below this step (default 10)."},
	{Key: "error_action", Type: "str", Description: "The action this step takes when the child fails (default error)."},
}

// NestedParamNames are the keys of NestedParams.
func NestedParamNames() []string {
	names := make([]string, len(NestedParams))
	for i, f := range NestedParams {
		names[i] = f.Key
	}
	return names
}
