package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/cli"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// TestExamplesAgainstRealServers runs examples/mcp/*.pflow.md with the real
// pflow CLI against the npm reference servers and checks that no server
// process is left afterwards.
func TestExamplesAgainstRealServers(t *testing.T) {
	root := fakemcp.RepoRoot(t)
	peers := fakemcp.PeersDir(t, []string{"node_modules/@modelcontextprotocol/server-everything/dist/index.js"}, "node")
	mods := filepath.Join(peers, "node_modules", "@modelcontextprotocol")
	home := t.TempDir()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	id := fakemcp.NewID()
	tag := map[string]any{fakemcp.IDVar: id}
	servers := map[string]any{
		"everything": map[string]any{"command": "node", "args": []any{filepath.Join(mods, "server-everything/dist/index.js"), "stdio"}, "env": tag},
		"fs":         map[string]any{"command": "node", "args": []any{filepath.Join(mods, "server-filesystem/dist/index.js"), dir}, "env": tag},
		"memory":     map[string]any{"command": "node", "args": []any{filepath.Join(mods, "server-memory/dist/index.js")}, "env": map[string]any{fakemcp.IDVar: id, "MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
	}
	cfg, _ := json.Marshal(servers)
	environ := []string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH"), "HOME=" + home}
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := cli.Main(context.Background(), args, &cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, environ)
		return out.String(), errb.String(), code
	}
	if out, errs, code := run("mcp", "add", string(cfg)); code != 0 {
		t.Fatalf("add: %d %s %s", code, out, errs)
	}
	if out, errs, code := run("mcp", "sync", "--all"); code != 0 || !strings.Contains(out, "Total: 37 tools discovered, 37 registered") {
		t.Fatalf("sync: %d %s %s", code, out, errs)
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{filepath.Join(root, "examples/mcp/everything.pflow.md")}, []string{"Echo: hello from pflow"}},
		{[]string{filepath.Join(root, "examples/mcp/filesystem.pflow.md"), "dir=" + dir}, []string{"written by pflow through MCP"}},
		{[]string{filepath.Join(root, "examples/mcp/memory.pflow.md")}, []string{"turns processes into workflows"}},
	}
	for _, c := range cases {
		out, errs, code := run(c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", c.args, code, out, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Fatalf("%v: output %q lacks %q (stderr %s)", c.args, out, w, errs)
			}
		}
		deadline := time.Now().Add(5 * time.Second)
		for len(fakemcp.Leftovers(id)) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%v left server processes behind: %v", c.args, fakemcp.Leftovers(id))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "mcp-note.txt")); string(b) != "written by pflow through MCP" {
		t.Fatalf("file content %q", b)
	}
}
