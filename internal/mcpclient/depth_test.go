package mcpclient

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestResultTooDeep(t *testing.T) {
	nested := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	textResult := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	deepValue := func(n int) any {
		var v any = []any{}
		for i := 1; i < n; i++ {
			v = []any{v}
		}
		return v
	}
	for _, c := range []struct {
		name string
		res  *mcp.CallToolResult
		want bool
	}{
		{"9,000-level text", textResult(nested(9000)), true},
		{"513-level text", textResult(nested(MaxResultDepth + 1)), true},
		{"512-level text", textResult(nested(MaxResultDepth)), false},
		{"brackets inside a JSON string", textResult(`{"s": "` + strings.Repeat("[", 5000) + `"}`), false},
		{"escaped quote inside a string", textResult(`["a\"` + strings.Repeat("[", 5000) + `"]`), false},
		{"plain text", textResult(strings.Repeat("[", 5000)[:1] + " not json " + strings.Repeat("x", 5000)), false},
		{"9,000-level structuredContent", &mcp.CallToolResult{StructuredContent: map[string]any{"x": deepValue(9000)}}, true},
		{"512-level structuredContent", &mcp.CallToolResult{StructuredContent: deepValue(MaxResultDepth)}, false},
		{"513-level structuredContent", &mcp.CallToolResult{StructuredContent: deepValue(MaxResultDepth + 1)}, true},
	} {
		if got := ResultTooDeep(c.res); got != c.want {
			t.Errorf("%s: ResultTooDeep = %v, want %v", c.name, got, c.want)
		}
	}
}
