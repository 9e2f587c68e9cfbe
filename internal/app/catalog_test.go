package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/settings"
)

func testApp(t testing.TB) (*App, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	a := New([]string{"PFLOW_HOME=" + t.TempDir()}, &log)
	return a, &log
}

func mcpEntry(server, tool string, props map[string]any) *registry.Entry {
	var params []node.Field
	for k := range props {
		params = append(params, node.Field{Key: k, Type: "str", Description: "the " + k, Required: true})
	}
	return &registry.Entry{ClassName: "MCPNode", FilePath: "virtual://mcp", Type: registry.TypeMCP, Kind: "mcp",
		Interface: node.Interface{Description: "Tool " + tool + " of " + server, Params: params,
			Outputs: []node.Field{{Key: "result", Type: "any"}}, Actions: []string{"default", "error"}},
		MCP: &registry.MCPInfo{Server: server, Tool: tool, InputSchema: map[string]any{"type": "object", "properties": props}}}
}

func TestCatalogRecordsCoreNodesAndKeepsMCPEntries(t *testing.T) {
	a, _ := testApp(t)
	ctx := context.Background()
	// An MCP entry registered before the core nodes are recorded.
	if err := a.RegistryStore().Update(ctx, func(f *registry.File) error {
		f.Nodes["mcp-github-create-issue"] = mcpEntry("github", "create_issue", map[string]any{"title": map[string]any{"type": "string"}})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cat, _, err := a.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.RegistryStore().Load()
	if err != nil {
		t.Fatal(err)
	}
	core := 0
	for _, e := range f.Nodes {
		if e.Type == registry.TypeCore {
			core++
		}
	}
	if core == 0 {
		t.Fatal("core nodes were not written to registry.json")
	}
	if _, ok := f.Nodes["mcp-github-create-issue"]; !ok {
		t.Fatal("recording the core nodes dropped the MCP entry")
	}
	s, ok := cat.Lookup("mcp-github-create-issue")
	if !ok {
		t.Fatal("MCP entry not in the catalog")
	}
	if registry.MCPServerOf(s) != "github" || registry.MCPToolOf(s) != "create_issue" || s.Node == nil || s.Attempts != 1 {
		t.Fatalf("MCP spec = %+v", s)
	}
	if _, ok := cat.Lookup("shell"); !ok {
		t.Fatal("built-in shell missing")
	}
	// A second load does not rewrite an up-to-date registry.
	before, _ := os.Stat(a.Paths.Registry)
	if _, _, err := a.Catalog(ctx); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(a.Paths.Registry)
	if !before.ModTime().Equal(after.ModTime()) {
		t.Fatal("registry.json rewritten although nothing changed")
	}
}

func TestCatalogAppliesSettingsFilter(t *testing.T) {
	a, _ := testApp(t)
	ctx := context.Background()
	a.RegistryStore().Update(ctx, func(f *registry.File) error {
		f.Nodes["mcp-slack-post-message"] = mcpEntry("slack", "post_message", nil)
		f.Nodes["mcp-github-create-issue"] = mcpEntry("github", "create_issue", nil)
		return nil
	})
	if _, err := a.AddNodePattern(ctx, "mcp-slack-*", true); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddNodePattern(ctx, "read-*", true); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddNodePattern(ctx, "read-file", false); err != nil {
		t.Fatal(err)
	}
	cat, _, err := a.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cat.Lookup("mcp-slack-post-message"); ok {
		t.Fatal("denied MCP tool still usable")
	}
	if r, ok := cat.DeniedReason("mcp-slack-post-message"); !ok || !strings.Contains(r, "mcp-slack-*") {
		t.Fatalf("denied reason = %q", r)
	}
	if _, ok := cat.Lookup("mcp-github-create-issue"); !ok {
		t.Fatal("allowed MCP tool missing")
	}
	if _, ok := cat.Lookup("read-file"); !ok {
		t.Fatal("exact allow did not beat the deny glob")
	}
	// check agrees with the filter for every node.
	for _, typ := range append(cat.Types(), cat.Denied()...) {
		c, err := a.CheckNode(ctx, typ)
		if err != nil {
			t.Fatal(err)
		}
		_, inCat := cat.Lookup(typ)
		if c.Allowed != inCat {
			t.Errorf("check says allowed=%v for %s but the catalog has it=%v", c.Allowed, typ, inCat)
		}
	}
}

func TestCheckNodeUsesModuleNamesForDefaultDeny(t *testing.T) {
	st := settings.Default()
	s := &node.Spec{Type: "git-log", Group: "git"}
	ok, reason := st.NodeAllowed(NodeCandidates(s)...)
	if ok || !strings.Contains(reason, "pflow.nodes.git.*") {
		t.Fatalf("git-log with default settings: %v %s", ok, reason)
	}
}

func TestUnsetSettingsEnvCaseInsensitive(t *testing.T) {
	a, _ := testApp(t)
	ctx := context.Background()
	a.SetSettingsEnv(ctx, "GitHub_Token", "x")
	found, err := a.UnsetSettingsEnv(ctx, "GITHUB_TOKEN")
	if err != nil || !found {
		t.Fatalf("unset: %v %v", found, err)
	}
	if keys, _ := a.SettingsEnvKeys(); len(keys) != 0 {
		t.Fatalf("left: %v", keys)
	}
}

// BenchmarkRegistryLoad1000 measures what every command pays to know its
// node types: settings + built-ins + registry.json with 1,000 MCP tools +
// the allow/deny filter (target: registry load ≤ 5 ms; see
// docs/decisions.md, "Measured targets").
func BenchmarkRegistryLoad1000(b *testing.B) {
	a, _ := testApp(b)
	ctx := context.Background()
	a.RegistryStore().Update(ctx, func(f *registry.File) error {
		for i := range 1000 {
			srv := fmt.Sprintf("server%d", i%20)
			tool := fmt.Sprintf("tool_%d", i)
			f.Nodes[fmt.Sprintf("mcp-%s-tool-%d", srv, i)] = mcpEntry(srv, tool, map[string]any{
				"query": map[string]any{"type": "string", "description": "What to look for"},
				"limit": map[string]any{"type": "integer", "description": "Maximum results"},
			})
		}
		return nil
	})
	if _, _, err := a.Catalog(ctx); err != nil { // records the core nodes once
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		cat, _, err := a.Catalog(ctx)
		if err != nil || cat.Len() < 1000 {
			b.Fatal(err, cat.Len())
		}
	}
}

func TestIncludeTestNodesFromEnvAndSettings(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		env     string
		setting bool
		want    bool
	}{{"", false, false}, {"", true, true}, {"PFLOW_INCLUDE_TEST_NODES=1", false, true}, {"PFLOW_INCLUDE_TEST_NODES=false", true, false}} {
		home := t.TempDir()
		env := []string{"PFLOW_HOME=" + home}
		if tc.env != "" {
			env = append(env, tc.env)
		}
		a := New(env, nil)
		if tc.setting {
			settings.Update(ctx, a.Paths.Settings, func(s *settings.Settings) error { s.Registry.IncludeTestNodes = true; return nil })
		}
		cat, _, err := a.Catalog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cat.IncludeHidden != tc.want {
			t.Errorf("env %q setting %v: IncludeHidden = %v", tc.env, tc.setting, cat.IncludeHidden)
		}
	}
}

// A long-lived process builds its catalog for every run: while
// registry.json is unchanged it reuses the decoded file and its check of
// the core entries, and a change (another process syncing, or an edit
// that breaks a core entry) is seen by the next run.
func TestCatalogSeesRegistryChangesBetweenRuns(t *testing.T) {
	a, _ := testApp(t)
	ctx := context.Background()
	if _, _, err := a.Catalog(ctx); err != nil {
		t.Fatal(err)
	}
	f1, _ := a.RegistryStore().LoadWithoutSchemas()
	f2, _ := a.RegistryStore().LoadWithoutSchemas()
	if f1 != f2 {
		t.Error("an unchanged registry.json is decoded again")
	}
	// Another process registers a tool and breaks the shell node's entry.
	if err := a.RegistryStore().Update(ctx, func(f *registry.File) error {
		f.Nodes["mcp-x-y"] = mcpEntry("x", "y", map[string]any{"q": map[string]any{"type": "string"}})
		f.Nodes["shell"].Interface.Description = "tampered"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cat, _, err := a.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cat.Lookup("mcp-x-y"); !ok {
		t.Error("a tool registered since the last run is missing")
	}
	f, _ := a.RegistryStore().Load()
	if f.Nodes["shell"].Interface.Description == "tampered" {
		t.Error("a broken core entry was not rewritten")
	}
}

// The catalog a long-lived process keeps while the files are unchanged
// follows a change of settings.json: a type denied since is gone.
func TestCatalogSeesSettingsChangesBetweenRuns(t *testing.T) {
	a, _ := testApp(t)
	ctx := context.Background()
	if _, err := a.AddNodePattern(ctx, "read-*", true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // settings.json's version is kept once a second old (fsutil.Memo)
	for i := 0; i < 2; i++ {
		if cat, _, err := a.Catalog(ctx); err != nil {
			t.Fatal(err)
		} else if _, ok := cat.Lookup("shell"); !ok {
			t.Fatal("shell is missing")
		}
	}
	if _, err := a.AddNodePattern(ctx, "shell", true); err != nil {
		t.Fatal(err)
	}
	cat, _, err := a.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cat.Lookup("shell"); ok {
		t.Fatal("a type denied since the last run is still in the catalog")
	}
}
