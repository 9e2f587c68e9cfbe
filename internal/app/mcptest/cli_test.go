package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/cli"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

type cliRun struct {
	t       *testing.T
	environ []string
}

func newCLI(t *testing.T) *cliRun {
	home := t.TempDir()
	return &cliRun{t: t, environ: []string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH"), "HOME=" + home}}
}

func (c *cliRun) run(stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), args, &cli.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errb}, c.environ)
	return out.String(), errb.String(), code
}

func TestCLIMCPCommands(t *testing.T) {
	c := newCLI(t)
	out, _, code := c.run("", "mcp", "list")
	if code != 0 || !strings.Contains(out, "No MCP servers configured.") {
		t.Fatalf("empty list: %d %q", code, out)
	}
	_, errs, code := c.run("", "mcp", "add", `{"x": {"invalid": true}}`)
	if code != 1 || !strings.Contains(errs, "Invalid JSON format. Expected one of:") {
		t.Fatalf("invalid add: %d %q", code, errs)
	}
	id := fakemcp.NewID()
	entry := fakemcp.Entry(id, "")
	entry["env"].(map[string]any)["API_TOKEN"] = "tok_live_1234567890"
	cfg, _ := json.Marshal(map[string]any{"Fake_Server": entry})
	out, errs, code = c.run("", "mcp", "add", string(cfg))
	if code != 0 || !strings.Contains(out, "✓ Added/updated 1 server(s) from JSON input:\n  - fake-server") || !strings.Contains(out, "Successfully configured 1 MCP server(s).") || !strings.Contains(errs, "renamed to 'fake-server'") {
		t.Fatalf("add: %d %q %q", code, out, errs)
	}
	out, _, _ = c.run("", "mcp", "list")
	if !strings.Contains(out, "  fake-server:\n    Transport: stdio\n    Command: ") || strings.Contains(out, "tok_live_1234567890") || !strings.Contains(out, "API_TOKEN=tok***") {
		t.Fatalf("list: %q", out)
	}
	out, _, _ = c.run("", "mcp", "list", "--json")
	var listed map[string]any
	if json.Unmarshal([]byte(out), &listed) != nil || listed["fake-server"] == nil || strings.Contains(out, "tok_live_1234567890") {
		t.Fatalf("list --json: %q", out)
	}
	_, errs, code = c.run("", "mcp", "sync")
	if code == 0 || !strings.Contains(errs, "Specify a server name or use --all") {
		t.Fatalf("sync without args: %d %q", code, errs)
	}
	out, errs, code = c.run("", "mcp", "sync", "fake-server")
	if code != 0 || !strings.Contains(out, "Syncing server 'fake-server'...\n✓ Discovered 10 tools (MCP 2025-11-25)\n✓ Registered 10 tools in pflow registry") || !strings.Contains(out, "  - mcp-fake-server-add\n") {
		t.Fatalf("sync: %d %q %q", code, out, errs)
	}
	out, _, _ = c.run("", "mcp", "tools", "fake-server")
	if !strings.Contains(out, "Registered tools for 'fake-server':") || !strings.Contains(out, "  mcp-fake-server-echo:\n    Echoes back the input\n    Parameters: message") {
		t.Fatalf("tools: %q", out)
	}
	out, _, _ = c.run("", "mcp", "tools", "--json")
	var tools []map[string]any
	if json.Unmarshal([]byte(out), &tools) != nil || len(tools) != 10 {
		t.Fatalf("tools --json: %q", out)
	}
	out, _, code = c.run("", "mcp", "info", "mcp-fake-server-add")
	if code != 0 || !strings.Contains(out, "Tool Name: add") || !strings.Contains(out, "  - a: float (required)") || !strings.Contains(out, "    - type: mcp-fake-server-add") {
		t.Fatalf("info: %q", out)
	}
	// The usage snippet is the one `registry describe` prints (before,
	// `mcp info` printed "- a: value" for a number, which validated and then
	// failed at run time); pasted as a workflow, it validates and runs.
	if !strings.Contains(out, "    - a: 1.0\n    - b: 1.0\n") {
		t.Fatalf("info snippet: %q", out)
	}
	var snippet []string
	for _, l := range strings.Split(out[strings.Index(out, "Usage in .pflow.md:"):], "\n")[1:] {
		snippet = append(snippet, strings.TrimPrefix(l, "    "))
	}
	wf := filepath.Join(t.TempDir(), "snippet.pflow.md")
	os.WriteFile(wf, []byte("# Snippet\nFrom mcp info.\n\n## Steps\n\n"+strings.Join(snippet, "\n")), 0o644)
	if out, errs, code := c.run("", wf); code != 0 {
		t.Fatalf("the mcp info snippet does not run: %d\n%s\n%s", code, out, errs)
	}
	_, errs, code = c.run("", "mcp", "info", "add")
	if code != 1 || !strings.Contains(errs, "Tool 'add' not found") || !strings.Contains(errs, "mcp-fake-server-add") {
		t.Fatalf("info unknown: %d %q", code, errs)
	}
	// Without a terminal to ask on, a destructive command needs --yes
	// (it used to print "Cancelled." and exited 0).
	_, errs, code = c.run("y\n", "mcp", "remove", "fake-server")
	if code != 2 || !strings.Contains(errs, "needs confirmation") || !strings.Contains(errs, "pflow mcp remove fake-server --yes") {
		t.Fatalf("remove without --yes: %d %q", code, errs)
	}
	out, _, code = c.run("", "mcp", "remove", "-f", "fake-server")
	if code != 0 || !strings.Contains(out, "  Removed 10 tools from registry\n✓ Removed MCP server 'fake-server'") {
		t.Fatalf("remove: %d %q", code, out)
	}
	_, errs, code = c.run("", "mcp", "remove", "-f", "fake-server")
	if code != 1 || !strings.Contains(errs, "Server 'fake-server' not found") {
		t.Fatalf("remove again: %d %q", code, errs)
	}
}

// TestCLIMCPSyncSeveralServers checks the multi-server sync output: one
// header with the server count, a line per server (failures on stderr), the
// total, and exit 1 when a server failed.
func TestCLIMCPSyncSeveralServers(t *testing.T) {
	c := newCLI(t)
	id := fakemcp.NewID()
	cfg, _ := json.Marshal(map[string]any{
		"good": fakemcp.Entry(id, ""),
		"bad":  fakemcp.Entry(id, "", "crash-before-init"),
	})
	if out, errs, code := c.run("", "mcp", "add", string(cfg)); code != 0 {
		t.Fatalf("add: %d %q %q", code, out, errs)
	}
	out, errs, code := c.run("", "mcp", "sync", "--all")
	if code != 1 {
		t.Fatalf("sync --all with a failing server: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"Syncing 2 servers...\n", "  ✓ good: 10 discovered, 10 registered\n", "Total: 10 tools discovered, 10 registered\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "Syncing") != 1 {
		t.Errorf("want one header line:\n%s", out)
	}
	if !strings.Contains(errs, "  ✗ bad: ") {
		t.Errorf("stderr lacks the failed server:\n%s", errs)
	}
	out, _, _ = c.run("", "mcp", "sync", "--all", "--json")
	if strings.Contains(out, "Syncing") {
		t.Errorf("--json prints progress:\n%s", out)
	}
	if left := fakemcp.Leftovers(id); len(left) > 0 {
		t.Errorf("server processes left behind: %v", left)
	}
}
