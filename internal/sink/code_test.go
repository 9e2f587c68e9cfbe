package sink

import (
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/template"
)

// hints renders every problem of src as "--- template\nmessage\nhint".
func hints(src string, cc CodeContext) string {
	var b strings.Builder
	for _, p := range CheckCode(src, cc) {
		b.WriteString("--- " + p.Template + "\n" + p.Message + "\n" + p.Hint + "\n")
	}
	return b.String()
}

func typesOf(m map[string]string) func(template.Ref) string {
	return func(r template.Ref) string { return m[r.Raw] }
}

func TestCheckCodeRewrites(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		cc    CodeContext
		wants []string // each must appear in the rendered hints
	}{
		{
			name: "assignment becomes the annotation; text gets an f-string",
			src:  "items: list\ntitle = \"${fetch.response.items[0].title}\"\nprint(\"Got ${fetch.response.count} of {total}\")\nresult: str = title.upper()",
			cc: CodeContext{Inputs: map[string]any{"items": "${fetch.response.items}", "limit": int64(3)},
				TypeOf:    typesOf(map[string]string{"${fetch.response.items[0].title}": "str", "${fetch.response.count}": "int"}),
				FirstLine: 12},
			wants: []string{
				"--- ${fetch.response.items[0].title}\ntemplate ${fetch.response.items[0].title} is inside the Python code; its value would be pasted into the source and could run as code\n" +
					"Pass it in through the step's inputs: inputs arrive as Python values and never run as code.\n" +
					"Replace the step's inputs with:\n" +
					"  - inputs: {items: \"${fetch.response.items}\", limit: 3, title: \"${fetch.response.items[0].title}\", count: \"${fetch.response.count}\"}\n" +
					"Change line 13 to:\n  title: str\n",
				"--- ${fetch.response.count}\n",
				"Add at the top of the code:\n  count: int\nChange line 14 to:\n  print(f\"Got {count} of {{total}}\")\n",
			},
		},
		{
			name:  "unknown type is object; line numbers within the code without a file line",
			src:   "result: str = 'x' * ${n}",
			wants: []string{"Set the step's inputs to:\n  - inputs: {n: \"${n}\"}\nAdd at the top of the code:\n  n: object\nChange line 1 of the code to:\n  result: str = 'x' * n\n"},
		},
		{
			name:  "json.loads of a dict is the dict; a dict in text is json.dumps",
			src:   "data = json.loads('''${fetch.response}''')\nmsg = 'got ${fetch.response}'\nresult: dict = data",
			cc:    CodeContext{TypeOf: typesOf(map[string]string{"${fetch.response}": "dict"})},
			wants: []string{"  - inputs: {data: \"${fetch.response}\"}\nAdd at the top of the code:\n  import json\nChange line 1 of the code to:\n  data: dict\nChange line 2 of the code to:\n  msg = f'got {json.dumps(data)}'\n"},
		},
		{
			name:  "json.loads of text goes: inputs parse JSON objects and arrays",
			src:   "import json\nd = json.loads(r\"\"\"${x.stdout}\"\"\").get('a')\nresult: object = d",
			cc:    CodeContext{TypeOf: typesOf(map[string]string{"${x.stdout}": "str"})},
			wants: []string{"  - inputs: {stdout: \"${x.stdout}\"}\nAdd at the top of the code:\n  stdout: object\nChange line 2 of the code to:\n  d = stdout.get('a')\n"},
		},
		{
			name:  "numbers in quotes become text; bytes are encoded",
			src:   "label = 'n=' + \"${n}\"\nraw = b'${s}'\nresult: str = label",
			cc:    CodeContext{TypeOf: typesOf(map[string]string{"${n}": "int", "${s}": "str"})},
			wants: []string{"Add at the top of the code:\n  n: int\nChange line 1 of the code to:\n  label = 'n=' + str(n)\n", "Add at the top of the code:\n  s: str\nChange line 2 of the code to:\n  raw = s.encode()\n"},
		},
		{
			name:  "an existing input is reused",
			src:   "data: list\nresult: int = len(${fetch.items})",
			cc:    CodeContext{Inputs: map[string]any{"data": "${fetch.items}"}},
			wants: []string{"The step's inputs already bind it as 'data': use the variable, which holds the value and never runs as code.\nChange line 2 of the code to:\n  result: int = len(data)\n"},
		},
		{
			name: "names never shadow builtins, keywords, inputs or the code's own names",
			src:  "t = 'a'\nx = '${a.response.type}' + '${b.from}' + ${a.title} + ${b.title} + ${c.t}\nresult: str = x",
			cc:   CodeContext{Inputs: map[string]any{"title": "${other}"}},
			wants: []string{
				"  - inputs: {title: \"${other}\", response_type: \"${a.response.type}\", b_from: \"${b.from}\", a_title: \"${a.title}\", b_title: \"${b.title}\", c_t: \"${c.t}\"}\n",
				"  x = response_type + b_from + a_title + b_title + c_t\n",
			},
		},
		{
			name: "every template once, at its first line; f-strings and multi-line strings",
			src:  "def f():\n    return ${x.y} + ${x.y}\nz = f'{${x.y}} and ${w} {len(\"${w}\")}'\ntext = \"\"\"a\n${w}\nb {c}\"\"\"\nresult: int = f()",
			wants: []string{
				"Change line 2 of the code to:\n      return y + y\nChange line 3 of the code to:\n  z = f'{y} and {w} {len(w)}'\n",
				"Change line 3 of the code to:\n  z = f'{y} and {w} {len(w)}'\nChange lines 4-6 of the code to:\n  text = f\"\"\"a\n  {w}\n  b {{c}}\"\"\"\n",
			},
		},
		{
			name:  "a comment is escaped, not bound",
			src:   "result: int = 1  # from ${fetch.url}",
			wants: []string{"template ${fetch.url} is inside a Python comment; a value with a line break would end the comment and run as code\nA comment is never filled in: escape the template ($${...}) so it stays literal text.\nChange line 1 of the code to:\n  result: int = 1  # from $${fetch.url}\n"},
		},
		{
			name:  "inputs given as one template cannot be merged",
			src:   "result: str = ${x}",
			cc:    CodeContext{Inputs: "${prev.result}"},
			wants: []string{"The step's inputs are \"${prev.result}\"; add these entries to that dict: {x: \"${x}\"}\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := hints(tt.src, tt.cc)
			for _, w := range tt.wants {
				if !strings.Contains(got, w) {
					t.Errorf("hints lack\n%s\ngot:\n%s", w, got)
				}
			}
		})
	}
}

func TestCheckCodeReportsEachTemplateOnce(t *testing.T) {
	src := "a = ${x}\nb = ${x}\nc = '${y}'\nd = $${z}\n"
	problems := CheckCode(src, CodeContext{})
	if len(problems) != 2 || problems[0].Template != "${x}" || problems[0].Offset != 4 || problems[1].Template != "${y}" || problems[1].Offset != 23 {
		t.Fatalf("problems = %s", hints(src, CodeContext{}))
	}
	if got := CheckCode("x = '$${HOME}'\nresult: int = 1", CodeContext{}); len(got) != 0 {
		t.Errorf("an escaped template was reported: %v", got)
	}
}

func TestCodeUnescapes(t *testing.T) {
	src, problems := Code("s = '$${HOME}'\nresult: str = s", CodeContext{})
	if len(problems) != 0 || src != "s = '${HOME}'\nresult: str = s" {
		t.Errorf("Code = %q, %v", src, problems)
	}
	if _, problems := Code("result: str = '${x}'", CodeContext{}); len(problems) != 1 {
		t.Errorf("Code accepted a template: %v", problems)
	}
}

func TestValueTypeOf(t *testing.T) {
	root := map[string]any{"s": "x", "j": `{"a": 1}`, "i": int64(1), "f": 1.5, "b": true, "d": map[string]any{}, "l": []any{}, "n": nil}
	typeOf := ValueTypeOf(root)
	for raw, want := range map[string]string{"${s}": "str", "${j}": "dict", "${i}": "int", "${f}": "float", "${b}": "bool", "${d}": "dict", "${l}": "list", "${n}": "any", "${missing}": "any"} {
		r, _ := template.IsSimple(raw)
		if got := typeOf(r); got != want {
			t.Errorf("type of %s = %s, want %s", raw, got, want)
		}
	}
}

// The inputs line a hint suggests is YAML that reads back as the values it
// shows: characters YAML refuses or folds (NEL, DEL, a BOM) are escaped, as
// a .pflow.md file writes them (this writer used to leave them raw).
func TestYAMLFlowEscapesWhatYAMLRefuses(t *testing.T) {
	got := yamlFlow(map[string]any{"note": "a\u0085b\x7f", "odd key": []any{2.0, "\ufeff"}})
	if want := `{note: "a\u0085b\u007f", "odd key": [2.0, "\ufeff"]}`; got != want {
		t.Errorf("yamlFlow = %s, want %s", got, want)
	}
}
