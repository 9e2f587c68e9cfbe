package registry

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/fsutil/fsutiltest"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/value"
)

func testCatalog() *Catalog {
	return NewCatalog([]*node.Spec{
		{Type: "read-file", Group: "file", Interface: node.Interface{Description: "Read a file from disk"}},
		{Type: "write-file", Group: "file", Interface: node.Interface{Description: "Write content to a file"}},
		{Type: "shell", Group: "shell", Interface: node.Interface{Description: "Run a command, e.g. read logs"}},
		{Type: "echo", Group: "test", Hidden: true, Interface: node.Interface{Description: "Test node"}},
		SpecFromEntry("mcp-github-create-issue", mcpEntry("github", "create_issue"), nil),
		SpecFromEntry("mcp-github-list-issues", mcpEntry("github", "list_issues"), nil),
		SpecFromEntry("mcp-slack-post-message", mcpEntry("slack", "post_message"), nil),
	})
}

func TestSearchScoring(t *testing.T) {
	c := testCatalog()
	tests := []struct {
		kws   []string
		want  []string
		score int
		match string
	}{
		{[]string{"shell"}, []string{"shell"}, 100, MatchExact},
		{[]string{"read"}, []string{"read-file", "shell"}, 90, MatchPrefix},
		{[]string{"file"}, []string{"read-file", "write-file"}, 70, MatchName},
		{[]string{"FILE", "write"}, []string{"write-file"}, 80, MatchPrefix},
		{[]string{"github issue"}, []string{"mcp-github-create-issue", "mcp-github-list-issues"}, 70, MatchName},
		{[]string{"nothing"}, nil, 0, ""},
		{[]string{"test"}, nil, 0, ""}, // hidden nodes are not listed
	}
	for _, tc := range tests {
		rs := c.Search(tc.kws)
		var got []string
		for _, r := range rs {
			got = append(got, r.Spec.Type)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Search(%v) = %v, want %v", tc.kws, got, tc.want)
			continue
		}
		if len(rs) > 0 && (rs[0].Score != tc.score || rs[0].Match != tc.match) {
			t.Errorf("Search(%v)[0] = %d/%s, want %d/%s", tc.kws, rs[0].Score, rs[0].Match, tc.score, tc.match)
		}
	}
}

func TestResolveMCPVariantsAndSuggest(t *testing.T) {
	c := testCatalog()
	for _, n := range []string{"mcp-github-create-issue", "github.create_issue", "github-create-issue", "mcp-github-create_issue", "GitHub.Create_Issue"} {
		if s, _ := c.Resolve(n); s == nil || s.Type != "mcp-github-create-issue" {
			t.Errorf("Resolve(%q) = %v", n, s)
		}
	}
	if s, _ := c.Resolve("nope"); s != nil {
		t.Fatal("resolved nonsense")
	}
	if got := c.Suggest("shel", 3); len(got) == 0 || got[0] != "shell" {
		t.Fatalf("Suggest(shel) = %v", got)
	}
	if got := c.Suggest("nope", 3); len(got) != 0 {
		t.Fatalf("Suggest(nope) = %v", got)
	}
}

func TestGroupAndDeny(t *testing.T) {
	c := testCatalog()
	c.Deny("mcp-slack-post-message", "deny pattern 'mcp-slack-*'")
	g := c.Group()
	if len(g.Core["file"]) != 2 || len(g.MCP["github"]) != 2 || len(g.MCP["slack"]) != 0 || len(g.Core["test"]) != 0 {
		t.Fatalf("group = core %v mcp %v", value.SortedKeys(g.Core), value.SortedKeys(g.MCP))
	}
	if _, ok := c.Lookup("mcp-slack-post-message"); ok {
		t.Fatal("denied node still resolvable")
	}
	if r, ok := c.DeniedReason("mcp-slack-post-message"); !ok || !strings.Contains(r, "mcp-slack-*") {
		t.Fatal("deny reason lost")
	}
	if _, ok := c.Lookup("echo"); !ok {
		t.Fatal("hidden nodes must stay usable")
	}
	c.IncludeHidden = true
	if len(c.Group().Core["test"]) != 1 {
		t.Fatal("IncludeHidden does not list hidden nodes")
	}
}

func TestDescribeShowsInterfaceAndNestedPaths(t *testing.T) {
	s := &node.Spec{Type: "llm", Interface: node.Interface{
		Description: "Call a language model. Supports images.",
		Params: []node.Field{
			{Key: "prompt", Type: "str", Description: "What to ask", Required: true},
			{Key: "temperature", Type: "float", Default: 1.0},
		},
		Outputs: []node.Field{
			{Key: "response", Type: "any"},
			{Key: "llm_usage", Type: "dict", Structure: []node.Field{{Key: "model", Type: "str"}, {Key: "tokens", Type: "dict", Structure: []node.Field{{Key: "input", Type: "int"}}}}},
			{Key: "items", Type: "list[dict]", Structure: []node.Field{{Key: "id", Type: "int"}}},
		},
		Actions: []string{"default", "error"},
	}}
	md := Describe(s)
	for _, want := range []string{
		"### llm", "- `prompt: str` - What to ask (required)", "- `temperature: float` (optional, default: 1)",
		"`${step.llm_usage.model}` (str)", "`${step.llm_usage.tokens.input}` (int)", "`${step.items[0].id}` (int)",
		"**Usage in .pflow.md:**", "    - type: llm", "    ```prompt", "    Call a language model.\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("describe lacks %q:\n%s", want, md)
		}
	}
}

func TestLoadWithoutSchemasUsesAndInvalidatesCache(t *testing.T) {
	dir := t.TempDir()
	s := Open(filepath.Join(dir, "registry.json"), nil)
	s.CachePath = filepath.Join(dir, "cache", "registry.gob")
	ctx := context.Background()
	e := mcpEntry("a", "x")
	e.MCP.InputSchema = map[string]any{"type": "object"}
	e.Interface.Params = []node.Field{{Key: "n", Type: "int", Default: int64(3), Enum: []any{int64(3), "x"}}, {Key: "cmd", Type: "str", Sink: node.SinkShell}}
	e.Interface.Outputs = []node.Field{{Key: "items", Type: "list[dict]", Description: "ünïcode", Structure: []node.Field{{Key: "id", Type: "int", Required: true}}}}
	e.Interface.ExtraParams = true
	s.Update(ctx, func(f *File) error { f.Nodes["mcp-a-x"] = e; return nil })
	f1, err := s.LoadWithoutSchemas()
	if err != nil || len(f1.Nodes) != 1 {
		t.Fatalf("%v %v", f1, err)
	}
	if f1.Nodes["mcp-a-x"].MCP.InputSchema != nil || f1.Nodes["mcp-a-x"].MCP.Tool != "x" {
		t.Fatalf("entry = %+v", f1.Nodes["mcp-a-x"].MCP)
	}
	if _, err := os.Stat(s.CachePath); err != nil {
		t.Fatal("cache not written")
	}
	f2, _ := s.LoadWithoutSchemas() // from the cache
	if fmt.Sprint(f2.Nodes["mcp-a-x"].Interface) != fmt.Sprint(f1.Nodes["mcp-a-x"].Interface) {
		t.Fatalf("cached entry differs: %v vs %v", f2.Nodes["mcp-a-x"].Interface, f1.Nodes["mcp-a-x"].Interface)
	}
	// A change to registry.json is seen at once.
	s.Update(ctx, func(f *File) error { f.Nodes["mcp-a-y"] = mcpEntry("a", "y"); return nil })
	f3, _ := s.LoadWithoutSchemas()
	if len(f3.Nodes) != 2 {
		t.Fatalf("stale cache: %d nodes", len(f3.Nodes))
	}
	// A truncated cache is ignored.
	good, _ := os.ReadFile(s.CachePath)
	os.WriteFile(s.CachePath, good[:len(good)-3], 0o644)
	if f, err := s.LoadWithoutSchemas(); err != nil || len(f.Nodes) != 2 {
		t.Fatalf("truncated cache: %v %v", f, err)
	}
	// A garbage cache is ignored.
	os.WriteFile(s.CachePath, []byte("junk"), 0o644)
	if f4, err := s.LoadWithoutSchemas(); err != nil || len(f4.Nodes) != 2 {
		t.Fatalf("junk cache: %v %v", f4, err)
	}
	// A corrupt registry is restored from .bak here too, with a warning.
	var log bytes.Buffer
	s.Log = &log
	data, _ := os.ReadFile(s.Path)
	os.WriteFile(s.Path, data[:len(data)/3], 0o644)
	f5, err := s.LoadWithoutSchemas()
	if err != nil || len(f5.Nodes) != 1 || !strings.Contains(log.String(), "restored") {
		t.Fatalf("corrupt: %v %v %q", f5, err, log.String())
	}
}

// TestConcurrentUpdatesFromProcesses: 10 processes and 10 goroutines each
// add one entry; none is lost and the file stays valid.
func TestConcurrentUpdatesFromProcesses(t *testing.T) {
	if os.Getenv("PFLOW_REG_HELPER") != "" {
		return
	}
	path := filepath.Join(t.TempDir(), "registry.json")
	fsutiltest.Race(t, 10, "TestHelperRegistryUpdate",
		func(i int) []string {
			return []string{"PFLOW_REG_HELPER=" + path, fmt.Sprintf("PFLOW_REG_KEY=mcp-p-t%d", i)}
		},
		func(i int) error {
			return Open(path, nil).Update(context.Background(), func(f *File) error {
				f.Nodes[fmt.Sprintf("mcp-g-t%d", i)] = mcpEntry("g", fmt.Sprint(i))
				return nil
			})
		})
	f, err := Open(path, nil).Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != 20 {
		t.Fatalf("lost writes: %d of 20", len(f.Nodes))
	}
}

func TestHelperRegistryUpdate(t *testing.T) {
	path := os.Getenv("PFLOW_REG_HELPER")
	if path == "" {
		return // a helper: it runs only as a process started by fsutiltest.Race
	}
	key := os.Getenv("PFLOW_REG_KEY")
	if err := Open(path, nil).Update(context.Background(), func(f *File) error {
		f.Nodes[key] = mcpEntry("p", key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSpecFromEntryMCPMainInput: an MCP tool's main output is result, and
// its main input its only required string param.
func TestSpecFromEntryMCPMainInput(t *testing.T) {
	entry := func(params ...node.Field) *Entry {
		return &Entry{Type: TypeMCP, MCP: &MCPInfo{Server: "s", Tool: "t"}, Interface: node.Interface{Params: params}}
	}
	cases := []struct {
		e    *Entry
		want string
	}{
		{entry(node.Field{Key: "message", Type: "str", Required: true}, node.Field{Key: "n", Type: "int", Required: true}), "message"},
		{entry(node.Field{Key: "a", Type: "string", Required: true}, node.Field{Key: "b", Type: "str", Required: true}), ""},
		{entry(node.Field{Key: "a", Type: "str"}), ""},
		{entry(), ""},
	}
	for i, c := range cases {
		s := SpecFromEntry("mcp-s-t", c.e, nil)
		if s.StdinParam != c.want || s.MainOutput != "result" {
			t.Errorf("case %d: main input %q, output %q; want %q, result", i, s.StdinParam, s.MainOutput, c.want)
		}
	}
}
