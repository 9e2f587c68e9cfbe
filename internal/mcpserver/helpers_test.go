package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

type fixture struct {
	t    *testing.T
	home string
	app  *app.App
	srv  *Server
	cs   *mcp.ClientSession
	log  *fakemcp.Buffer
	// progress notifications received by the client.
	progMu   sync.Mutex
	progress []*mcp.ProgressNotificationParams

	schemaOnce sync.Once
	schemas    map[string]*jsonschema.Resolved
}

type fixtureOpt func(*Options)

func httpMode(dirs ...string) fixtureOpt {
	return func(o *Options) { o.HTTP = true; o.AllowDirs = dirs }
}

// newFixture starts a server over go-sdk's in-memory transport with
// PFLOW_HOME in a temp dir and connects a client to it.
func newFixture(t *testing.T, extraEnv []string, opts ...fixtureOpt) *fixture {
	t.Helper()
	home := t.TempDir()
	env := append([]string{"PFLOW_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}, extraEnv...)
	f := &fixture{t: t, home: home, log: &fakemcp.Buffer{}}
	f.app = app.New(env, f.log)
	o := Options{App: f.app, Version: "test", Log: f.log}
	for _, fn := range opts {
		fn(&o)
	}
	f.srv = New(o)
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := f.srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			f.progMu.Lock()
			f.progress = append(f.progress, r.Params)
			f.progMu.Unlock()
		},
	})
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.cs = cs
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		f.srv.Shutdown()
	})
	return f
}

// result is a decoded tool result.
type result struct {
	IsError bool
	Env     map[string]any
	Text    string
}

func (r *result) data() map[string]any {
	d, _ := r.Env["data"].(map[string]any)
	return d
}

func (r *result) errType() string {
	e, _ := r.Env["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

func (r *result) errMsg() string {
	e, _ := r.Env["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func (r *result) errDetails() map[string]any {
	e, _ := r.Env["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	return d
}

func (f *fixture) call(name string, args map[string]any) *result {
	f.t.Helper()
	return f.callCtx(context.Background(), name, args, nil)
}

func (f *fixture) callCtx(ctx context.Context, name string, args map[string]any, progressToken any) *result {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if progressToken != nil {
		p.SetProgressToken(progressToken)
	}
	res, err := f.cs.CallTool(ctx, p)
	if err != nil {
		f.t.Fatalf("%s: protocol error: %v", name, err)
	}
	r := decodeResult(f.t, name, res)
	f.checkOutputSchema(name, r)
	return r
}

// checkOutputSchema validates every result against the tool's advertised
// output schema, as the TypeScript SDK client does for successful calls.
func (f *fixture) checkOutputSchema(name string, r *result) {
	f.t.Helper()
	f.schemaOnce.Do(func() {
		f.schemas = map[string]*jsonschema.Resolved{}
		lt, err := f.cs.ListTools(context.Background(), nil)
		if err != nil {
			f.t.Fatal(err)
		}
		for _, tl := range lt.Tools {
			b, _ := json.Marshal(tl.OutputSchema)
			var s jsonschema.Schema
			if err := json.Unmarshal(b, &s); err != nil {
				f.t.Fatalf("%s: output schema: %v", tl.Name, err)
			}
			rs, err := s.Resolve(nil)
			if err != nil {
				f.t.Fatalf("%s: output schema: %v", tl.Name, err)
			}
			f.schemas[tl.Name] = rs
		}
	})
	rs := f.schemas[name]
	if rs == nil {
		return
	}
	var v any
	json.Unmarshal([]byte(r.Text), &v)
	if err := rs.Validate(v); err != nil {
		f.t.Fatalf("%s: result does not match its output schema: %v\n%s", name, err, r.Text)
	}
}

func decodeResult(t *testing.T, name string, res *mcp.CallToolResult) *result {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%s: want one text block, got %d", name, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content is %T, want text", name, res.Content[0])
	}
	r := &result{IsError: res.IsError, Text: tc.Text}
	if err := json.Unmarshal([]byte(tc.Text), &r.Env); err != nil {
		t.Fatalf("%s: text is not JSON: %v\n%s", name, err, tc.Text)
	}
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(sc, &st); err != nil {
		t.Fatalf("%s: structuredContent is not an object: %s", name, sc)
	}
	a, _ := json.Marshal(st)
	b, _ := json.Marshal(r.Env)
	if !bytes.Equal(a, b) {
		t.Fatalf("%s: structuredContent and text differ:\n%s\n%s", name, a, b)
	}
	if (r.Env["success"] == true) == r.IsError {
		t.Fatalf("%s: isError=%v but success=%v", name, r.IsError, r.Env["success"])
	}
	return r
}

// mustOK fails unless the call succeeded.
func (r *result) mustOK(t *testing.T) *result {
	t.Helper()
	if r.IsError {
		t.Fatalf("call failed: %s", r.Text)
	}
	return r
}

// mustErr fails unless the call failed with typ.
func (r *result) mustErr(t *testing.T, typ string) *result {
	t.Helper()
	if !r.IsError {
		t.Fatalf("call succeeded, want %s error: %s", typ, r.Text)
	}
	if r.errType() != typ {
		t.Fatalf("error type %q, want %q: %s", r.errType(), typ, r.Text)
	}
	if r.errMsg() == "" {
		t.Fatalf("error without message: %s", r.Text)
	}
	e := r.Env["error"].(map[string]any)
	if _, ok := e["suggestions"].([]any); !ok {
		t.Fatalf("error without suggestions list: %s", r.Text)
	}
	if _, ok := e["details"].(map[string]any); !ok {
		t.Fatalf("error without details object: %s", r.Text)
	}
	return r
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func contains(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%q not found in:\n%s", sub, s)
	}
}

// Workflows used by the tests.
const greetMD = `# Greet
Greets someone by name.

## Inputs

### name
Who to greet.
- type: string
- required: true

## Steps

### hello
Say hello.
- type: shell
- command: echo "hello ${name}"

## Outputs

### message
The greeting.
- source: ${hello.stdout}
`

const twoStepFailMD = `# Fails
Second step fails.

## Steps

### first
Works.
- type: shell
- command: echo one

### second
Fails.
- type: shell
- command: echo boom >&2; exit 3

### third
Never runs.
- type: shell
- command: echo three
`

const echoMD = `# Echo
Echo a message.

## Inputs

### msg
The message.
- type: string

## Steps

### say
Echo it.
- type: echo
- message: ${msg}

## Outputs

### out
The echo.
- source: ${say.echo}
`
