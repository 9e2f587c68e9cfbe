package validate

import (
	"fmt"
	"github.com/pflow-go/pflow/internal/stepkeys"
	"sort"
	"strings"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/suggest"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// ---------------------------------------------------------------- references

// batchOwner returns the id of the step whose batch alias (or __index__) is name.
func (v *validator) batchOwners(name string) []string {
	var ids []string
	for _, n := range v.nodes {
		if n.Batch != nil && (name == "__index__" || n.Batch.Alias() == name) {
			ids = append(ids, n.ID)
		}
	}
	return ids
}

// checkRef classifies one reference, reports data-flow and path problems, and
// returns the inferred type of its value ("any" when unknown).
func (v *validator) checkRef(st *site, r template.Ref) string {
	x := v.byID[st.nodeID] // nil for outputs
	head := r.Head

	// Batch item variables: valid only inside the batch step's own params.
	if x != nil && x.Batch != nil && (head == "__index__" || head == x.Batch.Alias()) {
		if st.kind == siteItems {
			v.add(layerDataFlow, Diagnostic{
				Message: fmt.Sprintf("Node '%s' uses %s in batch items, but the batch item only exists while each item runs", x.ID, r.Raw),
				NodeID:  x.ID, Param: st.param, Line: x.Line,
				Hint: "batch.items must come from an input or an earlier step, e.g. ${list_files.stdout}.",
			})
			return "any"
		}
		if head == "__index__" {
			return "int"
		}
		return "any"
	}

	// Declared inputs (they win over everything else at run time).
	if in := v.inputs[head]; in != nil {
		v.usedInputs[head] = true
		if len(r.Segments) == 0 {
			return canonTypeOrAny(in.Type)
		}
		return "any"
	}

	// Step outputs.
	if y := v.byID[head]; y != nil {
		if x != nil && st.kind != siteOutput {
			v.checkOrder(st, r, x, y.ID, "")
		}
		return v.checkNodePath(st, r, y.ID)
	}

	// Keys published by output mappings.
	if mk, ok := v.mapped[head]; ok {
		if x != nil && st.kind != siteOutput {
			v.checkOrder(st, r, x, mk.nodeID, head)
		}
		fields, known := v.outputsOf(mk.nodeID)
		if !known {
			return "any"
		}
		segs := append([]template.Segment{{Key: mk.output}}, r.Segments...)
		o := walkFields(mk.nodeID, fields, segs)
		if o.problem != "" || o.runtime != "" || o.typ == "" {
			return "any"
		}
		return o.typ
	}

	// Without namespacing, outputs land at the root.
	if !v.w.Namespacing() {
		for _, n := range v.nodes {
			if fields, known := v.outputsOf(n.ID); !known {
				return "any"
			} else if _, ok := findField(fields, head); ok {
				return "any"
			}
		}
	}

	v.undefinedHead(st, r)
	return "any"
}

func canonTypeOrAny(t string) string {
	if strings.TrimSpace(t) == "" {
		return "any"
	}
	return canonType(t)
}

// checkOrder reports a reference to a step that does not run before x.
func (v *validator) checkOrder(st *site, r template.Ref, x *workflow.Node, yID, viaKey string) {
	if v.runsBefore(yID, x.ID) {
		return
	}
	subject := fmt.Sprintf("'%s'", yID)
	if viaKey != "" {
		subject = fmt.Sprintf("'%s' (published by step '%s' through an output mapping)", viaKey, yID)
	}
	var msg, hint string
	switch {
	case x.ID == yID && viaKey == "":
		msg = fmt.Sprintf("Node '%s' references its own output %s in parameter '%s'; a step cannot read its own outputs", x.ID, r.Raw, st.param)
		hint = "Reference an input or the output of an earlier step instead."
	case v.runsBefore(x.ID, yID) || v.pos[yID] >= v.pos[x.ID] && len(v.w.Edges) == 0:
		msg = fmt.Sprintf("Node '%s' references %s which comes after it in execution order (position %d >= %d)", x.ID, subject, v.pos[yID], v.pos[x.ID])
		hint = fmt.Sprintf("Steps run in order: move step '%s' above '%s', or reference an output of a step that runs earlier.", yID, x.ID)
	case (st.param == stepkeys.When || st.param == "cases") && v.defaultedRefs(x)[r.Raw]:
		return // a condition's ?? default stands in when it did not run
	default:
		msg = fmt.Sprintf("Node '%s' references %s, which is not on any path that runs before '%s'", x.ID, subject, x.ID)
		hint = fmt.Sprintf("'%s' runs on another branch (or not at all) when '%s' runs; connect them with an edge or reference a step that always runs first.", yID, x.ID)
	}
	v.add(layerDataFlow, Diagnostic{Message: msg, NodeID: x.ID, Param: st.param, Line: x.Line, Hint: hint})
}

// undefinedHead reports a reference whose head is nothing known.
func (v *validator) undefinedHead(st *site, r template.Ref) {
	x := v.byID[st.nodeID]
	head := r.Head
	if v.isForeignHead(head) {
		return // foreignSyntax names it with the pflow form
	}
	// Item variables of another step's batch.
	if owners := v.batchOwners(head); len(owners) > 0 && x != nil {
		v.add(layerDataFlow, Diagnostic{
			Message: fmt.Sprintf("Node '%s' references %s in parameter '%s', but '%s' only exists inside batch step '%s'", x.ID, r.Raw, st.param, head, owners[0]),
			NodeID:  x.ID, Param: st.param, Line: x.Line,
			Hint: fmt.Sprintf("Outside the batch, read its results: ${%s.results[0]...} (or ${%s.results} for all).", owners[0], owners[0]),
		})
		return
	}
	ids := v.nodeIDs()
	var inputNames []string
	for _, in := range v.w.Inputs {
		if in != nil {
			inputNames = append(inputNames, in.Name)
		}
	}
	mappedKeys := value.SortedKeys(v.mapped)
	dotted := len(r.Segments) > 0 && !r.Segments[0].IsIndex

	if st.kind == siteOutput {
		// A long source is shown as the reference alone: quoting the whole
		// source in each of its diagnostics would make the report (and the
		// validation time) grow with the square of its templates.
		tmpl := st.s
		if len(tmpl) > maxQuoted {
			tmpl = r.Raw
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Output '%s' source references non-existent node '%s'\nTemplate: %s\n\nAvailable nodes in workflow:\n", st.outName, head, tmpl)
		for _, id := range ids {
			fmt.Fprintf(&b, "  ✓ %s\n", id)
		}
		var hint string
		cands := append(append([]string{}, ids...), inputNames...)
		if s := suggest.Closest(head, cands, 3, 0.5); len(s) > 0 {
			b.WriteString("\nDid you mean one of these?\n")
			for _, c := range s {
				fmt.Fprintf(&b, "  - %s\n", c)
			}
			fixed := strings.Replace(tmpl, "${"+head, "${"+s[0], 1)
			hint = fmt.Sprintf("Suggested fix:\n  Change: %q\n  To: %q", tmpl, fixed)
		} else {
			hint = "Reference a step id or a declared input, e.g. ${step_id.output_key}."
		}
		v.add(layerOutputs, Diagnostic{Message: strings.TrimRight(b.String(), "\n"), Param: "source", Line: st.line, Hint: hint})
		return
	}

	if dotted {
		cands := append(append([]string{}, ids...), mappedKeys...)
		cands = append(cands, inputNames...)
		msg := fmt.Sprintf("Node '%s' references non-existent node '%s' in parameter '%s'", st.nodeID, head, st.param)
		hint := fmt.Sprintf("Steps in this workflow: %s.", strings.Join(ids, ", "))
		if s := suggest.Closest(head, cands, 1, 0.5); len(s) > 0 {
			hint = fmt.Sprintf("Did you mean '${%s}'?\n%s", template.JoinPath(s[0], r.Segments), hint)
		}
		v.add(layerDataFlow, Diagnostic{Message: msg, NodeID: st.nodeID, Param: st.param, Line: st.line, Hint: hint})
		return
	}
	if bad, ok := v.badBatch[st.nodeID]; ok && (head == "item" || strings.Contains(bad, head)) {
		return // the item of a batch written as text: the batch's message says how to write it
	}
	msg := fmt.Sprintf("Node '%s' references undefined input '%s' in parameter '%s'", st.nodeID, r.Raw, st.param)
	cands := append(append([]string{}, inputNames...), mappedKeys...)
	if s := suggest.Closest(head, cands, 1, 0.6); len(s) > 0 {
		msg += fmt.Sprintf(" - did you mean '${%s}'?", template.JoinPath(s[0], r.Segments))
	}
	var hint []string
	if y := v.byID[head]; y == nil {
		if s := suggest.Closest(head, ids, 1, 0.6); len(s) > 0 {
			hint = append(hint, fmt.Sprintf("To read step '%s', add an output key: ${%s.<output>}.", s[0], s[0]))
		}
	}
	if bh := v.batchHint(st.nodeID, head); bh != "" {
		// A batch item is not an input: declaring it would make the
		// workflow valid and wrong.
		v.add(layerDataFlow, Diagnostic{Message: msg, NodeID: st.nodeID, Param: st.param, Line: st.line, Hint: bh})
		return
	}
	if v.ir {
		hint = append(hint, fmt.Sprintf(`Declare it in "inputs": "%s": {"type": "string", "description": "..."}; then give its value when running the workflow.`, head))
	} else {
		hint = append(hint, fmt.Sprintf("Declare it under '## Inputs' (### %s, a line saying what it is, '- type: string'); then give its value when running the workflow.", head))
	}
	if x := v.byID[st.nodeID]; x != nil && x.Type == "shell" || isUpper(head) {
		hint = append(hint, fmt.Sprintf("If this is a shell/environment variable, write $%s or $${%s}: pflow resolves every ${...} itself.", head, head))
	}
	v.add(layerDataFlow, Diagnostic{Message: msg, NodeID: st.nodeID, Param: st.param, Line: st.line, Hint: strings.Join(hint, "\n")})
}

// batchHint explains an undefined ${name} in step id in batch terms when it
// looks like a batch item: ${item} (or another step's item name) in a step
// without a batch, or a name other than the item in a batched step.
func (v *validator) batchHint(id, name string) string {
	x := v.byID[id]
	if x == nil {
		return ""
	}
	if x.Batch != nil {
		alias := x.Batch.Alias()
		if name == alias {
			return ""
		}
		return fmt.Sprintf("Step '%s' runs as a batch whose current item is ${%s}. To call it ${%s}, add 'as: %s' to the step's ```yaml batch block; otherwise write ${%s}.",
			id, alias, name, name, alias)
	}
	isItem := name == "item"
	for _, n := range v.nodes {
		if n.Batch != nil && n.Batch.Alias() == name {
			isItem = true
		}
	}
	if !isItem {
		return ""
	}
	return fmt.Sprintf("${%s} is the current item of a batch, but step '%s' has no batch. Add a batch block to the step:\n```yaml batch\nitems: ${<step>.<list output>}\nas: %s\n```", name, id, name)
}

func isUpper(s string) bool {
	return strings.ToUpper(s) == s && strings.ToLower(s) != s
}

// checkNodePath checks ${y.path} against y's declared outputs and returns
// the value's type.
func (v *validator) checkNodePath(st *site, r template.Ref, yID string) string {
	y := v.byID[yID]
	fields, known := v.outputsOf(yID)
	layer := layerTemplates
	if st.kind == siteOutput {
		layer = layerOutputs
	}
	diag := func(sev Severity, msg, hint string) {
		d := Diagnostic{Severity: sev, Message: msg, NodeID: st.nodeID, Param: st.param, Line: st.line, Hint: hint}
		v.add(layer, d)
	}
	if len(r.Segments) == 0 || r.Segments[0].IsIndex {
		example := "${" + yID + ".output_key}"
		if known && len(fields) > 0 {
			example = "${" + yID + "." + fields[0].Key + "}"
		}
		msg := fmt.Sprintf("Invalid template %s - node ID '%s' requires an output key (e.g., %s)", r.Raw, yID, example)
		if known {
			msg += "\n\n" + v.availableBlock(yID, fields)
		}
		diag(SeverityError, msg, fmt.Sprintf("Reference one output of '%s', e.g. %s.", yID, example))
		return "any"
	}
	if !known {
		return "any"
	}
	o := walkFields(yID, fields, r.Segments)
	if o.problem == "" && o.runtime == "" {
		return o.typ
	}
	ctx := v.refContext(st, r)
	switch {
	case o.problem == "missing":
		key := o.missingKey
		if v.mcpOpen(yID) {
			diag(SeverityWarning, fmt.Sprintf("Template %s in %s uses runtime validation: MCP tool '%s' declares no output schema, so '%s' is checked when the tool answers", r.Raw, st.where(), y.Type, key),
				fmt.Sprintf("Top-level fields of the tool's result are available as ${%s.<field>}; ${%s.result} holds the whole result.", yID, yID))
			return "any"
		}
		if y.Batch != nil {
			if inner, ok := v.innerOutputs(yID); ok {
				if _, isInner := findField(inner, key); isInner {
					rest := template.JoinPath("", r.Segments[1:])
					msg := fmt.Sprintf("Node '%s' uses batch processing.\n'%s' is not available at the top level — batch wraps outputs in a 'results' array.\n%s\n  ${%s.results}%s → list of all results\n  ${%s.results[0].%s%s} → first item's %s\n\n%s",
						yID, key, ctx, yID, strings.Repeat(" ", len(key)+len(rest)+4), yID, key, rest, key, v.availableBlock(yID, fields))
					diag(SeverityError, msg, fmt.Sprintf("Change %s to ${%s.results[0].%s%s} (or use ${%s.results[${__index__}]...} inside a batch)", r.Raw, yID, key, rest, yID))
					return "any"
				}
			}
		}
		msg := fmt.Sprintf("Node '%s' (type: %s) does not output '%s'\n%s\n\n%s", yID, y.Type, key, ctx, v.availableBlock(yID, fields))
		sugg := suggestPaths(yID, fields, key)
		switch len(sugg) {
		case 0:
		case 1:
			msg += fmt.Sprintf("\nDid you mean: %s?", sugg[0])
		default:
			msg += "\nDid you mean one of these?"
			for _, s := range sugg {
				msg += "\n  - " + s
			}
		}
		var hint string
		if len(sugg) > 0 {
			hint = fmt.Sprintf("Change %s to %s", r.Raw, sugg[0])
		} else if len(fields) > 0 {
			hint = fmt.Sprintf("Try using ${%s.%s} instead", yID, fields[0].Key)
		}
		diag(SeverityError, msg, hint)
		return "any"
	case o.problem != "":
		msg := fmt.Sprintf("Invalid template %s: %s\n%s\n\n%s", r.Raw, o.problem, ctx, v.availableBlock(yID, fields))
		diag(SeverityError, msg, "Use one of the paths listed above.")
		return "any"
	case o.runtime != "" && o.missingKey != "":
		keys := fieldKeys(o.missingAt)
		msg := fmt.Sprintf("Template %s in %s: '%s' is not among the documented fields of ${%s%s} (%s); it is checked at run time", r.Raw, st.where(), o.missingKey, yID, o.prefixPath, strings.Join(keys, ", "))
		hint := "If the field is missing when the step runs, the template fails then."
		if s := suggest.Closest(o.missingKey, keys, 1, 0.6); len(s) > 0 {
			hint = fmt.Sprintf("Did you mean ${%s%s.%s}?\n%s", yID, o.prefixPath, s[0], hint)
		}
		diag(SeverityWarning, msg, hint)
		return "any"
	case o.runtime != "":
		msg := fmt.Sprintf("Template %s in %s uses runtime validation: ${%s%s} is str (structure unknown at validation time)", r.Raw, st.where(), yID, o.runtime)
		diag(SeverityWarning, msg, "The text is parsed as JSON when the step runs; if it is not JSON or lacks the path, the step fails then.")
		return "any"
	}
	return o.typ
}

func (v *validator) innerOutputs(id string) ([]node.Field, bool) {
	n := v.byID[id]
	if n.Nested() {
		return v.nestedOut[id], v.nestedKnown[id]
	}
	if spec := v.specs[id]; spec != nil && len(spec.Interface.Outputs) > 0 {
		return withError(spec.Interface.Outputs), true
	}
	return nil, false
}

func (v *validator) refContext(st *site, r template.Ref) string {
	if st.kind == siteOutput {
		return fmt.Sprintf("Referenced as %s in the source of output '%s'.", r.Raw, st.outName)
	}
	if st.kind == siteItems {
		return fmt.Sprintf("Referenced as %s in the batch items of node '%s'.", r.Raw, st.nodeID)
	}
	return fmt.Sprintf("Referenced as %s in parameter '%s' of node '%s'.", r.Raw, st.param, st.nodeID)
}

// availableBlock renders "Available outputs from 'id':" with typed paths.
func (v *validator) availableBlock(id string, fields []node.Field) string {
	var paths []fieldPath
	flatten(fields, "", 0, &paths)
	var b strings.Builder
	fmt.Fprintf(&b, "Available outputs from '%s':", id)
	for i, p := range paths {
		if i == maxListed {
			fmt.Fprintf(&b, "\n  ... and %d more", len(paths)-maxListed)
			break
		}
		fmt.Fprintf(&b, "\n  ✓ ${%s%s} (%s)", id, p.path, p.typ)
	}
	if len(paths) == 0 {
		b.WriteString("\n  (none)")
	}
	return b.String()
}

// suggestPaths returns up to 3 output paths whose last key resembles key
// (case-insensitive substring or edit distance).
func suggestPaths(id string, fields []node.Field, key string) []string {
	var paths []fieldPath
	flatten(fields, "", 0, &paths)
	type scored struct {
		p     string
		score float64
	}
	var list []scored
	lk := strings.ToLower(key)
	for _, p := range paths {
		lp := strings.ToLower(p.key)
		sc := suggest.Similarity(key, p.key)
		if strings.Contains(lp, lk) || strings.Contains(lk, lp) {
			sc = max(sc, 0.8)
		}
		if sc >= 0.6 {
			list = append(list, scored{"${" + id + p.path + "}", sc})
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].score > list[j].score })
	var out []string
	for _, s := range list {
		if len(out) == 3 {
			break
		}
		out = append(out, s.p)
	}
	return out
}
