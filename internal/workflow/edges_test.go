package workflow

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestMarkdownEdges(t *testing.T) {
	t.Parallel()
	step := func(id string, extra string) string {
		return "### " + id + "\nStep " + id + ".\n- type: shell\n" + extra + "\n"
	}
	tests := []struct {
		name  string
		steps string
		want  []Edge
	}{
		{"single step", step("a", ""), []Edge{}},
		{"linear chain", step("a", "") + step("b", "") + step("c", ""),
			[]Edge{{From: "a", To: "b"}, {From: "b", To: "c"}}},
		{"recovery step skipped by the chain", step("fetch", "- on_error: recover") + step("recover", "") + step("process", ""),
			[]Edge{{From: "fetch", To: "process"}, {From: "fetch", To: "recover", Action: "error"}}},
		{"recovery step at the end", step("fetch", "- on_error: recover") + step("process", "") + step("recover", ""),
			[]Edge{{From: "fetch", To: "process"}, {From: "fetch", To: "recover", Action: "error"}, {From: "process", To: ""}}[:2]},
		{"branch step with next rejoins", step("fetch", "- on_error: fallback") + step("fallback", "- next: process") + step("process", ""),
			[]Edge{{From: "fetch", To: "process"}, {From: "fetch", To: "fallback", Action: "error"}, {From: "fallback", To: "process"}}},
		{"general on map and default", step("check", "- on: {retry: fix, error: report, default: done}") + step("fix", "- next: check") + step("report", "") + step("done", ""),
			[]Edge{{From: "check", To: "done"}, {From: "check", To: "report", Action: "error"}, {From: "check", To: "fix", Action: "retry"}, {From: "fix", To: "check"}}},
		{"next overrides the chain", step("a", "- next: c") + step("b", "") + step("c", ""),
			[]Edge{{From: "a", To: "c"}, {From: "b", To: "c"}}},
		{"loop back to an earlier step keeps the chain", step("fetch", "") + step("check", "- on: {retry: fetch}") + step("done", ""),
			[]Edge{{From: "fetch", To: "check"}, {From: "check", To: "done"}, {From: "check", To: "fetch", Action: "retry"}}},
		{"self loop keeps the chain", step("poll", "- on: {wait: poll}") + step("done", ""),
			[]Edge{{From: "poll", To: "done"}, {From: "poll", To: "poll", Action: "wait"}}},
		{"on_error and on.error agree", step("a", "- on_error: b\n- on:\n    error: b") + step("b", ""),
			[]Edge{{From: "a", To: "b", Action: "error"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := parseMD(t, wrap(tt.steps))
			if !reflect.DeepEqual(w.Edges, tt.want) {
				t.Errorf("edges:\n got  %+v\n want %+v", w.Edges, tt.want)
			}
			for _, n := range w.Nodes {
				for _, k := range stepKeys() {
					if _, ok := n.Params[k]; ok {
						t.Errorf("node %s: step key %q left in params", n.ID, k)
					}
				}
			}
			if errs := w.CheckStructure(); len(errs) != 0 {
				t.Errorf("structure errors: %v", errs)
			}
		})
	}
}

func TestMarkdownEdgeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps string
		line  int
		msg   string
		sug   string
	}{
		{"unknown next", "### a\nA.\n- type: shell\n- next: zz\n### b\nB.\n- type: shell\n", 10, "Unknown step 'zz' in 'next' of step 'a'.", "Available steps: a, b"},
		{"unknown on action", "### a\nA.\n- type: shell\n- on: {retry: nope}\n", 10, "Unknown step 'nope' in 'on.retry' of step 'a'.", "Available steps: a"},
		{"on_error not a string", "### a\nA.\n- type: shell\n- on_error: [b]\n", 10, "'on_error' for step 'a' must be a step ID, got ['b'].", ""},
		{"conflicting error handlers", "### a\nA.\n- type: shell\n- on: {error: b}\n- on_error: c\n### b\nB.\n- type: shell\n### c\nC.\n- type: shell\n", 11, "Step 'a' sets its error handler twice ('on_error: c' and 'on.error: b').", ""},
		{"conflicting defaults", "### a\nA.\n- type: shell\n- next: b\n- on: {default: c}\n", 11, "Step 'a' sets its default successor twice ('next: b' and 'on.default: c').", ""},
		{"mapping not a map", "### a\nA.\n- type: shell\n- input_mappings: x\n", 10, "'input_mappings' for step 'a' must map names to shared-store keys, got 'x'.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pe := parseErr(t, wrap(tt.steps))
			if pe.Line != tt.line || pe.Message != tt.msg {
				t.Errorf("got  Line %d: %s\nwant Line %d: %s", pe.Line, pe.Message, tt.line, tt.msg)
			}
			if tt.sug != "" && pe.Suggestion != tt.sug {
				t.Errorf("suggestion = %q, want %q", pe.Suggestion, tt.sug)
			}
		})
	}
}

func TestMarkdownMappings(t *testing.T) {
	t.Parallel()
	w := parseMD(t, wrap("### search\nSearch.\n- type: mcp-github-search\n- input_mappings: {query: topic.text}\n- output_mappings:\n    search_results: matches\n- q: x\n### post\nPost.\n- type: shell\n"))
	want := map[string]*Mapping{"search": {
		InputMappings:  map[string]string{"query": "topic.text"},
		OutputMappings: map[string]string{"search_results": "matches"},
	}}
	if !reflect.DeepEqual(w.Mappings, want) {
		t.Errorf("mappings = %+v", w.Mappings)
	}
	if !reflect.DeepEqual(w.Nodes[0].Params, map[string]any{"q": "x"}) {
		t.Errorf("params = %v", w.Nodes[0].Params)
	}
}

// ParseJSON(marshal(w)) gives w back, for a workflow using every IR field.
func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	w := parseMD(t, "# T\nDoc.\n## Inputs\n### b_in\nB.\n- type: string\n- required: false\n- default: {k: [1, 2.5, null]}\n### a_in\nA.\n- stdin: true\n"+
		"## Steps\n### fetch\nFetch.\n- type: http\n- timeout: 30\n- on_error: recover\n- input_mappings: {url: cfg.url}\n"+
		"```yaml batch\nitems: [1, \"${x}\"]\nerror_handling: continue\nmax_retries: 3\nretry_wait: 0.5\n```\n"+
		"```shell command\necho\n```\n"+
		"### recover\nRecover.\n- type: shell\n## Outputs\n### z_out\nZ.\n- type: dict\n- source: ${fetch.response}\n### a_out\nA.\n- source: x\n")
	f := false
	w.EnableNamespacing = &f
	w.TemplateResolutionMode = "strict"
	w.StartNode = "fetch"
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseJSON(b, "")
	if err != nil {
		t.Fatal(err)
	}
	if errs := back.CheckStructure(); len(errs) != 0 {
		t.Fatalf("structure errors: %v", errs)
	}
	strip := func(w *Workflow) *Workflow {
		c := *w
		c.Source = nil
		for _, in := range c.Inputs {
			in.Line = 0
		}
		for _, o := range c.Outputs {
			o.Line = 0
		}
		for _, n := range c.Nodes {
			n.Line = 0
			n.KeyLines = nil
		}
		return &c
	}
	got, want := strip(back), strip(w)
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		t.Fatalf("round trip differs:\n got  %s\n want %s", gb, b)
	}
	if got.Inputs[0].Name != "b_in" || got.Outputs[0].Name != "z_out" {
		t.Errorf("declaration order lost: %s, %s", got.Inputs[0].Name, got.Outputs[0].Name)
	}
}

func TestParseJSONErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		line int
		msg  string
	}{
		{"{\n  \"nodes\": [\n    {\"id\": \"a\",}\n  ]\n}", 3, "Invalid JSON: invalid character '}' looking for beginning of object key string"},
		{"{\"nodes\": [", 1, "Invalid JSON: the document ends early (unclosed object, array or string)"},
		{"[1]", 1, "Workflow JSON must be an object, got array."},
		{"{} {}", 0, "Invalid JSON: unexpected data after JSON value"},
	}
	for _, tt := range tests {
		_, err := ParseJSON([]byte(tt.src), "x.json")
		pe, ok := err.(*ParseError)
		if !ok {
			t.Errorf("%q: got %v", tt.src, err)
			continue
		}
		if pe.Line != tt.line || pe.Message != tt.msg {
			t.Errorf("%q: got Line %d: %s", tt.src, pe.Line, pe.Message)
		}
	}
}

func TestParseJSONNumbers(t *testing.T) {
	t.Parallel()
	w, err := ParseJSON([]byte(`{"nodes":[{"id":"a","type":"t","params":{"n":1458059302022549698,"f":1.5,"s":"007"}}]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": int64(1458059302022549698), "f": 1.5, "s": "007"}
	if !reflect.DeepEqual(w.Nodes[0].Params, want) {
		t.Errorf("params = %#v", w.Nodes[0].Params)
	}
}

func TestParseJSONLines(t *testing.T) {
	t.Parallel()
	src := "{\n  \"inputs\": {\n    \"zeta\": {\"type\": \"string\"},\n    \"alpha\": {}\n  },\n  \"nodes\": [\n    {\"id\": \"a\", \"type\": \"t\"},\n    {\n      \"id\": \"b\", \"type\": \"t\"\n    }\n  ],\n  \"outputs\": {\"o\": {}}\n}"
	w, err := ParseJSON([]byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	if w.Nodes[0].Line != 7 || w.Nodes[1].Line != 8 {
		t.Errorf("node lines = %d, %d", w.Nodes[0].Line, w.Nodes[1].Line)
	}
	if w.Inputs[0].Name != "zeta" || w.Inputs[0].Line != 3 || w.Inputs[1].Line != 4 || w.Outputs[0].Line != 12 {
		t.Errorf("inputs %s@%d %s@%d, output @%d", w.Inputs[0].Name, w.Inputs[0].Line, w.Inputs[1].Name, w.Inputs[1].Line, w.Outputs[0].Line)
	}
}
