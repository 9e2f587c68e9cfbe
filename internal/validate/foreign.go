package validate

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/stepkeys"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/workflow"
)

// Other tools' template syntax, written where pflow's ${...} was meant:
// GitHub Actions (${{ steps.x.outputs.y }}), Jinja and Handlebars
// ({{ x.y }}, {% if %}, filters), n8n ({{ $json.name }}), pflow paths with
// a prefix pflow does not use (${steps.x.y}, ${inputs.x}, ${env.X}), and
// path forms outside pflow's grammar ([*], negative indexes). Each is named
// with its line and the pflow way to write it. A form that refers to this
// workflow's steps or inputs is an error; one that may be literal text (a
// prompt about Jinja, a file being written) is a warning with the same
// facts.

// foreignREs are the patterns and tables of other tools' syntax, made on
// first use.
var foreignREs = sync.OnceValue(func() *foreignPatterns {
	return &foreignPatterns{
		ghaExprRe:   regexp.MustCompile(`\$\{\{(.*?)\}\}`),
		mustacheRe:  regexp.MustCompile(`\{\{-?(.*?)-?\}\}`),
		jinjaStmtRe: regexp.MustCompile(`\{%-?\s*(\w+)(.*?)-?%\}`),
		bareVarRe:   regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_-]*|\[\d+\])*)`),
		// n8n: $node["X"].json.y, $('X').item.json.y, $("X").first().json.y
		n8nNodeRe:   regexp.MustCompile(`^\$(?:node\[\s*["']([^"']+)["']\s*\]|\(\s*["']([^"']+)["']\s*\)(?:\.(?:item|first\(\)|last\(\)|all\(\)))?)\.json`),
		negIndexRe:  regexp.MustCompile(`\[\s*-\d+\s*\]`),
		pathTailRe:  regexp.MustCompile(`^(?:\.[A-Za-z_][A-Za-z0-9_-]*|\[\d+\])*`),
		quotedKeyRe: regexp.MustCompile(`\[\s*["']([A-Za-z_][A-Za-z0-9_-]*)["']\s*\]`),
		// Path heads other tools put before a name; pflow writes the name
		// alone. They are reported by the foreign-syntax check, not as
		// unknown steps, unless the workflow has a step or input of that name.
		heads: map[string]bool{"steps": true, "inputs": true, "input": true, "env": true, "secrets": true, "vars": true, "params": true, "needs": true, "outputs": true, "github": true, "matrix": true},
		// Params whose value is text that may legitimately mention another
		// tool's syntax (a prompt about Jinja, a template file written out).
		textParams: map[string]bool{"prompt": true, "system": true, "content": true, "body": true, "message": true, "text": true, "stdin": true, "data": true, "template": true, "description": true},
	}
})

type foreignPatterns struct {
	ghaExprRe, mustacheRe, jinjaStmtRe, bareVarRe, n8nNodeRe, negIndexRe, quotedKeyRe, pathTailRe *regexp.Regexp
	heads, textParams                                                                             map[string]bool
}

// names reports whether name is something this workflow's templates can
// read in step id: a step, an input, or the item of id's batch.
func (v *validator) names(id, name string) bool {
	if v.byID[name] != nil || v.inputs[name] != nil {
		return true
	}
	if n := v.byID[id]; n != nil && n.Batch != nil && (name == n.Batch.Alias() || name == "__index__") {
		return true
	}
	return false
}

// isForeignHead reports whether a reference's head is another tool's prefix
// rather than something of this workflow.
func (v *validator) isForeignHead(head string) bool {
	return foreignREs().heads[head] && v.byID[head] == nil && v.inputs[head] == nil
}

// foreign is one form of another tool's syntax found in a string.
type foreign struct {
	raw, tool string
	pflow     string // the pflow way to write it ("" when pflow has none)
	note      string // what pflow has instead, when no template does it
	ours      bool   // it refers to this workflow's steps or inputs
}

// foreignSyntax reports other tools' template forms in every string of a
// step and in output sources.
func (v *validator) foreignSyntax(st *site) {
	if st.kind == siteMapping {
		return
	}
	sinkKind := v.sinkOf(st)
	s := st.s
	if st.kind == siteOutput {
		s = st.raw
	}
	for _, f := range v.findForeign(st, s, sinkKind) {
		if in, ok := strings.CutPrefix(f.pflow, "${"); ok && v.inputs[leadingIdent(in)] != nil {
			v.usedInputs[leadingIdent(in)] = true // used, if in another form: that is the error
		}
		sev := SeverityError
		if !f.ours && (foreignREs().textParams[st.param] || sinkKind == node.SinkCode) {
			sev = SeverityWarning
		}
		where := st.where()
		msg := fmt.Sprintf("%s%s: '%s' is %s, which pflow does not read", strings.ToUpper(where[:1]), where[1:], f.raw, f.tool)
		if sev == SeverityWarning {
			msg += "; it stays as literal text"
		}
		var hint []string
		if f.pflow != "" {
			hint = append(hint, fmt.Sprintf("Write it the pflow way: %s", f.pflow))
		}
		if f.note != "" {
			hint = append(hint, f.note)
		}
		if sev == SeverityWarning {
			hint = append(hint, "If the text is meant literally (e.g. a template you are writing out), leave it.")
		}
		v.add(layerTemplates, Diagnostic{Severity: sev, Message: msg, NodeID: st.nodeID, Param: st.param, Line: st.line, Hint: strings.Join(hint, "\n")})
	}
}

// findForeign lists the foreign forms in s.
func (v *validator) findForeign(st *site, s string, sinkKind node.Sink) []foreign {
	var out []foreign
	taken := make([]bool, len(s)) // bytes already explained by a finding
	mark := func(a, b int) {
		for i := a; i < b && i < len(taken); i++ {
			taken[i] = true
		}
	}
	if strings.Contains(s, "${{") {
		for _, m := range foreignREs().ghaExprRe.FindAllStringSubmatchIndex(s, -1) {
			expr := s[m[2]:m[3]]
			p, note, _ := v.translate(st, expr)
			out = append(out, foreign{raw: s[m[0]:m[1]], tool: "a GitHub Actions expression", pflow: p, note: note, ours: true})
			mark(m[0], m[1])
		}
	}
	if strings.Contains(s, "{{") && sinkKind != node.SinkCode {
		for _, m := range foreignREs().mustacheRe.FindAllStringSubmatchIndex(s, -1) {
			if taken[m[0]] || (m[0] > 0 && s[m[0]-1] == '$') {
				continue
			}
			expr := strings.TrimSpace(s[m[2]:m[3]])
			if expr == "" || strings.HasPrefix(expr, ".") || strings.HasPrefix(expr, "{") {
				continue // Go templates ({{.Name}}) as docker and gh take them
			}
			tool := "Jinja/Handlebars syntax"
			if strings.HasPrefix(expr, "$") {
				tool = "an n8n expression"
			}
			p, note, ours := v.translate(st, expr)
			if p == "" && note == "" {
				continue
			}
			// Outside text, {{...}} is often another program's own syntax
			// (Go templates, Helm): only one naming this workflow's steps or
			// inputs was meant for pflow.
			if !ours && tool != "an n8n expression" && !foreignREs().textParams[st.param] && st.kind != siteOutput {
				continue
			}
			out = append(out, foreign{raw: s[m[0]:m[1]], tool: tool, pflow: p, note: note, ours: ours || strings.HasPrefix(expr, "$")})
			mark(m[0], m[1])
		}
	}
	if strings.Contains(s, "{%") && sinkKind != node.SinkCode {
		for _, m := range foreignREs().jinjaStmtRe.FindAllStringSubmatchIndex(s, -1) {
			kw := s[m[2]:m[3]]
			note := "pflow templates have no statements: steps run in order; to repeat a step per item use '- batch: {items: ${step.list}}'; put logic in a shell or code step."
			if kw == "if" || kw == "elif" || kw == "else" || kw == "endif" {
				note = "pflow templates have no statements: run a step only when a condition holds with '- when: ${x} == \"yes\"', choose a branch with a switch step, or decide in a shell or code step."
			}
			ours := false
			for _, w := range strings.FieldsFunc(s[m[4]:m[5]], func(r rune) bool { return r == ' ' || r == '.' || r == '(' || r == ')' || r == ',' }) {
				if v.names(st.nodeID, w) {
					ours = true
				}
			}
			out = append(out, foreign{raw: s[m[0]:m[1]], tool: "a Jinja statement", note: note, ours: ours})
			mark(m[0], m[1])
		}
	}
	// ${...} that pflow's grammar does not read but that was meant for it.
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			break
		}
		j += i
		i = j + 2
		if taken[j] || (j > 0 && s[j-1] == '$') || strings.HasPrefix(s[j:], "${{") {
			continue
		}
		k := strings.IndexByte(s[j:], '}')
		if k < 0 {
			break
		}
		content := s[j+2 : j+k]
		raw := s[j : j+k+1]
		if r, ok := template.IsSimple(raw); ok {
			if v.isForeignHead(r.Head) {
				p, note, _ := v.translate(st, content)
				out = append(out, foreign{raw: raw, tool: prefixTool(r.Head), pflow: p, note: note, ours: true})
			}
			continue
		}
		head := leadingIdent(content)
		if head == "" || len(head) == len(content) {
			continue
		}
		rest := content[len(head):]
		known := v.names(st.nodeID, head) || v.isForeignHead(head)
		if !known && rest[0] == '(' {
			// a call of this workflow's data (${len(items)}, ${upper(who)})
			for _, w := range strings.FieldsFunc(rest, func(r rune) bool { return !isIdentRune(r) }) {
				known = known || v.names(st.nodeID, w)
			}
		}
		// A shell variable has no '.' after its name; ${VAR:-x}, ${#a},
		// ${a[1]} stay the shell's. A negative index is no one's: /bin/sh
		// has no arrays, and pflow no negative indexes.
		if !known && (sinkKind == node.SinkShell || rest[0] != '.') && !foreignREs().negIndexRe.MatchString(rest) {
			continue
		}
		ownName := v.names(st.nodeID, head)
		if !ownName && !strings.ContainsRune(".[| ?(=!&+-*/<>:", rune(rest[0])) {
			continue
		}
		p, note, _ := v.translate(st, content)
		if note == "" && p == "" {
			if !ownName || strings.Contains(content, "${") {
				continue // a nested template (${a[${i}]}) is cut at its first '}' here
			}
			// this workflow's name followed by what no path holds
			// (${who!}, ${who#x}, ${who^^}): the value, changed elsewhere
			p = "${" + head + foreignREs().pathTailRe.FindString(rest) + "}"
			note = "pflow templates hold a path and nothing else: read the value with " + p + " and change it in a shell or code step."
		}
		tool := "a path outside pflow's template grammar"
		if i, _ := operatorIndex(content); i > 0 {
			tool = "an expression inside a template (a template holds one path; pflow evaluates nothing in it)"
		}
		out = append(out, foreign{raw: raw, tool: tool, pflow: p, note: note, ours: true})
		mark(j, j+k+1)
	}
	// $name (no braces) naming an input or a step, outside a shell command.
	if strings.Contains(s, "$") {
		for _, m := range foreignREs().bareVarRe.FindAllStringSubmatchIndex(s, -1) {
			if taken[m[0]] || (m[0] > 0 && s[m[0]-1] == '$') || (m[1] < len(s) && s[m[1]] == '{') {
				continue
			}
			name := s[m[2]:m[3]]
			path := s[m[4]:m[5]]
			// A step id with hyphens ($make-slug.slug): the longest run of
			// name characters that names a step.
			if long := stepNameAt(s[m[2]:]); long != name && v.byID[long] != nil {
				name = long
				m = append([]int(nil), m...)
				m[3] = m[2] + len(long)
				rest := foreignREs().pathTailRe.FindString(s[m[3]:])
				path = rest
				m[1] = m[3] + len(rest)
			}
			if !v.names(st.nodeID, name) {
				continue
			}
			if sinkKind == node.SinkShell && assignedInShell(s, name) {
				continue
			}
			tool := "a bare $name"
			note := ""
			if sinkKind == node.SinkShell {
				note = fmt.Sprintf("Inputs and step outputs are not environment variables of the command: '$%s' is empty there.", name)
			}
			ref := name
			path = strings.TrimSuffix(path, ".")
			if v.byID[name] != nil {
				ref = v.outputPath(name, strings.TrimPrefix(path, "."))
			} else {
				ref += path
			}
			out = append(out, foreign{raw: s[m[0]:m[1]], tool: tool, pflow: "${" + ref + "}", note: note, ours: true})
		}
	}
	return out
}

// prefixTool names where a prefix such as steps. or inputs. comes from.
func prefixTool(head string) string {
	switch head {
	case "steps", "needs", "github", "matrix", "secrets", "vars":
		return "a GitHub Actions path"
	}
	return "another tool's path"
}

// translate turns another tool's expression into pflow's, with a note on
// what pflow does instead where no template does it. ours reports whether
// the expression refers to this workflow's steps or inputs.
func (v *validator) translate(st *site, expr string) (pflow, note string, ours bool) {
	expr = strings.TrimSpace(expr)
	var notes []string
	noPath := false // pflow has no template for the expression
	if i := pipeIndex(expr); i >= 0 {
		noPath = true // the filtered value needs a step of its own
		notes = append(notes, fmt.Sprintf("pflow templates have no filters ('|%s'): transform the value in a shell or code step and read that step's output.", strings.TrimSpace(expr[i+1:])))
		expr = strings.TrimSpace(expr[:i])
	}
	if m := foreignREs().n8nNodeRe.FindStringSubmatch(expr); m != nil {
		name := m[1] + m[2]
		expr = v.outputPath(workflow.EntityIDFrom(name), strings.TrimPrefix(strings.TrimPrefix(expr, m[0]), "."))
	}
	expr = foreignREs().quotedKeyRe.ReplaceAllString(expr, ".$1")
	prev := v.previousStep(st.nodeID)
	for _, p := range []string{"$json.", "$input.item.json.", "$input.first().json.", "$item.json."} {
		if rest, ok := strings.CutPrefix(expr, p); ok {
			if prev == "" {
				prev = "<step>"
			}
			expr = v.outputPath(prev, rest)
			notes = append(notes, fmt.Sprintf("n8n's %s is the previous node's output; pflow names the step that made it (here '%s', the step before).", strings.TrimSuffix(p, "."), prev))
		}
	}
	if expr == "$json" {
		expr = v.outputPath(prev, "")
	}
	// An expression inside the braces (a default, a comparison, a call):
	// pflow reads a path there and nothing else. The path is translated
	// below like any other (steps., inputs. prefixes); the note on where
	// the logic goes is written with the translated path.
	op, right := "", ""
	if i, spaced := operatorIndex(expr); i > 0 && !strings.HasPrefix(expr, "$") {
		op = strings.TrimSpace(spaced)
		if strings.Contains(expr[i:], " ? ") {
			op = "?" // a ternary: its condition's operators are part of it
		}
		left := strings.TrimSpace(expr[:i])
		right = strings.TrimSpace(expr[i+len(spaced):])
		if op == "(" {
			if d := strings.LastIndexByte(left, '.'); d > 0 {
				left = left[:d] // x.stdout.trim( → the value it is called on
			} else {
				left = strings.TrimSpace(strings.TrimSuffix(right, ")")) // len(items) → its argument
			}
		}
		expr = left
	}
	parts := strings.SplitN(expr, ".", 3)
	switch parts[0] {
	case "steps", "needs":
		if len(parts) == 3 {
			rest := strings.TrimPrefix(parts[2], "outputs.")
			expr = parts[1] + "." + rest
		}
	case "inputs", "input", "params", "vars":
		if len(parts) >= 2 && v.byID[parts[0]] == nil && v.inputs[parts[0]] == nil {
			expr = strings.Join(parts[1:], ".")
		}
	case "github":
		if rest, ok := strings.CutPrefix(expr, "github.event.inputs."); ok {
			expr = rest
		}
	case "env", "secrets":
		if len(parts) >= 2 && v.byID[parts[0]] == nil && v.inputs[parts[0]] == nil {
			name := strings.Join(parts[1:], ".")
			in := strings.ToLower(name)
			if sk := v.sinkOf(st); sk == node.SinkShell {
				return "$" + name + " (the command reads its environment itself)", strings.Join(notes, "\n"), true
			}
			if v.ir {
				return fmt.Sprintf(`${%s}, with an input that names the variable: "inputs": {"%s": {"type": "string", "env": "%s"}}`, in, in, name),
					strings.Join(notes, "\n"), true
			}
			return fmt.Sprintf("${%s}, with an input that names the variable:\n  ## Inputs\n  ### %s\n  The %s variable.\n  - type: string\n  - env: %s", in, in, name, name),
				strings.Join(notes, "\n"), true
		}
	}
	if strings.Contains(expr, "[*]") {
		noPath = true
		notes = append(notes, "pflow paths have no [*]: to run a step once per item, use '- batch: {items: ${...}}'; to pick a field of every item, use jq in a shell step (jq '[.[].title]').")
		expr = strings.ReplaceAll(expr, "[*]", "")
	}
	if foreignREs().negIndexRe.MatchString(expr) {
		noPath = true
		notes = append(notes, "pflow paths have no negative indexes: take the last item in a shell step (jq '.[-1]') or a code step, and read its output.")
		expr = foreignREs().negIndexRe.ReplaceAllString(expr, "")
	}
	if op != "" {
		notes = append(notes, v.expressionNote(st, op, expr, right))
	}
	head := leadingIdent(expr)
	ours = head != "" && v.names(st.nodeID, head)
	if _, _, err := template.ParsePath(expr); err == nil && !noPath {
		return "${" + expr + "}", strings.Join(notes, "\n"), ours
	}
	if len(notes) > 0 {
		return "", strings.Join(notes, "\n"), ours
	}
	return "", "", ours
}

// expressionNote says where the logic of an expression written inside a
// template goes in pflow: op is its operator, left the (translated) path
// it reads, right what follows the operator.
func (v *validator) expressionNote(st *site, op, left, right string) string {
	switch {
	case (op == "??" || op == "||") && (st.param == stepkeys.When || st.param == "cases"):
		return fmt.Sprintf("In a condition the default goes outside the braces: ${%s} ?? %s.", left, right)
	case op == "??" || op == "||":
		d := fmt.Sprintf("pflow templates have no default operator ('%s'). ", op)
		in := leadingIdent(left)
		switch {
		case v.inputs[in] != nil && v.ir:
			return d + fmt.Sprintf(`Give the input a default instead ("inputs": {"%s": {"default": %q, "required": false}}) and write ${%s}.`, in, strings.Trim(right, `'"`), left)
		case v.inputs[in] != nil:
			return d + fmt.Sprintf("Give the input a default instead ('- default: %s' under '### %s', '- required: false') and write ${%s}.", strings.Trim(right, `'"`), in, left)
		}
		return d + fmt.Sprintf("Defaults exist only in conditions (- when: ${%s} ?? %s); to fall back to another value, choose it in a shell or code step (or give each branch's step the same output_mappings name) and read that.", left, right)
	case op == "(":
		return "pflow templates have no function or method calls: compute the value in a shell or code step and read that step's output."
	case op == ":":
		return "pflow templates have no shell expansions (':-' defaults, ':0:3' substrings): write ${" + left + "} and transform the value in the command (or a code step)."
	case op == "?":
		return "pflow templates have no conditional expressions: choose between steps with a switch step (or '- when:' on each), or compute the value in a shell or code step."
	case op == "==" || op == "!=" || op == ">" || op == "<" || op == ">=" || op == "<=" || op == "&&":
		return fmt.Sprintf("pflow templates have no comparisons ('%s'): to run a step only when it holds, write a condition with the template outside the comparison: '- when: ${%s} %s %s'; to use the result as a value, compute it in a shell or code step.", op, left, op, right)
	}
	return fmt.Sprintf("pflow templates have no arithmetic ('%s'): compute the value in a shell or code step and read that step's output.", op)
}

// operatorIndex finds the first operator of an expression in expr (outside
// quotes) as written, with its spaces: a default (??, ||), &&, a
// comparison, arithmetic, a ternary, a call's '(' or a shell expansion's
// ':'; -1 when there is none. A filter's '|' is pipeIndex's.
func operatorIndex(expr string) (int, string) {
	ops := []string{"??", "||", "&&", "==", "!=", ">=", "<=", " > ", " < ", " + ", " - ", " * ", " / ", " ? ", "(", ":"}
	var quote byte
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			continue
		case c == '\'' || c == '"':
			quote = c
			continue
		}
		for _, op := range ops {
			if strings.HasPrefix(expr[i:], op) {
				return i, op
			}
		}
	}
	return -1, ""
}

func isIdentRune(r rune) bool {
	return r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// pipeIndex finds a filter's '|' (not '||') in expr, or -1.
func pipeIndex(expr string) int {
	for i := 0; i < len(expr); i++ {
		if expr[i] == '|' {
			if i+1 < len(expr) && expr[i+1] == '|' {
				i++
				continue
			}
			return i
		}
	}
	return -1
}

// previousStep is the id of the step before id in file order, "" for the first.
func (v *validator) previousStep(id string) string {
	i, ok := v.index[id]
	if !ok || i == 0 {
		return ""
	}
	return v.nodes[i-1].ID
}

func leadingIdent(s string) string {
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] == '-' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (i > 0 && s[i] >= '0' && s[i] <= '9')) {
		i++
	}
	if i > 0 && s[0] == '-' {
		return ""
	}
	return s[:i]
}

// assignedInShell reports whether a shell command gives name a value itself
// (name=, for name in, read name, export/local name).
func assignedInShell(cmd, name string) bool {
	q := regexp.QuoteMeta(name)
	re := regexp.MustCompile(`(^|[\s;&|(])` + q + `=|\bfor\s+` + q + `\b|(^|[;&|\n]|\bdo|\bthen)\s*read\s[^;&|\n]*\b` + q + `\b|\b(export|local|readonly)\s+` + q + `\b`)
	return re.MatchString(cmd)
}

// stepNameAt is the longest run of step-id characters at the start of s.
func stepNameAt(s string) string {
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] == '-' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (i > 0 && s[i] >= '0' && s[i] <= '9')) {
		i++
	}
	return strings.TrimRight(s[:i], "-")
}

// outputPath writes rest as a path into step id's outputs: under the output
// of that name when the step has one, else under the step's main output
// (the one a '>>' chain passes on, else its first).
func (v *validator) outputPath(id, rest string) string {
	spec := v.specs[id]
	if spec == nil || len(spec.Interface.Outputs) == 0 {
		if rest == "" {
			return id + ".<output>"
		}
		return id + "." + rest
	}
	first := leadingIdent(rest)
	for _, o := range spec.Interface.Outputs {
		if o.Key == first && first != "" {
			return id + "." + rest
		}
	}
	main := spec.Interface.Outputs[0].Key
	if spec.MainOutput != "" {
		main = spec.MainOutput
	}
	if rest == "" {
		return id + "." + main
	}
	return id + "." + main + "." + rest
}

// sinkOf is how template values reach the param of a site.
func (v *validator) sinkOf(st *site) node.Sink {
	if spec := v.specs[st.nodeID]; spec != nil {
		if f, ok := spec.Interface.Param(st.param); ok {
			return f.Sink
		}
	}
	return ""
}
