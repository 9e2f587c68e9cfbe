package validate

import (
	"fmt"
	"strings"

	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

// ---------------------------------------------------------------- batch

// inputDefaults: a declared default must have the input's declared type
// (a run that relies on it would fail before its first step).
func (v *validator) inputDefaults() {
	for _, in := range v.w.Inputs {
		if in != nil && in.Required != nil && *in.Required && in.Default != nil {
			v.add(layerStructure, Diagnostic{
				Message: fmt.Sprintf("Input '%s' says required: true and has a default; a default only fills an optional input, so the two contradict each other", in.Name),
				Param:   "required", Line: in.Line,
				Hint: fmt.Sprintf("Write '- required: false' (or remove the required line: an input with a default is optional and takes the default when not given), or remove '- default: %s' if the caller must always give '%s'.", value.Stringify(in.Default), in.Name),
			})
		}
		if in == nil || in.Default == nil || strings.TrimSpace(in.Type) == "" {
			continue
		}
		if _, err := runtime.Coerce(in.Default, in.Type); err != nil {
			example := typeExample(in.Type)
			if s, ok := in.Default.(string); ok && runtime.NormalizeType(in.Type) == "list" && strings.Contains(s, ",") {
				// "a, b": the items meant, as a YAML list
				var items []any
				for _, it := range strings.Split(s, ",") {
					items = append(items, strings.TrimSpace(it))
				}
				example = value.YAMLFlow(items, nil)
			}
			hint := fmt.Sprintf("Give a default of type %s (e.g. '- default: %s'), or change '- type: %s' to the type the default has.", in.Type, example, in.Type)
			if d, ok := in.Default.(string); ok && template.HasTemplate(d) {
				hint = fmt.Sprintf("A default is a value written out, not a template: write one (e.g. '- default: %s'), or leave the input required and pass the value when running.", example)
			}
			v.add(layerStructure, Diagnostic{
				Message: fmt.Sprintf("Input '%s' has type '%s', but its default does not: the type %v", in.Name, in.Type, err),
				Param:   "default", Line: in.Line, Hint: hint,
			})
		}
	}
}

// typeExample is a literal of an input type, for hints.
func typeExample(t string) string {
	switch runtime.NormalizeType(t) {
	case "int":
		return "10"
	case "float":
		return "0.5"
	case "bool":
		return "true"
	case "dict":
		return "{}"
	case "list":
		return "[]"
	}
	return "text"
}

func (v *validator) batches() {
	used := map[string]bool{} // "node\x00head" for every template head a step's params read
	for _, st := range v.sites() {
		if st.kind == siteParam || st.kind == siteMapping {
			for _, r := range template.Refs(st.s) {
				used[st.nodeID+"\x00"+r.Head] = true
			}
		}
	}
	for _, n := range v.nodes {
		if n.Batch == nil {
			continue
		}
		alias := n.Batch.Alias()
		if n.Batch.MaxConcurrent > 0 && !n.Batch.Parallel {
			v.add(layerTemplates, Diagnostic{
				Message: fmt.Sprintf("Batch step '%s' sets max_concurrent: %d without parallel: true (with parallel: false or no parallel line, items run one at a time), so max_concurrent has no effect", n.ID, n.Batch.MaxConcurrent),
				NodeID:  n.ID, Param: "batch", Line: n.Line,
				Hint: "Add 'parallel: true' to the batch to run items side by side (at most max_concurrent at once), or remove max_concurrent.",
			})
		}
		if n.Batch.RetryWait > 0 && n.Batch.MaxRetries <= 1 {
			v.add(layerTemplates, Diagnostic{
				Message: fmt.Sprintf("Batch step '%s' sets retry_wait without max_retries above 1, so no item is ever retried and retry_wait has no effect", n.ID),
				NodeID:  n.ID, Param: "batch", Line: n.Line,
				Hint: "Add 'max_retries: 3' (attempts per item, 1–10) to the batch to retry failing items, or remove retry_wait.",
			})
		}
		if !used[n.ID+"\x00"+alias] && !used[n.ID+"\x00__index__"] {
			example := "${" + alias + "}"
			v.add(layerTemplates, Diagnostic{
				Message: fmt.Sprintf("Batch step '%s' never uses its item: none of its params reads %s, so it runs the same call once per item", n.ID, example),
				NodeID:  n.ID, Param: "batch", Line: n.Line,
				Hint: fmt.Sprintf("Use %s (or a field of it, e.g. %s) in the param that should change per item; or remove the batch block if one run is enough.", example, "${"+alias+".name}"),
			})
		}
		if in := v.inputs[alias]; in != nil {
			v.add(layerTemplates, Diagnostic{
				Severity: SeverityWarning,
				Message:  fmt.Sprintf("Batch alias '%s' of node '%s' has the same name as an input; inside the step ${%s} is the batch item, not the input", alias, n.ID, alias),
				NodeID:   n.ID, Param: "batch.as", Line: n.Line,
				Hint: "Choose another name with 'as:' in the batch block.",
			})
		} else if y := v.byID[alias]; y != nil {
			v.add(layerTemplates, Diagnostic{
				Severity: SeverityWarning,
				Message:  fmt.Sprintf("Batch alias '%s' of node '%s' has the same name as step '%s'", alias, n.ID, y.ID),
				NodeID:   n.ID, Param: "batch.as", Line: n.Line,
				Hint: "Choose another name with 'as:' in the batch block.",
			})
		}
	}
}
