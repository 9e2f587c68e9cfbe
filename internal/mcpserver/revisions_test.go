package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// connectHTTPAt connects go-sdk's client asking for version (2026-07-28:
// server/discover, stateless; 2025-11-25: initialize and a session).
func connectHTTPAt(t *testing.T, url, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// pflow's HTTP server speaks both revisions at /mcp: a 2026-07-28 client
// gets it through server/discover (no session), a 2025 one through
// initialize; each lists the tools, runs a workflow with progress, and a
// cancelled call stops its run.
func TestHTTPServesBothRevisions(t *testing.T) {
	for _, version := range []string{mcpclient.ModernVersion, mcpclient.LegacyVersion} {
		t.Run(version, func(t *testing.T) {
			_, ts, _ := newHTTP(t, "")
			var progress atomic.Int64
			cs := connectHTTPAt(t, ts.URL+"/mcp", version, &mcp.ClientOptions{
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
			})
			if v := cs.InitializeResult().ProtocolVersion; v != version {
				t.Fatalf("negotiated %q", v)
			}
			if (cs.ID() == "") != (version == mcpclient.ModernVersion) {
				t.Fatalf("session id %q at %s", cs.ID(), version)
			}
			ctx := context.Background()
			lt, err := cs.ListTools(ctx, nil)
			if err != nil || len(lt.Tools) != 16 {
				t.Fatalf("tools: %v %v", err, lt)
			}
			p := &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": echoMD, "parameters": map[string]any{"msg": "hi"}}}
			p.SetProgressToken("tok")
			r, err := cs.CallTool(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if res := decodeResult(t, "workflow_execute", r); res.IsError {
				t.Fatal(res.Text)
			}
			if progress.Load() == 0 {
				t.Fatal("no progress notification")
			}

			md, pidFile := sleeper(t)
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": md}})
				done <- err
			}()
			pid := waitPid(t, pidFile)
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("cancelled call did not return")
			}
			waitGone(t, pid)
		})
	}
}

// server/discover over HTTP lists 2026-07-28 with the 2025 revisions, and
// opens no session.
func TestHTTPDiscoverListsBothRevisions(t *testing.T) {
	_, ts, _ := newHTTP(t, "")
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcpclient.ModernVersion)
	req.Header.Set("Mcp-Method", "server/discover")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(b)
	if i := strings.Index(text, "data: "); i >= 0 { // an event stream
		text = strings.TrimSpace(strings.SplitN(text[i+len("data: "):], "\n", 2)[0])
	}
	var msg struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(text), &msg); err != nil {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if !slices.Contains(msg.Result.SupportedVersions, mcpclient.ModernVersion) || !slices.Contains(msg.Result.SupportedVersions, mcpclient.LegacyVersion) {
		t.Fatalf("supported versions %v in %s", msg.Result.SupportedVersions, b)
	}
	if resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("discover opened a session: %s", resp.Header.Get("Mcp-Session-Id"))
	}
}

// Stateless means stateless: two pflow servers behind one address, each
// request going to the next (no affinity), serve a 2026-07-28 client.
func TestHTTPModernNeedsNoAffinity(t *testing.T) {
	_, a, _ := newHTTP(t, "")
	_, b, _ := newHTTP(t, "")
	var n atomic.Int64
	targets := []string{a.URL, b.URL}
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		to := targets[n.Add(1)%2]
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, to+r.URL.Path, r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(lb.Close)
	cs := connectHTTPAt(t, lb.URL+"/mcp", mcpclient.ModernVersion, nil)
	ctx := context.Background()
	for i := range 4 {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": echoMD, "parameters": map[string]any{"msg": "hi"}}})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if res := decodeResult(t, "workflow_execute", r); res.IsError {
			t.Fatal(res.Text)
		}
	}
	if n.Load() < 4 {
		t.Fatalf("only %d requests went through", n.Load())
	}
}

// A change of the tool list reaches a 2026-07-28 client through
// subscriptions/listen and a 2025 one through
// notifications/tools/list_changed, both on one server.
func TestHTTPListChangesReachBothRevisions(t *testing.T) {
	f := newFixture(t, nil, httpMode(), func(o *Options) { o.WorkflowTools = true })
	ts := httptest.NewServer(f.srv.Handler(HTTPOptions{}))
	t.Cleanup(ts.Close) // after the clients' (a listen stream is open)
	var mu sync.Mutex
	changed := map[string]chan struct{}{}
	for _, v := range []string{mcpclient.ModernVersion, mcpclient.LegacyVersion} {
		ch := make(chan struct{}, 8)
		mu.Lock()
		changed[v] = ch
		mu.Unlock()
		connectHTTPAt(t, ts.URL+"/mcp", v, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { ch <- struct{}{} },
		})
	}
	r := f.call("workflow_save", map[string]any{"workflow_file": echoMD, "name": "echo-changed", "description": "Echoes for the list-change test"})
	if r.IsError {
		t.Fatal(r.Text)
	}
	for v, ch := range changed {
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no tool list change", v)
		}
	}
}

// The TypeScript SDK v2 client pinned to 2026-07-28 drives `pflow mcp
// serve` over stdio and over HTTP: discover, list, a run with progress,
// and a list change through subscriptions/listen.
func TestE2ETypeScriptV2Client(t *testing.T) {
	dir, node := peers(t)
	fakemcp.PeersDir(t, []string{"node_modules/@modelcontextprotocol/client/package.json"})
	bin := buildPflow(t)
	t.Run("stdio", func(t *testing.T) {
		home := t.TempDir()
		out := runNode(t, filepath.Join(dir, "e2e"), node, testEnv(home), "modern_client.mjs", "stdio", bin)
		contains(t, out, `"version":"2026-07-28"`)
		contains(t, out, `"step":"list_changed"`)
		contains(t, out, `"step":"done"`)
	})
	t.Run("http", func(t *testing.T) {
		home := t.TempDir()
		_, url, _ := startHTTP(t, bin, home, "--token", "e2e-token", "--workflow-tools")
		out := runNode(t, filepath.Join(dir, "e2e"), node, testEnv(home), "modern_client.mjs", "http", url, "e2e-token")
		contains(t, out, `"version":"2026-07-28"`)
		contains(t, out, `"step":"list_changed"`)
		contains(t, out, `"step":"done"`)
	})
}

// pflow's own client and server meet at 2026-07-28 over stdio.
func TestPflowClientToPflowServerStdio(t *testing.T) {
	bin := buildPflow(t)
	home := t.TempDir()
	srv, err := mcpclient.Resolve("pflow", map[string]any{"command": bin, "args": []any{"mcp", "serve"}, "env": map[string]any{"PFLOW_HOME": home, "HOME": home}}, func(k string) (string, bool) {
		if k == "PATH" {
			return "/usr/bin:/bin", true
		}
		return "", false
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := mcpclient.Connect(context.Background(), srv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if v := sess.ProtocolVersion(); v != mcpclient.ModernVersion {
		t.Fatalf("negotiated %q", v)
	}
	res, err := sess.CallTool(context.Background(), "workflow_execute", map[string]any{"workflow": echoMD, "parameters": map[string]any{"msg": "hi"}}, time.Minute)
	if err != nil || res.IsError {
		t.Fatalf("%v %v", res, err)
	}
}
