package workflow

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// irOnly strips what markdown does not carry (lines, source, _source_lines)
// and fills the prose FormatMarkdown generates, so two IRs can be compared.
func irOnly(w *Workflow) *Workflow {
	c := *w
	c.Source = nil
	c.decodeErrs = nil
	c.Inputs, c.Outputs, c.Nodes = nil, nil, nil
	for _, in := range w.Inputs {
		x := *in
		x.Line = 0
		if x.Description == "" {
			x.Description = "Input " + x.Name + "."
		}
		c.Inputs = append(c.Inputs, &x)
	}
	for _, o := range w.Outputs {
		x := *o
		x.Line = 0
		if x.Description == "" {
			x.Description = "Output " + x.Name + "."
		}
		c.Outputs = append(c.Outputs, &x)
	}
	for _, n := range w.Nodes {
		x := *n
		x.Line = 0
		x.KeyLines = nil
		x.SourceLines = nil
		if x.Purpose == "" {
			x.Purpose = "Step " + x.ID + "."
		}
		c.Nodes = append(c.Nodes, &x)
	}
	if c.StartNode == w.Nodes[0].ID {
		c.StartNode = ""
	}
	// An empty mapping (or "mappings": {}) means no mapping: markdown writes nothing.
	c.Mappings = nil
	for id, m := range w.Mappings {
		if m == nil || len(m.InputMappings)+len(m.OutputMappings) == 0 {
			continue
		}
		if c.Mappings == nil {
			c.Mappings = map[string]*Mapping{}
		}
		x := *m
		if len(x.InputMappings) == 0 {
			x.InputMappings = nil
		}
		if len(x.OutputMappings) == 0 {
			x.OutputMappings = nil
		}
		c.Mappings[id] = &x
	}
	idx := map[string]int{}
	for i, n := range w.Nodes {
		idx[n.ID] = i
	}
	c.Edges = append([]Edge(nil), w.Edges...)
	for i := range c.Edges {
		if c.Edges[i].Action == "default" {
			c.Edges[i].Action = ""
		}
	}
	sort.Slice(c.Edges, func(i, j int) bool {
		a, b := c.Edges[i], c.Edges[j]
		if idx[a.From] != idx[b.From] {
			return idx[a.From] < idx[b.From]
		}
		if a.Action != b.Action {
			return a.Action < b.Action
		}
		return a.To < b.To
	})
	return &c
}

func checkFormatRoundTrip(t *testing.T, w *Workflow) []byte {
	t.Helper()
	md, err := FormatMarkdown(w)
	if err != nil {
		t.Fatalf("FormatMarkdown: %v", err)
	}
	back, err := ParseMarkdown(md, "")
	if err != nil {
		t.Fatalf("ParseMarkdown of formatted text: %v\n%s", err, md)
	}
	got, want := irOnly(back), irOnly(w)
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Fatalf("round trip differs:\n got  %s\n want %s\nmarkdown:\n%s", gb, wb, md)
	}
	return md
}

func TestFormatMarkdownWorkedExample(t *testing.T) {
	t.Parallel()
	w, err := ParseFile(filepath.Join("testdata", "worked.pflow.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := checkFormatRoundTrip(t, w)
	if !strings.HasPrefix(string(md), "# Hello\n\nGreets someone.\n\n## Inputs\n\n### name\nWho to greet.\n- type: string\n- required: true\n") {
		t.Errorf("unexpected layout:\n%s", md)
	}
}

func TestFormatMarkdownRoundTrip(t *testing.T) {
	t.Parallel()
	src := `{"ir_version":"0.1.0",
	"inputs":{"count":{"type":"int","default":3,"required":false},"text":{"default":"line1\nline2"},"flag":{"default":"true"}},
	"nodes":[
	  {"id":"fetch","type":"http","purpose":"Fetch it.\n* a bullet","params":{"url":"https://x.test/a?b=c","timeout":30,"ratio":2.0,"headers":{"A":"x: y","B":[1,null,true]},"body":"{\"a\": 1}","script":"line one\n` + "```" + `\nline two","odd key":"v","trail":"x\n"},"batch":{"items":["a","${b.c}"],"as":"f","parallel":true,"max_concurrent":4,"retry_wait":1.5}},
	  {"id":"recover","type":"shell","params":{"command":"echo recovered"}},
	  {"id":"process","type":"llm","params":{"prompt":"007"}},
	  {"id":"fix","type":"shell"}
	],
	"edges":[{"from":"fetch","to":"process"},{"from":"fetch","to":"recover","action":"error"},{"from":"recover","to":"process"},
	         {"from":"process","to":"fix","action":"retry"},{"from":"process","to":"recover","action":"error"},{"from":"fix","to":"process"}],
	"mappings":{"process":{"input_mappings":{"prompt":"fetch.body"},"output_mappings":{"response":"answer"}}},
	"outputs":{"answer":{"source":"${process.response}","type":"string"}}}`
	w, err := ParseJSON([]byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	if errs := w.CheckStructure(); len(errs) != 0 {
		t.Fatal(errs)
	}
	checkFormatRoundTrip(t, w)
}

// JSON IR of several nodes and no edges runs its nodes in the order listed,
// as a .pflow.md file's steps run in file order.
func TestEdgelessIRRunsInOrder(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`{"nodes":[{"id":"a","type":"t"},{"id":"b","type":"t"},{"id":"c","type":"t"}]}`,
		`{"nodes":[{"id":"a","type":"t"},{"id":"b","type":"t"},{"id":"c","type":"t"}],"edges":[]}`,
		`{"nodes":[{"id":"a","type":"t"},{"id":"b","type":"t"},{"id":"c","type":"t"}],"start_node":"a"}`,
	} {
		w, err := ParseJSON([]byte(src), "")
		if err != nil {
			t.Fatal(err)
		}
		want := []Edge{{From: "a", To: "b"}, {From: "b", To: "c"}}
		if fmt.Sprint(w.Edges) != fmt.Sprint(want) {
			t.Errorf("%s: edges %v, want %v", src, w.Edges, want)
		}
	}
	w, _ := ParseJSON([]byte(`{"nodes":[{"id":"a","type":"t"},{"id":"b","type":"t"}],"edges":[{"from":"a","to":"b","action":"error"}]}`), "")
	if len(w.Edges) != 1 {
		t.Errorf("a workflow with edges keeps exactly its own: %v", w.Edges)
	}
}

func TestFormatMarkdownRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json, want string
	}{
		{"bad id", `{"nodes":[{"id":"Fetch","type":"t"}]}`, "node id 'Fetch' is not a valid entity ID"},
		{"bad input name", `{"inputs":{"Bad":{}},"nodes":[{"id":"a","type":"t"}]}`, "input name 'Bad' is not a valid entity ID"},
		{"bad output name", `{"nodes":[{"id":"a","type":"t"}],"outputs":{"Out":{"source":"${a.x}"}}}`, "output name 'Out' is not a valid entity ID"},
		{"namespacing", `{"nodes":[{"id":"a","type":"t"}],"enable_namespacing":false}`, "enable_namespacing"},
		{"start node", `{"nodes":[{"id":"a","type":"t"},{"id":"b","type":"t"}],"start_node":"b"}`, "start_node 'b' is not the first node"},
		{"reserved param", `{"nodes":[{"id":"a","type":"t","params":{"next":"x"}}]}`, "param named 'next'"},
		{"chain cannot stop", `{"nodes":[{"id":"a","type":"t"},{"id":"b","type":"t"},{"id":"c","type":"t"}],"edges":[{"from":"b","to":"c"}]}`, "node 'a' has no default successor, but in markdown it would run on to 'b'"},
	}
	for _, tt := range tests {
		w, err := ParseJSON([]byte(tt.json), "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = FormatMarkdown(w)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
}

// Prose that would read as structure is escaped, so the document still parses.
func TestFormatMarkdownEscapesProse(t *testing.T) {
	t.Parallel()
	w := &Workflow{Nodes: []*Node{{ID: "a", Type: "shell", Purpose: "# not a heading\n- not an item\n---\n```\n<!-- x -->"}},
		Source: &Source{Title: "T", Description: "## Steps\n### b"}}
	md, err := FormatMarkdown(w)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseMarkdown(md, "")
	if err != nil {
		t.Fatalf("%v\n%s", err, md)
	}
	if len(back.Nodes) != 1 || back.Nodes[0].Purpose != "\\# not a heading\n\\- not an item\n\\---\n\\```\n\\<!-- x -->" || back.Source.Description != "\\## Steps\n\\### b" {
		t.Errorf("got purpose %q description %q\n%s", back.Nodes[0].Purpose, back.Source.Description, md)
	}
}
