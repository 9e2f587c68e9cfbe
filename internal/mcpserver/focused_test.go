package mcpserver

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// connectTo starts a second server with opts on the home of f and connects
// an in-memory client to it.
func connectTo(t *testing.T, f *fixture, opts Options) (*Server, *mcp.ClientSession) {
	t.Helper()
	env := []string{"PFLOW_HOME=" + f.home, "HOME=" + f.home, "PATH=" + os.Getenv("PATH")}
	opts.App = app.New(env, &fakemcp.Buffer{})
	opts.Version = "test"
	srv := New(opts)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "focused-client", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close(); srv.Shutdown() })
	return srv, cs
}

func resourceURIs(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	lr, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range lr.Resources {
		uris = append(uris, r.URI)
	}
	return uris
}

// A focused server (--workflows, --no-builder-tools) lists and reads only
// the workflows it publishes and their runs: not another saved
// workflow, not its runs, not inline runs, and pflow://runs/last is the
// newest run it may show. Without the builder tools it has no guides.
func TestFocusedServerExposesOnlyWhatItPublishes(t *testing.T) {
	full := newFixture(t, nil)
	for name, md := range map[string]string{"greeter": greeterMD, "farewell": farewellMD} {
		full.call("workflow_save", map[string]any{"workflow_file": md, "name": name, "description": "A " + name + "."}).mustOK(t)
	}
	runID := func(r *result) string {
		id, _ := r.data()["run_id"].(string)
		if id == "" {
			t.Fatalf("no run id: %s", r.Text)
		}
		return id
	}
	greeterRun := runID(full.call("workflow_execute", map[string]any{"workflow": "greeter", "parameters": map[string]any{"name": "Ada"}}).mustOK(t))
	farewellRun := runID(full.call("workflow_execute", map[string]any{"workflow": "farewell", "parameters": map[string]any{"name": "Bo"}}).mustOK(t))
	inlineRun := runID(full.call("workflow_execute", map[string]any{"workflow": echoMD, "parameters": map[string]any{"msg": "hi"}}).mustOK(t))

	ctx := context.Background()
	read := func(cs *mcp.ClientSession, uri string) (string, error) {
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", err
		}
		return rr.Contents[0].Text, nil
	}
	hidden := []string{"pflow://workflows/farewell", "pflow://runs/" + farewellRun, "pflow://runs/" + inlineRun}

	// --workflows greeter --no-builder-tools
	srv, cs := connectTo(t, full, Options{Workflows: []string{"greeter"}, NoBuilderTools: true})
	uris := resourceURIs(t, cs)
	for _, want := range []string{"pflow://workflows/greeter", "pflow://runs/" + greeterRun} {
		if !slices.Contains(uris, want) {
			t.Errorf("focused server: resources %v lack %s", uris, want)
		}
	}
	for _, no := range append(hidden, InstructionsURI, SandboxInstructionsURI) {
		if slices.Contains(uris, no) {
			t.Errorf("focused server lists %s: %v", no, uris)
		}
		if text, err := read(cs, no); err == nil {
			t.Errorf("focused server reads %s: %.80s", no, text)
		}
	}
	if text, err := read(cs, "pflow://runs/last"); err != nil || !strings.Contains(text, greeterRun) {
		t.Errorf("pflow://runs/last on the focused server must be the greeter's run %s: %v %.200s", greeterRun, err, text)
	}
	if text, err := read(cs, "pflow://workflows/greeter"); err != nil || !strings.HasPrefix(text, "# Greeter\n") {
		t.Errorf("the published workflow: %v %.80s", err, text)
	}
	if strings.Contains(cs.InitializeResult().Instructions, "workflow_discover") {
		t.Errorf("a server without builder tools tells the agent to call them: %s", cs.InitializeResult().Instructions)
	}
	// A run made through the workflow's tool is its run.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greeter", Arguments: map[string]any{"name": "Cy"}})
	if err != nil || res.IsError {
		t.Fatalf("greeter tool: %v %+v", err, res)
	}
	toolRun, _ := res.Meta["pflow/run_id"].(string)
	srv.syncLibraryResources() // what the library watch does on the change
	if uris := resourceURIs(t, cs); toolRun == "" || !slices.Contains(uris, "pflow://runs/"+toolRun) {
		t.Errorf("the tool's run %q is not listed: %v", toolRun, uris)
	}
	if text, err := read(cs, "pflow://runs/last"); err != nil || !strings.Contains(text, toolRun) {
		t.Errorf("pflow://runs/last after the tool's run: %v %.200s", err, text)
	}

	// --workflows greeter with the builder tools: the guides apply, the
	// records are still those of greeter.
	_, cs = connectTo(t, full, Options{Workflows: []string{"greeter"}})
	uris = resourceURIs(t, cs)
	if !slices.Contains(uris, InstructionsURI) {
		t.Errorf("with builder tools the guide is listed: %v", uris)
	}
	for _, no := range hidden {
		if slices.Contains(uris, no) {
			t.Errorf("--workflows greeter lists %s: %v", no, uris)
		}
		if _, err := read(cs, no); err == nil {
			t.Errorf("--workflows greeter reads %s", no)
		}
	}

	// A full server still shows everything.
	full.srv.syncLibraryResources()
	uris = resourceURIs(t, full.cs)
	for _, want := range hidden {
		if !slices.Contains(uris, want) {
			t.Errorf("the full server lacks %s: %v", want, uris)
		}
	}
}
