package validate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/workflow"
)

// foreignCatalog is testCatalog with the sinks of the real nodes: a shell
// command, a URL, and an llm prompt (plain text).
func foreignCatalog() fakeCatalog {
	c := testCatalog()
	sh := *c["shell"]
	sh.Interface.Params = append([]node.Field(nil), sh.Interface.Params...)
	sh.Interface.Params[0].Sink = node.SinkShell
	c["shell"] = &sh
	h := *c["http"]
	h.Interface.Params = append([]node.Field(nil), h.Interface.Params...)
	h.Interface.Params[0].Sink = node.SinkURL
	c["http"] = &h
	c["llm"] = &node.Spec{Type: "llm", Interface: node.Interface{
		Params:  []node.Field{{Key: "prompt", Type: "str", Required: true}},
		Outputs: []node.Field{{Key: "response", Type: "str"}},
	}}
	return c
}

// foreignDoc is a workflow with an input 'who' and a step 'log' whose
// stdout the step under test ('use', on line 18) reads.
func foreignDoc(typ, param, val string) string {
	return fmt.Sprintf(`# T
Test.

## Inputs
### who
Who.
- type: string

## Steps
### log
List.
- type: shell
- command: echo ${who}

### use
Use it.
- type: %s
- %s: '%s'
`, typ, param, strings.ReplaceAll(val, "'", "''"))
}

// Other tools' template forms, each class written several ways: an error
// (naming the pflow form) when it refers to this workflow, a warning where
// the text may be literal.
func TestForeignSyntax(t *testing.T) {
	for _, tc := range []struct {
		class, typ, param, val string
		warn                   bool   // a warning, not an error
		want                   string // in the message or the fix
	}{
		{"github-actions", "shell", "command", "echo ${{ steps.log.outputs.stdout }}", false, "${log.stdout}"},
		{"github-actions", "llm", "prompt", "Summarise ${{ steps.log.outputs.stdout }}", false, "${log.stdout}"},
		{"github-actions", "http", "url", "https://x.test/${{ inputs.who }}", false, "${who}"},
		{"github-actions", "shell", "command", "echo ${{ github.event.inputs.who }}", false, "${who}"},
		{"jinja", "llm", "prompt", "Summarise {{ log.stdout }}", false, "${log.stdout}"},
		{"jinja", "shell", "command", "echo {{who}}", false, "${who}"},
		{"jinja", "http", "url", "https://x.test/{{ who }}/repos", false, "${who}"},
		{"jinja-filter", "llm", "prompt", "Hi {{ who | upper }}", false, "no filters"},
		{"jinja-filter", "shell", "command", "echo {{ log.stdout | lower }}", false, "no filters"},
		{"jinja-literal", "llm", "prompt", "Explain what {{ user.name }} means in Jinja", true, "${user.name}"},
		{"jinja-statement", "llm", "prompt", "{% for x in log.stdout %}{{ x }}{% endfor %}", true, "batch"},
		{"jinja-statement", "shell", "command", "{% if who %}echo hi{% endif %}", false, "- when:"},
		{"n8n", "llm", "prompt", "Name: {{ $json.name }}", false, "${log.stdout.name}"},
		{"n8n", "http", "url", "https://x.test/{{ $node[\"log\"].json.id }}", false, "${log.stdout.id}"},
		{"n8n", "shell", "command", "echo {{ $('log').item.json.id }}", false, "${log.stdout.id}"},
		{"prefix-steps", "shell", "command", "echo ${steps.log.stdout}", false, "${log.stdout}"},
		{"prefix-steps", "llm", "prompt", "Read ${steps.log.outputs.stdout}", false, "${log.stdout}"},
		{"prefix-inputs", "shell", "command", "echo ${inputs.who}", false, "${who}"},
		{"prefix-inputs", "http", "url", "https://x.test/${inputs.who}", false, "${who}"},
		{"prefix-env", "shell", "command", "echo ${env.HOME}", false, "$HOME"},
		{"prefix-env", "http", "url", "https://x.test/?k=${env.API_KEY}", false, "- env: API_KEY"},
		{"prefix-env", "llm", "prompt", "Token ${secrets.GH_TOKEN}", false, "- env: GH_TOKEN"},
		{"wildcard", "shell", "command", "echo ${log.stdout[*].title}", false, "no [*]"},
		{"wildcard", "llm", "prompt", "Titles: ${log.stdout.items[*].title}", false, "batch"},
		{"negative-index", "shell", "command", "echo ${log.stdout[-1]}", false, "no negative indexes"},
		{"negative-index", "http", "url", "https://x.test/${log.stdout[-2].id}", false, "no negative indexes"},
		{"bare-dollar", "http", "url", "https://x.test/users/$who", false, "${who}"},
		{"bare-dollar", "llm", "prompt", "Greet $who warmly", false, "${who}"},
		{"bare-dollar", "shell", "command", "echo hello $who", false, "not environment variables"},
		{"bare-dollar", "llm", "prompt", "Shorten $log.stdout please", false, "${log.stdout}"},
		{"bare-dollar", "llm", "prompt", "Shorten $log", false, "${log.stdout}"},
		{"expression-default", "shell", "command", "echo \"${who ?? 'world'}\"", false, "'- default: world' under '### who'"},
		{"expression-default", "llm", "prompt", "Hi ${who || 'you'}", false, "no default operator"},
		{"expression-default", "llm", "prompt", "Read ${log.stdout ?? 'none'}", false, "output_mappings"},
		{"expression-compare", "llm", "prompt", "Big: ${log.stdout > 10}", false, "- when: ${log.stdout} > 10"},
		{"expression-compare", "shell", "command", "test ${log.exit_code == 0}", false, "no comparisons"},
		{"expression-ternary", "llm", "prompt", "${who == 'x' ? 'y' : 'z'}", false, "switch step"},
		{"expression-call", "llm", "prompt", "Trim ${log.stdout.trim()}", false, "Write it the pflow way: ${log.stdout}"},
		{"expression-call", "http", "url", "https://x.test/${len(who)}", false, "no function or method calls"},
		{"expression-arith", "llm", "prompt", "Next ${log.stdout + 1}", false, "no arithmetic"},
		{"expression-shell", "shell", "command", "echo ${log.stdout:0:3}", false, "no shell expansions"},
		{"expression-shell", "shell", "command", "echo ${who:-anon}", false, "no shell expansions"},
		{"expression-other", "llm", "prompt", "Hi ${who!}", false, "read the value with ${who}"},
		{"expression-other", "shell", "command", "echo ${who^^} ${log.stdout#v}", false, "change it in a shell or code step"},
	} {
		t.Run(tc.class+"/"+tc.typ, func(t *testing.T) {
			src := foreignDoc(tc.typ, tc.param, tc.val)
			w, err := workflow.ParseMarkdown([]byte(src), "t.pflow.md")
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, src)
			}
			errs, warns := Validate(context.Background(), w, Options{Catalog: foreignCatalog()})
			pool := errs
			if tc.warn {
				pool = warns
			}
			for _, d := range pool {
				text := d.Message + "\n" + d.Hint
				if d.NodeID == "use" && strings.Contains(text, tc.want) {
					if d.Line != 18 {
						t.Errorf("line %d, want 18 (the param's line)", d.Line)
					}
					return
				}
			}
			t.Errorf("%q: no %s naming %q\nerrors:\n%s\nwarnings:\n%s", tc.val, map[bool]string{false: "error", true: "warning"}[tc.warn], tc.want, dump(errs), dump(warns))
		})
	}
}

// Text that only looks like another tool's syntax stays valid.
func TestForeignSyntaxLeavesShellAndGoTemplatesAlone(t *testing.T) {
	for _, val := range []string{
		"docker inspect --format '{{.State.Status}}' web",
		"echo ${HOME:-/root} ${#PATH} $PATH ${HOME:0:3} ${X-y}",
		"for who in a b; do echo $who; done",
		"echo $${who}",
		"echo ${who}",
		"gh pr list --json title --template '{{range .}}{{.title}}{{end}}'",
	} {
		w, err := workflow.ParseMarkdown([]byte(foreignDoc("shell", "command", val)), "t.pflow.md")
		if err != nil {
			t.Fatal(err)
		}
		errs, warns := Validate(context.Background(), w, Options{Catalog: foreignCatalog()})
		for _, d := range append(errs, warns...) {
			if strings.Contains(d.Message, "pflow does not read") {
				t.Errorf("%q: %s", val, d.Message)
			}
		}
	}
}

// Forms the mutation harness found: a batch's item, a hyphenated step id, a
// shell that mentions the word 'read', a negative index on any name.
func TestForeignSyntaxBatchItemsAndHyphens(t *testing.T) {
	doc := `# T
Test.

## Steps
### make-slug
Make it.
- type: shell
- command: echo a-b

### read
Read.
- type: shell
- command: echo hi

### measure
Measure each word.
- type: shell
- command: 'echo "%s"'

` + "```yaml batch\nitems: [a, b]\nas: word\n```\n"
	for _, tc := range []struct{ cmd, want string }{
		{"{{ word }}", "${word}"},
		{"$word", "${word}"},
		{"${word[-1]}", "no negative indexes"},
		{"${other[-1]}", "no negative indexes"},
		{"$make-slug.stdout ${word}", "${make-slug.stdout}"},
		{"read failed with $read.stdout ${word}", "${read.stdout}"},
		{"defaults (read failed with code $read.stdout) ${word}", "${read.stdout}"},
	} {
		src := fmt.Sprintf(doc, tc.cmd)
		w, err := workflow.ParseMarkdown([]byte(src), "t.pflow.md")
		if err != nil {
			t.Fatalf("%s: %v", tc.cmd, err)
		}
		errs, _ := Validate(context.Background(), w, Options{Catalog: foreignCatalog()})
		found := false
		for _, d := range errs {
			if strings.Contains(d.Message+d.Hint, tc.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: no error naming %q:\n%s", tc.cmd, tc.want, dump(errs))
		}
	}
}

// An expression around another tool's path: the pflow path and the note both
// use the translated path (${log.stdout}, the input who).
func TestForeignExpressionTranslatesThePath(t *testing.T) {
	for val, want := range map[string]string{
		"Hi ${{ steps.log.outputs.stdout || 'none' }}": "- when: ${log.stdout} ?? 'none'",
		"Hi ${inputs.who ?? 'x'}":                      "'- default: x' under '### who'",
	} {
		w, err := workflow.ParseMarkdown([]byte(foreignDoc("llm", "prompt", val)), "t.pflow.md")
		if err != nil {
			t.Fatal(err)
		}
		errs, _ := Validate(context.Background(), w, Options{Catalog: foreignCatalog()})
		found := false
		for _, d := range errs {
			if strings.Contains(d.Hint, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: no fix with %q:\n%s", val, want, dump(errs))
		}
	}
}
