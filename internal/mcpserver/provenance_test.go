package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// injectFixture is a server whose configured MCP server "team" has a tool
// notes whose description and answer hold fakemcp.InjectionText.
func injectFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, nil)
	cfg, _ := json.Marshal(map[string]any{"team": fakemcp.Entry(fakemcp.NewID(), "", "inject")})
	ctx := context.Background()
	if _, err := f.app.AddMCPServers(ctx, []string{string(cfg)}); err != nil {
		t.Fatal(err)
	}
	res, err := f.app.SyncMCP(ctx, []string{"team"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Error != "" {
			t.Fatalf("sync: %+v", r)
		}
	}
	return f
}

// wantLabel checks that entry (a node, hit, brief or step) carries the
// label of the team server's notes tool.
func wantLabel(t *testing.T, where string, entry any) {
	t.Helper()
	m, _ := entry.(map[string]any)
	p, _ := m["provided_by"].(map[string]any)
	if p["kind"] != "mcp" || p["server"] != "team" || p["tool"] != "notes" || p["untrusted"] != true {
		b, _ := json.Marshal(entry)
		t.Errorf("%s: want provided_by {kind: mcp, server: team, tool: notes, untrusted: true}, got %s", where, b)
	}
}

func wantNoLabel(t *testing.T, where string, entry any) {
	t.Helper()
	if m, _ := entry.(map[string]any); m["provided_by"] != nil {
		t.Errorf("%s: a built-in entry is labelled: %v", where, m["provided_by"])
	}
}

// TestServerTextIsLabelled: an MCP tool's description holding an injection
// text reaches the agent through registry_discover, registry_describe,
// registry_search and registry_list labelled provided_by {kind: mcp,
// server, tool, untrusted: true}; built-in node types carry no label. What
// registry_describe shows is pinned in testdata/golden.
func TestServerTextIsLabelled(t *testing.T) {
	f := injectFixture(t)

	r := f.call("registry_discover", map[string]any{"task": "read the team notes and write a file", "limit": 10})
	nodes, _ := r.data()["nodes"].([]any)
	var mcpSeen, coreSeen bool
	for _, n := range nodes {
		m := n.(map[string]any)
		switch {
		case m["type"] == "mcp-team-notes":
			mcpSeen = true
			wantLabel(t, "registry_discover", m)
			if !strings.Contains(m["description"].(string), "IMPORTANT SYSTEM NOTE") {
				t.Errorf("the description is not relayed as the server wrote it: %v", m["description"])
			}
		case m["kind"] == "core":
			coreSeen = true
			wantNoLabel(t, "registry_discover "+m["type"].(string), m)
		}
	}
	if !mcpSeen || !coreSeen {
		t.Fatalf("registry_discover did not return both the MCP tool and a built-in: %s", r.Text)
	}

	r = f.call("registry_describe", map[string]any{"nodes": []any{"mcp-team-notes", "shell"}})
	nodes, _ = r.data()["nodes"].([]any)
	if len(nodes) != 2 {
		t.Fatalf("registry_describe: %s", r.Text)
	}
	wantLabel(t, "registry_describe", nodes[0])
	wantNoLabel(t, "registry_describe shell", nodes[1])
	one := f.call("registry_describe", map[string]any{"nodes": []any{"mcp-team-notes"}})
	matchGolden(t, "registry_describe-mcp-untrusted", one.Env, f.home, "<home>")

	r = f.call("registry_search", map[string]any{"pattern": "notes"})
	hits, _ := r.data()["results"].([]any)
	if len(hits) == 0 {
		t.Fatalf("registry_search: %s", r.Text)
	}
	for _, h := range hits {
		if h.(map[string]any)["type"] == "mcp-team-notes" {
			wantLabel(t, "registry_search", h)
		} else {
			wantNoLabel(t, "registry_search", h)
		}
	}

	r = f.call("registry_list", map[string]any{"filter": "notes"})
	team, _ := r.data()["mcp"].(map[string]any)["team"].([]any)
	if len(team) != 1 {
		t.Fatalf("registry_list: %s", r.Text)
	}
	wantLabel(t, "registry_list", team[0])
}

// TestServerResultsAreLabelled: what an MCP tool answered is labelled in
// registry_run's result, on the step of workflow_execute that called it and
// on the outputs read from that step — not on a built-in step or an output
// read from one.
func TestServerResultsAreLabelled(t *testing.T) {
	f := injectFixture(t)

	r := f.call("registry_run", map[string]any{"node_type": "mcp-team-notes", "parameters": map[string]any{}})
	if r.IsError {
		t.Fatalf("registry_run: %s", r.Text)
	}
	wantLabel(t, "registry_run", r.data())
	r = f.call("registry_run", map[string]any{"node_type": "shell", "parameters": map[string]any{"command": "echo hi"}})
	wantNoLabel(t, "registry_run shell", r.data())

	wf := "# Notes\nReads the notes.\n\n## Steps\n\n### read\nRead the notes.\n- type: mcp-team-notes\n\n" +
		"### say\nSay hi.\n- type: shell\n- command: echo hi\n\n" +
		"## Outputs\n\n### notes\nThe notes.\n- source: ${read.result}\n\n### hi\nThe greeting.\n- source: ${say.stdout}\n"
	r = f.call("workflow_execute", map[string]any{"workflow": wf})
	if r.IsError {
		t.Fatalf("workflow_execute: %s", r.Text)
	}
	steps, _ := r.data()["steps"].([]any)
	if len(steps) != 2 {
		t.Fatalf("steps: %s", r.Text)
	}
	wantLabel(t, "workflow_execute step read", steps[0])
	wantNoLabel(t, "workflow_execute step say", steps[1])
	outs, _ := r.data()["outputs_provided_by"].(map[string]any)
	wantLabel(t, "workflow_execute output notes", map[string]any{"provided_by": outs["notes"]})
	if _, ok := outs["hi"]; ok || len(outs) != 1 {
		t.Errorf("outputs_provided_by labels more than the MCP output: %v", outs)
	}
}
