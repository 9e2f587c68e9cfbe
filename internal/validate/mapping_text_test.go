package validate

import (
	"context"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/workflow"
)

// mappingTextCatalog is testCatalog with an MCP tool add{a, b: number} and
// an http node.
func mappingTextCatalog() fakeCatalog {
	c := testCatalog()
	c["mcp-calc-add"] = &node.Spec{Type: "mcp-calc-add", Interface: node.Interface{
		Params:  []node.Field{{Key: "a", Type: "float", Required: true}, {Key: "b", Type: "float", Required: true}},
		Outputs: []node.Field{{Key: "result", Type: "any"}},
	}}
	c["http"] = &node.Spec{Type: "http", Interface: node.Interface{
		Params:  []node.Field{{Key: "url", Type: "str", Required: true}, {Key: "headers", Type: "dict"}},
		Outputs: []node.Field{{Key: "response", Type: "any"}},
	}}
	return c
}

// TestTextWhereAMappingBelongs: a step key given text where a mapping
// belongs (an MCP step's args, a dict param, a batch) gets one message, the
// mapping the text lists shown as the line that works, and no message that
// says the opposite (the arguments are missing, args is unknown, the step
// has no batch).
func TestTextWhereAMappingBelongs(t *testing.T) {
	cases := []struct {
		name, step string
		want       []string
	}{
		{"mcp args", "- type: mcp-calc-add\n- args: \"a=19 b=23\"\n", []string{"'args' must map the tool's argument names to values, got the text \"a=19 b=23\"", "'- args: {a: 19, b: 23}'"}},
		{"mcp args colons", "- type: mcp-calc-add\n- args: \"a: 19, b: 23\"\n", []string{"'- args: {a: 19, b: 23}'"}},
		{"mcp args list", "- type: mcp-calc-add\n- args: [19, 23]\n", []string{"got a list", "'- args: {a: ..., b: ...}'"}},
		{"headers", "- type: http\n- url: https://x.example\n- headers: \"Accept=application/json X-Key=1\"\n", []string{"parameter 'headers'", "- headers: {Accept: application/json, X-Key: 1}"}},
		{"batch", "- type: shell\n- command: echo ${f}\n- batch: \"items=${list.stdout} as=f\"\n", []string{"batch block: expects a mapping", "'- batch: {items: ${list.stdout}, as: f}'"}},
		{"batch item", "- type: shell\n- command: echo ${item}\n- batch: \"items=[1,2]\"\n", []string{"batch block: expects a mapping", "```yaml batch"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "# W\nW.\n\n## Steps\n\n### list\nLists.\n- type: shell\n- command: ls\n\n### a\nDoes a.\n" + c.step
			w, err := workflow.ParseMarkdown([]byte(src), "w.pflow.md")
			if err != nil {
				t.Fatal(err)
			}
			errs, _ := Validate(context.Background(), w, Options{Catalog: mappingTextCatalog()})
			if len(errs) != 1 {
				t.Fatalf("%d errors, want one coherent message:\n%s", len(errs), dump(errs))
			}
			text := errs[0].Message + "\n" + errs[0].Hint
			for _, want := range c.want {
				if !strings.Contains(text, want) {
					t.Errorf("message lacks %q:\n%s", want, text)
				}
			}
		})
	}
}
