package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A failing http step's failure carries its class: an edge routes on it
// (falling back to the error edge), ${step.error_class} holds it, a retry
// of a rate-limited call waits at least what Retry-After says, and an edge
// on an action the step never takes is refused before running.
func TestErrorClassesRouteFailures(t *testing.T) {
	var mu sync.Mutex
	var limitedAt []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/limited":
			mu.Lock()
			limitedAt = append(limitedAt, time.Now())
			mu.Unlock()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	a := New([]string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, nil)
	run := func(src string) *RunOutcome {
		t.Helper()
		wf := filepath.Join(t.TempDir(), "w.pflow.md")
		os.WriteFile(wf, []byte(src), 0o644)
		target, err := a.ResolveTarget(wf)
		if err != nil {
			t.Fatal(err)
		}
		out, err := a.Run(context.Background(), RunRequest{Target: target, Params: map[string]any{"api": srv.URL}, NoTrace: true, NoRecord: true})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	wf := func(path, extra string) string {
		return "# Classes\nRoutes failures by class.\n\n## Inputs\n\n### api\nThe API.\n- type: string\n\n## Steps\n\n" +
			"### fetch\nCall the API.\n- type: http\n- url: ${api}" + path + "\n" + extra + "\n```yaml on\nrate_limited: wait\nerror: report\n```\n\n" +
			"### wait\nBack off.\n- type: shell\n- command: echo \"waited ${fetch.error_class}\"\n\n" +
			"### report\nReport.\n- type: shell\n- command: echo \"reported ${fetch.error_class}\"\n\n" +
			"## Outputs\n\n### waited\nIf it waited.\n- source: ${wait.stdout}\n\n### reported\nIf it reported.\n- source: ${report.stdout}\n"
	}
	said := func(out *RunOutcome) string {
		t.Helper()
		if len(out.ValidationErrors) > 0 || out.Result == nil || !out.Result.Success() {
			t.Fatalf("run: %+v %+v", out.ValidationErrors, out.Result)
		}
		var said []string
		for _, k := range []string{"waited", "reported"} {
			if s, ok := out.Result.Outputs[k].(string); ok {
				said = append(said, strings.TrimSpace(s))
			}
		}
		return strings.Join(said, "+")
	}
	// 429 with Retry-After: the retry waits at least a second, then the
	// rate_limited edge is taken.
	if got := said(run(wf("/limited", "- retries: 1\n- retry_wait: 0"))); got != "waited rate_limited" {
		t.Fatalf("a 429 went to %q", got)
	}
	mu.Lock()
	if len(limitedAt) != 2 || limitedAt[1].Sub(limitedAt[0]) < time.Second {
		t.Fatalf("the retry did not honour Retry-After: requests at %v", limitedAt)
	}
	mu.Unlock()
	// A class without its own edge falls back to the error edge.
	if got := said(run(wf("/missing", ""))); got != "reported not_found" {
		t.Fatalf("a 404 went to %q", got)
	}
	// An action no step of that type takes is refused before running.
	bad := "# Bad\nNever fires.\n\n## Steps\n\n### s\nShell.\n- type: shell\n- command: exit 1\n\n```yaml on\nrate_limited: t\n```\n\n### t\nT.\n- type: shell\n- command: echo t\n"
	out := run(bad)
	if len(out.ValidationErrors) == 0 || !strings.Contains(out.ValidationErrors[0].Message, "Step 's' has an edge on action 'rate_limited', which shell steps never take") {
		t.Fatalf("validation: %+v", out.ValidationErrors)
	}
	typo := strings.Replace(wf("/missing", ""), "rate_limited: wait", "rate_limted: wait", 1)
	out = run(typo)
	if len(out.ValidationErrors) == 0 || !strings.Contains(out.ValidationErrors[0].Message, "did you mean 'rate_limited'?") {
		t.Fatalf("typo: %+v", out.ValidationErrors)
	}
}

// An MCP server over HTTP that answers a tool call with 429 and
// Retry-After: the step's retry waits at least what the server announced
// (not the step's retry_wait of 0), then succeeds.
func TestMCPRateLimitHonoursRetryAfter(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "limited", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ping"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	var calls []time.Time
	limit := false
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if strings.Contains(string(body), `"tools/call"`) {
				mu.Lock()
				calls = append(calls, time.Now())
				first := limit && len(calls) == 1
				mu.Unlock()
				if first {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	a := New([]string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, nil)
	b, _ := json.Marshal(map[string]any{"limited": map[string]any{"type": "http", "url": ts.URL}})
	if _, err := a.AddMCPServers(context.Background(), []string{string(b)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SyncMCP(context.Background(), []string{"limited"}, false, nil); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(t.TempDir(), "ping.pflow.md")
	os.WriteFile(wf, []byte("# Ping\nPings a rate-limited server.\n\n## Steps\n\n### p\nPing.\n- type: mcp-limited-ping\n- retries: 1\n- retry_wait: 0\n\n## Outputs\n\n### said\nThe answer.\n- source: ${p.result}\n"), 0o644)
	target, err := a.ResolveTarget(wf)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	limit, calls = true, nil
	mu.Unlock()
	out, err := a.Run(context.Background(), RunRequest{Target: target, NoTrace: true, NoRecord: true})
	if err != nil || out.Result == nil || !out.Result.Success() {
		t.Fatalf("run: %v %+v %+v", err, out.ValidationErrors, out.Result)
	}
	if said, _ := out.Result.Outputs["said"].(string); said != "pong" {
		t.Fatalf("said %q", said)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 || calls[1].Sub(calls[0]) < time.Second {
		t.Fatalf("the retry did not wait the announced Retry-After of 1s: tool calls at %v", calls)
	}
}

// A tool call the server refuses with JSON-RPC -32602 fails saying what
// the server said about the offending argument (the error's message and
// its data), the step and the tool, and how to check the arguments, worded
// for each reader.
func TestMCPInvalidParamsNamesTheArgument(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "repos", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct {
		Repo string `json:"repo"`
	}) (*mcp.CallToolResult, any, error) {
		return nil, nil, &jsonrpc.Error{Code: -32602, Message: "invalid repository",
			Data: json.RawMessage(`{"argument": "repo", "value": "` + in.Repo + `", "expected": "owner/name"}`)}
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	a := New([]string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, nil)
	b, _ := json.Marshal(map[string]any{"repos": map[string]any{"type": "http", "url": ts.URL}})
	if _, err := a.AddMCPServers(context.Background(), []string{string(b)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SyncMCP(context.Background(), []string{"repos"}, false, nil); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(t.TempDir(), "look.pflow.md")
	os.WriteFile(wf, []byte("# Look\nLooks a repository up.\n\n## Steps\n\n### find\nFind it.\n- type: mcp-repos-lookup\n- repo: acme nope\n"), 0o644)
	target, err := a.ResolveTarget(wf)
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Run(context.Background(), RunRequest{Target: target, NoTrace: true, NoRecord: true})
	if err != nil || out.Result == nil || out.Result.Success() {
		t.Fatalf("run: %v %+v", err, out.Result)
	}
	person := RunFailure(out, target, Person).Message
	for _, want := range []string{"step 'find' failed", "Invalid params: invalid repository (server's details: ", `"argument":"repo"`, `"value":"acme nope"`, "tool 'lookup'", "server 'repos'",
		"run 'pflow registry describe mcp-repos-lookup'"} {
		if !strings.Contains(person, want) {
			t.Errorf("missing %q in:\n%s", want, person)
		}
	}
	if agent := RunFailure(out, target, Agent).Message; !strings.Contains(agent, "call registry_describe") || strings.Contains(agent, "run 'pflow") {
		t.Errorf("an agent's message:\n%s", agent)
	}
}

// A required input declared '- env: GITHUB_TOKEN' whose variable is not
// set: the failure names the variable and says to export it or store it
// with 'pflow settings set-env GITHUB_TOKEN=…' (an agent: to ask the user
// to), and never suggests passing the token as an input.
func TestMissingEnvInputSaysToSetTheVariable(t *testing.T) {
	a := New([]string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, nil)
	wf := filepath.Join(t.TempDir(), "gh.pflow.md")
	os.WriteFile(wf, []byte("# GH\nUses a token.\n\n## Inputs\n\n### token\nA GitHub token.\n- type: string\n- env: GITHUB_TOKEN\n\n## Steps\n\n### s\nSay.\n- type: shell\n- command: echo ${token}\n"), 0o644)
	target, err := a.ResolveTarget(wf)
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Run(context.Background(), RunRequest{Target: target, NoTrace: true, NoRecord: true})
	if err != nil || len(out.InputErrors) != 1 {
		t.Fatalf("run: %v %+v", err, out.InputErrors)
	}
	person := RunFailure(out, target, Person)
	said := person.Message + "\n" + strings.Join(person.Suggestions, "\n")
	for _, want := range []string{"token (environment variable GITHUB_TOKEN is not set)", "export GITHUB_TOKEN=…", "run 'pflow settings set-env GITHUB_TOKEN=…'"} {
		if !strings.Contains(said, want) {
			t.Errorf("missing %q in:\n%s", want, said)
		}
	}
	if strings.Contains(said, "token=<value>") || strings.Contains(said, "key=value") {
		t.Errorf("a person is told to pass the token as an input:\n%s", said)
	}
	agent := RunFailure(out, target, Agent)
	said = agent.Message + "\n" + strings.Join(agent.Suggestions, "\n")
	if !strings.Contains(said, "ask the user to run 'pflow settings set-env GITHUB_TOKEN=…'") || strings.Contains(said, "e.g. {\"token\"") {
		t.Errorf("an agent's advice:\n%s", said)
	}
}
