package mcpclient

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/value"
)

// Extracted is a tool call's outcome (see docs/decisions.md, "Result extraction").
type Extracted struct {
	// Result is the value for ${node.result}.
	Result any
	// IsError is set for isError results; Message is then the tool's text.
	IsError bool
	Message string
}

// ExtractResult applies docs/decisions.md, "Result extraction":
// structuredContent wins (unless isError), else
// the content blocks — text JSON-parsed when it looks like JSON, a single
// block unwrapped; image/audio/resource blocks passed on by type, never
// decoded.
func ExtractResult(res *mcp.CallToolResult) Extracted {
	if res == nil {
		return Extracted{}
	}
	if res.IsError {
		msg := ""
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok && strings.TrimSpace(t.Text) != "" {
				msg = t.Text
				break
			}
		}
		if msg == "" {
			msg = "Tool execution failed"
		}
		return Extracted{IsError: true, Message: msg}
	}
	if res.StructuredContent != nil {
		return Extracted{Result: value.Normalize(toCanonical(res.StructuredContent))}
	}
	items := make([]any, 0, len(res.Content))
	for _, c := range res.Content {
		items = append(items, block(c))
	}
	switch len(items) {
	case 0:
		return Extracted{Result: []any{}}
	case 1:
		return Extracted{Result: items[0]}
	}
	return Extracted{Result: items}
}

func toCanonical(v any) any {
	switch v.(type) {
	case map[string]any, []any, string, bool, nil, float64, int64:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	out, err := value.DecodeJSON(b)
	if err != nil {
		return string(b)
	}
	return out
}

func block(c mcp.Content) any {
	switch x := c.(type) {
	case *mcp.TextContent:
		return ParseText(x.Text)
	case *mcp.ImageContent:
		return map[string]any{"type": "image", "mimeType": x.MIMEType, "data": base64.StdEncoding.EncodeToString(x.Data)}
	case *mcp.AudioContent:
		return map[string]any{"type": "audio", "mimeType": x.MIMEType, "data": base64.StdEncoding.EncodeToString(x.Data)}
	case *mcp.ResourceLink:
		m := map[string]any{"type": "resource_link", "uri": x.URI, "name": x.Name}
		if x.MIMEType != "" {
			m["mimeType"] = x.MIMEType
		}
		if x.Description != "" {
			m["description"] = x.Description
		}
		return m
	case *mcp.EmbeddedResource:
		m := map[string]any{"type": "resource"}
		if r := x.Resource; r != nil {
			m["uri"] = r.URI
			if r.MIMEType != "" {
				m["mimeType"] = r.MIMEType
			}
			if r.Blob != nil {
				m["data"] = base64.StdEncoding.EncodeToString(r.Blob)
			} else {
				m["text"] = r.Text
			}
		}
		return m
	}
	return toCanonical(c)
}

// ParseText parses a text block that looks like JSON (object, array,
// string, number, true/false/null); anything else — or JSON that does not
// parse — is kept as the original text.
func ParseText(s string) any {
	t := strings.TrimSpace(s)
	if t == "" {
		return s
	}
	switch c := t[0]; {
	case c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9'), t == "true", t == "false", t == "null":
		if len(t) > value.MaxAutoParse*8 {
			return s
		}
		v, err := value.DecodeJSON([]byte(t))
		if err == nil {
			return v
		}
		if c == '{' || c == '[' {
			// A non-compliant server returned a Python repr (str(dict)).
			if v, ok := parsePythonRepr(t); ok {
				return v
			}
		}
	}
	return s
}

// ValidateStructured checks structuredContent against the tool's
// outputSchema (the SDK does not). A nil error means it conforms or
// there is nothing to check. It resolves the schema on every call; a
// session resolves each tool's output schema once (Session.ValidateStructured).
func ValidateStructured(tool *mcp.Tool, res *mcp.CallToolResult) error {
	if tool == nil || tool.OutputSchema == nil {
		return nil
	}
	return validateStructured(tool, res, compileOutputSchema(tool.OutputSchema))
}

// compileOutputSchema resolves an outputSchema; nil when it does not resolve
// (an unusable schema is the server's problem; calls do not fail on it).
func compileOutputSchema(schema any) *jsonschema.Resolved {
	rs, err := resolveSchema(schema)
	if err != nil {
		return nil
	}
	return rs
}

func validateStructured(tool *mcp.Tool, res *mcp.CallToolResult, rs *jsonschema.Resolved) error {
	if tool == nil || tool.OutputSchema == nil || res == nil || res.IsError {
		return nil
	}
	if res.StructuredContent == nil {
		return fmt.Errorf("Tool %s has an output schema but did not return structured content", tool.Name)
	}
	if rs == nil {
		return nil
	}
	inst := jsonInstance(res.StructuredContent)
	if err := rs.Validate(inst); err != nil {
		return fmt.Errorf("Invalid structured content returned by tool %s: %v", tool.Name, err)
	}
	return nil
}

func resolveSchema(schema any) (*jsonschema.Resolved, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false})
}

// jsonInstance converts a value to the plain encoding/json model
// (float64 numbers) the validator expects. Canonical values are converted
// directly; anything else takes a JSON round trip.
func jsonInstance(v any) any {
	if out, ok := jsonModel(v); ok {
		return out
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// jsonModel converts the canonical value model (value package) to the
// encoding/json one: integers become float64, as a JSON round trip would
// make them. ok is false for any other Go type.
func jsonModel(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, string:
		return v, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false // not JSON: let the round trip decide
		}
		return v, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := jsonModel(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := jsonModel(e)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	}
	return nil, false
}
