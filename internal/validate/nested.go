package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/suggest"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// ---------------------------------------------------------------- nested workflows

// nested loads child workflows of `type: workflow` steps to learn their
// outputs and check param_mapping / output_mapping.
func (v *validator) nested() {
	for _, n := range v.nodes {
		if !n.Nested() {
			continue
		}
		name, _ := n.Params["workflow_name"].(string)
		ref, _ := n.Params["workflow_ref"].(string)
		inline, hasInline := n.Params["workflow_ir"]
		given := 0
		for _, ok := range []bool{name != "", ref != "", hasInline} {
			if ok {
				given++
			}
		}
		if given != 1 {
			v.add(layerParams, Diagnostic{
				Message: fmt.Sprintf("Node '%s' (workflow): give exactly one of workflow_name, workflow_ref or workflow_ir", n.ID),
				NodeID:  n.ID, Line: n.Line,
				Hint: "Use '- workflow_name: <saved name>' for a saved workflow, '- workflow_ref: ./child.pflow.md' for a file (relative to this one), or a ```yaml workflow_ir``` block.",
			})
			continue
		}
		var child *workflow.Workflow
		switch {
		case hasInline:
			var err error
			switch x := inline.(type) {
			case map[string]any:
				b, merr := value.MarshalJSON(x)
				if merr == nil {
					child, err = workflow.ParseJSON(b, "")
				} else {
					err = merr
				}
			case string:
				if !template.HasTemplate(x) {
					child, err = workflow.ParseJSON([]byte(x), "")
				}
			default:
				err = fmt.Errorf("workflow_ir must be a workflow object, got %s", value.TypeName(inline))
			}
			if err != nil {
				v.add(layerParams, Diagnostic{
					Message: fmt.Sprintf("Node '%s' (workflow): invalid workflow_ir: %s", n.ID, err.Error()),
					NodeID:  n.ID, Param: "workflow_ir", Line: n.Line,
					Hint: "workflow_ir must be a workflow in JSON IR form (nodes, edges, inputs, outputs).",
				})
			}
		case v.opts.LoadWorkflow != nil && !template.HasTemplate(name) && !template.HasTemplate(ref):
			c, err := v.opts.LoadWorkflow(name, ref)
			if err != nil {
				what, param := "workflow_name '"+name+"'", "workflow_name"
				d := Diagnostic{NodeID: n.ID, Line: n.Line,
					Fixes: []pferr.Fix{{Text: "Check the name: {do} to see the saved workflows.", Do: pferr.ListWorkflows(),
						Step: n.ID, Param: "workflow_name", Line: n.Line}}}
				if ref != "" {
					what, param = "workflow_ref '"+ref+"'", "workflow_ref"
					d.Fixes = nil
					d.Hint = "Check the path; a relative workflow_ref resolves against the directory of this workflow file."
				} else if strings.ContainsAny(name, "/\\") || strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".json") {
					// A file path given as a saved workflow's name.
					d.Fixes = nil
					d.Hint = fmt.Sprintf("workflow_name is the name of a saved workflow; a file is given with workflow_ref: write '- workflow_ref: %s' instead of '- workflow_name: %s' (a relative path resolves against this workflow file's directory).", name, name)
				}
				d.Message, d.Param = fmt.Sprintf("Node '%s' (workflow): cannot load %s: %s", n.ID, what, err.Error()), param
				v.add(layerParams, d)
			}
			child = c
		}
		v.nestedExposure(n, child)
	}
}

func (v *validator) nestedExposure(n *workflow.Node, child *workflow.Workflow) {
	om, omErr := node.Map(n.Params, "output_mapping")
	if omErr != nil {
		v.add(layerParams, Diagnostic{
			Message: fmt.Sprintf("Node '%s' (workflow): output_mapping must map child output names to keys of this step, got %s", n.ID, value.TypeName(n.Params["output_mapping"])),
			NodeID:  n.ID, Param: "output_mapping", Line: n.Line,
			Hint: "Example:\n- output_mapping:\n    summary: child_summary",
		})
	}
	childType := func(key string) string {
		if child != nil {
			if o := child.Outputs.Get(key); o != nil && o.Type != "" {
				return o.Type
			}
		}
		return "any"
	}
	var fields []node.Field
	if len(om) > 0 {
		for _, ck := range value.SortedKeys(om) {
			pk := value.Stringify(om[ck])
			if child != nil && child.Outputs.Get(ck) == nil && child.Inputs.Get(ck) == nil && child.Node(ck) == nil {
				var declared []string
				for _, o := range child.Outputs {
					if o != nil {
						declared = append(declared, o.Name)
					}
				}
				hint := declaredHint(ck, declared, "outputs", "The child workflow declares no outputs; add an '## Outputs' section to it.")
				v.add(layerParams, Diagnostic{
					Message: fmt.Sprintf("Node '%s' (workflow): output_mapping maps '%s', which the child workflow does not produce", n.ID, ck),
					NodeID:  n.ID, Param: "output_mapping", Line: n.Line, Hint: hint,
				})
			}
			fields = append(fields, node.Field{Key: pk, Type: childType(ck)})
		}
		v.nestedKnown[n.ID] = true
	} else if child != nil {
		for _, o := range child.Outputs {
			if o != nil {
				fields = append(fields, node.Field{Key: o.Name, Type: typeOrAny(o.Type), Description: o.Description})
			}
		}
		v.nestedKnown[n.ID] = true
	}
	fields = withError(fields)
	v.nestedOut[n.ID] = fields

	// param_mapping against the child's inputs.
	if child == nil {
		return
	}
	mode, _ := n.Params["storage_mode"].(string)
	if mode != "" && mode != "mapped" {
		return
	}
	pm, err := node.Map(n.Params, "param_mapping")
	if raw := n.Params["param_mapping"]; err != nil && !isTemplateText(raw) {
		// One message with the mapping: the child's inputs written in the
		// text are not missing.
		fix := "Write it as a mapping of the child's inputs to values:\n- param_mapping:\n    <input>: ${...}"
		if str, ok := raw.(string); ok {
			if form, ok := workflow.MappingForm(str); ok {
				fix = fmt.Sprintf("Write it as a mapping: '- param_mapping: %s'.", form)
			}
		}
		v.add(layerParams, Diagnostic{
			Message: fmt.Sprintf("Node '%s' (workflow): 'param_mapping' must map the child workflow's inputs to values, got %s", n.ID, describeLiteral(raw)),
			NodeID:  n.ID, Param: "param_mapping", Line: n.Line, Hint: fix,
		})
		return
	}
	misspelt := map[string]bool{} // keys of param_mapping named as a missing input's typo
	for _, in := range child.Inputs {
		if in == nil {
			continue
		}
		if _, ok := pm[in.Name]; ok || !in.IsRequired() || in.Default != nil {
			continue
		}
		if slices.ContainsFunc(childInputKeys, func(k string) bool { m, _ := n.Params[k].(map[string]any); _, ok := m[in.Name]; return ok }) {
			continue // given under another tool's key: that key's error says to move it
		}
		var undeclared []string
		for _, k := range value.SortedKeys(pm) {
			if child.Inputs.Get(k) == nil {
				undeclared = append(undeclared, k)
			}
		}
		if near := suggest.Closest(in.Name, undeclared, 1, 0.5); len(near) > 0 {
			misspelt[near[0]] = true
			v.add(layerParams, Diagnostic{
				Message: fmt.Sprintf("Node '%s' (workflow): param_mapping sets '%s', which the child workflow does not declare, and leaves out its required input '%s'", n.ID, near[0], in.Name),
				NodeID:  n.ID, Param: "param_mapping", Line: n.Line,
				Hint: fmt.Sprintf("Rename '%s' to '%s' in param_mapping.", near[0], in.Name),
			})
			continue
		}
		v.add(layerParams, Diagnostic{
			Message: fmt.Sprintf("Node '%s' (workflow): the child workflow requires input '%s', which param_mapping does not provide", n.ID, in.Name),
			NodeID:  n.ID, Param: "param_mapping", Line: n.Line,
			Hint: fmt.Sprintf("Add it:\n- param_mapping:\n    %s: ${...}%s", in.Name, descSuffix(in.Description)),
		})
	}
	for _, k := range value.SortedKeys(pm) {
		if child.Inputs.Get(k) == nil && !misspelt[k] {
			var names []string
			for _, in := range child.Inputs {
				if in != nil {
					names = append(names, in.Name)
				}
			}
			hint := declaredHint(k, names, "inputs", "The child workflow declares no inputs.")
			v.add(layerParams, Diagnostic{
				Severity: SeverityWarning,
				Message:  fmt.Sprintf("Node '%s' (workflow): param_mapping sets '%s', which the child workflow does not declare as an input", n.ID, k),
				NodeID:   n.ID, Param: "param_mapping", Line: n.Line, Hint: hint,
			})
		}
	}
}

// declaredHint lists the names a child workflow declares ("Declared
// inputs: a, b"), led by the closest to key; none when there are no names.
func declaredHint(key string, names []string, what, none string) string {
	if len(names) == 0 {
		return none
	}
	hint := "Declared " + what + ": " + strings.Join(names, ", ")
	if s := suggest.Closest(key, names, 1, 0.6); len(s) > 0 {
		hint = fmt.Sprintf("Did you mean '%s'?\n%s", s[0], hint)
	}
	return hint
}

func descSuffix(d string) string {
	if d == "" {
		return ""
	}
	return "   # " + d
}

func withError(fields []node.Field) []node.Field {
	if _, ok := findField(fields, "error"); ok {
		return fields
	}
	out := append(fields[:len(fields):len(fields)], node.Field{Key: "error", Type: "str", Description: "Why the step failed; only set on failure."})
	return out
}

// outputsOf returns the outputs a step exposes (${id.key}) and whether they
// are known. Unknown outputs (unknown type, no declared outputs, nested
// workflow that could not be loaded) accept every path. The answer is
// remembered per step (every reference asks), so it must not be asked before
// nested() has loaded the nested workflows.
func (v *validator) outputsOf(id string) ([]node.Field, bool) {
	if o, ok := v.outputs[id]; ok {
		return o.fields, o.known
	}
	fields, known := v.computeOutputs(id)
	if v.outputs == nil {
		v.outputs = map[string]knownFields{}
	}
	v.outputs[id] = knownFields{fields, known}
	return fields, known
}

type knownFields struct {
	fields []node.Field
	known  bool
}

func (v *validator) computeOutputs(id string) ([]node.Field, bool) {
	n := v.byID[id]
	var inner []node.Field
	known := false
	if n.Nested() {
		inner, known = v.nestedOut[id], v.nestedKnown[id]
	} else if spec := v.specs[id]; spec != nil && len(spec.Interface.Outputs) > 0 {
		inner, known = withError(spec.Interface.Outputs), true
	}
	if n.Batch != nil {
		return batchFields(inner, known), true
	}
	return inner, known
}

// mcpOpen reports whether a step is an MCP tool whose outputs beyond
// result/error are not declared (no output schema): hoisted fields of the
// result (see docs/decisions.md, "Result extraction") can only be checked at
// run time.
func (v *validator) mcpOpen(id string) bool {
	n := v.byID[id]
	spec := v.specs[id]
	if n.Batch != nil || spec == nil || !strings.HasPrefix(n.Type, "mcp-") {
		return false
	}
	for _, f := range spec.Interface.Outputs {
		if f.Key != "result" && f.Key != "error" {
			return false
		}
	}
	return true
}

func (v *validator) typeLabel(id string) string {
	n := v.byID[id]
	return n.Type
}

// isTemplateText reports whether v is text holding a template (a value
// known only when the step runs).
func isTemplateText(v any) bool {
	s, ok := v.(string)
	return ok && template.HasTemplate(s)
}
