package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// TestToolSchemasEveryHostAccepts checks every tool's input schema against
// the tool-schema rules of the major LLM APIs (Gemini
// rejects a property with several types): a top-level object with typed
// properties, one type per property at every depth, arrays with items, and
// no combinators (anyOf/oneOf/allOf/not) at the top level.
func TestToolSchemasEveryHostAccepts(t *testing.T) {
	// With a saved workflow of every input type published as a tool too.
	f := newFixture(t, nil, func(o *Options) { o.WorkflowTools = true })
	typed := "# Typed\nEvery input type.\n\n## Inputs\n\n"
	for _, ty := range []string{"string", "integer", "number", "boolean", "array", "object"} {
		typed += "### " + ty + "_in\nA " + ty + ".\n- type: " + ty + "\n- required: false\n\n"
	}
	typed += "## Steps\n\n### s\nSay.\n- type: shell\n- command: echo \"${string_in} ${integer_in} ${number_in} ${boolean_in}\" '${array_in}' '${object_in}'\n"
	f.call("workflow_save", map[string]any{"workflow_file": typed, "name": "typed", "description": "Every input type."}).mustOK(t)
	f.srv.syncWorkflowTools()
	res, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 17 {
		t.Fatalf("%d tools, want the 16 and the typed workflow", len(res.Tools))
	}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var s map[string]any
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if s["type"] != "object" {
			t.Errorf("%s: top-level type %v, want object", tool.Name, s["type"])
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf", "not"} {
			if _, ok := s[k]; ok {
				t.Errorf("%s: top-level %s", tool.Name, k)
			}
		}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			for _, problem := range schemaProblems(p) {
				// A workflow's list input declares no item type: its items
				// are any JSON value (docs/mcp-server.md says so).
				if tool.Name == "typed" && name == "array_in" && problem == "no type" {
					continue
				}
				t.Errorf("%s: property %s: %s", tool.Name, name, problem)
			}
		}
	}
}

// schemaProblems lists what a host's validator would refuse in a property
// schema, at any depth.
func schemaProblems(v any) []string {
	p, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("not a schema object: %v", v)}
	}
	var out []string
	typ, has := p["type"]
	switch x := typ.(type) {
	case string:
		if x == "array" {
			if _, ok := p["items"]; !ok {
				out = append(out, "an array without items")
			} else {
				out = append(out, schemaProblems(p["items"])...)
			}
		}
		if x == "object" {
			if sub, ok := p["properties"].(map[string]any); ok {
				for k, sp := range sub {
					for _, pr := range schemaProblems(sp) {
						out = append(out, k+": "+pr)
					}
				}
			}
		}
	case []any:
		out = append(out, fmt.Sprintf("several types %v", x))
	default:
		if !has {
			out = append(out, "no type")
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if _, ok := p[k]; ok {
			out = append(out, "uses "+k)
		}
	}
	return out
}
