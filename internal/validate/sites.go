package validate

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/suggest"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

// ---------------------------------------------------------------- sites

type siteKind int

const (
	siteParam siteKind = iota
	siteItems
	siteOutput
	siteMapping
)

// site is one string that may hold templates.
type site struct {
	kind     siteKind
	nodeID   string // "" for workflow outputs
	param    string // top-level param ("headers"), "batch.items", "source", "input_mappings.<p>"
	s        string
	line     int
	outName  string
	raw      string // an output's source as written
	topLevel bool   // the string is the whole value of a top-level param
}

func (st *site) where() string {
	switch st.kind {
	case siteOutput:
		return fmt.Sprintf("output '%s' source", st.outName)
	case siteItems:
		return fmt.Sprintf("node '%s' batch items", st.nodeID)
	default:
		return fmt.Sprintf("node '%s' parameter '%s'", st.nodeID, st.param)
	}
}

func (v *validator) sites() []*site {
	var out []*site
	for _, n := range v.nodes {
		for _, p := range value.SortedKeys(n.Params) {
			if n.Nested() && p == "workflow_ir" {
				continue // the child's templates belong to the child
			}
			val := n.Params[p]
			if s, ok := val.(string); ok {
				out = append(out, &site{kind: siteParam, nodeID: n.ID, param: p, s: s, line: n.Line, topLevel: true})
				continue
			}
			template.EachString(val, func(s string) {
				out = append(out, &site{kind: siteParam, nodeID: n.ID, param: p, s: s, line: n.Line})
			})
		}
		if m := v.w.Mappings[n.ID]; m != nil {
			for _, p := range value.SortedKeys(m.InputMappings) {
				if _, set := n.Params[p]; set {
					continue
				}
				path := strings.TrimSuffix(strings.TrimPrefix(m.InputMappings[p], "${"), "}")
				out = append(out, &site{kind: siteMapping, nodeID: n.ID, param: p, s: "${" + path + "}", line: n.Line, topLevel: true})
			}
		}
		if n.Batch != nil {
			switch it := n.Batch.Items.(type) {
			case string:
				out = append(out, &site{kind: siteItems, nodeID: n.ID, param: "batch.items", s: it, line: n.Line, topLevel: true})
			default:
				template.EachString(it, func(s string) {
					out = append(out, &site{kind: siteItems, nodeID: n.ID, param: "batch.items", s: s, line: n.Line})
				})
			}
		}
	}
	for _, o := range v.w.Outputs {
		if o == nil || strings.TrimSpace(o.Source) == "" {
			continue
		}
		src := o.SourceTemplate()
		out = append(out, &site{kind: siteOutput, param: "source", s: src, raw: o.Source, line: o.Line, outName: o.Name, topLevel: true})
	}
	return out
}

// scanSites runs the data-flow and template layers over every string.
func (v *validator) scanSites() {
	v.nameCollisions()
	for _, st := range v.sites() {
		refs := template.Refs(st.s)
		v.malformed(st, refs)
		v.foreignSyntax(st)
		for _, r := range refs {
			typ := v.checkRef(st, r)
			if st.kind == siteParam && st.topLevel {
				v.refTypes[refTypeKey(st.nodeID, st.param, r.Raw)] = typ
			}
			if r.Nested {
				continue
			}
			v.typeChecks(st, r, typ, len(refs))
		}
	}
	v.requiredInputs()
	v.sourcelessOutputs()
}

// refTypeKey keys validator.refTypes.
func refTypeKey(nodeID, param, raw string) string { return nodeID + "\x00" + param + "\x00" + raw }

// sourcelessOutputs: an output without a source reads the root key of its
// name, which only an output mapping (or an input) provides.
func (v *validator) sourcelessOutputs() {
	for _, o := range v.w.Outputs {
		if o == nil || o.Name == "" || strings.TrimSpace(o.Source) != "" {
			continue
		}
		if _, ok := v.mapped[o.Name]; ok || v.inputs[o.Name] != nil || !v.w.Namespacing() {
			continue
		}
		hint := "Add '- source: ${step_id.output_key}' to the output."
		if len(v.nodes) > 0 {
			last := v.nodes[len(v.nodes)-1]
			if fields, known := v.outputsOf(last.ID); known && len(fields) > 0 {
				hint = fmt.Sprintf("Add a source, e.g. '- source: ${%s.%s}'.", last.ID, fields[0].Key)
			}
		}
		v.add(layerOutputs, Diagnostic{
			Message: fmt.Sprintf("Output '%s' has no source, and no step publishes a key named '%s'; it would always be empty", o.Name, o.Name),
			Param:   "source", Line: o.Line, Hint: hint,
		})
	}
}

// nameCollisions: an input, a step and a mapped key sharing a name make
// ${name} ambiguous.
func (v *validator) nameCollisions() {
	for _, in := range v.w.Inputs {
		if in == nil {
			continue
		}
		if n := v.byID[in.Name]; n != nil {
			v.add(layerDataFlow, Diagnostic{
				Message: fmt.Sprintf("Input '%s' has the same name as step '%s', so ${%s...} is ambiguous", in.Name, n.ID, in.Name),
				Line:    in.Line,
				Hint:    fmt.Sprintf("Rename the input or the step (e.g. '%s_input').", in.Name),
			})
		}
	}
	for _, key := range value.SortedKeys(v.mapped) {
		mk := v.mapped[key]
		if v.byID[key] != nil || v.inputs[key] != nil {
			what := "step"
			if v.inputs[key] != nil {
				what = "input"
			}
			v.add(layerDataFlow, Diagnostic{
				Message: fmt.Sprintf("Output mapping of step '%s' publishes '%s', which is already the name of an %s", mk.nodeID, key, what),
				NodeID:  mk.nodeID, Line: v.line(mk.nodeID),
				Hint: "Choose another target key in output_mappings.",
			})
		}
		if fields, known := v.outputsOf(mk.nodeID); known {
			if _, ok := findField(fields, mk.output); !ok && !v.mcpOpen(mk.nodeID) {
				v.add(layerTemplates, Diagnostic{
					Message: fmt.Sprintf("Output mapping of step '%s' maps '%s', which node '%s' (type: %s) does not output", mk.nodeID, mk.output, mk.nodeID, v.typeLabel(mk.nodeID)),
					NodeID:  mk.nodeID, Line: v.line(mk.nodeID),
					Hint: v.suggestKeyHint(mk.nodeID, fields, mk.output),
				})
			}
		}
	}
}

func (v *validator) suggestKeyHint(id string, fields []node.Field, key string) string {
	keys := fieldKeys(fields)
	h := fmt.Sprintf("Outputs of '%s': %s", id, strings.Join(keys, ", "))
	if s := suggest.Closest(key, keys, 1, 0.5); len(s) > 0 {
		h = fmt.Sprintf("Did you mean '%s'?\n%s", s[0], h)
	}
	return h
}

// malformed reports "${" that starts no valid template and is not shell
// syntax: unclosed, empty, or a broken path.
// refs are template.Refs(st.s).
func (v *validator) malformed(st *site, refs []template.Ref) {
	s := st.s
	total := 0
	var problems []string
	// One pass, linear in len(s): the "${" occurrences and the references
	// come in increasing order, so a cursor into refs (outer references
	// only: a nested one lies inside its outer one) and the position of the
	// next '}' carry over from one "${" to the next.
	ri := 0
	nextClose := -1 // index of the first '}' at or after the current "${"; len(s) when there is none
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			break
		}
		j += i
		i = j + 2
		v.work++
		if j > 0 && s[j-1] == '$' {
			continue
		}
		total++
		for ri < len(refs) && (refs[ri].Nested || refs[ri].End <= j) {
			ri++
			v.work++
		}
		if ri < len(refs) && refs[ri].Start <= j {
			continue // inside (or the start of) a valid reference
		}
		if nextClose < j {
			if k := strings.IndexByte(s[j:], '}'); k >= 0 {
				nextClose = j + k
			} else {
				nextClose = len(s)
			}
			v.work += nextClose - j
		}
		if nextClose == len(s) {
			problems = append(problems, fmt.Sprintf("'%s' has no closing '}'", clip(s[j:], 40)))
			continue
		}
		content := s[j+2 : nextClose]
		switch {
		case content == "":
			problems = append(problems, "'${}' is empty")
		case strings.TrimSpace(content) != content && looksLikePath(strings.TrimSpace(content)):
			problems = append(problems, fmt.Sprintf("'${%s}' has spaces inside the braces; write '${%s}'", content, strings.TrimSpace(content)))
		case looksLikePath(content):
			if _, _, err := template.ParsePath(content); err != nil {
				problems = append(problems, fmt.Sprintf("'${%s}' is not a valid path (names separated by '.', indices like [0])", content))
			}
		}
	}
	if len(problems) == 0 {
		return
	}
	subject := fmt.Sprintf("node '%s' parameter '%s'", st.nodeID, st.param)
	if st.kind == siteOutput {
		subject = fmt.Sprintf("output '%s' source", st.outName)
	} else if st.kind == siteItems {
		subject = fmt.Sprintf("node '%s' parameter 'batch.items'", st.nodeID)
	}
	v.add(layerTemplates, Diagnostic{
		Message: fmt.Sprintf("Malformed template syntax in %s: Found %d '${' but only %d valid template(s). Check for missing '}' or empty templates like '${}'", subject, total, total-len(problems)),
		NodeID:  st.nodeID, Param: st.param, Line: st.line,
		Hint: strings.Join(problems, "\n") + "\nTo pass a literal '${' through (e.g. a shell variable), write '$${'.",
	})
}

// looksLikePath: content that was meant as a pflow path (as opposed to shell
// syntax such as ${VAR:-x}, ${#a}, ${1}).
func looksLikePath(c string) bool {
	if c == "" || !(c[0] == '_' || (c[0] >= 'a' && c[0] <= 'z') || (c[0] >= 'A' && c[0] <= 'Z')) {
		return false
	}
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if !(ch == '_' || ch == '-' || ch == '.' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) {
			return false
		}
	}
	return true
}

// clip returns the first line of s, cut to n runes with "..." when longer.
// It reads at most n runes of s, so clipping a long string is cheap.
func clip(s string, n int) string {
	i := 0
	for r := 0; r < n && i < len(s); r++ {
		if s[i] == '\n' {
			return s[:i]
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if i < len(s) && s[i] != '\n' {
		return s[:i] + "..."
	}
	return s[:i]
}
