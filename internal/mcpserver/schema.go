package mcpserver

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

func falseSchema() *jsonschema.Schema { return &jsonschema.Schema{Not: &jsonschema.Schema{}} }

// object is a closed object schema (unknown arguments are refused, so a
// misspelt argument is reported instead of ignored).
func object(required []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
	if required == nil {
		required = []string{}
	}
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required, AdditionalProperties: falseSchema()}
}

// openObject is an object schema that allows any keys.
func openObject(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Description: desc}
}

func str(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}

func boolean(desc string, def bool) *jsonschema.Schema {
	b, _ := json.Marshal(def)
	return &jsonschema.Schema{Type: "boolean", Description: desc, Default: b}
}

func integer(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Description: desc}
}

func number(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "number", Description: desc}
}

func arrayOf(items *jsonschema.Schema, desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Items: items, Description: desc}
}

func withDefault(s *jsonschema.Schema, def any) *jsonschema.Schema {
	b, _ := json.Marshal(def)
	s.Default = b
	return s
}

// anyValue accepts any JSON value.
func anyValue(desc string) *jsonschema.Schema { return &jsonschema.Schema{Description: desc} }

// props builds an open (extensible) object schema describing data.
func props(desc string, p map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Description: desc, Properties: p, Required: required}
}

// errorSchema is the error object of a failure envelope.
var errorSchema = props("Why the call failed and how to fix it.", map[string]*jsonschema.Schema{
	"type":        {Type: "string", Enum: []any{ErrValidation, ErrExecution, ErrNotFound, ErrSecurity}, Description: "validation: the input or workflow is wrong; execution: running failed; not_found: a named thing does not exist; security: a name or path was refused."},
	"message":     str("Human-readable message."),
	"details":     openObject("Structured specifics: diagnostics (validation), missing_inputs and input_errors (inputs), node_id, category, line, file (a failed step), where, ...)."),
	"suggestions": arrayOf(str(""), "Concrete next steps."),
}, "type", "message")

// envelopeSchema is the output schema of every tool: the envelope
// with a tool-specific data schema.
func envelopeSchema(data *jsonschema.Schema) *jsonschema.Schema {
	if data == nil {
		data = openObject("Tool-specific result.")
	}
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"success":    {Type: "boolean", Description: "true when the call did what was asked."},
			"data":       data,
			"error":      errorSchema,
			"trace_path": str("Execution trace file (read it with trace_read)."),
			"run_id":     str("The run's record (workflow_execute): resume it with resume: <run_id>."),
			"checkpoint": props("Progress at the failure: the steps that completed and the one that failed.", map[string]*jsonschema.Schema{
				"completed_nodes": {Types: []string{"array", "null"}, Items: str("")},
				"failed_node":     {Types: []string{"string", "null"}},
				"resumable":       {Type: "boolean"},
				"run_id":          str(""),
				"resume_with":     openObject("The workflow_execute arguments that resume the run."),
			}),
		},
		Required: []string{"success"},
	}
}
