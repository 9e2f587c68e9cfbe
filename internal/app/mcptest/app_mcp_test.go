package mcptest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
	"github.com/pflow-go/pflow/internal/value"
)

func TestMain(m *testing.M) {
	fakemcp.MaybeRun()
	mcpclient.StopGrace = 300 * time.Millisecond
	os.Exit(m.Run())
}

func newApp(t *testing.T) (*app.App, *fakemcp.Buffer) {
	t.Helper()
	home := t.TempDir()
	log := &fakemcp.Buffer{}
	a := app.New([]string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH"), "HOME=" + home}, log)
	return a, log
}

func addFake(t *testing.T, a *app.App, name string, modes ...string) string {
	t.Helper()
	id := fakemcp.NewID()
	entry := fakemcp.Entry(id, "", modes...)
	b, _ := json.Marshal(map[string]any{name: entry})
	if _, err := a.AddMCPServers(context.Background(), []string{string(b)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(3 * time.Second)
		for len(fakemcp.Leftovers(id)) > 0 {
			if time.Now().After(deadline) {
				t.Errorf("server processes left behind: %v", fakemcp.Leftovers(id))
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	return id
}

func registryNodes(t *testing.T, a *app.App) map[string]*registry.Entry {
	t.Helper()
	f, err := a.RegistryStore().Load()
	if err != nil {
		t.Fatal(err)
	}
	return f.Nodes
}

func mcpKeys(nodes map[string]*registry.Entry) []string {
	var out []string
	for _, k := range value.SortedKeys(nodes) {
		if nodes[k].MCP != nil {
			out = append(out, k)
		}
	}
	return out
}

// Syncing a server with 3 tools creates 3 entries.
func TestCriterion03SyncThreeTools(t *testing.T) {
	a, _ := newApp(t)
	addFake(t, a, "fake", "tools=3")
	res, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Discovered != 3 || res[0].Registered != 3 {
		t.Fatalf("result %+v", res[0])
	}
	nodes := registryNodes(t, a)
	keys := mcpKeys(nodes)
	if strings.Join(keys, ",") != "mcp-fake-tool-1,mcp-fake-tool-2,mcp-fake-tool-3" {
		t.Fatalf("keys %v", keys)
	}
	e := nodes["mcp-fake-tool-1"]
	if e.ClassName != "MCPNode" || e.FilePath != "virtual://mcp" || e.Kind != "mcp" || e.Type != "mcp" || e.MCP.Server != "fake" || e.MCP.Tool != "tool-1" || e.Interface.Description != "Generated tool 1" {
		t.Fatalf("entry %+v", e)
	}
	if strings.Join(e.Interface.Actions, ",") != "default,error" || e.Interface.Outputs[0].Key != "result" {
		t.Fatalf("interface %+v", e.Interface)
	}
}

// An empty tools/list registers zero nodes.
func TestCriterion04EmptyToolsList(t *testing.T) {
	a, _ := newApp(t)
	addFake(t, a, "fake", "notools")
	res, err := a.SyncMCP(context.Background(), nil, true, nil)
	if err != nil || res[0].Discovered != 0 || res[0].Registered != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if keys := mcpKeys(registryNodes(t, a)); len(keys) != 0 {
		t.Fatalf("keys %v", keys)
	}
}

// An existing entry is overwritten, with a warning.
func TestCriterion11DuplicateEntryOverwritten(t *testing.T) {
	a, log := newApp(t)
	addFake(t, a, "fake", "tools=1")
	err := a.RegistryStore().Update(context.Background(), func(f *registry.File) error {
		f.Nodes["mcp-fake-tool-1"] = &registry.Entry{ClassName: "Old", Type: "user"}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := registryNodes(t, a)["mcp-fake-tool-1"]; e.ClassName != "MCPNode" {
		t.Fatalf("not overwritten: %+v", e)
	}
	if len(res[0].Warnings) != 1 || !strings.Contains(log.String(), "mcp-fake-tool-1 already existed") {
		t.Fatalf("warnings %v log %q", res[0].Warnings, log.String())
	}
	if _, err := os.Stat(a.Paths.Registry + ".bak"); err != nil {
		t.Fatalf("no backup: %v", err)
	}
}

func TestSyncDetailsAndPaging(t *testing.T) {
	a, _ := newApp(t)
	addFake(t, a, "fake", "paged")
	res, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Discovered != 10 {
		t.Fatalf("paged discovery found %d tools, want 10", res[0].Discovered)
	}
	nodes := registryNodes(t, a)
	ci := nodes["mcp-fake-create-issue"]
	if ci == nil || ci.MCP.Tool != "Create Issue" {
		t.Fatalf("sanitised tool: %+v", ci)
	}
	p, _ := ci.Interface.Param("priority")
	if p.Type != "str" || len(p.Enum) != 2 {
		t.Fatalf("priority %+v", p)
	}
	if title, _ := ci.Interface.Param("title"); !title.Required {
		t.Fatalf("title not required")
	}
	if c, _ := ci.Interface.Param("count"); c.Type != "int" {
		t.Fatalf("count %+v", c)
	}
	st := nodes["mcp-fake-struct"]
	if _, ok := st.Interface.Output("temperature"); !ok || st.MCP.OutputSchema == nil {
		t.Fatalf("outputs %+v", st.Interface.Outputs)
	}
}

func TestSyncRemovesVanishedToolsAndFailureKeepsThem(t *testing.T) {
	a, log := newApp(t)
	addFake(t, a, "fake", "tools=3")
	ctx := context.Background()
	if _, err := a.SyncMCP(ctx, []string{"fake"}, false, nil); err != nil {
		t.Fatal(err)
	}
	addFake(t, a, "fake", "tools=2")
	res, err := a.SyncMCP(ctx, []string{"fake"}, false, nil)
	if err != nil || res[0].Removed != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if keys := mcpKeys(registryNodes(t, a)); len(keys) != 2 {
		t.Fatalf("keys %v", keys)
	}
	addFake(t, a, "fake", "crash-before-init")
	_, err = a.SyncMCP(ctx, []string{"fake"}, false, nil)
	if err == nil || !strings.Contains(err.Error(), "Tool discovery failed for fake: MCP server process terminated unexpectedly") {
		t.Fatalf("err = %v", err)
	}
	if keys := mcpKeys(registryNodes(t, a)); len(keys) != 2 {
		t.Fatalf("a failed sync must keep the previous tools: %v", keys)
	}
	_ = log
}

func TestSyncAllContinuesPastFailures(t *testing.T) {
	a, _ := newApp(t)
	addFake(t, a, "bad", "hang-connect")
	addFake(t, a, "good", "tools=2")
	cfg, _ := mcpclient.LoadFile(a.Paths.MCPServers)
	_ = cfg
	err := mcpclient.Update(context.Background(), a.Paths.MCPServers, func(f *mcpclient.File) error {
		f.Servers["bad"]["startup_timeout"] = int64(1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	res, err := a.SyncMCP(context.Background(), nil, true, func(ev app.MCPSyncEvent) {
		if ev.Done {
			events = append(events, ev.Server+":done")
		} else {
			events = append(events, ev.Server+":start")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res[0].Error, "did not answer initialize within 1 seconds") || res[1].Registered != 2 {
		t.Fatalf("results %+v", res)
	}
	if strings.Join(events, " ") != "bad:start bad:done good:start good:done" {
		t.Fatalf("events %v", events)
	}
}

func TestRemoveExactServerOnly(t *testing.T) {
	a, _ := newApp(t)
	addFake(t, a, "slack", "tools=2")
	addFake(t, a, "slack-composio", "tools=3")
	ctx := context.Background()
	if _, err := a.SyncMCP(ctx, nil, true, nil); err != nil {
		t.Fatal(err)
	}
	n, err := a.RemoveMCPServer(ctx, "slack")
	if err != nil || n != 2 {
		t.Fatalf("removed %d, %v", n, err)
	}
	keys := mcpKeys(registryNodes(t, a))
	if strings.Join(keys, ",") != "mcp-slack-composio-tool-1,mcp-slack-composio-tool-2,mcp-slack-composio-tool-3" {
		t.Fatalf("keys %v", keys)
	}
	if _, err := a.RemoveMCPServer(ctx, "slack"); err == nil || !strings.Contains(err.Error(), "Server 'slack' not found") {
		t.Fatalf("err %v", err)
	}
}

func TestEnsureMCPSyncedOnConfigChange(t *testing.T) {
	a, log := newApp(t)
	ctx := context.Background()
	addFake(t, a, "fake", "tools=1")
	if err := a.EnsureMCPSynced(ctx, []string{"shell", "mcp-fake-tool-1"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "MCP config changed, syncing fake") || len(mcpKeys(registryNodes(t, a))) != 1 {
		t.Fatalf("no auto-sync: %q", log.String())
	}
	log.Reset()
	a.EnsureMCPSynced(ctx, []string{"mcp-fake-tool-1"})
	if strings.Contains(log.String(), "syncing") {
		t.Fatalf("re-synced although nothing changed: %q", log.String())
	}
	// No MCP node types: nothing happens.
	addFake(t, a, "fake", "tools=2")
	a.EnsureMCPSynced(ctx, []string{"shell"})
	if strings.Contains(log.String(), "syncing") {
		t.Fatal("synced for a workflow without MCP nodes")
	}
	a.EnsureMCPSynced(ctx, []string{"mcp-fake-tool-2"})
	if len(mcpKeys(registryNodes(t, a))) != 2 {
		t.Fatalf("config change not picked up: %q", log.String())
	}
	// A failing server keeps its tools and warns.
	addFake(t, a, "fake", "crash-before-init")
	log.Reset()
	a.EnsureMCPSynced(ctx, []string{"mcp-fake-tool-2"})
	if len(mcpKeys(registryNodes(t, a))) != 2 || !strings.Contains(log.String(), "keeping its previously registered tools") {
		t.Fatalf("log %q", log.String())
	}
}

func TestAddListMasksSecrets(t *testing.T) {
	a, _ := newApp(t)
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "claude_desktop_config.json")
	os.WriteFile(p, []byte(`{"mcpServers":{"GitHub":{"command":"npx","args":["-y","srv"],"env":{"GITHUB_TOKEN":"ghp_supersecretvalue","REF":"${GITHUB_TOKEN}","DEBUG":"1"}},"api":{"type":"http","url":"https://h/mcp","headers":{"Authorization":"Bearer abcdefghijk"},"auth":{"type":"basic","username":"u","password":"hunter2hunter2"}}}}`), 0o644)
	res, err := a.AddMCPServers(ctx, []string{p})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Source != "claude_desktop_config.json" || strings.Join(res[0].Servers, ",") != "api,github" || len(res[0].Notes) == 0 {
		t.Fatalf("%+v", res)
	}
	st, _ := os.Stat(a.Paths.MCPServers)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	list, err := a.MCPServers()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(list)
	for _, secret := range []string{"ghp_supersecretvalue", "abcdefghijk", "hunter2hunter2"} {
		if strings.Contains(string(out), secret) {
			t.Fatalf("secret %q shown: %s", secret, out)
		}
	}
	if !strings.Contains(string(out), "${GITHUB_TOKEN}") || !strings.Contains(string(out), `"DEBUG":"1"`) {
		t.Fatalf("list %s", out)
	}
	// An invalid source saves nothing.
	if _, err := a.AddMCPServers(ctx, []string{`{"ok": {"command": "x"}}`, `{"bad": {"type": "http"}}`}); err == nil {
		t.Fatal("invalid source accepted")
	}
	if list, _ := a.MCPServers(); list["ok"] != nil {
		t.Fatal("partial add saved")
	}
}

func TestToolsAndInfo(t *testing.T) {
	a, _ := newApp(t)
	addFake(t, a, "fake")
	if _, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil); err != nil {
		t.Fatal(err)
	}
	tools, err := a.MCPTools("fake")
	if err != nil || len(tools) != 10 {
		t.Fatalf("%d tools, %v", len(tools), err)
	}
	info, err := a.MCPToolInfo("mcp-fake-echo")
	if err != nil || info.Tool != "echo" || info.Params[0].Key != "message" {
		t.Fatalf("%+v %v", info, err)
	}
	_, err = a.MCPToolInfo("echo")
	if err == nil || !strings.Contains(err.Error(), "Tool 'echo' not found") {
		t.Fatalf("err %v", err)
	}
}

// TestSyncStateWriteFailureWarns: when the sync state cannot be written the
// sync still succeeds, and the user is told why the next run syncs again.
func TestSyncStateWriteFailureWarns(t *testing.T) {
	a, log := newApp(t)
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a.Paths.Cache = filepath.Join(blocker, "cache")
	addFake(t, a, "fake", "tools=1")
	if _, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil); err != nil {
		t.Fatalf("sync failed: %v", err)
	}
	if !strings.Contains(log.String(), "Warning: cannot record the MCP sync state") || !strings.Contains(log.String(), a.Paths.Cache) {
		t.Fatalf("no warning about the unwritable sync state: %q", log.String())
	}
}

// TestRunSyncsServersUsedOnlyByANestedWorkflow: a parent that has no MCP
// step itself but nests a child that does still re-syncs that server.
func TestRunSyncsServersUsedOnlyByANestedWorkflow(t *testing.T) {
	a, log := newApp(t)
	addFake(t, a, "fake", "tools=1")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "child.pflow.md"), []byte("# Child\nCalls the tool.\n## Steps\n### call\nCall it.\n- type: mcp-fake-tool-1\n"), 0o644)
	parent := filepath.Join(dir, "parent.pflow.md")
	os.WriteFile(parent, []byte("# Parent\nNests the child.\n## Steps\n### nest\nRun the child.\n- type: workflow\n- workflow_ref: child.pflow.md\n"), 0o644)
	tg, err := a.ResolveTarget(parent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), app.RunRequest{Target: tg, ValidateOnly: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "MCP config changed, syncing fake") || len(mcpKeys(registryNodes(t, a))) != 1 {
		t.Fatalf("the nested workflow's server was not synced: %q", log.String())
	}
}

// TestRegistryRestoredFromBackupResyncs: registry.json is corrupt and is
// restored from registry.json.bak, which predates the last sync. A run that
// uses a tool the backup lacks re-syncs its server and runs, instead of
// failing with "Unknown node type"; and a restore made by any other command
// marks the sync state stale, so the next run that uses a server syncs it
// again even when its tools are still there (they may be out of date).
func TestRegistryRestoredFromBackupResyncs(t *testing.T) {
	ctx := context.Background()
	corrupt := func(t *testing.T, a *app.App) {
		t.Helper()
		if err := os.WriteFile(a.Paths.Registry, []byte(`{"version": "0.0.1", "nodes": {`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sync := func(t *testing.T, a *app.App, name string) {
		t.Helper()
		if _, err := a.SyncMCP(ctx, []string{name}, false, nil); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("a run needs a tool the backup lacks", func(t *testing.T) {
		a, log := newApp(t)
		addFake(t, a, "fake")
		if _, _, err := a.Catalog(ctx); err != nil { // the first command writes the core nodes
			t.Fatal(err)
		}
		sync(t, a, "fake") // the backup written by this sync has no mcp-fake-* tool
		corrupt(t, a)
		wf := filepath.Join(t.TempDir(), "echo.pflow.md")
		os.WriteFile(wf, []byte("# Echo\nEchoes.\n## Steps\n### say\nSay it.\n- type: mcp-fake-echo\n- message: hi\n## Outputs\n### said\nThe echo.\n- source: ${say.result}\n"), 0o644)
		tg, err := a.ResolveTarget(wf)
		if err != nil {
			t.Fatal(err)
		}
		out, err := a.Run(ctx, app.RunRequest{Target: tg, NoTrace: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.ValidationErrors) > 0 || out.Failed() {
			t.Fatalf("the run failed: %v %+v\nlog: %s", out.ValidationErrors, out.Result, log.String())
		}
		if got := out.Result.Outputs["said"]; got != "Echo: hi" {
			t.Fatalf("output %#v", got)
		}
		for _, want := range []string{"restored the previous version from", "registry.json was restored from its backup, syncing fake"} {
			if !strings.Contains(log.String(), want) {
				t.Errorf("log lacks %q:\n%s", want, log.String())
			}
		}
		// Synced: the next run does not sync again.
		log.Reset()
		a.EnsureMCPSynced(ctx, []string{"mcp-fake-echo"})
		if strings.Contains(log.String(), "syncing") {
			t.Fatalf("re-synced again: %q", log.String())
		}
		// A tool the server never had does not make every run sync.
		a.EnsureMCPSynced(ctx, []string{"mcp-fake-no-such-tool"})
		if strings.Contains(log.String(), "syncing") {
			t.Fatalf("synced for a tool the server never registered: %q", log.String())
		}
	})

	t.Run("a tool its last sync registered is gone from the registry", func(t *testing.T) {
		a, log := newApp(t)
		addFake(t, a, "fake")
		sync(t, a, "fake")
		err := a.RegistryStore().Update(ctx, func(f *registry.File) error { // edited by hand
			delete(f.Nodes, "mcp-fake-echo")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		log.Reset()
		a.EnsureMCPSynced(ctx, []string{"mcp-fake-echo"})
		if !strings.Contains(log.String(), "MCP tools missing from the registry (mcp-fake-echo), syncing fake") {
			t.Fatalf("no re-sync for the missing tool: %q", log.String())
		}
		if _, ok := registryNodes(t, a)["mcp-fake-echo"]; !ok {
			t.Fatal("mcp-fake-echo not back after the re-sync")
		}
	})

	t.Run("a restore by another command marks the servers stale", func(t *testing.T) {
		a, log := newApp(t)
		addFake(t, a, "fake")
		sync(t, a, "fake")
		addFake(t, a, "other", "tools=1")
		sync(t, a, "other") // the backup has fake's tools, not other's
		corrupt(t, a)
		if _, _, err := a.Catalog(ctx); err != nil { // e.g. 'pflow registry list'
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), "pflow mcp sync --all") {
			t.Errorf("the restore warning does not say how to re-sync:\n%s", log.String())
		}
		if _, ok := registryNodes(t, a)["mcp-fake-echo"]; !ok {
			t.Fatal("the backup should have fake's tools")
		}
		log.Reset()
		a.EnsureMCPSynced(ctx, []string{"mcp-fake-echo"})
		if !strings.Contains(log.String(), "registry.json was restored from its backup, syncing fake") {
			t.Fatalf("no re-sync after the restore: %q", log.String())
		}
		log.Reset()
		a.EnsureMCPSynced(ctx, []string{"mcp-fake-echo", "mcp-other-tool-1"})
		if !strings.Contains(log.String(), "syncing other") || strings.Contains(log.String(), "fake") {
			t.Fatalf("want exactly the stale server 'other' synced: %q", log.String())
		}
		if _, ok := registryNodes(t, a)["mcp-other-tool-1"]; !ok {
			t.Fatal("other's tool not back after the re-sync")
		}
	})
}

// Two servers whose names and tools join into one node type (server a-b
// tool c and server a tool b-c both make mcp-a-b-c): the second
// registration reports the collision and keeps the first server's node.
func TestToolIDCollisionAcrossServersIsReported(t *testing.T) {
	a, _ := newApp(t)
	ctx := context.Background()
	obj := map[string]any{"type": "object"}
	if r := a.RegisterMCPTools(ctx, "a-b", []*mcp.Tool{{Name: "c", InputSchema: obj}}); len(r.Warnings) != 0 || len(r.Nodes) != 1 {
		t.Fatalf("first server: %+v", r)
	}
	r := a.RegisterMCPTools(ctx, "a", []*mcp.Tool{{Name: "b-c", InputSchema: obj}, {Name: "d", InputSchema: obj}})
	if e := registryNodes(t, a)["mcp-a-b-c"]; e == nil || e.MCP.Server != "a-b" {
		t.Fatalf("the first server's node was replaced: %+v", e)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "would be mcp-a-b-c, which is already the node of tool \"c\" of MCP server 'a-b'") {
		t.Fatalf("warnings %v", r.Warnings)
	}
	if r.Registered != 1 || len(r.Nodes) != 1 || r.Nodes[0] != "mcp-a-d" {
		t.Fatalf("the other tool is registered: %+v", r)
	}
}

// pflow mcp test: a server that answers is reported with its tool count and
// how the registry differs (nothing is written); a failing one with its
// reason.
func TestMCPTestReportsEachServer(t *testing.T) {
	a, _ := newApp(t)
	ctx := context.Background()
	addFake(t, a, "good", "tools=3")
	addFake(t, a, "broken", "crash-before-init")
	res, err := a.TestMCPServers(ctx, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]app.MCPTestResult{}
	for _, r := range res {
		by[r.Server] = r
	}
	g := by["good"]
	if !g.OK || g.Tools != 3 || len(g.Added) != 3 || g.Protocol == "" || g.LatencyMS <= 0 {
		t.Fatalf("good: %+v", g)
	}
	if b := by["broken"]; b.OK || !strings.Contains(b.Error, "terminated unexpectedly") {
		t.Fatalf("broken: %+v", b)
	}
	if keys := mcpKeys(registryNodes(t, a)); len(keys) != 0 {
		t.Fatalf("mcp test wrote the registry: %v", keys)
	}
	if _, err := a.SyncMCP(ctx, []string{"good"}, false, nil); err != nil {
		t.Fatal(err)
	}
	res, _ = a.TestMCPServers(ctx, []string{"good"}, false)
	if len(res) != 1 || !res[0].OK || len(res[0].Added)+len(res[0].Removed) != 0 {
		t.Fatalf("after sync: %+v", res)
	}
}
