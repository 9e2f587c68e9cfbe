package mutate

import (
	"slices"
	"strings"
	"testing"
)

const sample = "# Hello\n" + // 1
	"Greets.\n" + // 2
	"\n" + // 3
	"## Inputs\n" + // 4
	"\n" + // 5
	"### name\n" + // 6
	"Who.\n" + // 7
	"- type: string\n" + // 8
	"\n" + // 9
	"## Steps\n" + // 10
	"\n" + // 11
	"### greet\n" + // 12
	"Say hello.\n" + // 13
	"- type: shell\n" + // 14
	"- on_error: upper\n" + // 15
	"\n" + // 16
	"```shell command\n" + // 17
	"echo \"hello ${name}\"\n" + // 18
	"```\n" + // 19
	"\n" + // 20
	"### upper\n" + // 21
	"Uppercase it.\n" + // 22
	"- type: shell\n" + // 23
	"- stdin: ${greet.stdout}\n" + // 24
	"- command: tr a-z A-Z\n" + // 25
	"- retry_wait: 1s\n" + // 26
	"- label: \"a: b\"\n" + // 27
	"\n" + // 28
	"## Outputs\n" + // 29
	"\n" + // 30
	"### message\n" + // 31
	"The greeting.\n" + // 32
	"- source: ${upper.stdout}\n" // 33

// byID indexes mutants by id, failing on a duplicate id.
func byID(t *testing.T, ms []Mutant) map[string]Mutant {
	t.Helper()
	out := map[string]Mutant{}
	for _, m := range ms {
		if _, dup := out[m.ID]; dup {
			t.Fatalf("duplicate id %s", m.ID)
		}
		out[m.ID] = m
	}
	return out
}

func op(t *testing.T, name string) Operator {
	t.Helper()
	for _, o := range Operators {
		if o.Name == name {
			return o
		}
	}
	t.Fatalf("no operator %s", name)
	return Operator{}
}

// lineOf returns line n (1-based) of text.
func lineOf(text string, n int) string { return strings.Split(text, "\n")[n-1] }

func TestParseAttributesLines(t *testing.T) {
	s := Parse("x.pflow.md", sample)
	for _, c := range []struct {
		n                    int
		section, entity, key string
		inFence, open        bool
	}{
		{8, "inputs", "name", "type", false, false},
		{14, "steps", "greet", "type", false, false},
		{17, "steps", "greet", "", false, true},
		{18, "steps", "greet", "", true, false},
		{25, "steps", "upper", "command", false, false},
		{33, "outputs", "message", "source", false, false},
	} {
		l := s.Lines[c.n-1]
		if l.Section != c.section || l.Entity != c.entity || l.Key != c.key || l.InFence != c.inFence || l.FenceOpen != c.open {
			t.Errorf("line %d: got %+v", c.n, l)
		}
	}
}

func TestKeyMisspellings(t *testing.T) {
	s := Parse("x.pflow.md", sample)
	ms := byID(t, GenerateOp(s, op(t, "key-drop-letter")))
	m, ok := ms["x.pflow.md:key-drop-letter:steps/upper/command"]
	if !ok {
		t.Fatalf("no drop-letter mutant of command: %v", keys(ms))
	}
	if m.After != "- comand: tr a-z A-Z" || m.Line != 25 || !slices.Equal(m.Lines, []int{25}) || !slices.Equal(m.Steps, []string{"upper"}) {
		t.Errorf("got %+v", m)
	}
	if lineOf(m.Text, 25) != m.After || lineOf(m.Text, 24) != "- stdin: ${greet.stdout}" {
		t.Errorf("the mutant text is not the original with line 25 edited")
	}
	sw := byID(t, GenerateOp(s, op(t, "key-swap-letters")))
	if got := sw["x.pflow.md:key-swap-letters:steps/upper/command"].After; got != "- comamnd: tr a-z A-Z" {
		t.Errorf("swap: %q", got)
	}
	syn := byID(t, GenerateOp(s, op(t, "key-synonym")))
	if got := syn["x.pflow.md:key-synonym:steps/upper/command:cmd"].After; got != "- cmd: tr a-z A-Z" {
		t.Errorf("synonym: %q", got)
	}
	dep, ok := syn["x.pflow.md:key-synonym:steps/upper/depends_on"]
	if !ok || lineOf(dep.Text, 24) != "- depends_on: greet" || !slices.Equal(dep.Lines, []int{24}) {
		t.Errorf("depends_on: %+v", dep)
	}
}

func keys(m map[string]Mutant) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestHeadingLevels(t *testing.T) {
	ms := byID(t, GenerateOp(Parse("x.pflow.md", sample), op(t, "heading-level")))
	if got := ms["x.pflow.md:heading-level:steps/upper/heading:h2"].After; got != "## upper" {
		t.Errorf("h2: %q", got)
	}
	if got := ms["x.pflow.md:heading-level:steps/upper/heading:h4"].After; got != "#### upper" {
		t.Errorf("h4: %q", got)
	}
	if got := ms["x.pflow.md:heading-level:outputs/Outputs/section:h3"].After; got != "### Outputs" {
		t.Errorf("section: %q (%v)", got, keys(ms))
	}
}

func TestMoveLine(t *testing.T) {
	ms := byID(t, GenerateOp(Parse("x.pflow.md", sample), op(t, "move-line")))
	m, ok := ms["x.pflow.md:move-line:steps/upper/stdin:to-outputs"]
	if !ok {
		t.Fatalf("no move to outputs: %v", keys(ms))
	}
	lines := strings.Split(strings.TrimSuffix(m.Text, "\n"), "\n")
	if lines[len(lines)-1] != "- stdin: ${greet.stdout}" || slices.Contains(lines[20:25], "- stdin: ${greet.stdout}") {
		t.Errorf("the line must move to the end of the first output:\n%s", m.Text)
	}
	if !slices.Contains(m.Lines, len(lines)) || !slices.Contains(m.Steps, "upper") || !slices.Contains(m.Steps, "message") {
		t.Errorf("marks: %+v", m)
	}
	n := ms["x.pflow.md:move-line:steps/greet/on_error:to-next-step"]
	if lineOf(n.Text, 22) != "- type: shell" || lineOf(n.Text, 23) != "- on_error: upper" {
		t.Errorf("the line must move after the next step's type:\n%s", n.Text)
	}
}

func TestTemplateSyntaxes(t *testing.T) {
	ms := byID(t, GenerateOp(Parse("x.pflow.md", sample), op(t, "template-syntax")))
	want := map[string]string{
		"jinja":          "- stdin: {{ greet.stdout }}",
		"github-actions": "- stdin: ${{ steps.greet.outputs.stdout }}",
		"bare":           "- stdin: $greet.stdout",
		"steps-prefix":   "- stdin: ${steps.greet.stdout}",
		"negative-index": "- stdin: ${greet.stdout[-1]}",
	}
	for v, w := range want {
		if got := ms["x.pflow.md:template-syntax:steps/upper/${greet.stdout}:"+v].After; got != w {
			t.Errorf("%s: %q, want %q", v, got, w)
		}
	}
	// inside a fenced block, and an input's GitHub Actions form
	if got := ms["x.pflow.md:template-syntax:steps/greet/${name}:github-actions"].After; got != `echo "hello ${{ inputs.name }}"` {
		t.Errorf("fenced: %q", got)
	}
	// $${x} is a literal, not a template
	lit := Parse("y.pflow.md", strings.Replace(sample, "hello ${name}", "hello $${HOME}", 1))
	for _, m := range GenerateOp(lit, op(t, "template-syntax")) {
		if m.Line == 18 {
			t.Errorf("a literal $${x} was mutated: %s", m.ID)
		}
	}
}

func TestEdgesMarkdownAndJSON(t *testing.T) {
	ms := byID(t, GenerateOp(Parse("x.pflow.md", sample), op(t, "edge")))
	drop := ms["x.pflow.md:edge:steps/greet/on_error:drop"]
	if strings.Contains(drop.Text, "on_error") || !slices.Contains(drop.Steps, "upper") {
		t.Errorf("drop: %+v", drop)
	}
	dup := ms["x.pflow.md:edge:steps/greet/on_error:duplicate"]
	if strings.Count(dup.Text, "- on_error: upper") != 2 {
		t.Errorf("duplicate:\n%s", dup.Text)
	}
	ir := "{\n" +
		"  \"ir_version\": \"0.1.0\",\n" +
		"  \"nodes\": [\n" +
		"    {\"id\": \"a\", \"type\": \"shell\", \"params\": {\"command\": \"echo ${x}\"}},\n" +
		"    {\"id\": \"b\", \"type\": \"shell\", \"params\": {\"command\": \"cat\"}}\n" +
		"  ],\n" +
		"  \"edges\": [\n" +
		"    {\"from\": \"a\", \"to\": \"b\"},\n" +
		"    {\"from\": \"b\", \"to\": \"a\", \"action\": \"error\"}\n" +
		"  ]\n" +
		"}\n"
	js := GenerateOp(Parse("w.json", ir), op(t, "edge"))
	if len(js) != 4 {
		t.Fatalf("want drop and duplicate of 2 edges, got %d", len(js))
	}
	for _, m := range js {
		if strings.Contains(m.Text, "},\n  ]") || strings.Contains(m.Text, "}\n    {") {
			t.Errorf("%s: the edges are not valid JSON any more:\n%s", m.ID, m.Text)
		}
	}
	if js[2].Steps[0] != "b" || js[2].Steps[1] != "a" {
		t.Errorf("an edge's steps are its ends: %v", js[2].Steps)
	}
	jk := byID(t, GenerateOp(Parse("w.json", ir), op(t, "key-drop-letter")))
	if got := jk["w.json:key-drop-letter:nodes/a/command"].After; got != `    {"id": "a", "type": "shell", "params": {"comand": "echo ${x}"}},` {
		t.Errorf("JSON key: %q (%v)", got, keys(jk))
	}
}

func TestTypesUnitsQuotesIndentFences(t *testing.T) {
	s := Parse("x.pflow.md", sample)
	ty := GenerateOp(s, op(t, "type-change"))
	if len(ty) != 1 || ty[0].After != "- type: integer" {
		t.Errorf("type-change: %+v", ty)
	}
	un := byID(t, GenerateOp(s, op(t, "unit")))
	if got := un["x.pflow.md:unit:steps/upper/retry_wait:seconds"].After; got != "- retry_wait: 1 seconds" {
		t.Errorf("unit: %q (%v)", got, keys(un))
	}
	num := byID(t, GenerateOp(Parse("t.pflow.md", strings.Replace(sample, "retry_wait: 1s", "timeout: 30", 1)), op(t, "unit")))
	if got := num["t.pflow.md:unit:steps/upper/timeout:times-1000"].After; got != "- timeout: 30000" {
		t.Errorf("unit number: %q (%v)", got, keys(num))
	}
	qu := GenerateOp(s, op(t, "quote"))
	if len(qu) != 1 || qu[0].After != "- label: a: b" {
		t.Errorf("quote: %+v", qu)
	}
	in := byID(t, GenerateOp(s, op(t, "indent")))
	if got := in["x.pflow.md:indent:steps/upper/command"].After; got != "  - command: tr a-z A-Z" {
		t.Errorf("indent: %q", got)
	}
	fe := GenerateOp(s, op(t, "fence-tag"))
	if len(fe) != 2 || fe[0].After != "```shell comand" || fe[1].After != "```shell" {
		t.Errorf("fence-tag: %+v", fe)
	}
}

func TestEveryMutantEditsTheText(t *testing.T) {
	s := Parse("x.pflow.md", sample)
	ids := map[string]bool{}
	for _, m := range Generate(s) {
		if m.Text == sample {
			t.Errorf("%s leaves the text as it was", m.ID)
		}
		if ids[m.ID] {
			t.Errorf("duplicate id %s", m.ID)
		}
		ids[m.ID] = true
		if len(m.Lines) == 0 {
			t.Errorf("%s names no line", m.ID)
		}
	}
}

func TestLocatedAndSampled(t *testing.T) {
	m := Mutant{Lines: []int{25}, Steps: []string{"upper"}}
	for _, c := range []struct {
		d    Diag
		want bool
	}{
		{Diag{Severity: "error", Line: 25}, true},
		{Diag{Severity: "error", Step: "upper"}, true},
		{Diag{Severity: "error", Message: "Output 'message' references non-existent node 'upper'"}, true},
		{Diag{Severity: "error", Line: 3, Message: "Missing '## Steps' section."}, false},
		{Diag{Severity: "warning", Line: 25}, false},
	} {
		if got := Located(m, Validation{Refused: true, Diags: []Diag{c.d}}); got != c.want {
			t.Errorf("%v: located %v, want %v", c.d, got, c.want)
		}
	}
	n := 0
	for i := range 1000 {
		if Sampled("id-"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26)), 10) {
			n++
		}
	}
	if n < 50 || n > 150 {
		t.Errorf("a 1-in-10 sample of 1000 ids took %d", n)
	}
	if !Sampled("anything", 1) {
		t.Error("a 1-in-1 sample takes everything")
	}
}

func TestKnownListAndDiff(t *testing.T) {
	k := ParseKnown("# comment\n\na:b:c\n  d:e:f  \n")
	if len(k) != 2 || !k["a:b:c"] || !k["d:e:f"] {
		t.Errorf("known: %v", k)
	}
	if d := lineDiff("a\nb\nc", "a\nx\nc"); d != "- b\n+ x" {
		t.Errorf("diff: %q", d)
	}
}
