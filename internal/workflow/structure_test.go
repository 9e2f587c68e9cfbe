package workflow

import (
	"strings"
	"testing"
)

func TestCheckStructure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string
		want []StructureError // exact list, in order
	}{
		{
			name: "valid minimal",
			json: `{"ir_version":"0.1.0","nodes":[{"id":"a","type":"shell"}]}`,
		},
		{
			name: "valid full",
			json: `{"ir_version":"0.1.0","nodes":[{"id":"a","type":"shell","purpose":"p","params":{"x":1},"batch":{"items":"${x.y}","as":"f","error_handling":"continue","parallel":true,"max_concurrent":100,"max_retries":10,"retry_wait":0},"_source_lines":{"command":3}},{"id":"b","type":"shell"}],
				"edges":[{"from":"a","to":"b","action":"error"}],"start_node":"a","mappings":{"a":{"input_mappings":{"m":"s"},"output_mappings":{"o":"r"}}},
				"inputs":{"x":{"description":"d","required":false,"type":"string","default":"v","stdin":true}},
				"outputs":{"y":{"description":"d","type":"dict","source":"${a.stdout}"}},"enable_namespacing":false,"template_resolution_mode":"permissive"}`,
		},
		{
			name: "missing nodes",
			json: `{"ir_version":"0.1.0"}`,
			want: []StructureError{{"root", "'nodes' is a required property", "Add the required field 'nodes'"}},
		},
		{
			name: "empty nodes",
			json: `{"ir_version":"0.1.0","nodes":[]}`,
			want: []StructureError{{"nodes", "[] is too short", "Add at least one node to the workflow"}},
		},
		{
			name: "bad ir_version",
			json: `{"ir_version":"1.0","nodes":[{"id":"a","type":"shell"}]}`,
			want: []StructureError{{"ir_version", `'1.0' does not match '^\d+\.\d+\.\d+$'`, "Use semantic versioning format, e.g., '0.1.0'"}},
		},
		{
			name: "node missing type and wrong id type",
			json: `{"nodes":[{"id":5}]}`,
			want: []StructureError{
				{"nodes[0].id", "5 is not of type 'string'", "Change type from 'integer' to 'string'"},
				{"nodes[0]", "'type' is a required property", "Add the required field 'type'"},
				{"nodes[0]", "'id' is a required property", "Add the required field 'id'"},
			},
		},
		{
			name: "unknown properties everywhere",
			json: `{"nodes":[{"id":"a","type":"t","params":{},"parameters":{},"inputs":{}}],"edges":[{"from":"a","to":"a","source":"a"}],"extra":1,"inputs":{"i":{"typ":"string"}}}`,
			want: []StructureError{
				{"root", "Additional properties are not allowed ('extra' was unexpected)", "Remove unknown properties or check field names (valid keys here: ir_version, nodes, edges, start_node, mappings, inputs, outputs, enable_namespacing, template_resolution_mode, parallel)"},
				{"nodes[0]", "Additional properties are not allowed ('inputs', 'parameters' were unexpected)", "'inputs': a step's params and controls go inside \"params\": {\"inputs\": ...}.\n'parameters': did you mean 'params'?\nValid keys here: id, type, purpose, params, batch"},
				{"edges[0]", "Additional properties are not allowed ('source' was unexpected)", "Remove unknown properties or check field names (valid keys here: from, to, action)"},
				{"inputs.i", "Additional properties are not allowed ('typ' was unexpected)", "'typ': did you mean 'type'?\nValid keys here: description, required, type, default, stdin, env"},
			},
		},
		{
			name: "edges to unknown nodes and duplicates",
			json: `{"nodes":[{"id":"a","type":"t"},{"id":"b","type":"t"},{"id":"a","type":"t"}],"edges":[{"from":"a","to":"zz"},{"from":"q","to":"b"}]}`,
			want: []StructureError{
				{"nodes[2].id", "Duplicate node ID 'a'", "Node IDs must be unique; 'nodes[0]' already uses 'a'. Rename one of them."},
				{"edges[0].to", "Edge references non-existent node 'zz'", "Change to one of: ['a', 'b']"},
				{"edges[1].from", "Edge references non-existent node 'q'", "Change to one of: ['a', 'b']"},
			},
		},
		{
			name: "batch limits",
			json: `{"nodes":[{"id":"a","type":"t","batch":{"items":"files","as":"1x","error_handling":"skip","max_concurrent":0,"max_retries":11,"retry_wait":-1}},{"id":"b","type":"t","batch":{"items":[]}},{"id":"c","type":"t","batch":{"max_concurrent":101,"parallel":"yes"}}]}`,
			want: []StructureError{
				{"nodes[0].batch.max_concurrent", "0 is less than the minimum of 1", "Use a whole number from 1 to 100"},
				{"nodes[0].batch.max_retries", "11 is greater than the maximum of 10", "Use a whole number from 1 to 10"},
				{"nodes[2].batch", "'items' is a required property", "Add the required field 'items'"},
				{"nodes[2].batch.parallel", "'yes' is not of type 'boolean'", "Change type from 'string' to 'boolean'"},
				{"nodes[2].batch.max_concurrent", "101 is greater than the maximum of 100", "Use a whole number from 1 to 100"},
				{"nodes[0].batch.items", `'files' does not match '^\$\{.+\}$'`, "Use a template reference like '${previous_node.items}', or an inline list"},
				{"nodes[0].batch.as", `'1x' does not match '^[a-zA-Z_][a-zA-Z0-9_]*$'`, "Use a simple identifier such as 'item' or 'file'"},
				{"nodes[0].batch.error_handling", "'skip' is not one of ['fail_fast', 'continue']", "Use 'fail_fast' (stop at the first failed item) or 'continue'"},
				{"nodes[0].batch.retry_wait", "-1 is less than the minimum of 0", "Use a number of seconds ≥ 0"},
				{"nodes[1].batch.items", "[] is too short", "Provide at least one item, or a template reference like '${previous_node.items}'"},
			},
		},
		{
			name: "wrong types for objects, ints and bools",
			json: `{"nodes":[{"id":"a","type":"t","params":[1],"purpose":3,"_source_lines":{"c":"x"}}],"edges":"none","enable_namespacing":"no","inputs":{"i":{"required":"yes","stdin":1,"default":null}},"mappings":{"a":{"input_mappings":{"p":1}}}}`,
			want: []StructureError{
				{"nodes[0].purpose", "3 is not of type 'string'", "Change type from 'integer' to 'string'"},
				{"nodes[0].params", "[1] is not of type 'object'", "Change type from 'array' to 'object'"},
				{"nodes[0]._source_lines.c", "'x' is not of type 'integer'", "Change type from 'string' to 'integer'"},
				{"edges", "'none' is not of type 'array'", "Change type from 'string' to 'array'"},
				{"mappings.a.input_mappings.p", "1 is not of type 'string'", "Change type from 'integer' to 'string'"},
				{"inputs.i.required", "'yes' is not of type 'boolean'", "Change type from 'string' to 'boolean'"},
				{"inputs.i.stdin", "1 is not of type 'boolean'", "Change type from 'integer' to 'boolean'"},
				{"enable_namespacing", "'no' is not of type 'boolean'", "Change type from 'string' to 'boolean'"},
			},
		},
		{
			name: "array elements that are not objects",
			json: `{"nodes":[{"id":"a","type":"t"},"b"],"edges":[1]}`,
			want: []StructureError{
				{"nodes[1]", "'b' is not of type 'object'", "Change type from 'string' to 'object'"},
				{"edges[0]", "1 is not of type 'object'", "Change type from 'integer' to 'object'"},
			},
		},
		{
			name: "declarations that are not objects",
			json: `{"nodes":[{"id":"a","type":"t"}],"inputs":[1],"outputs":{"o":"x"}}`,
			want: []StructureError{
				{"inputs", "[1] is not of type 'object'", "Change type from 'array' to 'object'"},
				{"outputs.o", "'x' is not of type 'object'", "Change type from 'string' to 'object'"},
			},
		},
		{
			name: "input and output type enum",
			json: `{"nodes":[{"id":"a","type":"t"}],"inputs":{"i":{"type":"text"}},"outputs":{"o":{"type":"json"}}}`,
			want: []StructureError{
				{"inputs.i.type", "'text' is not one of ['string', 'number', 'boolean', 'object', 'array', 'str', 'int', 'integer', 'float', 'bool', 'dict', 'list']", "Valid types: string, number, boolean, object, array, str, int, integer, float, bool, dict, list"},
				{"outputs.o.type", "'json' is not one of ['string', 'number', 'boolean', 'object', 'array', 'str', 'int', 'integer', 'float', 'bool', 'dict', 'list']", "Valid types: string, number, boolean, object, array, str, int, integer, float, bool, dict, list"},
			},
		},
		{
			name: "start node, mappings, resolution mode",
			json: `{"nodes":[{"id":"a","type":"t"}],"start_node":"b","mappings":{"zz":{"input_mappings":{"p":"s"}}},"template_resolution_mode":"lenient"}`,
			want: []StructureError{
				{"start_node", "start_node references non-existent node 'b'", "Change to one of: ['a']"},
				{"mappings.zz", "Mapping references non-existent node 'zz'", "Change to one of: ['a']"},
				{"template_resolution_mode", "'lenient' is not one of ['strict', 'permissive']", "Use 'strict' or 'permissive'"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ParseJSON([]byte(tt.json), "")
			if err != nil {
				t.Fatalf("ParseJSON: %v", err)
			}
			got := w.CheckStructure()
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(got), len(tt.want), render(got))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("error %d:\n got  %#v\n want %#v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestOutputValueKeySuggestsSource(t *testing.T) {
	t.Parallel()
	w, err := ParseJSON([]byte(`{"nodes":[{"id":"a","type":"t"}],"outputs":{"o":{"value":"${a.x}"}}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	errs := w.CheckStructure()
	if len(errs) != 1 || errs[0].Path != "outputs.o" || !strings.Contains(errs[0].Suggestion, "Use 'source' instead of 'value'") {
		t.Fatalf("got %s", render(errs))
	}
}

func TestCheckStructureInProcess(t *testing.T) {
	t.Parallel()
	w := &Workflow{Nodes: []*Node{{ID: "a"}, nil}, Edges: []Edge{{From: "a"}}}
	got := w.CheckStructure()
	want := []StructureError{
		{"root", "'ir_version' is a required property", "Add the required field 'ir_version'"},
		{"nodes[0]", "'type' is a required property", "Add the required field 'type'"},
		{"nodes[1]", "None is not of type 'object'", "Change type from 'null' to 'object'"},
		{"edges[0]", "'to' is a required property", "Add the required field 'to'"},
	}
	if render(got) != render(want) {
		t.Fatalf("got:\n%s\nwant:\n%s", render(got), render(want))
	}
}

func render(errs []StructureError) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error())
		b.WriteString("\n---\n")
	}
	return b.String()
}

func TestLineOf(t *testing.T) {
	t.Parallel()
	_, err := ParseMarkdown([]byte("# T\n## Inputs\n### in.x\nIn.\n## Steps\n### a\nA.\n- type: shell\n### b\nB.\n- type: shell\n## Outputs\n### out\nO.\n"), "")
	if err == nil {
		t.Fatalf("dotted input id should be rejected")
	}
	w, err := ParseMarkdown([]byte("# T\n## Inputs\n### in_x\nIn.\n## Steps\n### a\nA.\n- type: shell\n### b\nB.\n- type: shell\n- input_mappings: {p: q}\n## Outputs\n### out\nO.\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		"nodes[1].batch.items": 9, "nodes[0]": 6, "nodes[7]": 0, "nodes[x]": 0,
		"inputs.in_x.type": 3, "outputs.out": 14, "mappings.b": 9, "root": 0, "edges[0].to": 0,
	} {
		if got := w.LineOf(path); got != want {
			t.Errorf("LineOf(%q) = %d, want %d", path, got, want)
		}
	}
}

func TestLegacyParametersKey(t *testing.T) {
	t.Parallel()
	w, err := ParseJSON([]byte(`{"nodes":[{"id":"a","type":"shell","parameters":{"command":"echo"}}]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if errs := w.CheckStructure(); len(errs) != 0 || w.Nodes[0].Params["command"] != "echo" {
		t.Fatalf("params=%v errs=%v", w.Nodes[0].Params, errs)
	}
}

// TestIRKeysInTheWrongPlace: keys written where JSON IR does not take them
// are named with where they go: a name at the top (given when saving), a
// param beside a step's id (inside "params"), a next or on_error (edges).
func TestIRKeysInTheWrongPlace(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`{"name": "x", "nodes": [{"id": "a", "type": "shell", "params": {"command": "echo"}}]}`, "given when it is saved"},
		{`{"nodes": [{"id": "a", "type": "shell", "command": "echo"}]}`, `go inside "params": {"command": ...}`},
		{`{"nodes": [{"id": "a", "type": "shell", "params": {"command": "echo"}, "next": "b"}, {"id": "b", "type": "shell", "params": {"command": "echo"}}]}`, `the "edges" list`},
		{`{"nodes": [{"id": "a", "type": "shell", "params": {"command": "echo"}, "on_error": "b"}, {"id": "b", "type": "shell", "params": {"command": "echo"}}]}`, `"action": "error"`},
	} {
		w, err := ParseJSON([]byte(c.src), "w.json")
		if err != nil {
			t.Fatalf("ParseJSON: %v", err)
		}
		if got := render(w.CheckStructure()); !strings.Contains(got, c.want) {
			t.Errorf("%s: want %q in\n%s", c.src, c.want, got)
		}
	}
}
