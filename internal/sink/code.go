package sink

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

// CodeContext is what CheckCode needs besides the source to write an exact
// rewrite.
type CodeContext struct {
	// Inputs is the step's inputs param as written (nil when absent). A
	// template already bound there is reused, and the suggested '- inputs:'
	// line keeps every entry.
	Inputs any
	// TypeOf returns the pflow type of a template's value ("str", "int",
	// "list[dict]", "dict|str", "any"). nil, "" and "any" mean unknown.
	TypeOf func(template.Ref) string
	// FirstLine is the file line of the code's first line (a ```python
	// block), 0 when unknown: hints then count lines within the code.
	FirstLine int
}

// CheckCode reports every template in Python source code, one Problem per
// distinct template at its first occurrence: a value pasted into source
// would run as code. Each hint is the exact rewrite: the step's complete
// '- inputs:' line binding the value to a variable, the annotation the code
// node needs for it, and the changed code lines using the variable. Escaped
// templates ("$${...}") are not reported.
func CheckCode(src string, cc CodeContext) []*Problem {
	a := analyzeCode(src, cc)
	if a == nil {
		return nil
	}
	return a.problems()
}

// Code returns the source a code step runs: its text with "$${" escapes
// turned into "${", or the problems when it holds templates (see CheckCode).
func Code(src string, cc CodeContext) (string, []*Problem) {
	if problems := CheckCode(src, cc); len(problems) > 0 {
		return "", problems
	}
	var b strings.Builder
	for _, p := range template.Parts(src) {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// ValueTypeOf returns a CodeContext.TypeOf that reports the type of each
// template's value in root (at run time, when values are known) as the code
// would receive it through inputs, where text holding a JSON object or
// array arrives parsed.
func ValueTypeOf(root map[string]any) func(template.Ref) string {
	return func(r template.Ref) string {
		v, ok := template.Value(root, r)
		if !ok {
			return "any"
		}
		if s, isStr := v.(string); isStr {
			if p, ok := value.TryParseContainer(s); ok {
				v = p
			}
		}
		switch v.(type) {
		case string:
			return "str"
		case bool:
			return "bool"
		case int, int64:
			return "int"
		case float64:
			return "float"
		case map[string]any:
			return "dict"
		case []any:
			return "list"
		}
		return "any"
	}
}

// ---------------------------------------------------------------- lexing

// pyLiteral is one Python string literal.
type pyLiteral struct {
	start, end         int    // the whole literal, prefix and quotes included
	bodyStart, bodyEnd int    // between the quotes
	prefix             string // r, b, f, rb, ... as written
	quote              string // ', ", ''' or """
}

func (l pyLiteral) has(c byte) bool {
	return strings.ContainsAny(l.prefix, string([]byte{c, c - 'a' + 'A'}))
}

// pyLex is the lexical layout of Python source: string literals, comments
// and the identifiers used as code.
type pyLex struct {
	literals []pyLiteral
	comments [][2]int
	idents   map[string]bool
}

func isPyIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

var stringPrefixes = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"r": true, "u": true, "b": true, "f": true, "br": true, "rb": true, "fr": true, "rf": true}
})

// lexPython finds the string literals, comments and identifiers of src.
// It is lenient: unterminated strings end at the end of their line (or of
// the source, for triple quotes).
func lexPython(src string) pyLex {
	lx := pyLex{idents: map[string]bool{}}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '#':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src) - i
			}
			lx.comments = append(lx.comments, [2]int{i, i + j})
			i += j
		case c == '\'' || c == '"':
			lit := scanLiteral(src, i, i)
			lx.literals = append(lx.literals, lit)
			i = lit.end
		case isPyIdent(c) && !(c >= '0' && c <= '9'):
			j := i
			for j < len(src) && isPyIdent(src[j]) {
				j++
			}
			word := src[i:j]
			if j < len(src) && (src[j] == '\'' || src[j] == '"') && stringPrefixes()[strings.ToLower(word)] {
				lit := scanLiteral(src, i, j)
				lx.literals = append(lx.literals, lit)
				i = lit.end
				continue
			}
			lx.idents[word] = true
			i = j
		case c >= '0' && c <= '9':
			for i < len(src) && isPyIdent(src[i]) {
				i++
			}
		default:
			i++
		}
	}
	return lx
}

// scanLiteral scans the string literal whose prefix starts at start and
// whose opening quote is at q.
func scanLiteral(src string, start, q int) pyLiteral {
	lit := pyLiteral{start: start, prefix: src[start:q], quote: src[q : q+1]}
	if strings.HasPrefix(src[q:], strings.Repeat(lit.quote, 3)) {
		lit.quote = strings.Repeat(lit.quote, 3)
	}
	lit.bodyStart = q + len(lit.quote)
	i := lit.bodyStart
	for i < len(src) {
		switch {
		case src[i] == '\\':
			i += 2
			continue
		case strings.HasPrefix(src[i:], lit.quote):
			lit.bodyEnd, lit.end = i, i+len(lit.quote)
			return lit
		case src[i] == '\n' && len(lit.quote) == 1:
			lit.bodyEnd, lit.end = i, i
			return lit
		}
		i++
	}
	lit.bodyEnd, lit.end = len(src), len(src)
	return lit
}

// fExprDepth is the brace depth at offset off inside an f-string's body:
// > 0 means off is inside a replacement field ({...}).
func fExprDepth(src string, lit pyLiteral, off int) int {
	depth := 0
	for i := lit.bodyStart; i < off; i++ {
		switch {
		case depth == 0 && strings.HasPrefix(src[i:], "{{"), depth == 0 && strings.HasPrefix(src[i:], "}}"):
			i++
		case src[i] == '{':
			depth++
		case src[i] == '}' && depth > 0:
			depth--
		}
	}
	return depth
}

// ---------------------------------------------------------------- analysis

// Where an occurrence of a template sits in the source.
const (
	inCode    = iota // unquoted: the value would be pasted as code
	inString         // in a string literal
	inComment        // in a comment
)

type occurrence struct {
	ref  template.Ref
	tmpl int // index in codeAnalysis.tmpls
	ctx  int
	lit  int // index in lex.literals when ctx == inString
}

// codeTemplate is one distinct template of the source.
type codeTemplate struct {
	ref      template.Ref // first occurrence
	class    string       // str int float bool dict list any
	name     string       // variable bound to the value
	reused   bool         // already bound in the step's inputs
	declared bool         // its annotation replaces an assignment line
	bound    bool         // some occurrence is outside comments: it needs a variable
	occs     []int
	needJSON bool // a rewrite uses json.dumps
	parsed   bool // the code parsed it with json.loads: it arrives parsed
	assign   *assignment
}

// assignment is a module-level line "name = <template>" (or with an
// annotation) that becomes the variable's annotation.
type assignment struct {
	edit       int
	target     string
	annotation string
	comment    string
}

// edit replaces src[start:end] by text, in which "\x00N\x00" stands for the
// variable of template N.
type edit struct {
	start, end int
	text       string
	tmpls      []int
}

type codeAnalysis struct {
	src       string
	cc        CodeContext
	lex       pyLex
	occs      []occurrence
	tmpls     []*codeTemplate
	edits     []edit
	existing  map[string]any // the step's inputs when they are a dict
	inputsRaw any            // the step's inputs when they are not a dict
	hasJSON   bool           // the code imports json
}

func placeholder(k int) string { return "\x00" + strconv.Itoa(k) + "\x00" }

var placeholderRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x00([0-9]+)\x00") })

func analyzeCode(src string, cc CodeContext) *codeAnalysis {
	var refs []template.Ref
	for _, p := range template.Parts(src) {
		if p.Ref != nil {
			refs = append(refs, *p.Ref)
		}
	}
	if len(refs) == 0 {
		return nil
	}
	a := &codeAnalysis{src: src, cc: cc}
	switch in := cc.Inputs.(type) {
	case map[string]any:
		a.existing = in
	case nil:
	default:
		a.inputsRaw = in
	}
	// Lex with each template blanked out, so that its text never reads as
	// quotes, comments or identifiers.
	masked := []byte(src)
	for _, r := range refs {
		for i := r.Start; i < r.End; i++ {
			masked[i] = 1
		}
	}
	a.lex = lexPython(string(masked))
	a.hasJSON = regexp.MustCompile(`(?m)^\s*(import\s+([\w.]+\s*,\s*)*json\b|from\s+json\s+import\b)`).MatchString(src)

	byRaw := map[string]int{}
	for _, r := range refs {
		k, ok := byRaw[r.Raw]
		if !ok {
			k = len(a.tmpls)
			byRaw[r.Raw] = k
			a.tmpls = append(a.tmpls, &codeTemplate{ref: r, class: typeClass(a.typeOf(r))})
		}
		o := occurrence{ref: r, tmpl: k, ctx: inCode, lit: -1}
		for i, l := range a.lex.literals {
			if r.Start >= l.bodyStart && r.Start < l.bodyEnd {
				o.ctx, o.lit = inString, i
			}
		}
		for _, c := range a.lex.comments {
			if r.Start >= c[0] && r.Start < c[1] {
				o.ctx = inComment
			}
		}
		if o.ctx != inComment {
			a.tmpls[k].bound = true
		}
		a.tmpls[k].occs = append(a.tmpls[k].occs, len(a.occs))
		a.occs = append(a.occs, o)
	}
	a.buildEdits()
	a.findAssignments()
	a.chooseNames()
	return a
}

func (a *codeAnalysis) typeOf(r template.Ref) string {
	if a.cc.TypeOf == nil {
		return "any"
	}
	return a.cc.TypeOf(r)
}

// typeClass reduces a pflow type to the Python class the value arrives as;
// unions and unknown types are "any".
func typeClass(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	if strings.Contains(t, "|") {
		return "any"
	}
	base, _, _ := strings.Cut(t, "[")
	switch c := value.CanonicalType(base); c {
	case "str", "int", "float", "bool", "dict", "list":
		return c
	}
	return "any"
}

// annotation is the annotation the code node needs for the template's
// value; object accepts any value. Text the code parsed with json.loads
// arrives parsed when it holds an object or array.
func (t *codeTemplate) annotation() string {
	if t.class == "any" || t.parsed && t.class == "str" {
		return "object"
	}
	return t.class
}

// buildEdits turns every occurrence into an edit of the source.
func (a *codeAnalysis) buildEdits() {
	done := map[int]bool{} // literals already rewritten
	for _, o := range a.occs {
		switch o.ctx {
		case inComment:
			// The comment keeps the template's text: escape it.
			a.edits = append(a.edits, edit{start: o.ref.Start, end: o.ref.Start, text: "$"})
		case inCode:
			a.edits = append(a.edits, edit{start: o.ref.Start, end: o.ref.End, text: placeholder(o.tmpl), tmpls: []int{o.tmpl}})
		case inString:
			lit := a.lex.literals[o.lit]
			if lit.has('f') {
				// Already an f-string: a field for text, the name inside a field.
				e := edit{start: o.ref.Start, end: o.ref.End, text: "{" + a.textExpr(o.tmpl) + "}", tmpls: []int{o.tmpl}}
				if fExprDepth(a.src, lit, o.ref.Start) > 0 {
					e.text = placeholder(o.tmpl)
					// A string in the field ({len('${x}')}) is the value itself.
					if q := a.src[e.start-1]; (q == '\'' || q == '"') && e.end < len(a.src) && a.src[e.end] == q {
						e.start, e.end = e.start-1, e.end+1
					}
				}
				a.edits = append(a.edits, e)
				continue
			}
			if done[o.lit] {
				continue
			}
			done[o.lit] = true
			a.edits = append(a.edits, a.literalEdit(lit))
		}
	}
	slices.SortStableFunc(a.edits, func(x, y edit) int { return x.start - y.start })
}

// textExpr is the Python expression giving template k's value as the text
// pasting it would have produced.
func (a *codeAnalysis) textExpr(k int) string {
	t := a.tmpls[k]
	switch t.class {
	case "dict", "list":
		t.needJSON = true
		return "json.dumps(" + placeholder(k) + ")"
	}
	return placeholder(k)
}

// literalEdit rewrites a (non-f) string literal holding templates: a
// literal that is exactly one template becomes the variable (converted to
// text when the value is not a str; json.loads around it goes); otherwise
// the literal becomes an f-string with a field for each template.
func (a *codeAnalysis) literalEdit(lit pyLiteral) edit {
	body := a.src[lit.bodyStart:lit.bodyEnd]
	var refs []int // occurrence indices inside the literal
	for i, o := range a.occs {
		if o.ctx == inString && a.lex.literals[o.lit] == lit {
			refs = append(refs, i)
		}
	}
	isBytes := lit.has('b')
	encode := ""
	if isBytes {
		encode = ".encode()"
	}
	if len(refs) == 1 && a.occs[refs[0]].ref.Raw == body {
		k := a.occs[refs[0]].tmpl
		t := a.tmpls[k]
		e := edit{start: lit.start, end: lit.end, tmpls: []int{k}}
		if span := a.inJSONLoads(lit); span != nil && !isBytes && t.class != "int" && t.class != "float" && t.class != "bool" {
			// Inputs parse JSON text holding an object or array, so
			// json.loads('${x}') is the bound value itself.
			e.start, e.end, e.text = span[0], span[1], placeholder(k)
			t.parsed = true
			return e
		}
		switch t.class {
		case "str", "any":
			e.text = placeholder(k) + encode
		case "int", "float", "bool":
			e.text = "str(" + placeholder(k) + ")" + encode
		case "dict", "list":
			t.needJSON = true
			e.text = "json.dumps(" + placeholder(k) + ")" + encode
		}
		return e
	}
	var b strings.Builder
	prefix := strings.NewReplacer("u", "", "U", "", "b", "", "B", "").Replace(lit.prefix)
	b.WriteString(prefix + "f" + lit.quote)
	last := lit.bodyStart
	var tmpls []int
	for _, i := range refs {
		o := a.occs[i]
		b.WriteString(doubleBraces(a.src[last:o.ref.Start]))
		b.WriteString("{" + a.textExpr(o.tmpl) + "}")
		tmpls = append(tmpls, o.tmpl)
		last = o.ref.End
	}
	b.WriteString(doubleBraces(a.src[last:lit.bodyEnd]))
	b.WriteString(a.src[lit.bodyEnd:lit.end])
	b.WriteString(encode)
	return edit{start: lit.start, end: lit.end, text: b.String(), tmpls: tmpls}
}

func doubleBraces(s string) string {
	return strings.NewReplacer("{", "{{", "}", "}}").Replace(s)
}

// inJSONLoads returns the span of a call json.loads(<lit>) around lit.
func (a *codeAnalysis) inJSONLoads(lit pyLiteral) []int {
	before := strings.TrimRight(a.src[:lit.start], " \t")
	start, ok := strings.CutSuffix(before, "json.loads(")
	if !ok || start != "" && isPyIdent(start[len(start)-1]) || strings.HasSuffix(start, ".") {
		return nil
	}
	after := strings.TrimLeft(a.src[lit.end:], " \t")
	if !strings.HasPrefix(after, ")") {
		return nil
	}
	return []int{len(start), len(a.src) - len(after) + 1}
}

var assignRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?::[ \t]*([^=]*?))?[ \t]*=[ \t]*$`)
})
var trailRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t]*(#.*)?$`) })

// findAssignments finds module-level lines "name = <template>": the
// variable can take the name and the line becomes its annotation.
func (a *codeAnalysis) findAssignments() {
	for i, e := range a.edits {
		if len(e.tmpls) != 1 || e.text != placeholder(e.tmpls[0]) {
			continue
		}
		ls, le := lineBounds(a.src, e.start)
		if strings.Contains(a.src[e.start:e.end], "\n") || e.end > le {
			continue
		}
		m := assignRe().FindStringSubmatch(a.src[ls:e.start])
		tail := trailRe().FindStringSubmatch(a.src[e.end:le])
		if m == nil || tail == nil || a.editsWithin(ls, le) > 1 {
			continue
		}
		t := a.tmpls[e.tmpls[0]]
		if t.assign == nil {
			t.assign = &assignment{edit: i, target: m[1], annotation: strings.TrimSpace(m[2]), comment: tail[1]}
		}
	}
}

// editsWithin counts the edits that touch src[start:end].
func (a *codeAnalysis) editsWithin(start, end int) int {
	n := 0
	for _, e := range a.edits {
		if e.start <= end && e.end >= start {
			n++
		}
	}
	return n
}

func lineBounds(s string, off int) (start, end int) {
	start = strings.LastIndexByte(s[:off], '\n') + 1
	end = strings.IndexByte(s[off:], '\n')
	if end < 0 {
		return start, len(s)
	}
	return start, off + end
}

var pyKeywords = sync.OnceValue(func() []string {
	return strings.Fields("False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield")
})

var pyBuiltins = sync.OnceValue(func() []string {
	return strings.Fields("abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex copyright credits delattr dict dir divmod enumerate eval exec exit filter float format frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter len license list locals map max memoryview min next object oct open ord pow print property quit range repr reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip json")
})

// reserved names are never suggested for a new variable.
func reserved(name string) bool {
	return name == "result" || slices.Contains(pyKeywords(), name) || slices.Contains(pyBuiltins(), name)
}

// chooseNames picks each template's variable: the existing input that
// binds it, the target of a "name = <template>" line, or a name derived
// from the template's last key (prefixed with the key before it, then
// numbered, when that would clash with an input, another variable, a
// Python keyword or builtin, or a name the code uses).
func (a *codeAnalysis) chooseNames() {
	taken := map[string]bool{}
	for k := range a.existing {
		taken[k] = true
	}
	for _, t := range a.tmpls {
		for _, k := range value.SortedKeys(a.existing) {
			if s, ok := a.existing[k].(string); ok && s == t.ref.Raw && isPyName(k) {
				t.name, t.reused = k, true
				break
			}
		}
	}
	for _, t := range a.tmpls {
		if t.name != "" || !t.bound {
			continue
		}
		if as := t.assign; as != nil && isPyName(as.target) && !reserved(as.target) && !taken[as.target] {
			t.name, t.declared = as.target, true
			taken[t.name] = true
			continue
		}
		t.assign = nil
		name, parent := baseNames(t.ref)
		if reserved(name) || (a.lex.idents[name] || taken[name]) && parent != "" {
			if parent != "" {
				name = parent + "_" + name
			} else {
				name += "_value"
			}
		}
		cand := name
		for n := 2; taken[cand] || reserved(cand) || a.lex.idents[cand]; n++ {
			cand = name + "_" + strconv.Itoa(n)
		}
		t.name = cand
		taken[cand] = true
	}
}

// baseNames derives a variable name from a template's last key and the key
// before it (for names that would shadow Python's own).
func baseNames(r template.Ref) (name, parent string) {
	keys := []string{r.Head}
	for _, s := range r.Segments {
		if !s.IsIndex && s.Key != "" {
			keys = append(keys, s.Key)
		}
	}
	name = identifier(keys[len(keys)-1])
	if len(keys) > 1 {
		parent = identifier(keys[len(keys)-2])
	}
	return name, parent
}

// identifier makes s a Python variable name: other characters become _,
// leading and trailing underscores go.
func identifier(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	out := strings.Trim(string(b), "_")
	if out == "" {
		return "value"
	}
	if out[0] >= '0' && out[0] <= '9' {
		out = "v_" + out
	}
	return out
}

func isPyName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return !slices.Contains(pyKeywords(), s)
}

// ---------------------------------------------------------------- hints

// finalEdits are the edits with names filled in; an assignment that names
// its variable becomes the variable's annotation.
func (a *codeAnalysis) finalEdits() []edit {
	out := make([]edit, len(a.edits))
	copy(out, a.edits)
	for _, t := range a.tmpls {
		if as := t.assign; as != nil && t.declared {
			e := &out[as.edit]
			ls, le := lineBounds(a.src, e.start)
			ann := as.annotation
			if ann == "" {
				ann = t.annotation()
			}
			text := t.name + ": " + ann
			if as.comment != "" {
				text += "  " + as.comment
			}
			e.start, e.end, e.text = ls, le, text
		}
	}
	for i := range out {
		out[i].text = placeholderRe().ReplaceAllStringFunc(out[i].text, func(m string) string {
			k, _ := strconv.Atoi(strings.Trim(m, "\x00"))
			return a.tmpls[k].name
		})
	}
	return out
}

func (a *codeAnalysis) problems() []*Problem {
	edits := a.finalEdits()
	inputs := a.inputsLine()
	var out []*Problem
	for k, t := range a.tmpls {
		p := &Problem{Template: t.ref.Raw, Offset: t.ref.Start}
		var h []string
		if !t.bound {
			p.Message = fmt.Sprintf("template %s is inside a Python comment; a value with a line break would end the comment and run as code", t.ref.Raw)
			h = append(h, "A comment is never filled in: escape the template ($${...}) so it stays literal text.")
		} else {
			p.Message = fmt.Sprintf("template %s is inside the Python code; its value would be pasted into the source and could run as code", t.ref.Raw)
			if t.reused {
				h = append(h, fmt.Sprintf("The step's inputs already bind it as '%s': use the variable, which holds the value and never runs as code.", t.name))
			} else {
				h = append(h, "Pass it in through the step's inputs: inputs arrive as Python values and never run as code.")
			}
			h = append(h, inputs...)
			var top []string
			if t.needJSON && !a.hasJSON {
				top = append(top, "import json")
			}
			if !t.reused && !t.declared {
				top = append(top, t.name+": "+t.annotation())
			}
			if len(top) > 0 {
				h = append(h, "Add at the top of the code:")
				for _, l := range top {
					h = append(h, "  "+l)
				}
			}
		}
		h = append(h, a.changedLines(edits, k)...)
		p.Hint = strings.Join(h, "\n")
		out = append(out, p)
	}
	return out
}

// inputsLine renders the step's inputs with every template of the code
// bound, in the form a .pflow.md step writes them.
func (a *codeAnalysis) inputsLine() []string {
	var add []string
	for _, t := range a.tmpls {
		if t.bound && !t.reused {
			add = append(add, yamlKey(t.name)+": "+yamlFlow(t.ref.Raw))
		}
	}
	if len(add) == 0 {
		return nil
	}
	if a.inputsRaw != nil {
		return []string{fmt.Sprintf("The step's inputs are %s; add these entries to that dict: {%s}", yamlFlow(a.inputsRaw), strings.Join(add, ", "))}
	}
	var entries []string
	for _, k := range value.SortedKeys(a.existing) {
		entries = append(entries, yamlKey(k)+": "+yamlFlow(a.existing[k]))
	}
	entries = append(entries, add...)
	head := "Set the step's inputs to:"
	if len(a.existing) > 0 {
		head = "Replace the step's inputs with:"
	}
	return []string{head, "  - inputs: {" + strings.Join(entries, ", ") + "}"}
}

// changedLines renders the source lines that hold template k, with every
// edit on them applied.
func (a *codeAnalysis) changedLines(edits []edit, k int) []string {
	// Line ranges holding an occurrence of k, grown to cover every edit
	// that touches them.
	type span struct{ start, end int }
	var spans []span
	for _, oi := range a.tmpls[k].occs {
		ls, le := lineBounds(a.src, a.occs[oi].ref.Start)
		spans = append(spans, span{ls, le})
	}
	for changed := true; changed; {
		changed = false
		for i := range spans {
			for _, e := range edits {
				if e.start <= spans[i].end && e.end >= spans[i].start && (e.start < spans[i].start || e.end > spans[i].end) {
					ls, _ := lineBounds(a.src, min(e.start, spans[i].start))
					_, le := lineBounds(a.src, max(e.end, spans[i].end))
					spans[i] = span{ls, le}
					changed = true
				}
			}
		}
	}
	slices.SortFunc(spans, func(x, y span) int { return x.start - y.start })
	var merged []span
	for _, s := range spans {
		if n := len(merged); n > 0 && s.start <= merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, s.end)
			continue
		}
		merged = append(merged, s)
	}
	var out []string
	for _, s := range merged {
		var b strings.Builder
		last := s.start
		for _, e := range edits {
			if e.start < s.start || e.end > s.end || e.start < last {
				continue
			}
			b.WriteString(a.src[last:e.start])
			b.WriteString(e.text)
			last = e.end
		}
		b.WriteString(a.src[last:s.end])
		first := strings.Count(a.src[:s.start], "\n") + 1
		lastLine := first + strings.Count(a.src[s.start:s.end], "\n")
		out = append(out, fmt.Sprintf("Change %s to:", a.lineLabel(first, lastLine)))
		for _, l := range strings.Split(b.String(), "\n") {
			out = append(out, "  "+l)
		}
	}
	return out
}

func (a *codeAnalysis) lineLabel(first, last int) string {
	where := ""
	if a.cc.FirstLine > 0 {
		first, last = first+a.cc.FirstLine-1, last+a.cc.FirstLine-1
	} else {
		where = " of the code"
	}
	if first == last {
		return fmt.Sprintf("line %d%s", first, where)
	}
	return fmt.Sprintf("lines %d-%d%s", first, last, where)
}

// yamlKey renders a mapping key for a YAML flow mapping: plain when it is
// a name, quoted otherwise (as yamlFlow writes keys).
func yamlKey(k string) string {
	if isPyName(k) {
		return k
	}
	return value.YAMLQuoted(k)
}

// yamlFlow renders a value as YAML flow text with plain keys where they are
// names.
func yamlFlow(v any) string { return value.YAMLFlow(v, isPyName) }
