package validate

import (
	"fmt"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/template"
)

// ---------------------------------------------------------------- type checks

func (v *validator) typeChecks(st *site, r template.Ref, typ string, nrefs int) {
	x := v.byID[st.nodeID]
	if x == nil {
		return
	}
	simple := st.topLevel && r.Start == 0 && r.End == len(st.s)
	switch st.kind {
	case siteItems:
		if simple && typ != "any" && !hasMember(typ, "list", "str", "any") {
			v.add(layerTemplates, Diagnostic{
				Message: fmt.Sprintf("Batch items of node '%s' must be a list: %s has type '%s'", x.ID, r.Raw, typ),
				NodeID:  x.ID, Param: st.param, Line: x.Line,
				Hint: "Point batch.items at a list output (or text holding a JSON array), e.g. ${fetch.response.items}.",
			})
		}
		return
	case siteParam, siteMapping:
	default:
		return
	}
	spec := v.specs[x.ID]
	if spec == nil {
		return
	}
	if x.Type == "shell" && st.param == "command" && st.kind == siteParam {
		v.shellGuard(st, r, typ)
	}
	if !simple || typ == "any" {
		return
	}
	pf, ok := spec.Interface.Param(st.param)
	if !ok || strings.TrimSpace(pf.Type) == "" || hasMember(pf.Type, "any") {
		return
	}
	if compatible(typ, pf.Type) {
		return
	}
	msg := fmt.Sprintf("Type mismatch in node '%s' parameter '%s': template %s has type '%s' but parameter expects '%s'", x.ID, st.param, r.Raw, typ, pf.Type)
	if weakCompatible(typ, pf.Type) {
		v.add(layerTemplates, Diagnostic{
			Severity: SeverityWarning,
			Message:  msg + " (converted at run time)",
			NodeID:   x.ID, Param: st.param, Line: x.Line,
			Hint: fmt.Sprintf("The text is converted to %s when the step runs; the step fails if it does not look like one.", pf.Type),
		})
		return
	}
	hint := fmt.Sprintf("Reference a value of type '%s', or wrap it in text (\"%s\") to pass it as a string.", pf.Type, r.Raw)
	if fields := v.subFieldsOf(r); len(fields) > 0 {
		var good []string
		var paths []fieldPath
		flatten(fields, "", 0, &paths)
		for _, p := range paths {
			if compatible(p.typ, pf.Type) && !hasMember(p.typ, "any") {
				good = append(good, fmt.Sprintf("  ${%s%s} (%s)", r.Path, p.path, p.typ))
			}
		}
		if len(good) > 0 {
			if len(good) > 10 {
				good = good[:10]
			}
			hint = "💡 Available fields with correct type:\n" + strings.Join(good, "\n")
		}
	}
	v.add(layerTemplates, Diagnostic{Message: msg, NodeID: x.ID, Param: st.param, Line: x.Line, Hint: hint})
}

// subFieldsOf returns the documented structure under a node-output reference.
func (v *validator) subFieldsOf(r template.Ref) []node.Field {
	if v.byID[r.Head] == nil || len(r.Segments) == 0 {
		return nil
	}
	fields, known := v.outputsOf(r.Head)
	if !known {
		return nil
	}
	var cur []node.Field = fields
	for _, s := range r.Segments {
		if s.IsIndex {
			continue
		}
		f, ok := findField(cur, s.Key)
		if !ok {
			return nil
		}
		cur = f.Structure
	}
	return cur
}

// shellGuard blocks dicts and lists spliced into shell commands.
func (v *validator) shellGuard(st *site, r template.Ref, typ string) {
	if !hasMember(typ, "dict", "list") || hasMember(typ, "str", "any") {
		return
	}
	s := st.s
	if r.Start > 0 && s[r.Start-1] == '\'' && r.End < len(s) && s[r.End] == '\'' {
		return // '${var}': the escape hatch, one quoted argument
	}
	base := "dict"
	if hasMember(typ, "list") {
		base = "list"
	}
	var fieldHint string
	if fields := v.subFieldsOf(r); len(fields) > 0 {
		var paths []fieldPath
		flatten(fields, "", 0, &paths)
		var ex []string
		for _, p := range paths {
			if !hasMember(p.typ, "dict", "list") {
				ex = append(ex, "${"+r.Path+p.path+"}")
			}
			if len(ex) == 3 {
				break
			}
		}
		if len(ex) > 0 {
			fieldHint = " (e.g. " + strings.Join(ex, ", ") + ")"
		}
	}
	msg := fmt.Sprintf("Shell node '%s': cannot use %s (type: %s) in command parameter.\n\n"+
		"PROBLEM: The %s is inserted into the command as JSON text; its quotes, braces and spaces are then interpreted by the shell and break the command.\n\n"+
		"CURRENT: %s\n\n"+
		"FIX OPTIONS:\n"+
		"  1. Access a single field%s\n"+
		"  2. Pass the data on stdin: '- stdin: %s' and read it in the command (e.g. jq '.field')\n"+
		"  3. Quote it as one argument: '%s'",
		st.nodeID, r.Raw, typ, base, clip(s, 80), fieldHint, r.Raw, r.Raw)
	v.add(layerTemplates, Diagnostic{
		Message: msg, NodeID: st.nodeID, Param: st.param, Line: st.line,
		Hint: fmt.Sprintf("Usually best: '- stdin: %s' and read it with jq.", r.Raw),
	})
}

// requiredInputs: a required input that is referenced but not provided.
func (v *validator) requiredInputs() {
	if v.opts.Provided == nil {
		return
	}
	for _, in := range v.w.Inputs {
		if in == nil || !v.usedInputs[in.Name] {
			continue
		}
		if _, ok := v.opts.Provided[in.Name]; ok || !in.IsRequired() || in.Default != nil {
			continue
		}
		desc := in.Description
		if desc == "" {
			desc = "No description provided"
		}
		v.add(layerTemplates, Diagnostic{
			Message: fmt.Sprintf("Required input '${%s}' not provided - %s (required)", in.Name, desc),
			Line:    in.Line,
			Hint:    fmt.Sprintf("Pass it on the command line: %s=<value>, or give the input a default.", in.Name),
		})
	}
}
