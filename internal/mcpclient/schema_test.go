package mcpclient

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/value"
)

func searchTool() *mcp.Tool {
	schema, _ := value.DecodeJSON([]byte(`{
		"type": "object",
		"properties": {
			"query": {"type": "string", "minLength": 2},
			"limit": {"type": "integer", "maximum": 50},
			"mode": {"type": "string", "enum": ["fast", "full"]},
			"tags": {"type": "array", "items": {"type": "string"}}
		},
		"required": ["query"]
	}`))
	return &mcp.Tool{Name: "search", InputSchema: schema}
}

// The session's compiled schema must behave exactly like CoerceArgs: same
// coercions, same errors naming the param and the tool.
func TestSessionCoerceArgsMatchesCoerceArgs(t *testing.T) {
	tool := searchTool()
	tests := []struct {
		name    string
		args    map[string]any
		want    map[string]any
		wantErr string
	}{
		{"coerces string to integer", map[string]any{"query": "go", "limit": "5"}, map[string]any{"query": "go", "limit": int64(5)}, ""},
		{"coerces number to string", map[string]any{"query": int64(42)}, map[string]any{"query": "42"}, ""},
		{"parses a JSON list", map[string]any{"query": "go", "tags": `["a","b"]`}, map[string]any{"query": "go", "tags": []any{"a", "b"}}, ""},
		{"keeps unknown params", map[string]any{"query": "go", "extra": true}, map[string]any{"query": "go", "extra": true}, ""},
		{"missing required", map[string]any{"limit": int64(1)}, nil, "parameter 'query' of tool 'search' is required but missing"},
		{"wrong type", map[string]any{"query": "go", "limit": "many"}, nil, "parameter 'limit' of tool 'search' expects an integer, got str"},
		{"enum", map[string]any{"query": "go", "mode": "slow"}, nil, "parameter 'mode' of tool 'search' must be one of: fast, full"},
		{"full schema validation (maximum)", map[string]any{"query": "go", "limit": int64(99)}, nil, "Invalid params: arguments for tool 'search' do not match its input schema"},
		{"full schema validation (minLength)", map[string]any{"query": "g"}, nil, "arguments for tool 'search' do not match its input schema"},
	}
	s := &Session{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for round := 0; round < 2; round++ { // the second round uses the cached schema
				got, err := s.CoerceArgs(tool, tt.args)
				plain, perr := CoerceArgs(tool.Name, tool.InputSchema, tt.args)
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("round %d: error = %v, want it to contain %q", round, err, tt.wantErr)
					}
					if perr == nil || perr.Error() != err.Error() {
						t.Fatalf("round %d: CoerceArgs error %v differs from the session's %v", round, perr, err)
					}
					continue
				}
				if err != nil || perr != nil {
					t.Fatalf("round %d: unexpected errors %v / %v", round, err, perr)
				}
				if value.Stringify(got) != value.Stringify(tt.want) || value.Stringify(plain) != value.Stringify(tt.want) {
					t.Fatalf("round %d: got %v / %v, want %v", round, got, plain, tt.want)
				}
			}
		})
	}
}

// Resolving a schema with jsonschema-go costs far more than checking the
// arguments: a session must do it once per tool, not once per call.
func TestSessionCompilesToolSchemasOnce(t *testing.T) {
	tool := searchTool()
	tool.OutputSchema = map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	s := &Session{}
	first := s.compiled(tool)
	if first.input.resolved == nil || first.output == nil {
		t.Fatal("schemas did not resolve")
	}
	if s.compiled(tool) != first {
		t.Fatal("the second call compiled the schemas again")
	}
	args := map[string]any{"query": "go", "limit": "5"}
	cached := testing.AllocsPerRun(50, func() { s.CoerceArgs(tool, args) })
	uncached := testing.AllocsPerRun(50, func() { CoerceArgs(tool.Name, tool.InputSchema, args) })
	if cached*3 > uncached {
		t.Fatalf("a cached call allocates %.0f times, an uncached one %.0f: the session is not reusing the compiled schema", cached, uncached)
	}
	res := &mcp.CallToolResult{StructuredContent: map[string]any{"n": "x"}}
	if err := s.ValidateStructured(tool, res); err == nil || !strings.Contains(err.Error(), "Invalid structured content returned by tool search") {
		t.Fatalf("ValidateStructured = %v", err)
	}
	if err := s.ValidateStructured(tool, &mcp.CallToolResult{StructuredContent: map[string]any{"n": 3.0}}); err != nil {
		t.Fatalf("conforming content rejected: %v", err)
	}
}

func TestJSONInstanceMatchesRoundTrip(t *testing.T) {
	in := map[string]any{"i": int64(3), "f": 1.5, "l": []any{int64(1), "x", nil, true}, "m": map[string]any{"k": int64(-2)}}
	got := jsonInstance(in).(map[string]any)
	if got["i"] != 3.0 || got["l"].([]any)[0] != 1.0 || got["m"].(map[string]any)["k"] != -2.0 {
		t.Fatalf("integers not converted to float64: %#v", got)
	}
	if _, ok := in["i"].(int64); !ok {
		t.Fatal("jsonInstance modified its input")
	}
}

func BenchmarkCoerceArgs(b *testing.B) {
	tool := searchTool()
	args := map[string]any{"query": "go", "limit": "5"}
	b.Run("uncached", func(b *testing.B) {
		for b.Loop() {
			CoerceArgs(tool.Name, tool.InputSchema, args)
		}
	})
	b.Run("session", func(b *testing.B) {
		s := &Session{}
		for b.Loop() {
			s.CoerceArgs(tool, args)
		}
	})
}

// A long value in a coercion error is cut at a rune boundary (it was cut at
// byte 57 even inside a character, which Quote then showed as \x bytes).
func TestShortValueCutsAtARune(t *testing.T) {
	if got, want := shortValue(strings.Repeat("a", 56)+"é and more"), `"`+strings.Repeat("a", 56)+`..."`; got != want {
		t.Errorf("shortValue = %s, want %s", got, want)
	}
}
