package mutate

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Mutant is one edit of a workflow.
type Mutant struct {
	// ID is stable while the workflow's text around the edit is:
	// <source>:<operator>:<section>/<entity>/<what>[:<variant>].
	ID     string
	Source string
	Op     string
	// Line is the edited line of the original (1-based).
	Line int
	// Lines are the lines of the mutant a diagnostic may name to locate the
	// edit; Steps the steps, inputs or outputs the edit is about.
	Lines []int
	Steps []string
	// Before and After show the edit: the line(s) before and after.
	Before, After string
	// Text is the mutated workflow.
	Text string
}

// Operator makes every mutant of one kind that fits a workflow.
type Operator struct {
	Name string
	// Doc says what the operator does (for the report).
	Doc   string
	apply func(g *gen)
}

// Operators are all the operators, in report order.
var Operators = []Operator{
	{"key-drop-letter", "drop a letter of a step, input or output key (`command` → `comand`)", opKeyDrop},
	{"key-swap-letters", "swap two letters of a key (`command` → `comamnd`)", opKeySwap},
	{"key-synonym", "another tool's word for a key (`cmd` for `command`), or an added `depends_on`", opKeySynonym},
	{"heading-level", "change a heading level (`### step` → `## step` / `#### step`)", opHeading},
	{"move-line", "move a step's `- key:` line under `## Outputs` or into the next step", opMove},
	{"template-syntax", "another tool's template syntax (`{{ a.b }}`, `${{ steps.a.outputs.b }}`, `$a`, `${steps.a.b}`, `${a.b[-1]}`)", opTemplate},
	{"edge", "drop or duplicate an edge (`- next:`, `- on_error:`, a JSON IR edge)", opEdge},
	{"type-change", "change a declared type (`integer` ↔ `string`, ...)", opType},
	{"unit", "change a unit (`1s` → `1 seconds`, `30` → `30000`, ...)", opUnit},
	{"quote", "remove or add quotes around a value with `: `, `#`, or a number or boolean", opQuote},
	{"indent", "indent a `- key:` line by 2 spaces", opIndent},
	{"fence-tag", "misspell or drop the param word of a fence (```` ```shell comand ````)", opFence},
}

// Generate returns every mutant of every operator that fits s, in a stable
// order (operators in order, then lines top to bottom).
func Generate(s *Source) []Mutant {
	var all []Mutant
	for _, op := range Operators {
		all = append(all, GenerateOp(s, op)...)
	}
	return all
}

// GenerateOp returns the mutants of one operator.
func GenerateOp(s *Source, op Operator) []Mutant {
	g := &gen{s: s, op: op.Name, seen: map[string]int{}}
	op.apply(g)
	return g.out
}

type gen struct {
	s    *Source
	op   string
	out  []Mutant
	seen map[string]int
}

// id makes a unique id for an edit of line l.
func (g *gen) id(l Line, what, variant string) string {
	sec, ent := l.Section, l.Entity
	if sec == "" {
		sec = "-"
	}
	if ent == "" {
		ent = "-"
	}
	id := fmt.Sprintf("%s:%s:%s/%s/%s", g.s.Name, g.op, sec, ent, what)
	if variant != "" {
		id += ":" + variant
	}
	g.seen[id]++
	if n := g.seen[id]; n > 1 {
		id += "#" + strconv.Itoa(n)
	}
	return id
}

func steps(l Line) []string {
	if l.Entity == "" {
		return nil
	}
	return []string{l.Entity}
}

// replace makes a mutant with line l's text replaced by text.
func (g *gen) replace(l Line, what, variant, text string) {
	if text == l.Text {
		return
	}
	lines := g.s.texts()
	lines[l.N-1] = text
	g.out = append(g.out, Mutant{ID: g.id(l, what, variant), Source: g.s.Name, Op: g.op, Line: l.N,
		Lines: []int{l.N}, Steps: steps(l), Before: l.Text, After: text, Text: joinLines(lines)})
}

// edit makes a mutant from whole new lines: marks are the lines of the
// mutant that name the edit.
func (g *gen) edit(l Line, what, variant string, lines []string, marks []int, stepIDs []string, before, after string) {
	g.out = append(g.out, Mutant{ID: g.id(l, what, variant), Source: g.s.Name, Op: g.op, Line: l.N,
		Lines: marks, Steps: stepIDs, Before: before, After: after, Text: joinLines(lines)})
}

// keyLines are the lines whose key the key operators rename: top-level
// params of steps, inputs and outputs, and keys at the top of yaml blocks.
func (g *gen) keyLines() []Line {
	var out []Line
	for _, l := range g.s.Lines {
		if l.Key != "" && l.Entity != "" {
			out = append(out, l)
		}
	}
	return out
}

// renameKey returns l's text with its key renamed.
func renameKey(l Line, key string) string {
	if l.Dash {
		return "- " + key + strings.TrimPrefix(l.Text, "- "+l.Key)
	}
	return key + strings.TrimPrefix(l.Text, l.Key)
}

// jsonKeyRe finds the keys of a JSON IR line.
var jsonKeyRe = regexp.MustCompile(`"([A-Za-z_][\w-]*)"\s*:`)

// jsonKeys calls f for each key of each JSON IR line about a node, an
// input or an output, with the line's text with that key renamed by rename.
func (g *gen) jsonKeys(rename func(string) []string, f func(l Line, key, variant, text string)) {
	if g.s.Kind != JSONIR {
		return
	}
	for _, l := range g.s.Lines {
		if l.Entity == "" || l.Section == "edges" {
			continue
		}
		for _, m := range jsonKeyRe.FindAllStringSubmatchIndex(l.Text, -1) {
			key := l.Text[m[2]:m[3]]
			if key == l.Entity && l.Section != "nodes" {
				continue // the input's or output's own name
			}
			for _, nk := range rename(key) {
				f(l, key, nk, l.Text[:m[2]]+nk+l.Text[m[3]:])
			}
		}
	}
}

func dropLetter(k string) string {
	if len(k) < 3 {
		return ""
	}
	i := len(k) / 2
	return k[:i] + k[i+1:]
}

func swapLetters(k string) string {
	if len(k) < 3 {
		return ""
	}
	for _, i := range []int{len(k)/2 - 1, len(k) / 2, 0, len(k) - 2} {
		if i >= 0 && k[i] != k[i+1] && k[i] != '_' && k[i+1] != '_' {
			return k[:i] + string(k[i+1]) + string(k[i]) + k[i+2:]
		}
	}
	return ""
}

func one(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func opKeyDrop(g *gen) {
	for _, l := range g.keyLines() {
		if k := dropLetter(l.Key); k != "" {
			g.replace(l, l.Key, "", renameKey(l, k))
		}
	}
	g.jsonKeys(func(k string) []string { return one(dropLetter(k)) }, func(l Line, key, _, text string) { g.replace(l, key, "", text) })
}

func opKeySwap(g *gen) {
	for _, l := range g.keyLines() {
		if k := swapLetters(l.Key); k != "" {
			g.replace(l, l.Key, "", renameKey(l, k))
		}
	}
	g.jsonKeys(func(k string) []string { return one(swapLetters(k)) }, func(l Line, key, _, text string) { g.replace(l, key, "", text) })
}

// Synonyms are the words other workflow tools (GitHub Actions, n8n, Airflow,
// Make, Ansible, ...) use for pflow's keys.
var Synonyms = map[string][]string{
	"command":         {"cmd", "run", "script"},
	"stdin":           {"input"},
	"type":            {"uses", "kind"},
	"source":          {"value", "from"},
	"default":         {"default_value"},
	"required":        {"mandatory"},
	"url":             {"uri", "endpoint"},
	"headers":         {"header"},
	"params":          {"query"},
	"file_path":       {"path", "filename"},
	"content":         {"text", "data"},
	"on_error":        {"on_failure", "catch"},
	"next":            {"then", "goto"},
	"workflow_ref":    {"workflow", "uses"},
	"param_mapping":   {"with", "inputs"},
	"prompt":          {"message"},
	"model":           {"engine"},
	"max_tokens":      {"max_length"},
	"temperature":     {"temp"},
	"retries":         {"retry", "max_attempts"},
	"retry_wait":      {"retry_delay", "backoff"},
	"timeout":         {"timeout_ms", "timeout_seconds"},
	"cache":           {"cache_ttl"},
	"input_mappings":  {"input_mapping"},
	"output_mappings": {"output_mapping", "outputs"},
	"inputs":          {"args", "with"},
	"items":           {"for_each", "loop"},
	"as":              {"item_var"},
	"parallel":        {"concurrent"},
	"max_concurrent":  {"concurrency"},
	"env":             {"environment"},
}

func opKeySynonym(g *gen) {
	for _, l := range g.keyLines() {
		for _, syn := range Synonyms[l.Key] {
			g.replace(l, l.Key, syn, renameKey(l, syn))
		}
	}
	g.jsonKeys(func(k string) []string { return Synonyms[k] }, func(l Line, key, syn, text string) { g.replace(l, key, syn, text) })
	// depends_on: each step after the first names the step before it, the
	// way GitHub Actions (needs), Airflow and Argo order tasks.
	if g.s.Kind != Markdown {
		return
	}
	prev := ""
	for i, l := range g.s.Lines {
		if l.Section != "steps" || l.Heading != 3 {
			continue
		}
		if prev != "" {
			// after the step's `- type:` line (or its heading's description)
			at := i + 2
			for j := i + 1; j < len(g.s.Lines) && g.s.Lines[j].Heading == 0; j++ {
				if g.s.Lines[j].Key == "type" && g.s.Lines[j].Dash {
					at = j + 1
					break
				}
			}
			if at > len(g.s.Lines) {
				continue
			}
			added := "- depends_on: " + prev
			lines := slices.Insert(g.s.texts(), at, added)
			g.edit(l, "depends_on", "", lines, []int{at + 1}, []string{l.Entity}, "(none)", fmt.Sprintf("L%d: %s", at+1, added))
		}
		prev = l.Entity
	}
}

func opHeading(g *gen) {
	if g.s.Kind != Markdown {
		return
	}
	for _, l := range g.s.Lines {
		var levels []int
		switch l.Heading {
		case 2:
			levels = []int{1, 3}
		case 3:
			levels = []int{2, 4}
		default:
			continue
		}
		what := "heading"
		if l.Heading == 2 {
			what = "section"
			l.Entity = strings.TrimLeft(l.Text, "# ")
		}
		for _, lv := range levels {
			g.replace(l, what, "h"+strconv.Itoa(lv), strings.Repeat("#", lv)+strings.TrimLeft(l.Text, "#"))
		}
	}
}

func opMove(g *gen) {
	if g.s.Kind != Markdown {
		return
	}
	lines := g.s.Lines
	outputsEnd := -1 // index after the last line of the first output entity
	for i, l := range lines {
		if l.Section == "outputs" && l.Heading == 3 {
			j := i + 1
			for j < len(lines) && lines[j].Heading == 0 {
				j++
			}
			for j > i+1 && strings.TrimSpace(lines[j-1].Text) == "" {
				j--
			}
			outputsEnd = j
			break
		}
	}
	for i, l := range lines {
		if !l.isStepParam() || l.Continued {
			continue
		}
		// under ## Outputs: at the end of the first output's lines
		if outputsEnd > i {
			to := outputsEnd - 1 // index in the text without line i
			moved := slices.Delete(g.s.texts(), i, i+1)
			moved = slices.Insert(moved, to, l.Text)
			g.edit(l, l.Key, "to-outputs", moved, []int{to + 1, l.N}, []string{l.Entity, lines[outputsEnd-1].Entity},
				fmt.Sprintf("L%d: %s", l.N, l.Text), fmt.Sprintf("L%d: %s (under ## Outputs, output '%s')", to+1, l.Text, lines[outputsEnd-1].Entity))
		}
		// into the next step: after its `- type:` line
		for j := i + 1; j < len(lines); j++ {
			if lines[j].Section != "steps" {
				break
			}
			if lines[j].Entity != l.Entity && lines[j].Key == "type" && lines[j].Dash {
				to := j // index in the text without line i: after line j
				moved := slices.Delete(g.s.texts(), i, i+1)
				moved = slices.Insert(moved, to, l.Text)
				g.edit(l, l.Key, "to-next-step", moved, []int{to + 1, l.N}, []string{l.Entity, lines[j].Entity},
					fmt.Sprintf("L%d: %s", l.N, l.Text), fmt.Sprintf("L%d: %s (in step '%s')", to+1, l.Text, lines[j].Entity))
				break
			}
		}
	}
}

// templateRe finds a pflow template: ${head.path[0]...}.
var templateRe = regexp.MustCompile(`\$\{([A-Za-z_][\w-]*)((?:\.[\w-]+|\[\d+\])*)\}`)

// templateLines are the lines that may hold templates that reach a step:
// params and their continuations, fenced blocks, JSON IR.
func (g *gen) templateLines() []Line {
	var out []Line
	for _, l := range g.s.Lines {
		if l.Entity == "" && g.s.Kind == Markdown {
			continue
		}
		if g.s.Kind == JSONIR || l.Dash || l.InFence || (strings.HasPrefix(l.Text, "  ") && l.Heading == 0) {
			out = append(out, l)
		}
	}
	return out
}

func opTemplate(g *gen) {
	for _, l := range g.templateLines() {
		for _, m := range templateRe.FindAllStringSubmatchIndex(l.Text, -1) {
			if m[0] > 0 && l.Text[m[0]-1] == '$' {
				continue // $${x} is a literal
			}
			tpl := l.Text[m[0]:m[1]]
			head, path := l.Text[m[2]:m[3]], l.Text[m[4]:m[5]]
			dotted := strings.TrimPrefix(path, ".")
			gha := "${{ inputs." + head + path + " }}"
			if path != "" {
				gha = "${{ steps." + head + ".outputs." + dotted + " }}"
			}
			for _, v := range []struct{ name, text string }{
				{"jinja", "{{ " + head + path + " }}"},
				{"github-actions", gha},
				{"bare", "$" + head + path},
				{"steps-prefix", "${steps." + head + path + "}"},
				{"negative-index", "${" + head + path + "[-1]}"},
			} {
				g.replace(l, tpl, v.name, l.Text[:m[0]]+v.text+l.Text[m[1]:])
			}
		}
	}
}

// jsonEdgeRe finds a JSON IR edge written on its own line.
var jsonEdgeRe = regexp.MustCompile(`^\s*\{\s*"from"`)

func opEdge(g *gen) {
	lines := g.s.Lines
	for i, l := range lines {
		isEdge := l.isStepParam() && (l.Key == "next" || l.Key == "on_error" || l.Key == "on") && !l.Continued
		if g.s.Kind == JSONIR && l.Section == "edges" && jsonEdgeRe.MatchString(l.Text) {
			isEdge = true
		}
		if !isEdge {
			continue
		}
		what := l.Key
		stepIDs := steps(l)
		if g.s.Kind == JSONIR {
			what = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l.Text), ","))
			if m := regexp.MustCompile(`"to"\s*:\s*"([^"]+)"`).FindStringSubmatch(l.Text); m != nil {
				stepIDs = append(stepIDs, m[1])
			}
		} else if l.Value != "" {
			stepIDs = append(stepIDs, strings.Trim(l.Value, `"' `))
		}
		// drop
		dropped := slices.Delete(g.s.texts(), i, i+1)
		if g.s.Kind == JSONIR && !strings.HasSuffix(strings.TrimSpace(l.Text), ",") && i > 0 {
			dropped[i-1] = strings.TrimSuffix(strings.TrimRight(dropped[i-1], " "), ",")
		}
		marks := []int{l.N}
		if l.N > 1 {
			marks = append(marks, l.N-1)
		}
		g.edit(l, what, "drop", dropped, marks, stepIDs, fmt.Sprintf("L%d: %s", l.N, l.Text), "(removed)")
		// duplicate
		dup := l.Text
		if g.s.Kind == JSONIR && !strings.HasSuffix(strings.TrimSpace(dup), ",") {
			dup = strings.TrimRight(dup, " ") + ","
		}
		dupd := slices.Insert(g.s.texts(), i, dup)
		g.edit(l, what, "duplicate", dupd, []int{l.N, l.N + 1}, stepIDs, fmt.Sprintf("L%d: %s", l.N, l.Text),
			fmt.Sprintf("L%d: %s\nL%d: %s", l.N, dup, l.N+1, l.Text))
	}
}

// typeSwaps are the declared-type changes type-change makes.
var typeSwaps = map[string]string{
	"string": "integer", "integer": "string", "number": "integer", "boolean": "string",
	"object": "array", "array": "object", "str": "int", "int": "str", "float": "int",
	"bool": "str", "dict": "list", "list": "dict",
}

var jsonTypeRe = regexp.MustCompile(`("type"\s*:\s*")(\w+)(")`)

func opType(g *gen) {
	for _, l := range g.s.Lines {
		if l.Section != "inputs" && l.Section != "outputs" || l.Entity == "" {
			continue
		}
		if g.s.Kind == Markdown && l.Dash && l.Key == "type" {
			if to, ok := typeSwaps[strings.TrimSpace(l.Value)]; ok {
				g.replace(l, "type", to, "- type: "+to)
			}
		}
		if g.s.Kind == JSONIR {
			if m := jsonTypeRe.FindStringSubmatchIndex(l.Text); m != nil {
				if to, ok := typeSwaps[l.Text[m[4]:m[5]]]; ok {
					g.replace(l, "type", to, l.Text[:m[4]]+to+l.Text[m[5]:])
				}
			}
		}
	}
}

// unitKeys are the keys whose values carry a unit of time.
var unitKeys = map[string]bool{"retry_wait": true, "timeout": true, "cache": true}

var (
	numberRe   = regexp.MustCompile(`^(\d+(?:\.\d+)?)$`)
	durationRe = regexp.MustCompile(`^(\d+(?:\.\d+)?)(ms|s|m|h|d)$`)
)

var unitWords = map[string][]string{
	"ms": {" milliseconds", "s"},
	"s":  {" seconds", " sec", "ms"},
	"m":  {" minutes", " min"},
	"h":  {" hours", " hour"},
	"d":  {" days", "days"},
}

func opUnit(g *gen) {
	for _, l := range g.s.Lines {
		if !unitKeys[l.Key] || l.Entity == "" {
			continue
		}
		v := strings.TrimSpace(l.Value)
		prefix := strings.TrimSuffix(l.Text, l.Value)
		if m := numberRe.FindStringSubmatch(v); m != nil {
			n, _ := strconv.ParseFloat(m[1], 64)
			g.replace(l, l.Key, "times-1000", prefix+strconv.FormatFloat(n*1000, 'f', -1, 64))
			g.replace(l, l.Key, "ms", prefix+m[1]+"ms")
		}
		if m := durationRe.FindStringSubmatch(v); m != nil {
			for _, w := range unitWords[m[2]] {
				g.replace(l, l.Key, strings.TrimSpace(w), prefix+m[1]+w)
			}
		}
	}
}

var scalarRe = regexp.MustCompile(`^(-?\d+(\.\d+)?|true|false|null|yes|no|on|off|~)$`)

func opQuote(g *gen) {
	for _, l := range g.s.Lines {
		if l.Key == "" || l.Entity == "" || l.Continued {
			continue
		}
		v := l.Value
		prefix := strings.TrimSuffix(l.Text, v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			inner := v[1 : len(v)-1]
			if strings.Contains(inner, ": ") || strings.Contains(inner, "#") || scalarRe.MatchString(inner) {
				g.replace(l, l.Key, "unquote", prefix+inner)
			}
			continue
		}
		if v == "" || strings.ContainsAny(v[:1], "[{|>&*!") {
			continue
		}
		if strings.Contains(v, ": ") || strings.Contains(v, "#") || scalarRe.MatchString(v) {
			if !strings.ContainsAny(v, `"\`) {
				g.replace(l, l.Key, "double-quote", prefix+`"`+v+`"`)
			} else if !strings.Contains(v, "'") {
				g.replace(l, l.Key, "single-quote", prefix+"'"+v+"'")
			}
		}
	}
}

func opIndent(g *gen) {
	for _, l := range g.s.Lines {
		if l.isParam() {
			g.replace(l, l.Key, "", "  "+l.Text)
		}
	}
}

func opFence(g *gen) {
	for _, l := range g.s.Lines {
		if !l.FenceOpen || l.FenceInfo == "" || l.Entity == "" {
			continue
		}
		mark := strings.TrimSuffix(l.Text, l.FenceInfo)
		mark = strings.TrimRight(mark, " ")
		words := strings.Fields(l.FenceInfo)
		last := words[len(words)-1]
		if k := dropLetter(last); k != "" {
			g.replace(l, last, "misspell", mark+strings.Join(append(slices.Clone(words[:len(words)-1]), k), " "))
		}
		if len(words) > 1 {
			g.replace(l, last, "drop-param", mark+strings.Join(words[:len(words)-1], " "))
		}
	}
}
