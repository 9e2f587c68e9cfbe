package mcpnode

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

func TestMain(m *testing.M) {
	mcpclient.StopGrace = 500 * time.Millisecond
	os.Exit(m.Run())
}

// scope is a minimal per-run node.Scope.
type scope struct {
	mu  sync.Mutex
	res map[string]io.Closer
}

func (s *scope) Resource(key string, open func() (io.Closer, error)) (io.Closer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.res == nil {
		s.res = map[string]io.Closer{}
	}
	if r, ok := s.res[key]; ok {
		return r, nil
	}
	r, err := open()
	if err != nil {
		return nil, err
	}
	s.res[key] = r
	return r, nil
}

func (s *scope) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.res {
		r.Close()
	}
}

type fake struct {
	t     *testing.T
	path  string
	id    string
	mark  string
	scope *scope
	log   *strings.Builder
	node  node.Node
}

// newFake configures server "fake" running the fault-injection server.
func newFake(t *testing.T, extra map[string]any, modes ...string) *fake {
	t.Helper()
	dir := t.TempDir()
	f := &fake{t: t, path: filepath.Join(dir, "mcp-servers.json"), id: fakemcp.NewID(), mark: filepath.Join(dir, "signals"), scope: &scope{}, log: &strings.Builder{}}
	entry := fakemcp.Entry(f.id, f.mark, modes...)
	for k, v := range extra {
		entry[k] = v
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fake": entry}})
	if err := os.WriteFile(f.path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f.node = New(Config{ServersPath: f.path, Env: func(k string) (string, bool) {
		if k == "TOKEN" {
			return "", false
		}
		return os.LookupEnv(k)
	}, Log: io.Discard})
	t.Cleanup(func() {
		f.scope.Close()
		f.assertNoProcesses()
	})
	return f
}

func (f *fake) run(tool string, params map[string]any) *node.Result {
	f.t.Helper()
	p := map[string]any{ParamServer: "fake", ParamTool: tool}
	for k, v := range params {
		p[k] = v
	}
	res, err := f.node.Run(context.Background(), &node.Request{NodeID: "step", Type: "mcp-fake-" + mcpclient.SanitizeToolName(tool), Params: p, Scope: f.scope, Log: f.log})
	if err != nil {
		f.t.Fatalf("Run returned a Go error: %v", err)
	}
	return res
}

// assertNoProcesses checks the process table for anything the fake server
// (or its children) left behind.
func (f *fake) assertNoProcesses() {
	f.t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := fakemcp.Leftovers(f.id)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("processes left behind: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func errText(r *node.Result) string {
	if r.Action != "error" {
		return ""
	}
	s, _ := r.Outputs["error"].(string)
	return s
}

func TestEchoAndHoisting(t *testing.T) {
	f := newFake(t, nil)
	r := f.run("echo", map[string]any{"message": "hi"})
	if r.Action != "" || r.Outputs["result"] != "Echo: hi" {
		t.Fatalf("result %#v", r)
	}
	r = f.run("add", map[string]any{"a": "2", "b": int64(40)})
	if r.Action != "" || r.Outputs["sum"] != int64(42) {
		t.Fatalf("add: %#v", r.Outputs)
	}
	r = f.run("struct", map[string]any{"location": "Oslo"})
	if r.Outputs["temperature"] != 22.5 || r.Outputs["conditions"] != "sunny" {
		t.Fatalf("struct: %#v", r.Outputs)
	}
	r = f.run("image", nil)
	img, _ := r.Outputs["result"].(map[string]any)
	if img["type"] != "image" || img["mimeType"] != "image/png" || img["data"] != "iVBORw0KGgo=" {
		t.Fatalf("image: %#v", r.Outputs)
	}
}

// An mcp- node gets __mcp_server__ (from the registry
// entry, overwriting a user value, never mutating the caller's map), and
// the node uses it.
func TestCriterion05ServerParamInjected(t *testing.T) {
	in := map[string]any{"title": "x", ParamServer: "user-value"}
	got := Inject("mcp-github-create-issue", "github", "create_issue", in)
	if got[ParamServer] != "github" || got["title"] != "x" {
		t.Fatalf("injected %#v", got)
	}
	if in[ParamServer] != "user-value" {
		t.Fatal("caller's params modified")
	}
	f := newFake(t, nil)
	params := Inject("mcp-fake-echo", "fake", "echo", map[string]any{"message": "m"})
	res, err := f.node.Run(context.Background(), &node.Request{Type: "mcp-fake-echo", Params: params, Scope: f.scope})
	if err != nil || res.Outputs["result"] != "Echo: m" {
		t.Fatalf("%v %#v", err, res)
	}
}

// An mcp- node gets __mcp_tool__ with the tool's
// original name, which is what the node calls (here a name with a space).
func TestCriterion06ToolParamInjected(t *testing.T) {
	got := Inject("mcp-fake-create-issue", "fake", "Create Issue", map[string]any{"title": "x"})
	if got[ParamTool] != "Create Issue" {
		t.Fatalf("injected %#v", got)
	}
	f := newFake(t, nil)
	res, err := f.node.Run(context.Background(), &node.Request{Type: "mcp-fake-create-issue", Params: got, Scope: f.scope})
	if err != nil || res.Action != "" || res.Outputs["title"] != "x" {
		t.Fatalf("%v %#v", err, res)
	}
}

// A node type without the "mcp-" prefix gets no
// injected params.
func TestCriterion13NoInjectionWithoutPrefix(t *testing.T) {
	for _, typ := range []string{"shell", "http", "mcpish", "workflow", "MCP-x-y"} {
		in := map[string]any{"a": int64(1)}
		out := Inject(typ, "github", "create_issue", in)
		if _, has := out[ParamServer]; has {
			t.Fatalf("%s got __mcp_server__", typ)
		}
		if _, has := out[ParamTool]; has {
			t.Fatalf("%s got __mcp_tool__", typ)
		}
		if len(out) != 1 {
			t.Fatalf("%s params changed: %#v", typ, out)
		}
	}
}

// Step params become tool arguments without "__" keys (the node's binding)
// or the timeout control, converted to the schema's types.
func TestToolArgumentsFilteredAndCoerced(t *testing.T) {
	f := newFake(t, nil)
	r := f.run("Create Issue", map[string]any{"title": "Bug", "timeout": int64(10), "__registry__": "x", "count": "3", "draft": "true", "labels": `["a","b"]`})
	if r.Action != "" {
		t.Fatalf("error: %v", r.Outputs["error"])
	}
	got := r.Outputs["result"].(map[string]any)
	if len(got) != 4 || got["count"] != int64(3) || got["draft"] != true || len(got["labels"].([]any)) != 2 {
		t.Fatalf("tool saw %#v", got)
	}
}

// Without injected params the node parses the type (longest server wins)
// and matches the sanitised tool name.
func TestNodeTypeParsedWithoutInjection(t *testing.T) {
	f := newFake(t, nil)
	res, err := f.node.Run(context.Background(), &node.Request{Type: "mcp-fake-create-issue", Params: map[string]any{"title": "T"}, Scope: f.scope})
	if err != nil || res.Action != "" {
		t.Fatalf("%v %#v", err, res)
	}
}

func TestArgumentValidationNamesParam(t *testing.T) {
	f := newFake(t, nil)
	cases := []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"a": "abc", "b": int64(1)}, "parameter 'a' of tool 'add' expects a number, got str \"abc\""},
		{map[string]any{"a": int64(1)}, "parameter 'b' of tool 'add' is required but missing"},
	}
	for _, c := range cases {
		r := f.run("add", c.params)
		if !strings.Contains(errText(r), c.want) {
			t.Errorf("error = %q, want %q", errText(r), c.want)
		}
	}
	r := f.run("Create Issue", map[string]any{"title": "x", "priority": "urgent"})
	if !strings.Contains(errText(r), "parameter 'priority' of tool 'Create Issue' must be one of: low, high") {
		t.Errorf("enum error = %q", errText(r))
	}
}

// An invalid server command gives a clear error.
func TestCriterion07CommandNotFound(t *testing.T) {
	f := newFake(t, map[string]any{"command": "pflow-no-such-server-cmd"})
	r := f.run("echo", map[string]any{"message": "x"})
	if !strings.HasPrefix(errText(r), "Command not found: pflow-no-such-server-cmd") {
		t.Fatalf("error = %q", errText(r))
	}
}

// A call still running after its timeout has its
// server killed with SIGTERM.
func TestCriterion08TimeoutSendsSIGTERM(t *testing.T) {
	f := newFake(t, nil)
	r := f.run("hang", map[string]any{"timeout": "1s"})
	if !strings.HasPrefix(errText(r), "MCP tool timed out after 1 seconds") {
		t.Fatalf("error = %q", errText(r))
	}
	b, _ := os.ReadFile(f.mark)
	if !strings.Contains(string(b), "SIGTERM") {
		t.Fatalf("server did not receive SIGTERM (marks: %q)", b)
	}
	// The next call in the same run reconnects to a fresh server.
	if r := f.run("echo", map[string]any{"message": "again"}); r.Outputs["result"] != "Echo: again" {
		t.Fatalf("after timeout: %#v", r.Outputs)
	}
}

// Malformed JSON from the server.
func TestCriterion09MalformedJSON(t *testing.T) {
	f := newFake(t, nil, "bad-json")
	r := f.run("echo", map[string]any{"message": "x"})
	if !strings.HasPrefix(errText(r), "Invalid JSON response from server") {
		t.Fatalf("error = %q", errText(r))
	}
}

// An undefined ${TOKEN} reaches the server as TOKEN="".
func TestCriterion12UndefinedVarIsEmptyInSubprocess(t *testing.T) {
	f := newFake(t, nil)
	r := f.run("getenv", map[string]any{"name": "TOKEN"})
	if r.Outputs["set"] != true || r.Outputs["value"] != "" {
		t.Fatalf("TOKEN in server env: %#v", r.Outputs)
	}
	if !strings.Contains(f.log.String(), "TOKEN not found") || !strings.Contains(f.log.String(), "pflow settings set-env TOKEN=") {
		t.Fatalf("no warning: %q", f.log.String())
	}
}

// JSON-RPC error -32601 → "Method not found".
func TestCriterion14MethodNotFound(t *testing.T) {
	f := newFake(t, nil, "rpc-error=-32601")
	r := f.run("echo", map[string]any{"message": "x"})
	if !strings.HasPrefix(errText(r), "Method not found") {
		t.Fatalf("error = %q", errText(r))
	}
}

func TestSessionSharedAcrossParallelCalls(t *testing.T) {
	f := newFake(t, nil)
	var wg sync.WaitGroup
	errs := make(chan string, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.run("echo", map[string]any{"message": "p"})
			if r.Outputs["result"] != "Echo: p" {
				errs <- errText(r)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	c := f.scope.res["mcp:fake"].(*mcpclient.Conn)
	s1, _ := c.Session(context.Background())
	if s1.Pid() == 0 {
		t.Fatal("no pid")
	}
	if n := len(fakemcp.Leftovers(f.id)); n != 1 {
		t.Fatalf("%d server processes for one run, want 1", n)
	}
}

// TestFaultMatrix: every misbehaviour ends in its documented message,
// within its bound, with zero processes left (checked in cleanup).
func TestFaultMatrix(t *testing.T) {
	cases := []struct {
		name   string
		modes  []string
		extra  map[string]any
		tool   string
		params map[string]any
		want   []string // substrings of ${node.error}; nil = success
		bound  time.Duration
	}{
		{"garbage on stdout is skipped", []string{"garbage-stdout"}, nil, "echo", map[string]any{"message": "ok"}, nil, 30 * time.Second},
		{"garbage on stdout shown when the server then crashes", []string{"garbage-stdout", "crash-mid-call"}, nil, "echo", map[string]any{"message": "x"}, []string{"MCP server process terminated unexpectedly", "[stdout] Starting fake server v1 on stdio"}, 30 * time.Second},
		{"invalid JSON reply", []string{"bad-json"}, nil, "echo", map[string]any{"message": "x"}, []string{"Invalid JSON response from server"}, 30 * time.Second},
		{"crash before initialize", []string{"crash-before-init"}, nil, "echo", nil, []string{"MCP server process terminated unexpectedly", "exit status 3", "missing API key FAKE_KEY"}, 30 * time.Second},
		{"crash mid-call leaving a grandchild", []string{"spawn-child", "crash-mid-call"}, nil, "echo", map[string]any{"message": "x"}, []string{"MCP server process terminated unexpectedly", "exit status 7"}, 30 * time.Second},
		{"crash after initialize", []string{"crash-after-init"}, nil, "echo", nil, []string{"MCP server process terminated unexpectedly", "lost connection to backend"}, 30 * time.Second},
		{"crash mid-call", []string{"crash-mid-call"}, nil, "echo", map[string]any{"message": "x"}, []string{"MCP server process terminated unexpectedly", "exit status 7", "index out of range"}, 30 * time.Second},
		{"hang on connect", []string{"hang-connect"}, map[string]any{"startup_timeout": int64(1)}, "echo", nil, []string{"did not answer initialize within 1 seconds", "startup_timeout"}, 30 * time.Second},
		// The bound covers process start and initialize too, which a loaded
		// machine under -race can stretch past a second: the list hangs
		// anyway, so a generous bound costs nothing and never flakes.
		{"hang on list", []string{"hang-list"}, map[string]any{"startup_timeout": int64(10)}, "echo", nil, []string{"did not answer tools/list within 10 seconds"}, 40 * time.Second},
		{"hang on call", nil, nil, "hang", map[string]any{"timeout": int64(1)}, []string{"MCP tool timed out after 1 seconds"}, 30 * time.Second},
		{"hang on call ignoring SIGTERM", []string{"ignore-term"}, nil, "hang", map[string]any{"timeout": "0.5"}, []string{"MCP tool timed out after 0.5 seconds"}, 30 * time.Second},
		{"slow start", []string{"slow-start=1500ms"}, nil, "echo", map[string]any{"message": "late"}, nil, 30 * time.Second},
		{"stderr flood", []string{"stderr-flood=20"}, nil, "echo", map[string]any{"message": "ok"}, nil, 40 * time.Second},
		{"older protocol version negotiated", []string{"version=2024-11-05"}, nil, "echo", map[string]any{"message": "ok"}, nil, 30 * time.Second},
		{"newer protocol version", []string{"version=2026-07-28"}, nil, "echo", nil, []string{"MCP protocol version not supported"}, 30 * time.Second},
		{"wrong protocol version", []string{"version=1999-01-01"}, nil, "echo", nil, []string{"MCP protocol version not supported", "1999-01-01"}, 30 * time.Second},
		{"JSON-RPC -32601", []string{"rpc-error=-32601"}, nil, "echo", map[string]any{"message": "x"}, []string{"Method not found"}, 30 * time.Second},
		{"JSON-RPC -32602", []string{"rpc-error=-32602"}, nil, "echo", map[string]any{"message": "x"}, []string{"Invalid params"}, 30 * time.Second},
		{"JSON-RPC -32603", []string{"rpc-error=-32603"}, nil, "echo", map[string]any{"message": "x"}, []string{"Internal error"}, 30 * time.Second},
		{"isError result", nil, nil, "fail", nil, []string{"repository not found: acme/nope"}, 30 * time.Second},
		{"unknown tool", nil, nil, "nope", nil, []string{"Tool nope not found on server fake", "pflow mcp sync fake"}, 30 * time.Second},
		{"memory limit", []string{"memory=150"}, map[string]any{"max_memory_mb": int64(64)}, "hang", map[string]any{"timeout": int64(20)}, []string{"exceeded its memory limit", "MB used, max_memory_mb is 64) and was stopped"}, 25 * time.Second},
		{"grandchild and ignored EOF", []string{"spawn-child", "ignore-eof", "ignore-term"}, nil, "echo", map[string]any{"message": "x"}, nil, 30 * time.Second},
		// Descendants that leave the server's process group (setsid, as
		// Node's detached: true does; a double fork) and ignore SIGTERM are
		// found by the run token in their environment and stopped with the
		// server, whether the call succeeds, fails or times out.
		{"escaped grandchild ignoring SIGTERM", []string{"spawn-escaped"}, nil, "echo", map[string]any{"message": "x"}, nil, 30 * time.Second},
		{"double-forked grandchild ignoring SIGTERM", []string{"spawn-double-fork"}, nil, "echo", map[string]any{"message": "x"}, nil, 30 * time.Second},
		{"escaped grandchild, server crashes mid-call", []string{"spawn-escaped", "crash-mid-call"}, nil, "echo", map[string]any{"message": "x"}, []string{"MCP server process terminated unexpectedly", "exit status 7"}, 30 * time.Second},
		{"escaped grandchild, call times out", []string{"spawn-double-fork", "ignore-term"}, nil, "hang", map[string]any{"timeout": "0.5"}, []string{"MCP tool timed out after 0.5 seconds"}, 30 * time.Second},
		// max_memory_mb counts the server's whole tree: a grandchild outside
		// its group (the browser of a browser-automation server) counts too.
		{"escaped grandchild over the memory limit", []string{"escaped-memory=150"}, map[string]any{"max_memory_mb": int64(64)}, "hang", map[string]any{"timeout": int64(20)}, []string{"exceeded its memory limit", "max_memory_mb"}, 25 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, c.extra, c.modes...)
			done := make(chan *node.Result, 1)
			go func() { done <- f.run(c.tool, c.params) }()
			var r *node.Result
			select {
			case r = <-done:
			case <-time.After(c.bound):
				t.Fatalf("no result within %s", c.bound)
			}
			if c.want == nil {
				if r.Action == "error" {
					t.Fatalf("unexpected error: %s", errText(r))
				}
				return
			}
			msg := errText(r)
			if msg == "" {
				t.Fatalf("expected failure, got %#v", r.Outputs)
			}
			if !strings.HasPrefix(msg, c.want[0]) && !strings.Contains(msg, c.want[0]) {
				t.Fatalf("error = %q, want %q", msg, c.want[0])
			}
			for _, w := range c.want[1:] {
				if !strings.Contains(msg, w) {
					t.Fatalf("error = %q, missing %q", msg, w)
				}
			}
		})
	}
}

// A 50 MB result passes through (the fake server itself needs more than the
// default 100 MB to build it, so its limit is raised).
func TestBigResult(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB result: skipped in -short mode")
	}
	f := newFake(t, map[string]any{"max_memory_mb": int64(1000)})
	r := f.run("big", map[string]any{"mb": int64(50), "timeout": int64(300)})
	s, _ := r.Outputs["result"].(string)
	if len(s) != 50<<20 {
		t.Fatalf("result length %d (error %q)", len(s), errText(r))
	}
}

// A result over the server's message limit fails the call with a message
// that says so — which server and tool, the limit, and what to do — not as
// "Invalid JSON response from server". The limit is lowered to 1 MB
// ("max_response_mb") so that a 2 MB result exceeds it; the default is 64 MB.
func TestResultOverTheSizeLimit(t *testing.T) {
	f := newFake(t, map[string]any{"max_response_mb": int64(1)})
	r := f.run("big", map[string]any{"mb": int64(2)})
	msg := errText(r)
	if r.Action != "error" {
		t.Fatalf("action %q, want error (%q)", r.Action, msg)
	}
	for _, want := range []string{"MCP response too large: the tool's result exceeded 1 MB", "tool 'big'", "server 'fake'", "exceeded 1 MB", "max_response_mb", "Ask the tool for less"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "Invalid JSON") {
		t.Errorf("an oversized response is reported as invalid JSON:\n%s", msg)
	}
	// Under the limit the same server answers.
	g := newFake(t, map[string]any{"max_response_mb": int64(3)})
	if s, _ := g.run("big", map[string]any{"mb": int64(2)}).Outputs["result"].(string); len(s) != 2<<20 {
		t.Fatalf("a 2 MB result under a 3 MB limit: length %d", len(s))
	}
}

// Ctrl-C during a call: the node returns promptly with a cancellation
// message, and closing the run's scope leaves no process.
func TestCancelDuringCall(t *testing.T) {
	for _, modes := range [][]string{nil, {"spawn-escaped", "ignore-term"}} {
		t.Run(strings.Join(append([]string{"server"}, modes...), "+"), func(t *testing.T) {
			f := newFake(t, nil, modes...)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan *node.Result, 1)
			go func() {
				res, _ := f.node.Run(ctx, &node.Request{Type: "mcp-fake-hang", Params: map[string]any{ParamServer: "fake", ParamTool: "hang"}, Scope: f.scope})
				done <- res
			}()
			time.Sleep(300 * time.Millisecond)
			cancel()
			select {
			case r := <-done:
				if !strings.Contains(errText(r), "cancelled") {
					t.Fatalf("error = %q", errText(r))
				}
			case <-time.After(10 * time.Second):
				t.Fatal("node did not return after cancellation")
			}
		})
	}
}

// A secret that reaches the server through its env never appears in an
// error message, even when the server prints it on stderr: as a whole
// line, or in a line too long to keep whole whose kept end would start in
// the middle of the secret.
func TestSecretsRedactedFromErrors(t *testing.T) {
	const secret = "sk-very-secret-value-0123456789"
	for _, modes := range [][]string{{"print-env=API_TOKEN", "crash-before-init"}, {"crash-long-line=API_TOKEN"}} {
		mode := modes[0]
		t.Run(mode, func(t *testing.T) {
			f := newFake(t, map[string]any{}, modes...)
			// Add the secret env entry to the config written by newFake.
			data, _ := os.ReadFile(f.path)
			var doc map[string]map[string]map[string]any
			json.Unmarshal(data, &doc)
			doc["mcpServers"]["fake"]["env"].(map[string]any)["API_TOKEN"] = "${MY_SECRET_TOKEN}"
			data, _ = json.Marshal(doc)
			os.WriteFile(f.path, data, 0o600)
			f.node = New(Config{ServersPath: f.path, Env: func(k string) (string, bool) {
				if k == "MY_SECRET_TOKEN" {
					return secret, true
				}
				return os.LookupEnv(k)
			}})
			r := f.run("echo", map[string]any{"message": "x"})
			msg := errText(r)
			if !strings.Contains(msg, "terminated unexpectedly") {
				t.Fatalf("error = %q", msg)
			}
			if mode == "print-env=API_TOKEN" && !strings.Contains(msg, "debug: API_TOKEN=<REDACTED>") {
				t.Fatalf("error = %q", msg)
			}
			if mode != "print-env=API_TOKEN" && !strings.Contains(msg, strings.Repeat("b", 100)) {
				t.Fatalf("the end of the long line is quoted: %q", msg)
			}
			for n := 6; n <= len(secret); n++ {
				if piece := secret[len(secret)-n:]; strings.Contains(msg, piece) {
					t.Fatalf("error shows %q of the secret:\n%.300s", piece, msg)
				}
			}
		})
	}
}

// The staged shutdown: a server that ignores stdin EOF gets SIGTERM (to its group)
// when the run ends; one that also ignores SIGTERM is SIGKILLed (the
// cleanup's process-table check covers that in TestFaultMatrix).
func TestShutdownSendsSIGTERMWhenEOFIgnored(t *testing.T) {
	f := newFake(t, nil, "ignore-eof")
	if r := f.run("echo", map[string]any{"message": "x"}); r.Action == "error" {
		t.Fatal(errText(r))
	}
	f.scope.Close()
	b, _ := os.ReadFile(f.mark)
	if !strings.Contains(string(b), "SIGTERM") {
		t.Fatalf("server was not sent SIGTERM on shutdown (marks %q)", b)
	}
	f.assertNoProcesses()
}

func TestWorkingDirectory(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	f := newFake(t, map[string]any{"cwd": dir})
	if r := f.run("cwd", nil); r.Outputs["result"] != dir {
		t.Fatalf("cwd %#v", r.Outputs)
	}
	g := newFake(t, map[string]any{"cwd": filepath.Join(dir, "missing")})
	if r := g.run("cwd", nil); !strings.Contains(errText(r), "Working directory of MCP server fake does not exist") {
		t.Fatalf("error %q", errText(r))
	}
}

// A call on a session whose server died under an earlier call fails at
// once with the message docs/troubleshooting.md quotes (a run's next step
// reconnects; this is what a call already holding the session sees).
func TestCallAfterTheConnectionWasLost(t *testing.T) {
	s, err := mcpclient.Resolve("fake", fakemcp.Entry(fakemcp.NewID(), "", "crash-mid-call"), func(string) (string, bool) { return "", false }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := mcpclient.Connect(ctx, s, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.CallTool(ctx, "echo", map[string]any{"message": "x"}, time.Minute); err == nil || !strings.Contains(err.Error(), "terminated unexpectedly") {
		t.Fatalf("the crashing call: %v", err)
	}
	_, err = sess.CallTool(ctx, "echo", map[string]any{"message": "x"}, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "MCP connection to server fake was lost") {
		t.Fatalf("the next call on the session: %v", err)
	}
}

// A result nested 9,000 levels deep (18 KB of [[[[...]]]] as text), or
// 600 levels as structuredContent, fails the step with the documented error, naming the
// tool, the server and the limit, and is never retried; a result exactly
// at the limit still arrives whole.
func TestDeepResultRefused(t *testing.T) {
	f := newFake(t, nil)
	for _, structured := range []bool{false, true} {
		n := int64(9000)
		if structured {
			n = 600
		}
		r := f.run("big", map[string]any{"nest": n, "structured": structured})
		msg := errText(r)
		for _, want := range []string{"MCP result too deeply nested", "tool 'big'", "server 'fake'", "more than 512 levels", "Ask the tool for a flatter result"} {
			if !strings.Contains(msg, want) {
				t.Errorf("structured=%v: error lacks %q: %q", structured, want, msg)
			}
		}
		if !r.Permanent || r.Outputs["result"] != nil {
			t.Errorf("structured=%v: permanent=%v result=%v: want a permanent failure without the value", structured, r.Permanent, r.Outputs["result"] != nil)
		}
	}
	r := f.run("big", map[string]any{"nest": int64(512)})
	depth := 0
	for v := r.Outputs["result"]; ; depth++ {
		l, ok := v.([]any)
		if !ok {
			break
		}
		if len(l) == 0 {
			depth++
			break
		}
		v = l[0]
	}
	if errText(r) != "" || depth != 512 {
		t.Fatalf("a result 512 levels deep: depth %d, error %q", depth, errText(r))
	}
}
