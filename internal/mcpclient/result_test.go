package mcpclient

import (
	"github.com/pflow-go/pflow/internal/node"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Reference §D test_json_text_parsing.py.
func TestParseText(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want any
	}{
		{"object", `{"a": 1, "b": [true, null]}`, map[string]any{"a": int64(1), "b": []any{true, nil}}},
		{"array", `[1, "x"]`, []any{int64(1), "x"}},
		{"malformed stays string", `{"incomplete": `, `{"incomplete": `},
		{"plain text", "hello world", "hello world"},
		{"null", "null", nil},
		{"true", "true", true},
		{"false", "false", false},
		{"int", "42", int64(42)},
		{"float", "3.14", 3.14},
		{"json string", `"string"`, "string"},
		{"empty", "", ""},
		{"whitespace kept", "   \n ", "   \n "},
		{"leading whitespace parsed", "  \n {\"a\": 1}  ", map[string]any{"a": int64(1)}},
		{"multiline", "{\n  \"a\": {\n    \"b\": 2\n  }\n}", map[string]any{"a": map[string]any{"b": int64(2)}}},
		{"unicode", `{"msg": "Hello 世界! 🎉"}`, map[string]any{"msg": "Hello 世界! 🎉"}},
		{"nested quotes", `{"q": "say \"hi\""}`, map[string]any{"q": `say "hi"`}},
		{"text starting with digit", "3 apples", "3 apples"},
		{"python repr dict", `{'a': 1, 'ok': True, 'n': None, 'l': ['x', 2.5]}`, map[string]any{"a": int64(1), "ok": true, "n": nil, "l": []any{"x", 2.5}}},
		{"python repr list", `['a', "b", False]`, []any{"a", "b", false}},
		{"valid JSON preferred", `{"a": "it's"}`, map[string]any{"a": "it's"}},
		{"not a literal", `{'a': foo}`, `{'a': foo}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ParseText(c.in); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ParseText(%q) = %#v, want %#v", c.in, got, c.want)
			}
		})
	}
}

func TestExtractResult(t *testing.T) {
	text := func(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }
	cases := []struct {
		name string
		res  *mcp.CallToolResult
		want Extracted
	}{
		{"structured wins over text", &mcp.CallToolResult{Content: []mcp.Content{text("ignored")}, StructuredContent: map[string]any{"t": 22.5}}, Extracted{Result: map[string]any{"t": 22.5}}},
		{"single text unwrapped", &mcp.CallToolResult{Content: []mcp.Content{text("hi")}}, Extracted{Result: "hi"}},
		{"text JSON parsed", &mcp.CallToolResult{Content: []mcp.Content{text(`{"id": 7}`)}}, Extracted{Result: map[string]any{"id": int64(7)}}},
		{"several blocks as list", &mcp.CallToolResult{Content: []mcp.Content{text("a"), text("b")}}, Extracted{Result: []any{"a", "b"}}},
		{"no content", &mcp.CallToolResult{}, Extracted{Result: []any{}}},
		{"isError with text", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{text("repo not found")}}, Extracted{IsError: true, Message: "repo not found"}},
		{"isError beats structuredContent", &mcp.CallToolResult{IsError: true, StructuredContent: map[string]any{"x": 1}}, Extracted{IsError: true, Message: "Tool execution failed"}},
		{"image passed by type", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}}}, Extracted{Result: map[string]any{"type": "image", "mimeType": "image/png", "data": "AQID"}}},
		{"audio passed by type", &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: []byte{1}, MIMEType: "audio/wav"}}}, Extracted{Result: map[string]any{"type": "audio", "mimeType": "audio/wav", "data": "AQ=="}}},
		{"resource link", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///a", Name: "a"}}}, Extracted{Result: map[string]any{"type": "resource_link", "uri": "file:///a", "name": "a"}}},
		{"embedded text resource keeps text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://x", MIMEType: "text/plain", Text: "body"}}}}, Extracted{Result: map[string]any{"type": "resource", "uri": "demo://x", "mimeType": "text/plain", "text": "body"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ExtractResult(c.res); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ExtractResult = %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestValidateStructured(t *testing.T) {
	tool := &mcp.Tool{Name: "w", OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"t": map[string]any{"type": "number"}}, "required": []any{"t"}}}
	if err := ValidateStructured(tool, &mcp.CallToolResult{StructuredContent: map[string]any{"t": 1.5}}); err != nil {
		t.Fatal(err)
	}
	if err := ValidateStructured(tool, &mcp.CallToolResult{StructuredContent: map[string]any{"t": "hot"}}); err == nil {
		t.Fatal("mismatch accepted")
	}
	if err := ValidateStructured(tool, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}); err == nil {
		t.Fatal("missing structured content accepted")
	}
}

func TestSchemaFields(t *testing.T) {
	schema := map[string]any{"type": "object", "required": []any{"repo"}, "properties": map[string]any{
		"repo":   map[string]any{"type": "string", "description": "owner/name"},
		"count":  map[string]any{"type": "integer", "default": int64(10)},
		"ratio":  map[string]any{"type": "number"},
		"draft":  map[string]any{"type": "boolean"},
		"labels": map[string]any{"type": "array"},
		"meta":   map[string]any{"type": "object", "properties": map[string]any{"k": map[string]any{"type": "string"}}},
		"maybe":  map[string]any{"type": []any{"null", "string"}},
		"union":  map[string]any{"anyOf": []any{map[string]any{"type": "string"}}},
		"state":  map[string]any{"type": "string", "enum": []any{"open", "closed"}},
	}}
	got := map[string]string{}
	for _, f := range SchemaFields(schema) {
		got[f.Key] = f.Type
		if f.Key == "repo" && (!f.Required || f.Description != "owner/name") {
			t.Fatalf("repo %+v", f)
		}
		if f.Key == "count" && f.Default != int64(10) {
			t.Fatalf("count %+v", f)
		}
		if f.Key == "state" && len(f.Enum) != 2 {
			t.Fatalf("state %+v", f)
		}
		if f.Key == "meta" && (len(f.Structure) != 1 || f.Structure[0].Key != "k") {
			t.Fatalf("meta %+v", f)
		}
	}
	want := map[string]string{"repo": "str", "count": "int", "ratio": "float", "draft": "bool", "labels": "list", "meta": "dict", "maybe": "str", "union": "str", "state": "str"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("types %v want %v", got, want)
	}
	if SchemaFields(map[string]any{"type": "object"}) != nil {
		t.Fatal("schema without properties")
	}
}

func FuzzParseText(f *testing.F) {
	for _, s := range []string{`{'a': 1}`, `[1, (2, 3)]`, `{"a": [1]}`, `{'a': '\x41\u00e9'}`, `['\`, `{'a': -1e5}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = ParseText(s) // must not panic
	})
}

// Schemas as servers write them (Pydantic/FastMCP, zod-to-json-schema):
// $ref into $defs or definitions, oneOf/anyOf unions, nullable branches,
// enums behind a $ref, and objects whose fields come from a $ref.
func TestSchemaFieldsResolvesRefsAndUnions(t *testing.T) {
	schema := map[string]any{
		"type": "object",
		"$defs": map[string]any{
			"Format": map[string]any{"type": "string", "enum": []any{"png", "jpeg"}},
			"Box":    map[string]any{"type": "object", "properties": map[string]any{"w": map[string]any{"type": "integer"}}},
		},
		"definitions": map[string]any{"Level": map[string]any{"type": "integer"}},
		"properties": map[string]any{
			"format":  map[string]any{"$ref": "#/$defs/Format", "description": "image format"},
			"box":     map[string]any{"$ref": "#/$defs/Box"},
			"level":   map[string]any{"$ref": "#/definitions/Level"},
			"id":      map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}},
			"opt":     map[string]any{"anyOf": []any{map[string]any{"$ref": "#/$defs/Box"}, map[string]any{"type": "null"}}},
			"remote":  map[string]any{"$ref": "https://example.com/schema.json"},
			"unknown": map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{}}},
		},
	}
	got := map[string]node.Field{}
	for _, f := range SchemaFields(schema) {
		got[f.Key] = f
	}
	for k, want := range map[string]string{"format": "str", "box": "dict", "level": "int", "id": "str|int", "opt": "dict", "remote": "any", "unknown": "any"} {
		if got[k].Type != want {
			t.Errorf("%s: type %q, want %q", k, got[k].Type, want)
		}
	}
	if f := got["format"]; len(f.Enum) != 2 || f.Description != "image format" {
		t.Errorf("format keeps its enum from the $ref and its own description: %+v", f)
	}
	if f := got["box"]; len(f.Structure) != 1 || f.Structure[0].Key != "w" || f.Structure[0].Type != "int" {
		t.Errorf("box fields come from the $ref: %+v", f)
	}
	// A schema that refers to itself ends.
	self := map[string]any{"type": "object", "$defs": map[string]any{"N": map[string]any{"$ref": "#/$defs/N"}},
		"properties": map[string]any{"n": map[string]any{"$ref": "#/$defs/N"}}}
	if f := SchemaFields(self); len(f) != 1 || f[0].Type != "any" {
		t.Errorf("self-reference: %+v", f)
	}
}
