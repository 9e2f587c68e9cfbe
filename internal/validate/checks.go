package validate

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/pflow-go/pflow/internal/suggest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// engineControls are step params the engine consumes (D15).
var engineControls = []string{"retries", "retry_wait"}

// ArgsParam is an MCP step's block of tool arguments, passed verbatim: the
// way to set an argument named like a step key or control (issue #12).
const ArgsParam = "args"

// mcpControls are the step params an MCP step consumes itself (the call
// timeout, the engine's retries).
var mcpControls = []string{"timeout", "retries", "retry_wait"}

// controlWhat says what a step key or control sets.
var controlWhat = map[string]string{"type": "node type", "timeout": "call timeout (seconds)", "retries": "retry count", "retry_wait": "wait between retries"}

func declares(s *node.Spec, key string) bool {
	_, ok := s.Interface.Param(key)
	return ok
}

// stepKeys are the other keys a step line may hold; they are candidates for
// did-you-mean when a param is unknown (e.g. on_eror).
var stepKeys = []string{"type", "on_error", "batch"}

// workflowParams are the params of a `type: workflow` step (§3.8).
var workflowParams = []string{"workflow_name", "workflow_ref", "workflow_ir", "param_mapping", "output_mapping", "storage_mode", "scope_prefix", "max_depth", "error_action"}

const maxListed = 20

// maxQuoted is the longest param or source text a per-reference diagnostic
// quotes in full; longer text is shown clipped or as the reference alone.
const maxQuoted = 200

// ---------------------------------------------------------------- layer 5

func (v *validator) nodeTypes() {
	if v.opts.Catalog == nil {
		return
	}
	types := v.opts.Catalog.Types()
	for _, n := range v.nodes {
		if !v.unknown[n.ID] || n.Type == "" {
			continue
		}
		var hint []string
		if a, ok := typeAliases[strings.ToLower(n.Type)]; ok && slices.Contains(types, a) {
			hint = append(hint, fmt.Sprintf("Did you mean '%s'? (pflow's node for what '%s' does)", a, n.Type))
		} else if s := suggest.Closest(n.Type, types, 3, 0.6); len(s) > 0 {
			if len(s) == 1 {
				hint = append(hint, fmt.Sprintf("Did you mean '%s'?", s[0]))
			} else {
				hint = append(hint, "Did you mean one of these? "+quoteList(s))
			}
		}
		if strings.HasPrefix(n.Type, "mcp-") {
			hint = append(hint, "MCP tools become node types when their server is synced: check 'pflow mcp list'; a server that is not there is added with 'pflow mcp add <server> <command>', then run 'pflow mcp sync <server>'.")
		}
		hint = append(hint, "Run 'pflow registry list' to see available node types.")
		v.add(layerTypes, Diagnostic{
			Message: fmt.Sprintf("Unknown node type: '%s'", n.Type) + fmt.Sprintf(" (step '%s')", n.ID),
			NodeID:  n.ID, Param: "type", Line: n.Line,
			Hint: strings.Join(hint, "\n"),
		})
	}
}

// typeAliases maps the names agents reach for to pflow's node type that
// does the same job, so an unknown type is suggested by meaning, not only by
// spelling.
var typeAliases = map[string]string{
	"python": "code", "python3": "code", "py": "code", "javascript": "code", "js": "code", "script": "code",
	"curl": "http", "wget": "http", "fetch": "http", "request": "http", "requests": "http", "api": "http", "get": "http", "post": "http",
	"bash": "shell", "sh": "shell", "zsh": "shell", "cmd": "shell", "exec": "shell", "command": "shell", "run": "shell",
	"cat": "read-file", "read": "read-file", "readfile": "read-file", "file": "read-file",
	"write": "write-file", "writefile": "write-file", "save": "write-file",
	"openai": "llm", "gpt": "llm", "claude": "llm", "ai": "llm", "prompt": "llm", "chat": "llm",
}

// nodeChecks runs each node type's own static check (e.g. Python syntax of
// a code step) on steps whose params it reads are literal.
func (v *validator) nodeChecks() {
	if v.opts.Catalog == nil {
		return
	}
	for _, n := range v.nodes {
		if v.unknown[n.ID] {
			continue
		}
		spec, ok := v.opts.Catalog.Lookup(n.Type)
		if !ok || spec.Check == nil {
			continue
		}
		for _, p := range spec.Check(context.Background(), n.Params) {
			line := n.Line
			if start, ok := n.SourceLines[p.Param]; ok && p.Line > 0 {
				line = start + p.Line - 1
			}
			v.add(layerTypes, Diagnostic{Message: fmt.Sprintf("Step '%s' (%s): %s", n.ID, n.Type, p.Message),
				NodeID: n.ID, Param: p.Param, Line: line, Hint: p.Hint})
		}
	}
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = "'" + x + "'"
	}
	return strings.Join(q, ", ")
}

// ---------------------------------------------------------------- nested workflows

// nested loads child workflows of `type: workflow` steps to learn their
// outputs and check param_mapping / output_mapping.
func (v *validator) nested() {
	for _, n := range v.nodes {
		if n.Type != "workflow" {
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
				hint := "Check the name with 'pflow workflow list'."
				if ref != "" {
					what, param = "workflow_ref '"+ref+"'", "workflow_ref"
					hint = "Check the path; a relative workflow_ref resolves against the directory of this workflow file."
				}
				v.add(layerParams, Diagnostic{
					Message: fmt.Sprintf("Node '%s' (workflow): cannot load %s: %s", n.ID, what, err.Error()),
					NodeID:  n.ID, Param: param, Line: n.Line, Hint: hint,
				})
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
	pm, _ := node.Map(n.Params, "param_mapping")
	for _, in := range child.Inputs {
		if in == nil {
			continue
		}
		if _, ok := pm[in.Name]; ok || !in.IsRequired() || in.Default != nil {
			continue
		}
		v.add(layerParams, Diagnostic{
			Message: fmt.Sprintf("Node '%s' (workflow): the child workflow requires input '%s', which param_mapping does not provide", n.ID, in.Name),
			NodeID:  n.ID, Param: "param_mapping", Line: n.Line,
			Hint: fmt.Sprintf("Add it:\n- param_mapping:\n    %s: ${...}%s", in.Name, descSuffix(in.Description)),
		})
	}
	for _, k := range value.SortedKeys(pm) {
		if child.Inputs.Get(k) == nil {
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
	if n.Type == "workflow" {
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
// result (D9) can only be checked at run time.
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
	topLevel bool // the string is the whole value of a top-level param
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

func collectStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			collectStrings(e, fn)
		}
	case map[string]any:
		for _, k := range value.SortedKeys(x) {
			collectStrings(x[k], fn)
		}
	}
}

func (v *validator) sites() []*site {
	var out []*site
	for _, n := range v.nodes {
		for _, p := range value.SortedKeys(n.Params) {
			if n.Type == "workflow" && p == "workflow_ir" {
				continue // the child's templates belong to the child
			}
			val := n.Params[p]
			if s, ok := val.(string); ok {
				out = append(out, &site{kind: siteParam, nodeID: n.ID, param: p, s: s, line: n.Line, topLevel: true})
				continue
			}
			collectStrings(val, func(s string) {
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
				collectStrings(it, func(s string) {
					out = append(out, &site{kind: siteItems, nodeID: n.ID, param: "batch.items", s: s, line: n.Line})
				})
			}
		}
	}
	for _, o := range v.w.Outputs {
		if o == nil || strings.TrimSpace(o.Source) == "" {
			continue
		}
		src := strings.TrimSpace(o.Source)
		if !strings.Contains(src, "${") {
			src = "${" + strings.TrimPrefix(src, "$") + "}"
		}
		out = append(out, &site{kind: siteOutput, param: "source", s: src, line: o.Line, outName: o.Name, topLevel: true})
	}
	return out
}

// scanSites runs the data-flow and template layers over every string.
func (v *validator) scanSites() {
	v.nameCollisions()
	for _, st := range v.sites() {
		refs := template.Refs(st.s)
		v.malformed(st, refs)
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
	hint = append(hint, fmt.Sprintf("Declare it under '## Inputs' (### %s) or pass it on the command line (%s=...).", head, head))
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
	if n.Type == "workflow" {
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

// ---------------------------------------------------------------- batch

// inputDefaults: a declared default must have the input's declared type
// (a run that relies on it would fail before its first step).
func (v *validator) inputDefaults() {
	for _, in := range v.w.Inputs {
		if in == nil || in.Default == nil || strings.TrimSpace(in.Type) == "" {
			continue
		}
		if _, err := runtime.Coerce(in.Default, in.Type); err != nil {
			v.add(layerStructure, Diagnostic{
				Message: fmt.Sprintf("Input '%s' has type '%s', but its default does not: the type %v", in.Name, in.Type, err),
				Param:   "default", Line: in.Line,
				Hint: fmt.Sprintf("Give a default of type %s (e.g. '- default: %s'), or change '- type: %s' to the type the default has.", in.Type, typeExample(in.Type), in.Type),
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

// ---------------------------------------------------------------- unused inputs

func (v *validator) unusedInputs() {
	var names []string
	line := 0
	for _, in := range v.w.Inputs {
		if in == nil || v.usedInputs[in.Name] {
			continue
		}
		if len(names) == 0 {
			line = in.Line
		}
		names = append(names, in.Name)
	}
	if len(names) == 0 {
		return
	}
	v.add(layerTemplates, Diagnostic{
		Message: "Declared input(s) never used as template variable: " + strings.Join(names, ", "),
		Line:    line,
		Hint:    fmt.Sprintf("Use each input in a step (e.g. ${%s}) or remove its declaration under '## Inputs'.", names[0]),
	})
}

// ---------------------------------------------------------------- layer 7

func (v *validator) unknownParams() {
	for _, n := range v.nodes {
		var known []string
		var spec *node.Spec
		if n.Type == "workflow" {
			known = workflowParams
		} else {
			spec = v.specs[n.ID]
			if spec == nil {
				continue
			}
			for _, f := range spec.Interface.Params {
				known = append(known, f.Key)
			}
		}
		mapped := map[string]bool{}
		if m := v.w.Mappings[n.ID]; m != nil {
			for p := range m.InputMappings {
				mapped[p] = true
			}
		}
		// An MCP tool's arguments named like a step key or control (type,
		// timeout, retries, retry_wait) are written in the step's args
		// block (issue #12 item 1): '- args: {type: jpeg}'.
		isMCP := strings.HasPrefix(n.Type, "mcp-")
		var args map[string]any
		if raw, ok := n.Params[ArgsParam]; ok && isMCP {
			// A map is always the block (a tool argument named args goes
			// inside it: '- args: {args: ...}'); anything else is the
			// tool's own argument args, when it has one.
			m, isMap := raw.(map[string]any)
			if !isMap && (spec == nil || !declares(spec, ArgsParam)) {
				v.add(layerParams, Diagnostic{
					Message: fmt.Sprintf("Node '%s' (%s): 'args' must map the tool's argument names to values, got %s", n.ID, n.Type, value.TypeName(raw)),
					NodeID:  n.ID, Param: ArgsParam, Line: n.Line,
					Hint: "Write the tool's arguments under args, e.g. '- args: {type: jpeg, timeout: 5000}' or a ```yaml args block.",
				})
			}
			args = m
		}
		given := func(k string) (any, bool) {
			if a, ok := args[k]; ok {
				return a, true
			}
			if isMCP && (slices.Contains(mcpControls, k) || (k == ArgsParam && args != nil)) {
				return nil, false // the step's control or block, not the tool's argument
			}
			val, ok := n.Params[k]
			return val, ok
		}
		if isMCP && spec != nil {
			for _, k := range mcpControls {
				if _, set := n.Params[k]; set && declares(spec, k) {
					if _, inArgs := args[k]; !inArgs {
						v.add(layerParams, Diagnostic{Severity: SeverityWarning,
							Message: fmt.Sprintf("Step '%s': '- %s:' is the step's %s, not the argument '%s' of tool %s, which stays unset", n.ID, k, controlWhat[k], k, n.Type),
							NodeID:  n.ID, Param: k, Line: n.Line,
							Hint: fmt.Sprintf("To pass the tool's '%s', write it under args: '- args: {%s: ...}' (both may be set).", k, k)})
					}
				}
			}
		}
		// Missing required params.
		if spec != nil {
			for _, f := range spec.Interface.Params {
				if !f.Required || f.Default != nil || mapped[f.Key] {
					continue
				}
				if _, ok := given(f.Key); ok {
					continue
				}
				hint := fmt.Sprintf("Add '- %s: ...' to step '%s'.", f.Key, n.ID)
				if isMCP && (f.Key == "type" || slices.Contains(mcpControls, f.Key)) {
					hint = fmt.Sprintf("'- %s:' would set the step's %s; pass the tool's argument under args: '- args: {%s: ...}' in step '%s'.", f.Key, controlWhat[f.Key], f.Key, n.ID)
				}
				if f.Description != "" {
					hint += "\n" + f.Key + ": " + f.Description
				}
				v.add(layerParams, Diagnostic{
					Message: fmt.Sprintf("Node '%s' (%s): missing required parameter '%s'", n.ID, n.Type, f.Key),
					NodeID:  n.ID, Param: f.Key, Line: n.Line, Hint: hint,
				})
			}
		}
		if spec != nil {
			for _, f := range spec.Interface.Params {
				if val, ok := given(f.Key); ok && !mapped[f.Key] {
					if msg, fix := literalMismatch(f, val); msg != "" {
						v.add(layerParams, Diagnostic{
							Message: fmt.Sprintf("Node '%s' (%s): parameter '%s' %s", n.ID, n.Type, f.Key, msg),
							NodeID:  n.ID, Param: f.Key, Line: n.Line,
							Hint: "Corrected line:\n" + fix,
						})
					}
				}
			}
		}
		if len(known) == 0 || (spec != nil && spec.Interface.ExtraParams) {
			continue // the node says it takes params it does not list
		}
		for _, p := range value.SortedKeys(args) {
			if !slices.Contains(known, p) {
				msg := fmt.Sprintf("Node '%s' (%s): unknown argument '%s' in args.", n.ID, n.Type, p)
				if s := suggest.Closest(p, known, 1, 0.4); len(s) > 0 {
					msg += fmt.Sprintf(" Did you mean '%s'?", s[0])
				}
				v.add(layerParams, Diagnostic{Message: msg, NodeID: n.ID, Param: ArgsParam, Line: n.Line,
					Hint: fmt.Sprintf("Arguments of %s: %s (see 'pflow registry describe %s').", n.Type, strings.Join(known, ", "), n.Type)})
			}
		}
		for _, p := range value.SortedKeys(n.Params) {
			if slices.Contains(known, p) || slices.Contains(engineControls, p) || strings.HasPrefix(p, "__") {
				continue
			}
			if isMCP && (p == "timeout" || (p == ArgsParam && args != nil)) {
				continue
			}
			msg := fmt.Sprintf("Node '%s' (%s): unknown parameter '%s'.", n.ID, n.Type, p)
			if s := suggest.Closest(p, append(append(slices.Clone(known), engineControls...), stepKeys...), 1, 0.4); len(s) > 0 {
				msg += fmt.Sprintf(" Did you mean '%s'?", s[0])
			}
			// An unknown param is an error: a misspelt key would otherwise
			// make the step silently do the wrong thing (issue #11).
			v.add(layerParams, Diagnostic{
				Message: msg,
				NodeID:  n.ID, Param: p, Line: n.Line,
				Hint: fmt.Sprintf("Parameters of %s: %s (see 'pflow registry describe %s').", n.Type, strings.Join(known, ", "), n.Type),
			})
		}
	}
}

// literalMismatch checks a literal param value against its field's type and
// enum. It returns what is wrong ("" when fine or not literal) and the
// corrected '- key: value' line.
func literalMismatch(f node.Field, val any) (string, string) {
	if str, ok := val.(string); ok && template.HasTemplate(str) {
		return "", ""
	}
	types := strings.Split(f.Type, "|")
	checked := false
	for _, t := range types {
		ok, known := literalFits(strings.TrimSpace(t), val)
		if ok {
			if len(f.Enum) > 0 {
				return enumMismatch(f, val)
			}
			return "", ""
		}
		checked = checked || known
	}
	if !checked {
		return "", ""
	}
	want := map[string]string{"str": "a string", "int": "a whole number", "float": "a number", "dict": "an object (key: value lines)", "list": "a list", "bool": "true or false"}
	var names []string
	for _, t := range types {
		if w, ok := want[strings.TrimSpace(t)]; ok {
			names = append(names, w)
		}
	}
	return fmt.Sprintf("expects %s (%s), got %s", strings.Join(names, " or "), f.Type, describeLiteral(val)), exampleLine(f)
}

// literalFits reports whether val fits type t, and whether t is a type this
// check knows.
func literalFits(t string, val any) (fits, known bool) {
	switch value.CanonicalType(t) {
	case "str":
		switch val.(type) {
		case map[string]any, []any:
			return false, true
		}
		return true, true
	case "int":
		switch x := val.(type) {
		case int64, int:
			return true, true
		case float64:
			return x == float64(int64(x)), true
		case string:
			_, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			return err == nil, true
		}
		return false, true
	case "float":
		switch x := val.(type) {
		case int64, int, float64:
			return true, true
		case string:
			_, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			return err == nil, true
		}
		return false, true
	case "dict":
		switch x := val.(type) {
		case map[string]any:
			return true, true
		case string:
			var m map[string]any
			return json.Unmarshal([]byte(x), &m) == nil, true
		}
		return false, true
	case "list":
		switch x := val.(type) {
		case []any:
			return true, true
		case string:
			var l []any
			return json.Unmarshal([]byte(x), &l) == nil, true
		}
		return false, true
	case "bool":
		switch x := val.(type) {
		case bool:
			return true, true
		case string:
			_, err := strconv.ParseBool(x)
			return err == nil, true
		}
		return false, true
	}
	return true, false
}

func enumMismatch(f node.Field, val any) (string, string) {
	got := fmt.Sprint(val)
	var opts []string
	for _, e := range f.Enum {
		s := fmt.Sprint(e)
		if strings.EqualFold(s, got) {
			return "", ""
		}
		opts = append(opts, s)
	}
	fix := opts[0]
	if s := suggest.Closest(got, opts, 1, 0.3); len(s) > 0 {
		fix = s[0]
	}
	return fmt.Sprintf("must be one of %s, got %s", strings.Join(opts, ", "), describeLiteral(val)), fmt.Sprintf("- %s: %s", f.Key, fix)
}

func describeLiteral(val any) string {
	switch x := val.(type) {
	case string:
		return fmt.Sprintf("the text %q", x)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%v", val)
}

// exampleLine is a corrected '- key: value' line for f.
func exampleLine(f node.Field) string {
	t := value.CanonicalType(strings.Split(f.Type, "|")[0])
	if f.Default != nil {
		if b, err := json.Marshal(f.Default); err == nil && t != "dict" && t != "list" {
			return fmt.Sprintf("- %s: %s", f.Key, b)
		}
	}
	switch t {
	case "int":
		return fmt.Sprintf("- %s: 30", f.Key)
	case "float":
		return fmt.Sprintf("- %s: 0.5", f.Key)
	case "dict":
		return fmt.Sprintf("- %s:\n    NAME: value", f.Key)
	case "list":
		return fmt.Sprintf("- %s: [first, second]", f.Key)
	case "bool":
		return fmt.Sprintf("- %s: true", f.Key)
	}
	return fmt.Sprintf("- %s: \"text\"", f.Key)
}
