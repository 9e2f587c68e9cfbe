package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

const farewellMD = `# Farewell
Says goodbye to someone.

## Inputs

### name
Who is leaving.
- type: string

## Steps

### bye
Say bye.
- type: shell
- command: echo "bye ${name}"

## Outputs

### text
The goodbye.
- source: ${bye.stdout}
`

const greeterMD = `# Greeter
Greets a person by name.

## Inputs

### name
Who to greet.
- type: string

### greeting
The greeting word.
- type: string
- required: false
- default: hello

## Steps

### greet
Build the greeting.
- type: shell
- command: echo "${greeting} ${name}"

## Outputs

### message
The greeting.
- source: ${greet.stdout}
`

// docsServeArgs reads the mcpServers entry docs/mcp-server.md shows for
// publishing chosen workflows, so the test starts it verbatim.
func docsServeArgs(t *testing.T) (command string, args []string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(fakemcp.RepoRoot(t), "docs", "mcp-server.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- tested: TestE2EWorkflowToolsFromTheDocsConfig -->\n```json\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/mcp-server.md lost the workflow-tools config block")
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(m[1], &cfg); err != nil || len(cfg.MCPServers) != 1 {
		t.Fatalf("the docs config is not one mcpServers entry: %v\n%s", err, m[1])
	}
	for _, e := range cfg.MCPServers {
		return e.Command, e.Args
	}
	return "", nil
}

// The docs' config for a focused server of two workflows, started verbatim
// by the TypeScript SDK client: the first workflow is a tool with its
// input and output schemas, calling it answers its outputs as
// structuredContent, and saving the second from the CLI sends
// tools/list_changed and lists it.
func TestE2EWorkflowToolsFromTheDocsConfig(t *testing.T) {
	dir, node := peers(t)
	bin := buildPflow(t)
	command, args := docsServeArgs(t)
	if command != "pflow" || !strings.Contains(strings.Join(args, " "), "--workflows changelog,release-notes") {
		t.Fatalf("the docs config changed (%s %v): update this test", command, args)
	}
	home := t.TempDir()
	work := t.TempDir()
	greeter := filepath.Join(work, "greeter.pflow.md")
	os.WriteFile(greeter, []byte(greeterMD), 0o644)
	farewell := filepath.Join(work, "farewell.pflow.md")
	os.WriteFile(farewell, []byte(farewellMD), 0o644)
	save := exec.Command(bin, "workflow", "save", greeter, "--name", "changelog")
	save.Env = testEnv(home)
	if out, err := save.CombinedOutput(); err != nil {
		t.Fatalf("save: %v\n%s", err, out)
	}
	env := testEnv(home, "FAREWELL_FILE="+farewell, "GREETER_NAME=changelog", "FAREWELL_NAME=release-notes")
	out := runNode(t, filepath.Join(dir, "e2e"), node, env, append([]string{"workflow_tools.mjs", bin}, args...)...)
	if !strings.Contains(out, `"step":"done"`) {
		t.Fatalf("client:\n%s", out)
	}
	// --no-builder-tools: only the two workflows were listed.
	if !strings.Contains(out, `"names":["changelog"]`) {
		t.Fatalf("the focused server listed more than its workflow:\n%s", out)
	}
}

// In process: --workflow-tools lists every saved workflow next to the 16,
// follows deletions, and the 16 stay unless left out.
func TestWorkflowToolsFollowTheLibrary(t *testing.T) {
	f := newFixture(t, nil, func(o *Options) { o.WorkflowTools = true })
	changed := make(chan struct{}, 10)
	c := mcp.NewClient(&mcp.Implementation{Name: "watcher", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := f.srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := func() []string {
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range lt.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if n := names(); len(n) != 16 {
		t.Fatalf("an empty library: %v", n)
	}
	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(30 * time.Second): // a guard: the event should come at once
			t.Fatalf("no tools/list_changed after %s", what)
		}
	}
	f.call("workflow_save", map[string]any{"workflow_file": greeterMD, "name": "greeter", "description": "Greets someone."}).mustOK(t)
	wait("a save over MCP")
	if n := names(); len(n) != 17 || !contains2(n, "greeter") {
		t.Fatalf("after saving: %v", n)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "greeter", Arguments: map[string]any{"name": "Bo", "greeting": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("greeter: %v %+v", err, res)
	}
	if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), `"message":"hi Bo`) {
		t.Fatalf("structuredContent %s", b)
	}
	if err := os.Remove(filepath.Join(f.home, "workflows", "greeter.pflow.md")); err != nil {
		t.Fatal(err)
	}
	wait("a deletion")
	for {
		if n := names(); !contains2(n, "greeter") {
			break
		}
		wait("a deletion (settling)")
	}
}

func contains2(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Saved workflows and run records are resources: listed, readable by URI
// and through their templates.
func TestLibraryAndRunsAsResources(t *testing.T) {
	f := newFixture(t, nil)
	f.call("workflow_save", map[string]any{"workflow_file": greeterMD, "name": "greeter", "description": "Greets someone."}).mustOK(t)
	r := f.call("workflow_execute", map[string]any{"workflow": "greeter", "parameters": map[string]any{"name": "Ada"}}).mustOK(t)
	runID, _ := r.data()["run_id"].(string)
	if runID == "" {
		t.Fatalf("no run id: %s", r.Text)
	}
	f.srv.syncLibraryResources() // what the library watch does on the change
	lr, err := f.cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, res := range lr.Resources {
		uris = append(uris, res.URI)
	}
	for _, want := range []string{"pflow://workflows/greeter", "pflow://runs/" + runID} {
		if !contains2(uris, want) {
			t.Fatalf("resources %v lack %s", uris, want)
		}
	}
	md, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "pflow://workflows/greeter"})
	if err != nil || !strings.HasPrefix(md.Contents[0].Text, "# Greeter\n") {
		t.Fatalf("workflow resource: %v %+v", err, md)
	}
	for _, uri := range []string{"pflow://runs/" + runID, "pflow://runs/last"} {
		rr, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || !strings.Contains(rr.Contents[0].Text, `"hello Ada`) || !strings.Contains(rr.Contents[0].Text, runID) {
			t.Fatalf("%s: %v %+v", uri, err, rr)
		}
	}
	if _, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "pflow://workflows/../../etc/passwd"}); err == nil {
		t.Fatal("a path-like workflow resource was read")
	}
}

// Through the real `pflow mcp serve`: a stateful MCP server keeps its state
// across two workflow_execute calls, and when the serve process ends
// (its client closes stdin) the server it kept warm ends too.
func TestE2EWarmServerAcrossCallsAndGoneAfterServe(t *testing.T) {
	bin := buildPflow(t)
	home := t.TempDir()
	id := fakemcp.NewID()
	cfg, _ := json.Marshal(map[string]any{"counter": fakemcp.Entry(id, "", "counter")})
	for _, args := range [][]string{{"mcp", "add", string(cfg)}, {"mcp", "sync", "counter"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = testEnv(home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pflow %v: %v\n%s", args, err, out)
		}
	}
	wf := "# Count\nCalls the counter.\n\n## Steps\n\n### c\nCount.\n- type: mcp-counter-count\n\n## Outputs\n\n### out\nThe count.\n- source: ${c.result}\n"
	serve := exec.Command(bin, "mcp", "serve")
	serve.Env = testEnv(home)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: serve}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var counts []string
	for range 2 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": wf}})
		if err != nil || res.IsError {
			t.Fatalf("workflow_execute: %v %+v", err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		// The count is in the outputs, as JSON text or as an object.
		m := regexp.MustCompile(`count\\?": ?(\d+)`).FindStringSubmatch(string(b))
		if m == nil {
			t.Fatalf("no count in %s", b)
		}
		counts = append(counts, m[1])
	}
	if strings.Join(counts, ",") != "1,2" {
		t.Fatalf("counts %v: the server did not stay warm between calls", counts)
	}
	if len(fakemcp.Leftovers(id)) == 0 {
		t.Fatal("the warm server is not running between calls: the test proves nothing")
	}
	cs.Close() // closes serve's stdin: it shuts down
	deadline := time.Now().Add(30 * time.Second)
	for len(fakemcp.Leftovers(id)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the warm server outlived pflow mcp serve: %v", fakemcp.Leftovers(id))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
