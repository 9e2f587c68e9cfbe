package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/settings"
)

// pflow mcp add refuses a remote server at a link-local or cloud metadata
// address until settings.json's allow_hosts names its host, saying so;
// nothing is saved. With the setting, it is added.
func TestMCPAddRefusesALinkLocalServer(t *testing.T) {
	ctx := context.Background()
	a := New([]string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, nil)
	for host, u := range map[string]string{
		"169.254.169.254": "http://169.254.169.254/mcp",
		"fe80::1":         "https://[fe80::1]:8443/mcp",
	} {
		b, _ := json.Marshal(map[string]any{"meta": map[string]any{"type": "http", "url": u, "insecure": true}})
		_, err := a.AddMCPServers(ctx, []string{string(b)})
		pe := pferr.As(err)
		text := pe.Message + "\n" + pe.Hint
		for _, want := range []string{"MCP server 'meta' was not added", "host " + host, `"network": {"allow_hosts": ["` + host + `"]}`, a.Paths.Settings} {
			if err == nil || !strings.Contains(text, want) {
				t.Errorf("%s: the refusal does not say %q:\n%s", u, want, text)
			}
		}
		if servers, _ := a.MCPServers(); servers["meta"] != nil {
			t.Fatalf("%s: a refused server was saved", u)
		}
	}
	if err := settings.Update(ctx, a.Paths.Settings, func(s *settings.Settings) error {
		s.Network.AllowHosts = []string{"169.254.169.254"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"meta": map[string]any{"type": "http", "url": "http://169.254.169.254/mcp", "insecure": true}})
	if _, err := a.AddMCPServers(ctx, []string{string(b)}); err != nil {
		t.Fatalf("allowed in settings, still refused: %v", err)
	}
	// A url from a variable is checked when it is connected to.
	b, _ = json.Marshal(map[string]any{"later": map[string]any{"type": "http", "url": "${MCP_URL}"}})
	if _, err := a.AddMCPServers(ctx, []string{string(b)}); err != nil {
		t.Fatal(err)
	}
}

// A run an agent started (mcp serve) reaches its remote MCP servers under
// the agent's rules: a server whose answer redirects to loopback fails the
// step with the refusal, and nothing reaches the server behind the
// redirect; the same workflow run from the command line, or by an agent
// once settings allow private addresses, calls the tool.
func TestAgentRunRefusesARemoteServersRedirectToLoopback(t *testing.T) {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "hop", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ping"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var calls atomic.Int32
	back := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		h.ServeHTTP(w, r)
	}))
	defer back.Close()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, back.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer front.Close()

	a := New([]string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, nil)
	b, _ := json.Marshal(map[string]any{"hop": map[string]any{"type": "http", "url": front.URL + "/mcp"}})
	if _, err := a.AddMCPServers(ctx, []string{string(b)}); err != nil {
		t.Fatal(err)
	}
	// From the command line, the redirect is followed.
	if res, err := a.SyncMCP(ctx, []string{"hop"}, false, nil); err != nil || res[0].Error != "" {
		t.Fatalf("sync: %v %+v", err, res)
	}
	wf := filepath.Join(t.TempDir(), "ping.pflow.md")
	os.WriteFile(wf, []byte("# Ping\nPings a server behind a redirect.\n\n## Steps\n\n### p\nPing.\n- type: mcp-hop-ping\n\n## Outputs\n\n### said\nThe answer.\n- source: ${p.result}\n"), 0o644)
	target, err := a.ResolveTarget(wf)
	if err != nil {
		t.Fatal(err)
	}
	run := func(origin string) *RunOutcome {
		t.Helper()
		out, err := a.Run(ctx, RunRequest{Target: target, NoTrace: true, NoRecord: true, Origin: origin})
		if err != nil || out.Result == nil {
			t.Fatalf("run (%s): %v %+v", origin, err, out)
		}
		return out
	}
	if out := run("cli"); !out.Result.Success() || out.Result.Outputs["said"] != "pong" {
		t.Fatalf("the command line's run: %+v", out.Result)
	}

	calls.Store(0)
	out := run("mcp")
	if out.Result.Success() {
		t.Fatal("an agent's run followed a remote server's redirect to loopback")
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d requests reached the server behind the redirect in an agent's run", n)
	}
	msg := RunFailure(out, target, Agent).Message
	for _, want := range []string{"the redirect of MCP server 'hop' from " + front.URL + "/mcp to 127.0.0.1", "a loopback address",
		`"network": {"allow_hosts": ["127.0.0.1"]}`, "ask the user"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the agent's failure does not say %q:\n%s", want, msg)
		}
	}

	if err := settings.Update(ctx, a.Paths.Settings, func(s *settings.Settings) error {
		s.Network.AllowPrivate = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if out := run("mcp"); !out.Result.Success() || out.Result.Outputs["said"] != "pong" {
		t.Fatalf("an agent's run with allow_private: %+v", out.Result)
	}
}
