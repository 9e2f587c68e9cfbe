package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/pflow-go/pflow/internal/stepkeys"
	"github.com/pflow-go/pflow/internal/template"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/suggest"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

var (
	entityIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]*$`) })
	itemRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^( *)- (.+)$`) })
)

const (
	secInputs  = "inputs"
	secSteps   = "steps"
	secOutputs = "outputs"
	secOther   = "other"
)

// Suggestions shared by several errors.
const (
	entityIDSuggestion = "IDs must start with a lowercase letter and contain only lowercase letters, digits, hyphens, and underscores.\nPattern: ^[a-z][a-z0-9_-]*$"
	noTagSuggestion    = "Add a tag after the opening fence; its last word names the parameter the block fills:\n" +
		"  ```shell command\n  ```prompt\n  ```python code\n  ```yaml batch\n" +
		"Tip: if the content itself contains ```, open and close the block with 4 or more backticks (````)."
	missingStepsSuggestion = "Add a '## Steps' section with at least one step, e.g.:\n\n" +
		"## Steps\n\n### greet\nSay hello.\n- type: shell\n- command: echo hello"
	yamlItemSuggestion = "Each '- key: value' line must be valid YAML. Quote values that contain ': ', '#', '{' or '[', " +
		"or put multi-line and structured text in a fenced code block (```shell command, ```yaml headers, ...)."
)

// stepKeys are the step keys the parser turns into the IR instead of params.
var stepKeys = sync.OnceValue(func() []string { return stepkeys.Names(stepkeys.Structure) })

// lineKind classifies each source line for the line-based entity scanner.
type lineKind uint8

const (
	linePlain   lineKind = iota
	lineHeading          // part of a top-level H1–H3 (event emitted at its first line)
	lineFence            // part of a fenced code block (event at the opener)
	lineIgnored          // frontmatter, HTML comments, thematic breaks
)

type headingEv struct {
	level     int
	text      string
	line      int
	underline string // setext only
}

type fenceEv struct {
	line     int // opener line
	info     string
	content  string
	closed   bool
	closer   int    // closing fence line when closed
	stray    int    // a fence line that looked like the closer but opened a new block
	fenceStr string // the opener's fence run, e.g. "```" or "~~~~"
}

type item struct {
	line   int
	indent int
	first  string   // text after "- " on the first line
	lines  []string // dedented YAML text lines, starting with "- ..."
}

type block struct {
	param string
	tag   string
	line  int // fence line
	yaml  bool
	value any
}

type entity struct {
	section string
	id      string
	line    int
	prose   []string
	items   []*item
	cur     *item
	// ended is the item a blank line just ended (for the lost-continuation warning).
	ended  *item
	blocks []*block
	// lastTagged is the most recent tagged block, for the "nested ```" hint.
	lastTagged *block
	// tabErr is the first parameter line indented with a tab (YAML forbids
	// tabs in indentation; the line would silently become prose).
	tabErr *ParseError
}

type mdParser struct {
	path string
	// stray is the error of a setting that stands outside every entity.
	stray *ParseError
	// demoted is a '## name' heading met inside a section pflow reads
	// (demotedIn), which may be an entry written at the wrong level.
	demoted   *headingEv
	demotedIn string
	// misleveled are headings at level 2 or 4+ inside a section pflow reads
	// that may be entries written at the wrong level; finish refuses those
	// whose name the workflow uses.
	misleveled []misleveled
	src        []byte
	lines      []string // 1-based: lines[0] is unused
	starts     []int    // byte offset of each line (1-based)

	kinds    []lineKind
	headings map[int]*headingEv
	setext   map[int]*headingEv
	fences   map[int]*fenceEv

	w         *Workflow
	d         *decoder
	section   string
	sawH2     bool
	title     bool
	titleText string
	warnings  []string
	stepTypo  string // "Line N has '## Step' …" for the missing-steps error
	// secTypo is the misspelt section heading ('## Output') the parser is
	// under, and secFix its correct form; an entry under it is an error,
	// since it would otherwise be silently ignored.
	secTypo, secFix string
	secTypoLine     int
	desc            []string

	stepsLine int
	ent       *entity
	// seen ids per known section: id -> heading line
	seen map[string]map[string]int
	// per step: the parsed step-level extras, in document order
	steps []*stepInfo
}

type stepInfo struct {
	node     *Node
	next     string
	nextLine int
	actions  map[string]string // action -> target
	actLine  map[string]int
	mapping  *Mapping
}

// ParseMarkdown parses a .pflow.md document (the Python pflow's format plus
// the additions described in doc.go). The error, when not nil, is a *ParseError
// carrying the 1-based line and a fix suggestion.
func ParseMarkdown(src []byte, path string) (*Workflow, error) {
	p := &mdParser{path: absPath(path), d: &decoder{}, w: &Workflow{}, seen: map[string]map[string]int{}}
	raw := string(src)
	norm := bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	norm = bytes.ReplaceAll(norm, []byte("\r"), []byte("\n"))
	norm = bytes.TrimPrefix(norm, []byte("\ufeff"))
	p.src = norm
	if err := p.run(); err != nil {
		return nil, err
	}
	p.w.Source.Raw = raw
	return p.w, nil
}

func (p *mdParser) errf(line int, suggestion, format string, args ...any) *ParseError {
	if line < 0 || line >= len(p.lines) {
		line = 0
	}
	return &ParseError{Path: p.path, Line: line, Message: fmt.Sprintf(format, args...), Suggestion: suggestion}
}

func (p *mdParser) run() error {
	p.splitLines()
	meta, err := p.frontmatter()
	if err != nil {
		return err
	}
	p.kinds = make([]lineKind, len(p.lines)+1)
	p.headings = map[int]*headingEv{}
	p.setext = map[int]*headingEv{}
	p.fences = map[int]*fenceEv{}
	p.structure()
	p.checkClosers()
	if err := p.scan(); err != nil {
		return err
	}
	if err := p.finish(); err != nil {
		return err
	}
	p.w.Source = &Source{Path: p.path, Metadata: meta, Description: strings.Join(p.desc, "\n"), Title: p.titleText, Warnings: p.warnings}
	return nil
}

func (p *mdParser) splitLines() {
	parts := strings.Split(string(p.src), "\n")
	p.lines = make([]string, len(parts)+1)
	p.starts = make([]int, len(parts)+2)
	off := 0
	for i, l := range parts {
		p.lines[i+1] = l
		p.starts[i+1] = off
		off += len(l) + 1
	}
	p.starts[len(parts)+1] = off
}

// lineOf maps a byte offset to its 1-based line.
func (p *mdParser) lineOf(off int) int {
	n := len(p.lines) - 1
	i := sort.Search(n, func(i int) bool { return p.starts[i+2] > off })
	if i >= n {
		return n
	}
	return i + 1
}

func (p *mdParser) frontmatter() (map[string]any, error) {
	if len(p.lines) < 2 || strings.TrimRight(p.lines[1], " \t") != "---" {
		return nil, nil
	}
	end := 0
	for i := 2; i < len(p.lines); i++ {
		if strings.TrimRight(p.lines[i], " \t") == "---" {
			end = i
			break
		}
	}
	if end == 0 {
		return nil, nil // no closing fence: the whole file is body
	}
	text := strings.Join(p.lines[2:end], "\n")
	v, err := parseYAML(text)
	if err != nil {
		return nil, p.errf(1, "Fix the YAML between the '---' lines at the top of the file, or remove the frontmatter (only the workflow library needs it).",
			"Invalid YAML in frontmatter: %s", yamlErrorText(err, func(n int) int { return n + 1 }))
	}
	// Blank the frontmatter out so the markdown parser does not see a
	// thematic break and a setext heading; line numbers are kept.
	var b bytes.Buffer
	for i := 1; i < len(p.lines); i++ {
		if i > 1 {
			b.WriteByte('\n')
		}
		if i > end {
			b.WriteString(p.lines[i])
		}
	}
	p.src = b.Bytes()
	p.splitLines()
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	return nil, nil
}

// structure runs goldmark and records top-level headings (levels 1–3), every
// fenced code block outside block quotes, HTML comments and thematic breaks.
func (p *mdParser) structure() {
	doc := parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	).Parse(text.NewReader(p.src))
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		switch n := c.(type) {
		case *ast.Heading:
			if n.Level <= 3 {
				p.heading(n)
			}
		case *ast.FencedCodeBlock:
			p.fence(n)
		case *ast.List:
			p.nestedFences(n)
		case *ast.ThematicBreak:
			if l := p.nodeLine(n); l > 0 {
				p.kinds[l] = lineIgnored
			}
		case *ast.HTMLBlock:
			if n.HTMLBlockType == ast.HTMLBlockType2 {
				first, last := p.nodeLine(n), 0
				if n.Lines().Len() > 0 {
					last = p.lineOf(n.Lines().At(n.Lines().Len() - 1).Start)
				}
				if n.HasClosure() {
					last = p.lineOf(n.ClosureLine.Start)
				}
				for l := first; l > 0 && l <= last && l < len(p.lines); l++ {
					p.kinds[l] = lineIgnored
				}
			}
		}
	}
}

// checkClosers un-closes fences whose apparent closing line is really the
// opener of another block (a fence in a list item whose closer is not
// indented into the item).
func (p *mdParser) checkClosers() {
	for _, ev := range p.fences {
		if ev.closed && p.fences[ev.closer] != nil {
			ev.closed = false
			ev.stray = ev.closer
		}
	}
}

func (p *mdParser) nestedFences(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch x := c.(type) {
		case *ast.FencedCodeBlock:
			p.fence(x)
		case *ast.List, *ast.ListItem:
			p.nestedFences(x)
		}
	}
}

func (p *mdParser) nodeLine(n ast.Node) int {
	if pos := n.Pos(); pos >= 0 {
		return p.lineOf(pos)
	}
	if n.Lines().Len() > 0 {
		return p.lineOf(n.Lines().At(0).Start)
	}
	return 0
}

func (p *mdParser) segText(n ast.Node) []string {
	var out []string
	for i := 0; i < n.Lines().Len(); i++ {
		s := n.Lines().At(i)
		out = append(out, string(s.Value(p.src)))
	}
	return out
}

func (p *mdParser) heading(n *ast.Heading) {
	line := p.nodeLine(n)
	if line <= 0 {
		return
	}
	ev := &headingEv{level: n.Level, line: line}
	parts := p.segText(n)
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	ev.text = strings.TrimSpace(strings.Join(parts, " "))
	if !strings.HasPrefix(strings.TrimLeft(p.lines[line], " "), "#") {
		// A setext heading ("Text" underlined with --- or ===). The Python pflow
		// reads these lines as text, and so do we (a library file with a
		// second frontmatter block depends on it); the underline is ignored
		// and a warning says how to write a heading or a rule.
		if n.Lines().Len() > 0 {
			under := p.lineOf(n.Lines().At(n.Lines().Len()-1).Start) + 1
			if under < len(p.lines) {
				p.kinds[under] = lineIgnored
				ev.underline = strings.TrimSpace(p.lines[under])
			}
		}
		p.setext[line] = ev
		return
	}
	p.kinds[line] = lineHeading
	p.headings[line] = ev
}

func (p *mdParser) fence(n *ast.FencedCodeBlock) {
	line := p.nodeLine(n)
	if line <= 0 || line >= len(p.lines) {
		return
	}
	opener := strings.TrimLeft(string(p.src[n.Pos():min(len(p.src), n.Pos()+1000)]), " \t")
	ch := byte('`')
	if len(opener) > 0 && opener[0] == '~' {
		ch = '~'
	}
	run := 0
	for run < len(opener) && opener[run] == ch {
		run++
	}
	ev := &fenceEv{line: line, fenceStr: strings.Repeat(string(ch), max(run, 3))}
	if n.Info != nil {
		ev.info = strings.TrimSpace(string(n.Info.Segment.Value(p.src)))
	}
	var b strings.Builder
	last := line
	for i := 0; i < n.Lines().Len(); i++ {
		s := n.Lines().At(i)
		b.WriteString(strings.Repeat(" ", s.Padding))
		b.Write(s.Value(p.src))
		last = p.lineOf(s.Start)
	}
	ev.content = strings.TrimSuffix(b.String(), "\n")
	closer := last + 1
	if closer < len(p.lines) && isClosingFence(p.lines[closer], ch, run) {
		ev.closed = true
		ev.closer = closer
		last = closer
	} else {
		last = len(p.lines) - 1
	}
	for l := line; l <= last && l < len(p.lines); l++ {
		p.kinds[l] = lineFence
	}
	p.fences[line] = ev
}

func isClosingFence(line string, ch byte, n int) bool {
	t := strings.TrimSpace(line)
	if len(t) < n || len(t) < 3 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] != ch {
			return false
		}
	}
	return true
}

// scan walks the lines in order, dispatching headings, fences and plain lines.
func (p *mdParser) scan() error {
	for l := 1; l < len(p.lines); l++ {
		switch p.kinds[l] {
		case lineHeading:
			if h := p.headings[l]; h != nil {
				if err := p.onHeading(h); err != nil {
					return err
				}
			}
		case lineFence:
			if f := p.fences[l]; f != nil {
				if err := p.onFence(f); err != nil {
					return err
				}
			}
		case lineIgnored:
			if p.ent != nil {
				p.ent.cur = nil
			}
		default:
			if h := p.setext[l]; h != nil && (p.title || h.level == 1) {
				u := h.underline
				if len(u) > 3 {
					u = u[:3]
				}
				want := strings.Repeat("#", h.level)
				p.warn(fmt.Sprintf("Line %d: '%s' underlined with '%s' renders as a heading, but pflow reads it as text. Write '%s %s' for a heading, or put a blank line before '%s' for a horizontal rule.",
					l, value.Truncate(h.text, 40, "…"), u, want, value.Truncate(h.text, 40, "…"), u))
			}
			p.onLine(l, p.lines[l])
			if p.stray != nil {
				return p.stray
			}
		}
	}
	return p.closeEntity()
}

func (p *mdParser) onHeading(h *headingEv) error {
	switch h.level {
	case 1:
		if p.ent != nil {
			p.ent.cur = nil
		}
		if !p.title {
			p.title = true
			p.titleText = h.text
		} else if p.stepTypo == "" {
			switch t := strings.ToLower(strings.TrimSpace(h.text)); t {
			case "steps", "step", "inputs", "input", "outputs", "output":
				fix := strings.ToUpper(t[:1]) + t[1:]
				if !strings.HasSuffix(fix, "s") {
					fix += "s"
				}
				// A section written as a level-1 heading: its entities would
				// silently land in the previous section.
				p.stepTypo = fmt.Sprintf("Line %d has '# %s', a level-1 heading (the workflow's title level) — write '## %s'.", h.line, h.text, fix)
				if fix != "Steps" {
					return p.errf(h.line, fmt.Sprintf("Write '## %s' (two #).", fix), "'# %s' is a level-1 heading; sections are level 2: '## %s'.", h.text, fix)
				}
			}
		}
		return nil
	case 2:
		if err := p.closeEntity(); err != nil {
			return err
		}
		p.sawH2 = true
		p.demoted = nil
		p.secTypo, p.secFix, p.secTypoLine = "", "", 0
		name := strings.ToLower(h.text)
		switch name {
		case "inputs", "steps", "outputs":
			p.section = name
			if name == secSteps && p.stepsLine == 0 {
				p.stepsLine = h.line
			}
		default:
			if p.section == secInputs || p.section == secSteps || p.section == secOutputs {
				p.demoted = h // a '## name' inside a section pflow reads
				p.demotedIn = p.section
				p.misleveled = append(p.misleveled, misleveled{text: h.text, line: h.line, level: 2, section: p.section})
			}
			p.section = secOther
			near := strings.TrimRight(name, ":. ")
			typo := map[string]string{"input": "Inputs", "step": "Steps", "output": "Outputs", "nodes": "Steps"}[near]
			if typo == "" && near != name {
				typo = map[string]string{"inputs": "Inputs", "steps": "Steps", "outputs": "Outputs"}[near]
			}
			if typo == "Steps" && p.stepTypo == "" {
				p.stepTypo = fmt.Sprintf("Line %d has '## %s' — did you mean '## Steps'?", h.line, h.text)
			}
			if typo != "" && typo != "Steps" { // a missing '## Steps' has its own error
				p.secTypo, p.secFix, p.secTypoLine = h.text, typo, h.line
			}
			if typo != "" {
				p.warn(fmt.Sprintf("Line %d: '## %s' looks like a typo — did you mean '## %s'?", h.line, h.text, typo))
			}
		}
		return nil
	default: // 3
		if err := p.closeEntity(); err != nil {
			return err
		}
		id := h.text
		if !entityIDRe().MatchString(id) {
			if sec := strings.ToLower(strings.TrimRight(id, ":. ")); sec == secInputs || sec == secSteps || sec == secOutputs {
				return p.errf(h.line, fmt.Sprintf("Sections are level-2 headings: write '## %s'.", titleCase(sec)), "'### %s' is a section heading written at level 3.", id)
			}
			sug := entityIDSuggestion
			if fixed := EntityIDFrom(id); fixed != "" {
				sug = fmt.Sprintf("%s\nWrite '### %s'.", entityIDSuggestion, fixed)
			}
			return p.errf(h.line, sug, "Invalid entity ID '%s'.", id)
		}
		switch p.section {
		case secInputs, secSteps, secOutputs:
			seen := p.seen[p.section]
			if seen == nil {
				seen = map[string]int{}
				p.seen[p.section] = seen
			}
			if prev, dup := seen[id]; dup {
				return p.errf(h.line, fmt.Sprintf("An entity with ID '%s' was already defined at line %d.", id, prev), "Duplicate entity ID '%s'.", id)
			}
			seen[id] = h.line
			p.ent = &entity{section: p.section, id: id, line: h.line}
		default:
			if p.secTypo != "" {
				return p.errf(p.secTypoLine, fmt.Sprintf("Change the heading to:\n## %s\nso '### %s' (line %d) and the entries after it are read.", p.secFix, id, h.line),
					"'## %s' is not a section pflow reads — did you mean '## %s'?", p.secTypo, p.secFix)
			}
			// Entities outside the known sections are documentation.
			p.ent = &entity{section: secOther, id: id, line: h.line}
		}
		return nil
	}
}

func (p *mdParser) warn(s string) {
	p.warnings = append(p.warnings, s)
}

// strayItem refuses a '- key: value' line of a section pflow reads that
// stands before the section's first '### name' heading: it belongs to no
// input, step or output, and would be dropped without a word.
func (p *mdParser) strayItem(l int, line string) {
	m := itemRe().FindStringSubmatch(strings.TrimRight(line, " \t"))
	if m == nil {
		if p.section == secOutputs && strings.Contains(line, "${") {
			src := line[strings.Index(line, "${"):]
			if end := strings.Index(src, "}"); end > 0 {
				src = src[:end+1]
			}
			p.stray = p.errf(l, fmt.Sprintf("Each output is a '### name' heading with a line of description and its source, e.g.:\n\n### <name>\n%s\n- source: %s", value.Truncate(strings.TrimSpace(line), 60, "…"), src),
				"This line under '## Outputs' reads %s but is not inside an output, so pflow would ignore it.", src)
		}
		return
	}
	key, val, ok := strings.Cut(strings.TrimSpace(m[2]), ":")
	key = strings.TrimSpace(key)
	if !ok || !paramWordRe().MatchString(key) {
		return // a bullet of prose, not a setting
	}
	val = strings.TrimSpace(val)
	if p.section == secSteps && key == "parallel" {
		p.parallelSetting(l, val)
		return
	}
	what, example := "an output", fmt.Sprintf("### %s\nWhat %s is.\n- source: %s", key, key, val)
	switch p.section {
	case secInputs:
		what, example = "an input", fmt.Sprintf("### %s\nWhat %s is.\n- type: string", key, key)
		if key == "type" || key == "required" || key == "default" {
			example = "### <name>\nWhat the input is.\n- " + key + ": " + val
		}
	case secSteps:
		what, example = "a step", "### <step-id>\nWhat the step does.\n- "+key+": "+val
	case secOutputs:
		if key == "source" || key == "type" || key == "description" {
			example = fmt.Sprintf("### <name>\nWhat the output is.\n- %s: %s", key, val)
		}
	}
	p.stray = p.errf(l, "Each entry of this section is a '### name' heading with a line of description and its settings, e.g.:\n\n"+example,
		"'- %s' is under '## %s' but not inside %s, so pflow would ignore it.", value.Truncate(strings.TrimSpace(m[2]), 60, "…"), titleCase(p.section), what)
}

// parallelSetting reads '- parallel: true|N' written under '## Steps'
// before the first step: the workflow runs independent steps at once.
func (p *mdParser) parallelSetting(l int, val string) {
	v, err := parseYAML(val)
	if err != nil {
		v = val
	}
	n, err := ParseParallel(v)
	if err != nil {
		p.stray = p.errf(l, "Write '- parallel: true' (at most 8 steps at once) or '- parallel: 4' right under '## Steps'.", "%s.", err.Error())
		return
	}
	p.w.Parallel = n
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (p *mdParser) onLine(l int, line string) {
	if m := deepHeadingRe().FindStringSubmatch(line); m != nil && entityIDRe().MatchString(m[2]) && !p.itemFollows(l, "type") {
		// inside an entry, or before the first entry of a section
		sec := p.section
		if p.ent != nil {
			sec = p.ent.section
		}
		if sec == secInputs || sec == secSteps || sec == secOutputs {
			p.misleveled = append(p.misleveled, misleveled{text: m[2], line: l, level: len(m[1]), section: sec})
		}
	}
	if m := deepHeadingRe().FindStringSubmatch(line); m != nil && p.ent != nil && p.ent.section != secOther && entityIDRe().MatchString(m[2]) && p.itemFollows(l, "type") {
		p.stray = p.errf(l, fmt.Sprintf("Write '### %s' (three '#') for a step, input or output; a level-%d heading is text inside '%s', so its settings would join '%s'.", m[2], len(m[1]), p.ent.id, p.ent.id),
			"'%s %s' is a level-%d heading, not an entry of '## %s'.", m[1], m[2], len(m[1]), titleCase(p.ent.section))
		return
	}
	e := p.ent
	if e == nil {
		if p.section == secInputs || p.section == secSteps || p.section == secOutputs {
			p.strayItem(l, line)
		}
		if h := p.demoted; h != nil && p.section == secOther && entityIDRe().MatchString(h.text) && itemRe().MatchString(line) {
			p.stray = p.errf(h.line, fmt.Sprintf("Write '### %s' (three '#'): entries of '## %s' are level-3 headings; a level-2 heading starts a new section, which pflow does not read.", h.text, titleCase(p.demotedIn)),
				"'## %s' is a level-2 heading, so pflow reads it as a section, not as an entry of '## %s'.", h.text, titleCase(p.demotedIn))
			return
		}
		if p.title && !p.sawH2 {
			if t := strings.TrimSpace(line); t != "" {
				p.desc = append(p.desc, t)
			}
		}
		return
	}
	if strings.TrimSpace(line) == "" {
		if e.cur != nil {
			e.ended = e.cur
		}
		e.cur = nil
		return
	}
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if ended := e.ended; ended != nil {
		e.ended = nil
		if e.cur == nil && indent >= ended.indent+2 && !itemRe().MatchString(strings.TrimRight(line, " \t")) {
			p.warn(fmt.Sprintf("Line %d: the blank line above ended the '- %s' parameter (line %d), so this indented text became part of the description of '%s'. Put multi-line text in a fenced code block.",
				l, value.Truncate(ended.first, 40, "…"), ended.line, e.id))
		}
	}
	if e.cur != nil && e.tabErr == nil {
		if ws := line[:len(line)-len(strings.TrimLeft(line, " \t"))]; strings.Contains(ws, "\t") {
			fixed := strings.Repeat(" ", e.cur.indent+2) + strings.TrimLeft(line, " \t")
			e.tabErr = p.errf(l, fmt.Sprintf("Indent with spaces, not tabs. Corrected line:\n\n%s", fixed),
				"Line %d is indented with a tab inside the '- %s' parameter of '%s'; YAML does not allow tabs for indentation, so the line would be lost.", l, value.Truncate(e.cur.first, 40, "…"), e.id)
		}
	}
	if e.cur != nil && indent >= e.cur.indent+2 {
		e.cur.lines = append(e.cur.lines, line[e.cur.indent:])
		return
	}
	if m := itemRe().FindStringSubmatch(strings.TrimRight(line, " \t")); m != nil {
		it := &item{line: l, indent: len(m[1]), first: strings.TrimSpace(m[2])}
		it.lines = []string{line[len(m[1]):]}
		e.items = append(e.items, it)
		e.cur = it
		return
	}
	e.cur = nil
	e.prose = append(e.prose, strings.TrimSpace(line))
}

func (p *mdParser) onFence(f *fenceEv) error {
	nestedHint := p.ent != nil && p.ent.section != secOther && p.ent.lastTagged != nil && strings.TrimSpace(f.info) == ""
	if !f.closed && !nestedHint {
		if f.stray > 0 {
			return p.errf(f.line, fmt.Sprintf("The fence at line %d does not close it: this block is inside a list item, so its closing fence must be indented like its opening fence. Indent the closing fence, or start the block at the beginning of the line (after a blank line).", f.stray),
				"Unclosed code block.")
		}
		return p.errf(f.line, fmt.Sprintf("Add a closing fence (%s) to match the opening fence at line %d.", f.fenceStr, f.line), "Unclosed code block.")
	}
	e := p.ent
	if e != nil {
		e.cur = nil
	}
	if e == nil || e.section == secOther {
		return nil // documentation
	}
	words := strings.Fields(f.info)
	if len(words) == 0 {
		if lt := e.lastTagged; lt != nil {
			return p.errf(f.line,
				fmt.Sprintf("The `%s` block at line %d probably contains a ``` line that closed it early. Open and close that block with 4 backticks so inner ``` lines stay content:\n\n````%s\n...text containing ```...\n````", lt.tag, lt.line, lt.tag),
				"Code block has no tag (likely caused by nested ``` in the `%s` block at line %d).", lt.tag, lt.line)
		}
		return p.errf(f.line, noTagSuggestion, "Code block has no tag.")
	}
	b := &block{param: words[len(words)-1], tag: strings.Join(words, " "), line: f.line}
	for _, prev := range e.blocks {
		if prev.param == b.param {
			return p.errf(f.line, fmt.Sprintf("A '%s' code block was already defined at line %d. Each parameter can only have one code block.", b.param, prev.line),
				"Duplicate code block for '%s'.", b.param)
		}
	}
	b.value = f.content
	if e.section == secSteps && len(words) >= 2 && words[0] == "yaml" {
		b.yaml = true
		v, err := parseYAML(f.content)
		if err != nil {
			return p.errf(f.line, "Fix the YAML inside the block, or drop the 'yaml' prefix to pass the text as a plain string.",
				"YAML syntax error in '%s' block: %s", b.tag, yamlErrorText(err, func(n int) int { return f.line + n }))
		}
		b.value = v
	}
	if e.section == secSteps && len(words) >= 2 && words[0] == "json" {
		if err := checkJSONBlock(f.content); err != nil {
			return p.errf(f.line+err.line, "Fix the JSON inside the block (a trailing comma, a missing quote or comma), or tag it as text (```text "+b.param+"```) to send the text as it is.",
				"JSON syntax error in '%s' block: %s; the step would send the text unparsed.", b.tag, err.msg)
		}
	}
	e.blocks = append(e.blocks, b)
	e.lastTagged = b
	return nil
}

// closeEntity finishes the open entity: YAML params, description, block
// merging, then the section-specific IR.
func (p *mdParser) closeEntity() error {
	e := p.ent
	p.ent = nil
	if e == nil || e.section == secOther {
		return nil
	}
	if e.tabErr != nil {
		return e.tabErr
	}
	params := map[string]any{}
	keyLine := map[string]int{}
	maps, err := p.parseItems(e)
	if err != nil {
		return err
	}
	for i, m := range maps {
		for k, v := range m {
			if prev, dup := keyLine[k]; dup {
				return p.errf(e.items[i].line, fmt.Sprintf("Keep one '- %s:' line in '%s' and delete the other (lines %d and %d).", k, e.id, prev, e.items[i].line),
					"Parameter '%s' of '%s' is set twice (lines %d and %d); only one value can be used.", k, e.id, prev, e.items[i].line)
			}
			params[k] = v
			keyLine[k] = e.items[i].line
		}
	}
	if len(e.prose) == 0 {
		return p.errf(e.line, fmt.Sprintf("Add a line of prose under the heading saying what it is, e.g.:\n\n### %s\nDescription of this %s.\n%s", e.id, entityNoun(e.section), exampleParam(e.section)),
			"Entity '%s' (line %d) is missing a description.", e.id, e.line)
	}
	for _, b := range e.blocks {
		if _, dup := params[b.param]; dup {
			return p.errf(b.line, fmt.Sprintf("Remove either the inline '- %s: ...' or the code block. Each parameter should be defined only once.", b.param),
				"Parameter '%s' is defined both inline and as a code block.", b.param)
		}
	}
	for _, b := range e.blocks {
		params[b.param] = b.value
		keyLine[b.param] = b.line
	}
	desc := strings.Join(e.prose, "\n")
	switch e.section {
	case secInputs:
		m := map[string]any{"description": desc}
		for k, v := range params {
			m[k] = v
		}
		in := p.d.input("inputs."+e.id, e.id, m)
		in.Line = e.line
		p.w.Inputs = append(p.w.Inputs, in)
	case secOutputs:
		m := map[string]any{"description": desc}
		for k, v := range params {
			m[k] = v
		}
		o := p.d.output("outputs."+e.id, e.id, m)
		o.Line = e.line
		p.w.Outputs = append(p.w.Outputs, o)
	case secSteps:
		return p.buildStep(e, desc, params, keyLine)
	}
	return nil
}

func entityNoun(section string) string {
	switch section {
	case secInputs:
		return "input"
	case secOutputs:
		return "output"
	}
	return "step"
}

func exampleParam(section string) string {
	switch section {
	case secInputs:
		return "- type: string"
	case secOutputs:
		return "- source: ${step_id.stdout}"
	}
	return "- type: shell"
}

// parseItems parses all YAML items of an entity as one YAML sequence (as the
// anchor does, so anchors/aliases work across items) and returns one mapping
// per item. Errors name file lines.
func (p *mdParser) parseItems(e *entity) ([]map[string]any, error) {
	if len(e.items) == 0 {
		return nil, nil
	}
	out := make([]map[string]any, len(e.items))
	var slow []int // indexes of items that need the YAML parser
	for i, it := range e.items {
		if len(it.lines) == 1 {
			if k, v, ok := fastItem(it.lines[0]); ok {
				out[i] = map[string]any{k: v}
				continue
			}
		}
		slow = append(slow, i)
	}
	if len(slow) == 0 {
		return out, nil
	}
	var b strings.Builder
	var lineMap []int // YAML line (0-based) -> file line
	for _, idx := range slow {
		it := e.items[idx]
		for i, l := range it.lines {
			b.WriteString(l)
			b.WriteByte('\n')
			lineMap = append(lineMap, it.line+i)
		}
	}
	toFile := func(n int) int {
		if n >= 1 && n <= len(lineMap) {
			return lineMap[n-1]
		}
		if n > len(lineMap) {
			return lineMap[len(lineMap)-1]
		}
		return e.line
	}
	v, err := parseYAML(b.String())
	if err != nil {
		// yaml.v3's line numbers are not reliable for parser errors (some are
		// 0-based): find the failing item and point inside it.
		for _, idx := range slow {
			it := e.items[idx]
			if _, ierr := parseYAML(strings.Join(it.lines, "\n") + "\n"); ierr != nil {
				last := it.line + len(it.lines) - 1
				msg := yamlErrorText(ierr, func(n int) int { return min(max(it.line+n-1, it.line), last) })
				if !yamlLineRe().MatchString(msg) {
					msg = fmt.Sprintf("line %d: %s", it.line, msg)
				}
				key, _, _ := strings.Cut(it.first, ":")
				if key = strings.TrimSpace(key); key != "" && !strings.ContainsAny(key, " \t{[\"'") {
					sug := yamlItemSuggestion + "\n\nThe parameter as written:\n\n" + strings.Join(it.lines, "\n")
					if _, val, ok := strings.Cut(it.first, ":"); ok && len(it.lines) == 1 && strings.TrimSpace(val) != "" {
						// One line: quoting the value as text is the usual fix.
						q, _ := json.Marshal(strings.TrimSpace(val))
						sug += "\n\nCorrected, if the value is text:\n\n- " + key + ": " + string(q)
					}
					return nil, p.errf(it.line, sug,
						"YAML syntax error in parameter '%s' of '%s': %s", key, e.id, msg)
				}
				return nil, p.errf(e.line, yamlItemSuggestion, "YAML syntax error in parameters for '%s': %s", e.id, msg)
			}
		}
		return nil, p.errf(e.line, yamlItemSuggestion, "YAML syntax error in parameters for '%s': %s", e.id, yamlErrorText(err, toFile))
	}
	list, ok := v.([]any)
	if !ok || len(list) != len(slow) {
		return nil, p.errf(e.line, "Write parameters as '- key: value' lines.", "Parameters for '%s' did not parse as a list of key-value pairs.", e.id)
	}
	for j, el := range list {
		i := slow[j]
		m, ok := el.(map[string]any)
		if !ok {
			return nil, p.errf(e.items[i].line, "Parameters are '- key: value' lines. Write notes as prose or as '* ' bullets.",
				"'%s' is not a valid parameter. Use * for documentation bullets.", e.items[i].first)
		}
		out[i] = m
	}
	return out, nil
}

func (p *mdParser) buildStep(e *entity, desc string, params map[string]any, keyLine map[string]int) error {
	n := &Node{ID: e.id, Purpose: desc, Line: e.line, KeyLines: keyLine}
	path := fmt.Sprintf("nodes[%d]", len(p.w.Nodes))
	si := &stepInfo{node: n}
	t, ok := params["type"]
	switch {
	case !ok || t == nil || t == "":
		if l, text, fix := p.typeWrittenElse(e); l > 0 {
			// a type written, but not as a setting pflow reads
			return p.errf(l, fmt.Sprintf("Settings are '- key: value' list items with lowercase keys: write '%s' (and the step's other settings the same way).", fix),
				"Node '%s' has no 'type' setting: line %d '%s' is not one.", e.id, l, text)
		}
		return p.errf(e.line, fmt.Sprintf("Add the node type under the heading, e.g.:\n\n### %s\n%s\n- type: shell", e.id, firstLine(desc)),
			"Node '%s' is missing a 'type' parameter.", e.id)
	default:
		s, isStr := t.(string)
		if !isStr {
			return p.errf(keyLine["type"], "Use a node type name such as 'shell', 'http', 'llm' or 'mcp-<server>-<tool>'.",
				"Node '%s' has an invalid 'type' %s; it must be a node type name.", e.id, pyRepr(t))
		}
		n.Type = s
	}
	if b, ok := params["batch"]; ok {
		n.Batch = p.d.batch(path+".batch", b)
	}
	if v, ok := params["next"]; ok {
		s, isStr := v.(string)
		if !isStr || s == "" {
			return p.errf(keyLine["next"], "Write '- next: <step-id>' naming the step that runs after this one.", "'next' for step '%s' must be a step ID, got %s.", e.id, pyRepr(v))
		}
		si.next, si.nextLine = s, keyLine["next"]
	}
	si.actions = map[string]string{}
	si.actLine = map[string]int{}
	if v, ok := params["on"]; ok {
		m, isMap := v.(map[string]any)
		if !isMap || len(m) == 0 {
			fix := "Write '- on: {error: <step-id>}' mapping each action to the step it leads to."
			if form, ok := stringMapping(v); ok {
				fix = fmt.Sprintf("Write it as a mapping: '- on: %s' (each action to the step it leads to).", form)
			}
			return p.errf(keyLine["on"], fix, "'on' for step '%s' must map actions to step IDs, got %s.", e.id, pyRepr(v))
		}
		for _, action := range value.SortedKeys(m) {
			s, isStr := m[action].(string)
			if !isStr || s == "" {
				return p.errf(keyLine["on"], "Write '- on: {error: <step-id>}' mapping each action to the step it leads to.", "'on.%s' for step '%s' must be a step ID, got %s.", action, e.id, pyRepr(m[action]))
			}
			if action == "default" {
				if si.next != "" && si.next != s {
					return p.errf(keyLine["on"], "Keep one of them: '- next: <step-id>' is the same as 'on: {default: <step-id>}'.", "Step '%s' sets its default successor twice ('next: %s' and 'on.default: %s').", e.id, si.next, s)
				}
				si.next, si.nextLine = s, keyLine["on"]
				continue
			}
			si.actions[action] = s
			si.actLine[action] = keyLine["on"]
		}
	}
	if v, ok := params["on_error"]; ok {
		s, isStr := v.(string)
		if !isStr || s == "" {
			return p.errf(keyLine["on_error"], "Write '- on_error: <step-id>' naming the step that handles this step's failure.", "'on_error' for step '%s' must be a step ID, got %s.", e.id, pyRepr(v))
		}
		if prev, dup := si.actions["error"]; dup && prev != s {
			return p.errf(keyLine["on_error"], "Keep one of them: '- on_error: X' is the same as '- on: {error: X}'.", "Step '%s' sets its error handler twice ('on_error: %s' and 'on.error: %s').", e.id, s, prev)
		}
		si.actions["error"] = s
		si.actLine["error"] = keyLine["on_error"]
	}
	for _, key := range []string{"input_mappings", "output_mappings"} {
		v, ok := params[key]
		if !ok {
			continue
		}
		m, isMap := v.(map[string]any)
		if !isMap {
			fix := fmt.Sprintf("Write '- %s: {name: shared_key}'.", key)
			if form, ok := stringMapping(v); ok {
				fix = fmt.Sprintf("Write it as a mapping: '- %s: %s'.", key, form)
			}
			return p.errf(keyLine[key], fix, "'%s' for step '%s' must map names to shared-store keys, got %s.", key, e.id, pyRepr(v))
		}
		sm := map[string]string{}
		for k, x := range m {
			s, isStr := x.(string)
			if !isStr || s == "" {
				return p.errf(keyLine[key], fmt.Sprintf("Write '- %s: {name: shared_key}'.", key), "'%s.%s' for step '%s' must be a shared-store key (a string), got %s.", key, k, e.id, pyRepr(x))
			}
			sm[k] = s
		}
		if si.mapping == nil {
			si.mapping = &Mapping{}
		}
		if key == "input_mappings" {
			si.mapping.InputMappings = sm
		} else {
			si.mapping.OutputMappings = sm
		}
	}
	rest := map[string]any{}
	for k, v := range params {
		if !slices.Contains(stepKeys(), k) {
			rest[k] = v
		}
	}
	if len(rest) > 0 {
		n.Params = rest
	}
	for _, b := range e.blocks {
		if !b.yaml && !slices.Contains(stepKeys(), b.param) {
			if n.SourceLines == nil {
				n.SourceLines = map[string]int{}
			}
			n.SourceLines[b.param] = b.line + 1
		}
	}
	p.w.Nodes = append(p.w.Nodes, n)
	p.steps = append(p.steps, si)
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// finish runs the after-scan checks and builds edges and mappings.
// misleveled is a heading that may be an entry at the wrong level.
type misleveled struct {
	text, section string
	line, level   int
}

// checkLevels refuses a '## name' or '#### name' heading inside Outputs
// whose name a step publishes with output_mappings: it was meant as that
// output's entry, and without it the output silently disappears.
func (p *mdParser) checkLevels() error {
	for _, h := range p.misleveled {
		if h.section != secOutputs {
			continue
		}
		for _, si := range p.steps {
			if si.mapping == nil {
				continue
			}
			for _, target := range si.mapping.OutputMappings {
				if target == h.text {
					return p.errf(h.line, fmt.Sprintf("Write '### %s' (three '#'): each output is a level-3 heading.", h.text),
						"'%s %s' is a level-%d heading, so output '%s' (published by an output mapping) is not declared.", strings.Repeat("#", h.level), h.text, h.level, h.text)
				}
			}
		}
	}
	return nil
}

func (p *mdParser) finish() error {
	if err := p.checkLevels(); err != nil {
		return err
	}
	if p.stepsLine == 0 {
		sug := missingStepsSuggestion
		if p.stepTypo != "" {
			sug = p.stepTypo + "\n\n" + sug
		}
		return p.errf(0, sug, "Missing '## Steps' section.")
	}
	if len(p.w.Nodes) == 0 {
		return p.errf(p.stepsLine, "Add at least one step: a '### step-id' heading, a line of description, and '- type: ...'.", "The '## Steps' section has no nodes.")
	}
	ids := make([]string, len(p.w.Nodes))
	known := map[string]bool{}
	for i, n := range p.w.Nodes {
		ids[i] = n.ID
		known[n.ID] = true
	}
	unknown := func(line int, key, from, to string) error {
		sug := "Available steps: " + strings.Join(ids, ", ")
		if near := closest(to, ids); near != "" {
			sug = fmt.Sprintf("Did you mean '%s'? %s", near, sug)
		}
		return p.errf(line, sug, "Unknown step '%s' in '%s' of step '%s'.", to, key, from)
	}
	pos := map[string]int{}
	for i, n := range p.w.Nodes {
		pos[n.ID] = i
	}
	branch := map[string]bool{}
	for _, si := range p.steps {
		if si.next != "" && !known[si.next] {
			return unknown(si.nextLine, "next", si.node.ID, si.next)
		}
		for _, a := range value.SortedKeys(si.actions) {
			to := si.actions[a]
			if !known[to] {
				key := "on." + a
				if a == "error" {
					key = "on_error"
				}
				return unknown(si.actLine[a], key, si.node.ID, to)
			}
			// Only forward targets are branch steps: an action edge back to
			// an earlier step (or to itself) is a loop, not a side branch.
			if pos[to] > pos[si.node.ID] {
				branch[to] = true
			}
		}
	}
	edges := []Edge{}
	for i, si := range p.steps {
		from := si.node.ID
		switch {
		case si.next != "":
			edges = append(edges, Edge{From: from, To: si.next})
		case !branch[from]:
			for j := i + 1; j < len(p.steps); j++ {
				if to := p.steps[j].node.ID; !branch[to] {
					edges = append(edges, Edge{From: from, To: to})
					break
				}
			}
		}
		for _, a := range value.SortedKeys(si.actions) {
			edges = append(edges, Edge{From: from, To: si.actions[a], Action: a})
		}
		if si.mapping != nil {
			if p.w.Mappings == nil {
				p.w.Mappings = map[string]*Mapping{}
			}
			p.w.Mappings[from] = si.mapping
		}
	}
	p.w.Edges = edges
	p.w.decodeErrs = p.d.errs
	p.w.Normalize()
	return nil
}

// closest returns the candidate within edit distance 1 (or a third of the
// name's length) of name, preferring the nearest; "" when none is close.
func closest(name string, candidates []string) string {
	best, bestD := "", -1
	limit := max(1, len(name)/3)
	for _, c := range candidates {
		d := suggest.Distance(name, c)
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// jsonBlockError is where a json block stops parsing.
type jsonBlockError struct {
	line int // 1-based line within the block
	msg  string
}

// checkJSONBlock parses a ```json block's text as JSON, with each template
// standing in for a value (a template may fill a whole value: {"n": ${n}}).
func checkJSONBlock(text string) *jsonBlockError {
	var b strings.Builder
	last := 0
	for _, r := range template.Refs(text) {
		if r.Nested || r.Start < last {
			continue
		}
		b.WriteString(text[last:r.Start])
		b.WriteString("0")
		last = r.End
	}
	b.WriteString(text[last:])
	src := b.String()
	if strings.TrimSpace(src) == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(src))
	var v any
	err := dec.Decode(&v)
	if err == nil {
		if dec.More() {
			off := int(dec.InputOffset())
			return &jsonBlockError{line: 1 + strings.Count(src[:off], "\n"), msg: "more than one JSON value"}
		}
		return nil
	}
	off := int(dec.InputOffset())
	if se, ok := err.(*json.SyntaxError); ok {
		off = int(se.Offset)
	}
	off = min(max(off, 0), len(src))
	return &jsonBlockError{line: 1 + strings.Count(src[:off], "\n"), msg: strings.TrimPrefix(err.Error(), "json: ")}
}

var deepHeadingRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}(#{4,6}) +(\S+?) *#*$`) })

// itemFollows reports whether a '- key:' line comes after line l before the
// next heading.
func (p *mdParser) itemFollows(l int, key string) bool {
	for i := l + 1; i < len(p.lines) && i < l+40; i++ {
		t := strings.TrimSpace(p.lines[i])
		if strings.HasPrefix(t, "#") {
			return false
		}
		if strings.HasPrefix(t, "- "+key+":") {
			return true
		}
	}
	return false
}

// EntityIDFrom makes a valid entity ID from a heading's text ("Fetch Data"
// → fetch-data), or "" when nothing is left.
func EntityIDFrom(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	id := strings.Trim(b.String(), "-_")
	for strings.Contains(id, "--") {
		id = strings.ReplaceAll(id, "--", "-")
	}
	for id != "" && !(id[0] >= 'a' && id[0] <= 'z') {
		id = id[1:]
	}
	if !entityIDRe().MatchString(id) {
		return ""
	}
	return id
}

// typeWrittenElse finds, under step e's heading, a line that gives the step
// its type in a form pflow does not read as a setting: 'type: shell'
// without '- ', '* type: shell', '- Type: shell'. It returns the line, its
// text and the setting to write (0 when there is none).
func (p *mdParser) typeWrittenElse(e *entity) (int, string, string) {
	// compiled here: this runs only for a step without a type
	typeElse := regexp.MustCompile(`(?i)^\s*(?:[*+-]\s+)?type\s*:\s*([a-z][a-z0-9_-]*)\s*$`)
	for l := e.line + 1; l < len(p.lines); l++ {
		line := p.lines[l]
		if p.kinds[l] == lineHeading || strings.HasPrefix(strings.TrimSpace(line), "#") {
			break
		}
		if p.kinds[l] == lineFence {
			continue
		}
		if m := typeElse.FindStringSubmatch(line); m != nil {
			return l, strings.TrimSpace(line), "- type: " + strings.TrimSpace(m[1])
		}
	}
	return 0, "", ""
}
