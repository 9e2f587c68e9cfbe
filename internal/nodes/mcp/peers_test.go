package mcpnode

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// peersDir returns <repo>/testdata/peers with the test peers (real MCP servers)
// and node.
func peersDir(t testing.TB) string {
	t.Helper()
	return fakemcp.PeersDir(t, []string{"node_modules/@modelcontextprotocol/server-everything/dist/index.js"}, "node")
}

type peer struct {
	t     *testing.T
	id    string
	path  string
	scope *scope
	node  node.Node
}

// newPeer writes an mcp-servers.json with the given servers, each tagged so
// leftover processes can be found.
func newPeer(t *testing.T, servers map[string]map[string]any) *peer {
	t.Helper()
	p := &peer{t: t, id: fakemcp.NewID(), path: filepath.Join(t.TempDir(), "mcp-servers.json"), scope: &scope{}}
	for _, s := range servers {
		env, _ := s["env"].(map[string]any)
		if env == nil {
			env = map[string]any{}
		}
		env[fakemcp.IDVar] = p.id
		s["env"] = env
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	os.WriteFile(p.path, b, 0o600)
	p.node = New(Config{ServersPath: p.path, Env: os.LookupEnv})
	t.Cleanup(func() {
		p.scope.Close()
		deadline := time.Now().Add(5 * time.Second)
		for len(fakemcp.Leftovers(p.id)) > 0 {
			if time.Now().After(deadline) {
				t.Errorf("server processes left behind: %v", fakemcp.Leftovers(p.id))
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	return p
}

func (p *peer) call(server, tool string, params map[string]any) map[string]any {
	p.t.Helper()
	all := map[string]any{ParamServer: server, ParamTool: tool}
	for k, v := range params {
		all[k] = v
	}
	res, err := p.node.Run(context.Background(), &node.Request{NodeID: tool, Type: "mcp-" + server + "-" + tool, Params: all, Scope: p.scope})
	if err != nil {
		p.t.Fatal(err)
	}
	if res.Action == "error" {
		p.t.Fatalf("%s/%s failed: %v", server, tool, res.Outputs["error"])
	}
	return res.Outputs
}

func everythingChecks(t *testing.T, p *peer, server string) {
	if out := p.call(server, "echo", map[string]any{"message": "hello"}); out["result"] != "Echo: hello" {
		t.Fatalf("echo: %#v", out)
	}
	out := p.call(server, "get-sum", map[string]any{"a": "2", "b": int64(40)})
	if !strings.Contains(fmt.Sprint(out["result"]), "42") {
		t.Fatalf("get-sum: %#v", out)
	}
	out = p.call(server, "get-structured-content", map[string]any{"location": "New York"})
	if _, ok := out["temperature"]; !ok {
		t.Fatalf("get-structured-content: %#v", out)
	}
}

func TestPeerEverythingStdio(t *testing.T) {
	peers := peersDir(t)
	p := newPeer(t, map[string]map[string]any{"everything": {
		"command": "node", "args": []any{filepath.Join(peers, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"},
	}})
	everythingChecks(t, p, "everything")
}

// startHTTPPeer runs server-everything in an HTTP mode on 127.0.0.1 and
// returns its base URL; the server's process group is killed at cleanup.
func startHTTPPeer(t *testing.T, peers, mode, id string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("node", "--require", filepath.Join(peers, "loopback.cjs"), filepath.Join(peers, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port), fakemcp.IDVar+"="+id)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything %s did not listen on %s", mode, addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr
}

func TestPeerEverythingStreamableHTTP(t *testing.T) {
	peers := peersDir(t)
	id := fakemcp.NewID()
	base := startHTTPPeer(t, peers, "streamableHttp", id)
	p := newPeer(t, map[string]map[string]any{"everything": {"type": "http", "url": base + "/mcp", "headers": map[string]any{"X-Test": "1"}}})
	everythingChecks(t, p, "everything")
}

func TestPeerEverythingSSE(t *testing.T) {
	peers := peersDir(t)
	id := fakemcp.NewID()
	base := startHTTPPeer(t, peers, "sse", id)
	p := newPeer(t, map[string]map[string]any{"everything": {"type": "sse", "url": base + "/sse"}})
	everythingChecks(t, p, "everything")
}

func TestPeerHTTPConnectionRefused(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	p := newPeer(t, map[string]map[string]any{"down": {"type": "http", "url": "http://" + addr + "/mcp", "startup_timeout": int64(5)}})
	res, _ := p.node.Run(context.Background(), &node.Request{Type: "mcp-down-echo", Params: map[string]any{ParamServer: "down", ParamTool: "echo"}, Scope: p.scope})
	if msg := errText(res); !strings.HasPrefix(msg, "Could not connect to MCP server at http://"+addr+"/mcp") {
		t.Fatalf("error = %q", msg)
	}
}

func TestPeerFilesystemWriteThenRead(t *testing.T) {
	peers := peersDir(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	p := newPeer(t, map[string]map[string]any{"fs": {
		"command": "node", "args": []any{filepath.Join(peers, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), root},
	}})
	file := filepath.Join(root, "note.txt")
	p.call("fs", "write_file", map[string]any{"path": file, "content": "hello from pflow"})
	out := p.call("fs", "read_text_file", map[string]any{"path": file})
	if out["content"] != "hello from pflow" {
		t.Fatalf("read_text_file: %#v", out)
	}
	if b, _ := os.ReadFile(file); string(b) != "hello from pflow" {
		t.Fatalf("file content %q", b)
	}
}

func TestPeerMemoryCreateThenSearch(t *testing.T) {
	peers := peersDir(t)
	p := newPeer(t, map[string]map[string]any{"memory": {
		"command": "node", "args": []any{filepath.Join(peers, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")},
		"env": map[string]any{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")},
	}})
	p.call("memory", "create_entities", map[string]any{"entities": `[{"name": "pflow", "entityType": "project", "observations": ["turns agent processes into workflows"]}]`})
	out := p.call("memory", "search_nodes", map[string]any{"query": "pflow"})
	ents, _ := out["entities"].([]any)
	if len(ents) != 1 || !strings.Contains(fmt.Sprint(ents[0]), "turns agent processes into workflows") {
		t.Fatalf("search_nodes: %#v", out)
	}
}
