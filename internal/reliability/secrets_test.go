package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/mcp/faketest"
)

// The secrets. Each is distinctive so that a hit anywhere is a leak.
const (
	secretGitHub   = "ghp_LeakCheckGitHub7f3a9c21d8e4" // process env GITHUB_TOKEN
	secretOpenAI   = "sk-LeakCheckOpenAI5b8e2d7c1a90"  // process env OPENAI_API_KEY
	secretSettings = "stg-LeakCheckSettings44c1e9aa7"  // settings.json env MY_SERVICE_KEY
	secretHeader   = "hdr-LeakCheckHeader91d0b7e3f2"   // Authorization header in mcp-servers.json
	secretSetByMCP = "mcp-LeakCheckSetViaMCP6e2f0c8d"  // stored through settings_set
)

var allSecrets = map[string]string{
	"GITHUB_TOKEN (process env)":              secretGitHub,
	"OPENAI_API_KEY (process env)":            secretOpenAI,
	"MY_SERVICE_KEY (settings.json)":          secretSettings,
	"Authorization header (mcp-servers.json)": secretHeader,
	"NEW_SERVICE_TOKEN (settings_set)":        secretSetByMCP,
}

// leakScanner collects everything pflow showed or stored and reports every
// secret found in it.
type leakScanner struct {
	t    *testing.T
	seen []struct{ where, text string }
}

func (s *leakScanner) add(where, text string) {
	s.seen = append(s.seen, struct{ where, text string }{where, text})
}

func (s *leakScanner) addRun(what string, r runResult) {
	s.add(what+" (stdout)", r.Stdout)
	s.add(what+" (stderr)", r.Stderr)
}

// addTree adds every file under dir except the ones where the user put the
// secrets on purpose (settings.json and mcp-servers.json, and their backups).
func (s *leakScanner) addTree(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		base := d.Name()
		if strings.HasPrefix(base, "settings.json") || strings.HasPrefix(base, "mcp-servers.json") ||
			strings.HasPrefix(base, ".settings.json") || strings.HasPrefix(base, ".mcp-servers.json") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err == nil {
			rel, _ := filepath.Rel(dir, path)
			s.add("$PFLOW_HOME/"+rel, string(data))
			n++
		}
		return nil
	})
	return n
}

func (s *leakScanner) check() {
	s.t.Helper()
	for label, secret := range allSecrets {
		for _, seen := range s.seen {
			if i := strings.Index(seen.text, secret); i >= 0 {
				lo, hi := max(0, i-120), min(len(seen.text), i+len(secret)+60)
				s.t.Errorf("secret %s leaked into %s: …%s…", label, seen.where, strings.ReplaceAll(seen.text[lo:hi], secret, "«SECRET»"))
			}
		}
	}
}

// apiServer is a local HTTP API that accepts only the right credentials.
func apiServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/user", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secretGitHub {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"login":"alice","id":7}`)
	})
	mux.HandleFunc("/service", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-API-Key") != secretSettings {
			http.Error(w, `{"message":"bad key"}`, http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"green"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// remoteMCP is a streamable-HTTP MCP server that requires the header secret.
func remoteMCP(t *testing.T) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	type in struct {
		Who string `json:"who"`
	}
	type out struct {
		Greeting string `json:"greeting"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greet someone."}, func(ctx context.Context, req *mcp.CallToolRequest, i in) (*mcp.CallToolResult, out, error) {
		return nil, out{Greeting: "hello " + i.Who}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secretHeader {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const secretWorkflow = `# Account status
Checks the account and the service with stored credentials.

## Inputs

### api
Base URL of the API.
- type: string

### github_token
GitHub token (given as github_token=$GITHUB_TOKEN).
- type: string

### my_service_key
Service key (found in settings.json env, MY_SERVICE_KEY).
- type: string

## Steps

### user
Who am I.
- type: http
- url: ${api}/user
- auth_token: ${github_token}

### service
Service status.
- type: http
- url: ${api}/service
- api_key: ${my_service_key}

### keylen
Length of the OpenAI key from the environment, to prove it arrived.
- type: shell

` + "```shell command\nprintf '%s' \"$OPENAI_API_KEY\" | wc -c\n```" + `

### greet
Call the remote MCP tool.
- type: mcp-remote-greet
- who: ${user.response.login}

### local
Call the local stdio MCP server (its env holds the token).
- type: mcp-local-echo
- message: ${service.response.status}

## Outputs

### login
The account.
- source: ${user.response.login}

### greeting
The remote greeting.
- source: ${greet.greeting}
`

const failingWorkflow = `# Failing check
Fails with the token in its request and in its command.

## Inputs

### api
Base URL.
- type: string

### github_token
Token.
- type: string

## Steps

### compare
Compare the token (fails).
- type: shell

` + "```shell command\ntest '${github_token}' = wrong-token\n```" + `

### never
Never runs.
- type: shell
- command: echo never
`

const failingHTTPWorkflow = `# Failing HTTP
Calls the API with a wrong-scoped token (401).

## Inputs

### api
Base URL.
- type: string

### openai_api_key
Key.
- type: string

## Steps

### call
Call with the wrong credential.
- type: http
- url: ${api}/user
- auth_token: ${openai_api_key}
`

// TestSecretsNeverLeak puts secrets in the process env (GITHUB_TOKEN,
// OPENAI_API_KEY), in settings.json and in an MCP server's Authorization
// header, runs workflows that use them (text, JSON, verbose, saved and run
// by name, failing ones) and the MCP server, and scans stdout, stderr,
// traces, saved workflows, registry and caches and every MCP response.
func TestSecretsNeverLeak(t *testing.T) {
	root, src := t.TempDir(), t.TempDir()
	scan := &leakScanner{t: t}
	api := apiServer(t)
	remote := remoteMCP(t)
	secretEnv := []string{"GITHUB_TOKEN=" + secretGitHub, "OPENAI_API_KEY=" + secretOpenAI}
	run := func(wantCode int, args ...string) runResult {
		t.Helper()
		r := pflow(t, root, secretEnv, "", args...)
		scan.addRun("pflow "+strings.Join(args, " "), r)
		if wantCode >= 0 && r.Code != wantCode {
			t.Errorf("pflow %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, wantCode, r.Stdout, r.Stderr)
		}
		return r
	}

	// Credentials go in the usual ways.
	run(0, "settings", "set-env", "MY_SERVICE_KEY="+secretSettings)
	id := faketest.NewID()
	local := faketest.Entry(id, "")
	local["env"].(map[string]any)["TOKEN"] = "${GITHUB_TOKEN}"
	servers, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"remote": map[string]any{"type": "http", "url": remote.URL, "headers": map[string]any{"Authorization": "Bearer " + secretHeader}},
		"local":  local,
	}})
	cfg := writeFile(t, filepath.Join(src, "servers.json"), string(servers))
	run(0, "mcp", "add", cfg)
	run(0, "mcp", "list")
	run(0, "mcp", "list", "--json")
	run(0, "mcp", "sync", "--all")
	run(0, "mcp", "tools")
	run(0, "mcp", "info", "mcp-remote-greet")
	run(0, "settings", "show")
	run(0, "settings", "list-env")

	wf := writeFile(t, filepath.Join(src, "status.pflow.md"), secretWorkflow)
	fail := writeFile(t, filepath.Join(src, "failing.pflow.md"), failingWorkflow)
	failHTTP := writeFile(t, filepath.Join(src, "failing-http.pflow.md"), failingHTTPWorkflow)
	gh, oa := "github_token="+secretGitHub, "openai_api_key="+secretOpenAI

	r := run(0, wf, "api="+api.URL, gh)
	if !strings.Contains(r.Stdout, "alice") {
		t.Errorf("the workflow did not authenticate (the test proves nothing): %s %s", r.Stdout, r.Stderr)
	}
	r = run(0, "--output-format", "json", wf, "api="+api.URL, gh)
	if !strings.Contains(r.Stdout, "hello alice") {
		t.Errorf("the remote MCP tool was not reached with its header: %s %s", r.Stdout, r.Stderr)
	}
	run(0, "-v", wf, "api="+api.URL, gh)
	run(0, "-p", "-o", "keylen.stdout", wf, "api="+api.URL, gh)
	run(1, fail, "api="+api.URL, gh)
	run(1, "--output-format", "json", fail, "api="+api.URL, gh)
	run(1, failHTTP, "api="+api.URL, oa)
	run(1, "--output-format", "json", failHTTP, "api="+api.URL, oa)

	// Saved, run by name (run history is recorded), described.
	run(0, "workflow", "save", wf, "--name", "account-status")
	saved := filepath.Join(root, "workflows", "account-status.pflow.md")
	snapshot := func(after string) {
		data, _ := os.ReadFile(saved)
		scan.add("the saved workflow after "+after, string(data))
	}
	run(0, "account-status", "api="+api.URL, gh)
	snapshot("a run by name with my_service_key filled from settings.json")
	run(0, "account-status", "api="+api.URL, gh, "my_service_key="+secretSettings)
	snapshot("a run by name with my_service_key given on the command line")
	run(0, "workflow", "describe", "account-status")
	run(0, "workflow", "describe", "account-status", "--json")
	run(0, "registry", "run", "http", "url="+api.URL+"/user", "auth_token="+secretGitHub)

	// The MCP server, with the same environment.
	c := startServe(t, root, secretEnv)
	mcpCalls := []struct {
		tool string
		args map[string]any
	}{
		{"settings_get", map[string]any{"key": "MY_SERVICE_KEY"}},
		{"settings_get", map[string]any{"key": "GITHUB_TOKEN"}},
		{"settings_set", map[string]any{"key": "NEW_SERVICE_TOKEN", "value": secretSetByMCP}},
		{"settings_get", map[string]any{"key": "NEW_SERVICE_TOKEN"}},
		{"workflow_execute", map[string]any{"workflow": "account-status", "parameters": map[string]any{"api": api.URL, "github_token": secretGitHub}}},
		{"workflow_execute", map[string]any{"workflow": failingWorkflow, "parameters": map[string]any{"api": api.URL, "github_token": secretGitHub}}},
		{"workflow_execute", map[string]any{"workflow": failingHTTPWorkflow, "parameters": map[string]any{"api": api.URL, "openai_api_key": secretOpenAI}}},
		{"workflow_describe", map[string]any{"name": "account-status"}},
		{"workflow_list", map[string]any{}},
		{"registry_run", map[string]any{"node_type": "http", "parameters": map[string]any{"url": api.URL + "/user", "auth_token": secretGitHub}}},
		{"registry_run", map[string]any{"node_type": "mcp-remote-greet", "parameters": map[string]any{"who": "bob"}}},
		{"registry_describe", map[string]any{"nodes": []any{"mcp-remote-greet", "mcp-local-echo"}}},
	}
	for _, mc := range mcpCalls {
		c.call(mc.tool, mc.args)
	}
	// Every trace the runs wrote, read back through the server.
	traces, _ := filepath.Glob(filepath.Join(root, "debug", "*.json"))
	if len(traces) < 5 {
		t.Errorf("only %d trace files in $PFLOW_HOME/debug: the runs did not trace, the scan proves little", len(traces))
	}
	for _, tr := range traces {
		c.call("trace_read", map[string]any{"trace_file": filepath.Base(tr)})
	}
	c.close()
	scan.add("pflow mcp serve (every response on stdout)", c.raw.String())
	scan.add("pflow mcp serve (stderr)", c.stderrText())
	if !strings.Contains(c.raw.String(), "hello alice") {
		t.Errorf("workflow_execute over MCP did not run the workflow: the scan proves little")
	}

	if n := scan.addTree(root); n < 5 {
		t.Errorf("only %d files under $PFLOW_HOME to scan", n)
	}
	scan.check()
	if left := faketest.Leftovers(id); len(left) > 0 {
		t.Errorf("MCP server processes left running: %v", left)
	}
}
