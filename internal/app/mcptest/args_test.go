package mcptest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/registry"
)

// runMD runs a workflow written as markdown (or JSON IR) on a.
func runMD(t *testing.T, a *app.App, name, src string) *app.RunOutcome {
	t.Helper()
	wf := filepath.Join(t.TempDir(), name)
	os.WriteFile(wf, []byte(src), 0o644)
	target, err := a.ResolveTarget(wf)
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Run(context.Background(), app.RunRequest{Target: target, NoTrace: true, NoRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Tool arguments named like step keys and controls (a screenshot tool's
// type, a wait tool's timeout) are written in the step's args block, in
// markdown and in JSON IR; the step's own controls stay what they are.
func TestToolArgumentsNamedLikeStepKeys(t *testing.T) {
	a, _ := newApp(t)
	addFake(t, a, "fake", "collide")
	if _, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil); err != nil {
		t.Fatal(err)
	}
	got := func(out *app.RunOutcome) map[string]any {
		t.Helper()
		if len(out.ValidationErrors) > 0 || out.Result == nil || !out.Result.Success() {
			t.Fatalf("run: %+v %+v", out.ValidationErrors, out.Result)
		}
		var m map[string]any
		b, _ := json.Marshal(out.Result.Outputs["sent"])
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("outputs %s: %v", b, err)
		}
		return m
	}
	const outputs = "\n## Outputs\n\n### sent\nWhat the tool got.\n- source: ${shot.result}\n"
	inline := "# Shot\nA screenshot.\n\n## Steps\n\n### shot\nShoot.\n- type: mcp-fake-shoot\n- timeout: 30\n- retries: 1\n- args: {type: jpeg, timeout: 5000}\n" + outputs
	if m := got(runMD(t, a, "inline.pflow.md", inline)); m["type"] != "jpeg" || m["timeout"] != float64(5000) || m["retries"] != nil {
		t.Fatalf("the tool got %v; want type jpeg and timeout 5000 only", m)
	}
	block := "# Shot\nA screenshot.\n\n## Steps\n\n### shot\nShoot.\n- type: mcp-fake-shoot\n\n```yaml args\ntype: png\nretries: 3\n```\n" + outputs
	if m := got(runMD(t, a, "block.pflow.md", block)); m["type"] != "png" || m["retries"] != float64(3) {
		t.Fatalf("the tool got %v from the yaml args block", m)
	}
	ir := `{"ir_version": "0.1.0", "nodes": [{"id": "shot", "type": "mcp-fake-shoot", "params": {"timeout": 30, "args": {"type": "jpeg", "retries": 2}}}],
	 "edges": [], "outputs": {"sent": {"source": "${shot.result}"}}}`
	if m := got(runMD(t, a, "ir.json", ir)); m["type"] != "jpeg" || m["retries"] != float64(2) || m["timeout"] != nil {
		t.Fatalf("the tool got %v from JSON IR", m)
	}

	// Without the block, a required argument named like a step key is
	// missing, and the error says how to write it; a control the tool also
	// has is the step's, with a warning saying so.
	out := runMD(t, a, "missing.pflow.md", "# Shot\nA screenshot.\n\n## Steps\n\n### shot\nShoot.\n- type: mcp-fake-shoot\n- timeout: 30\n")
	var msgs []string
	for _, d := range append(out.ValidationErrors, out.Warnings...) {
		msgs = append(msgs, d.Message+" | "+d.Hint)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"missing required parameter 'type' | '- type:' would set the step's node type; pass the tool's argument under args: '- args: {type: ...}'",
		"Step 'shot': '- timeout:' is the step's call timeout (seconds), not the argument 'timeout' of tool mcp-fake-shoot, which stays unset",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, all)
		}
	}
	// A misspelt argument in the block is named.
	out = runMD(t, a, "typo.pflow.md", "# Shot\nA screenshot.\n\n## Steps\n\n### shot\nShoot.\n- type: mcp-fake-shoot\n- args: {type: png, timeuot: 3}\n")
	if len(out.ValidationErrors) != 1 || !strings.Contains(out.ValidationErrors[0].Message, "unknown argument 'timeuot' in args. Did you mean 'timeout'?") {
		t.Fatalf("typo in args: %+v", out.ValidationErrors)
	}
}

// An MCP step's failure carries its class too: a tool that answers
// isError takes the tool_error edge, not the error edge.
func TestMCPErrorClassesRoute(t *testing.T) {
	a, _ := newApp(t)
	addFake(t, a, "fake")
	if _, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil); err != nil {
		t.Fatal(err)
	}
	src := func(tool string) string {
		return "# Classes\nRoutes an MCP failure.\n\n## Steps\n\n### call\nCall.\n- type: mcp-fake-" + tool + "\n\n```yaml on\ntool_error: tooled\nerror: errored\n```\n\n" +
			"### tooled\nA tool error.\n- type: shell\n- command: echo \"tool ${call.error_class}\"\n\n### errored\nAnother error.\n- type: shell\n- command: echo \"other ${call.error_class}\"\n\n" +
			"## Outputs\n\n### a\nA.\n- source: ${tooled.stdout}\n\n### b\nB.\n- source: ${errored.stdout}\n"
	}
	out := runMD(t, a, "fail.pflow.md", src("fail"))
	if out.Result == nil || !out.Result.Success() || strings.TrimSpace(out.Result.Outputs["a"].(string)) != "tool tool_error" {
		t.Fatalf("isError: %+v %+v", out.ValidationErrors, out.Result)
	}
}

// A tool the server adds during the run (announced with
// notifications/tools/list_changed) can be called by a later step; the
// session's first tool list did not have it.
func TestToolAddedMidRunCanBeCalled(t *testing.T) {
	a, _ := newApp(t)
	addFake(t, a, "fake", "grow")
	if _, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil); err != nil {
		t.Fatal(err)
	}
	// The registry knows the tool (an earlier sync saw it); this session's
	// server offers it only after its first call.
	a.RegisterMCPTools(context.Background(), "fake", append(fakeTools(t, a), &mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}}))
	src := "# Grow\nCalls a tool the server adds mid-run.\n\n## Steps\n\n### first\nFirst call.\n- type: mcp-fake-echo\n- message: hi\n\n" +
		"### second\nThe new tool.\n- type: mcp-fake-late\n\n## Outputs\n\n### said\nWhat it said.\n- source: ${second.result}\n"
	out := runMD(t, a, "grow.pflow.md", src)
	if out.Result == nil || !out.Result.Success() || out.Result.Outputs["said"] != "late tool answered" {
		t.Fatalf("run: %+v %+v", out.ValidationErrors, out.Result)
	}
}

// fakeTools lists the fake server's tools as the registry has them.
func fakeTools(t *testing.T, a *app.App) []*mcp.Tool {
	t.Helper()
	var out []*mcp.Tool
	for _, e := range registryNodes(t, a) {
		if e.MCP != nil && e.MCP.Server == "fake" {
			out = append(out, &mcp.Tool{Name: e.MCP.Tool, InputSchema: e.MCP.InputSchema})
		}
	}
	return out
}

// Drift between the registry and the live server: a
// sync reports what was added, changed and removed; a run that calls a tool
// whose schema changed since it was synced warns (and ends degraded).
func TestDriftSinceSync(t *testing.T) {
	a, _ := newApp(t)
	addFake(t, a, "fake")
	if _, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil); err != nil {
		t.Fatal(err)
	}
	live := fakeTools(t, a)
	// The registry as an older server had it: echo took another parameter,
	// "gone" existed, "add" did not.
	var old []*mcp.Tool
	for _, tl := range live {
		switch tl.Name {
		case "add":
			continue
		case "echo":
			old = append(old, &mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}, "loud": map[string]any{"type": "boolean"}}}})
		default:
			old = append(old, tl)
		}
	}
	old = append(old, &mcp.Tool{Name: "gone", InputSchema: map[string]any{"type": "object"}})
	a.RegisterMCPTools(context.Background(), "fake", old)

	// pflow --validate-only checks the steps' tools against the live server.
	wf := filepath.Join(t.TempDir(), "both.pflow.md")
	os.WriteFile(wf, []byte("# Both\nTwo tools.\n\n## Steps\n\n### e\nEcho.\n- type: mcp-fake-echo\n- message: hi\n\n### g\nGone.\n- type: mcp-fake-gone\n"), 0o644)
	target, err := a.ResolveTarget(wf)
	if err != nil {
		t.Fatal(err)
	}
	vo, err := a.Run(context.Background(), app.RunRequest{Target: target, ValidateOnly: true, CheckLive: true})
	if err != nil || len(vo.ValidationErrors) > 0 {
		t.Fatalf("validate-only: %v %+v", err, vo.ValidationErrors)
	}
	var warned []string
	for _, d := range vo.Warnings {
		warned = append(warned, d.Message)
	}
	for _, want := range []string{"Step 'e': tool echo of MCP server fake changed since it was synced", "Step 'g': tool gone is no longer offered by MCP server fake"} {
		if !strings.Contains(strings.Join(warned, "\n"), want) {
			t.Errorf("validate-only warnings lack %q: %v", want, warned)
		}
	}

	// A run against the registry's echo warns that the tool changed.
	out := runMD(t, a, "echo.pflow.md", "# Echo\nEchoes.\n\n## Steps\n\n### e\nEcho.\n- type: mcp-fake-echo\n- message: hi\n")
	if out.Result == nil || !out.Result.Success() || out.Result.Status != "degraded" || len(out.Result.Warnings) != 1 ||
		!strings.Contains(out.Result.Warnings[0].Message, "MCP tool echo of server fake changed since it was synced") {
		t.Fatalf("run: %+v", out.Result)
	}
	// The next sync says what changed.
	res, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if strings.Join(r.Added, ",") != "mcp-fake-add" || strings.Join(r.Changed, ",") != "mcp-fake-echo" || strings.Join(r.RemovedNodes, ",") != "mcp-fake-gone" {
		t.Fatalf("sync report: added %v changed %v removed %v", r.Added, r.Changed, r.RemovedNodes)
	}
	// After it, the run is clean again.
	out = runMD(t, a, "echo.pflow.md", "# Echo\nEchoes.\n\n## Steps\n\n### e\nEcho.\n- type: mcp-fake-echo\n- message: hi\n")
	if out.Result == nil || out.Result.Status != "success" {
		t.Fatalf("after the sync: %+v", out.Result)
	}
}

// A tool's annotations are kept in the registry and shown by registry
// describe / mcp info.
func TestAnnotationsShown(t *testing.T) {
	a, _ := newApp(t)
	addFake(t, a, "fake", "lookup")
	if _, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil); err != nil {
		t.Fatal(err)
	}
	cat, _, err := a.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	spec, ok := cat.Lookup("mcp-fake-lookup")
	if !ok {
		t.Fatal("no mcp-fake-lookup")
	}
	if md := registry.Describe(spec); !strings.Contains(md, "**Annotations** (the server's claims): read-only, idempotent, not destructive, closed world") {
		t.Fatalf("describe:\n%s", md)
	}
}
