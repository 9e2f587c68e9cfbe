package app

import (
	"context"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/registry"
)

// A tool whose params are written with $ref/$defs and oneOf (as Pydantic and
// zod servers write them) has its literal params checked statically like
// any other: a wrong enum value or type is
// named before anything runs, with the param and what it expects.
func TestLiteralParamsOfRefSchemasAreChecked(t *testing.T) {
	a, _ := testApp(t)
	ctx := context.Background()
	schema := map[string]any{
		"type":     "object",
		"required": []any{"format"},
		"$defs": map[string]any{
			"Format": map[string]any{"type": "string", "enum": []any{"png", "jpeg"}},
			"Box":    map[string]any{"type": "object", "properties": map[string]any{"w": map[string]any{"type": "integer"}}},
		},
		"properties": map[string]any{
			"format":  map[string]any{"$ref": "#/$defs/Format"},
			"quality": map[string]any{"oneOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "null"}}},
			"clip":    map[string]any{"$ref": "#/$defs/Box"},
		},
	}
	entries, _ := mcpclient.RegistryEntries("browser", []*mcp.Tool{{Name: "screenshot", InputSchema: schema}})
	if err := a.RegistryStore().Update(ctx, func(f *registry.File) error {
		for k, e := range entries {
			f.Nodes[k] = e
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(t.TempDir(), "shot.pflow.md")
	write := func(params string) *RunOutcome {
		os.WriteFile(wf, []byte("# Shot\nTakes a screenshot.\n\n## Steps\n\n### shot\nShoot.\n- type: mcp-browser-screenshot\n"+params+"\n"), 0o644)
		tg, err := a.ResolveTarget(wf)
		if err != nil {
			t.Fatal(err)
		}
		out, err := a.Run(ctx, RunRequest{Target: tg, ValidateOnly: true, NoTrace: true})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := write("- format: png\n- quality: 80\n- clip: {w: 3}"); len(out.ValidationErrors) != 0 {
		t.Fatalf("a valid call: %+v", out.ValidationErrors)
	}
	for _, c := range []struct{ params, want string }{
		{"- format: gif", "gif"},
		{"- format: png\n- quality: high", "quality"},
		{"- format: png\n- clip: full", "clip"},
	} {
		out := write(c.params)
		var msgs []string
		for _, d := range out.ValidationErrors {
			msgs = append(msgs, d.Message+" "+d.Hint)
		}
		if len(msgs) == 0 || !strings.Contains(strings.Join(msgs, "\n"), c.want) {
			t.Errorf("%q: want an error naming %q, got %q", c.params, c.want, msgs)
		}
	}
}

// An unknown param is an error, except for a tool whose schema says it takes
// more than it lists (additionalProperties): that is in its spec.
func TestExtraParamsOnlyWhereTheSchemaAllowsThem(t *testing.T) {
	a, _ := testApp(t)
	ctx := context.Background()
	strict := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}, "additionalProperties": false}
	open := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}, "additionalProperties": true}
	entries, _ := mcpclient.RegistryEntries("api", []*mcp.Tool{{Name: "strict", InputSchema: strict}, {Name: "open", InputSchema: open}})
	if !entries["mcp-api-open"].Interface.ExtraParams || entries["mcp-api-strict"].Interface.ExtraParams {
		t.Fatalf("extra params: open %v strict %v", entries["mcp-api-open"].Interface.ExtraParams, entries["mcp-api-strict"].Interface.ExtraParams)
	}
	a.RegistryStore().Update(ctx, func(f *registry.File) error {
		for k, e := range entries {
			f.Nodes[k] = e
		}
		return nil
	})
	wf := filepath.Join(t.TempDir(), "x.pflow.md")
	for _, c := range []struct {
		tool  string
		valid bool
	}{{"strict", false}, {"open", true}} {
		os.WriteFile(wf, []byte("# X\nCalls it.\n\n## Steps\n\n### call\nCall.\n- type: mcp-api-"+c.tool+"\n- q: x\n- limit: 5\n"), 0o644)
		tg, _ := a.ResolveTarget(wf)
		out, err := a.Run(ctx, RunRequest{Target: tg, ValidateOnly: true, NoTrace: true})
		if err != nil {
			t.Fatal(err)
		}
		if valid := len(out.ValidationErrors) == 0; valid != c.valid {
			t.Errorf("%s with an unlisted param: valid=%v, want %v (%+v)", c.tool, valid, c.valid, out.ValidationErrors)
		}
	}
}
