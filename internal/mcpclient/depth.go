package mcpclient

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxResultDepth is how deeply arrays and objects may nest in a tool's
// result (structuredContent, or a text block holding JSON). A deeper result
// is refused before it is validated, parsed or stored: every later step of
// a run (outputs, templates, records, traces) walks values level by level,
// and a result of a few kilobytes nested thousands of levels deep
// ([[[[...]]]]) would cost seconds and hundreds of megabytes there.
const MaxResultDepth = 512

// ResultTooDeep reports whether res nests arrays or objects more than
// MaxResultDepth levels deep, in its structuredContent or in a text block
// that holds JSON. It looks no deeper than MaxResultDepth+1 levels, so it
// costs little whatever the result.
func ResultTooDeep(res *mcp.CallToolResult) bool {
	if res == nil {
		return false
	}
	if res.StructuredContent != nil && valueDeeper(res.StructuredContent, MaxResultDepth) {
		return true
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && textDeeper(t.Text, MaxResultDepth) {
			return true
		}
	}
	return false
}

// valueDeeper reports whether v nests containers more than max levels.
func valueDeeper(v any, max int) bool {
	switch x := v.(type) {
	case map[string]any:
		if max == 0 {
			return true
		}
		for _, e := range x {
			if valueDeeper(e, max-1) {
				return true
			}
		}
	case []any:
		if max == 0 {
			return true
		}
		for _, e := range x {
			if valueDeeper(e, max-1) {
				return true
			}
		}
	}
	return false
}

// textDeeper reports whether the JSON-looking text s opens more than max
// brackets or braces at once (those inside strings do not count). Text that
// is not JSON is judged the same way: ParseText would try it as JSON or as
// a Python repr.
func textDeeper(s string, max int) bool {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '[' && t[0] != '{') || len(t) <= 2*max {
		return false // fewer bytes than max+1 levels need
	}
	depth := 0
	var quote byte
	for i := 0; i < len(t); i++ {
		c := t[i]
		if quote != 0 {
			switch c {
			case '\\':
				i++
			case quote:
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			quote = c
		case '[', '{':
			depth++
			if depth > max {
				return true
			}
		case ']', '}':
			depth--
		}
	}
	return false
}
