package reliability

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/llmtest"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// The secrets, one per source pflow must treat as secret (see
// docs/decisions.md, "Template values are data"). Each is distinctive so that a
// hit anywhere is a leak;
// some hold characters that URL, JSON and base64 encode differently.
const (
	secretGitHub     = "ghp_LeakCheckGitHub7f3a9c21d8e4"   // process env GITHUB_TOKEN
	secretOpenAI     = "sk-LeakCheckOpenAI5b8e2d7c1a90"    // process env OPENAI_API_KEY (the llm step's key)
	secretSettings   = "stg-LeakCheck/Settings+44c1=e9aa7" // settings.json env MY_SERVICE_KEY
	secretSetByMCP   = "mcp-LeakCheckSetViaMCP6e2f0c8d"    // stored through settings_set
	secretInput      = `in-Leak/Check+Input=7&q "x" <é>`   // secret-named input session_token
	secretParamHead  = "cmp-LeakCheck"                     // key_prefix: not secret on its own ...
	secretParamTail  = "Param93be1f0d"                     // key_suffix
	secretParam      = secretParamHead + secretParamTail   // ... but auth_token: ${key_prefix}${key_suffix} is
	secretNested     = "nst-LeakCheckNested4d5e8a"         // nested_seed, mapped to the child's child_password
	secretHeader     = "hdr-LeakCheckHeader91d0b7e3f2"     // Authorization header in mcp-servers.json
	secretBasic      = "bas-LeakCheck!Basic:pw5c0d"        // basic auth password in mcp-servers.json
	secretMCPEnv     = "env-LeakCheckMCPEnv2a7f9e61"       // literal env value of a stdio server
	secretMCPArgEq   = "arg-LeakCheckArgKey6d1e0b3c"       // --api-key=X in a stdio server's args
	secretMCPArgNext = "arg-LeakCheckArgTok8f2a4c7e"       // --token X in a stdio server's args
	secretURLPass    = "url-LeakCheckPass3e9d71"           // password in an http step's URL
	secretURLKey     = "qry-LeakCheckQueryKey0c4b"         // ?api_key= in an http step's URL
	secretMCPURLPass = "mcpurl-LeakCheckPass71aa"          // password in a remote MCP server's URL
	secretMCPURLKey  = "mcpq-LeakCheckKey52bb19"           // ?api_key= in a remote MCP server's URL
)

var allSecrets = map[string]string{
	"GITHUB_TOKEN (process env)":                 secretGitHub,
	"OPENAI_API_KEY (process env, llm step)":     secretOpenAI,
	"MY_SERVICE_KEY (settings.json env)":         secretSettings,
	"NEW_SERVICE_TOKEN (settings_set over MCP)":  secretSetByMCP,
	"session_token (secret-named input)":         secretInput,
	"auth_token (secret-named param, composed)":  secretParam,
	"child_password (nested workflow input)":     secretNested,
	"Authorization header (mcp-servers.json)":    secretHeader,
	"basic auth password (mcp-servers.json)":     secretBasic,
	"env value of an MCP server":                 secretMCPEnv,
	"--api-key=X arg of an MCP server":           secretMCPArgEq,
	"--token X arg of an MCP server":             secretMCPArgNext,
	"password in an http step's URL":             secretURLPass,
	"api_key query param in an http step's URL":  secretURLKey,
	"password in an MCP server's URL":            secretMCPURLPass,
	"api_key query param in an MCP server's URL": secretMCPURLKey,
}

// encodedForms is every form of v the scan looks for: raw, URL-encoded
// (query and path), JSON-escaped (with and without HTML escaping), base64
// (standard and URL alphabets, padded and not) and base64("user:"+v) as in
// a Basic auth header.
func encodedForms(v string) map[string]string {
	js, _ := json.Marshal(v)
	var noHTML bytes.Buffer
	enc := json.NewEncoder(&noHTML)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	nh := bytes.TrimSpace(noHTML.Bytes())
	b := []byte(v)
	return map[string]string{
		"raw":                    v,
		"query-escaped":          url.QueryEscape(v),
		"path-escaped":           url.PathEscape(v),
		"JSON-escaped":           string(js[1 : len(js)-1]),
		"JSON-escaped, no HTML":  string(nh[1 : len(nh)-1]),
		"base64":                 base64.StdEncoding.EncodeToString(b),
		"base64url":              base64.URLEncoding.EncodeToString(b),
		"base64, unpadded":       base64.RawStdEncoding.EncodeToString(b),
		"base64url, unpadded":    base64.RawURLEncoding.EncodeToString(b),
		"base64(user:secret)":    base64.StdEncoding.EncodeToString([]byte("user:" + v)),
		"base64url(user:secret)": base64.RawURLEncoding.EncodeToString([]byte("user:" + v)),
	}
}

// leakScanner collects everything pflow showed or stored and reports every
// secret found in it, in any of its encoded forms.
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
// secrets on purpose (settings.json and mcp-servers.json, their backups and
// temp files).
func (s *leakScanner) addTree(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		base := strings.TrimPrefix(d.Name(), ".")
		if strings.HasPrefix(base, "settings.json") || strings.HasPrefix(base, "mcp-servers.json") {
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
		for form, enc := range encodedForms(secret) {
			for _, seen := range s.seen {
				if i := strings.Index(seen.text, enc); i >= 0 {
					lo, hi := max(0, i-120), min(len(seen.text), i+len(enc)+60)
					s.t.Errorf("secret %s leaked (%s) into %s: …%s…", label, form, seen.where, strings.ReplaceAll(seen.text[lo:hi], enc, "«SECRET»"))
				}
			}
		}
	}
}

// echoBody is what the API's /echo endpoints answer: the credentials the
// request carried.
func echoBody(r *http.Request) string {
	b, _ := json.Marshal(map[string]string{"authorization": r.Header.Get("Authorization"), "query": r.URL.RawQuery})
	return string(b)
}

// apiServer is a local HTTP API that accepts only the right credentials and
// echoes credentials back (as careless APIs do in their errors).
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
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, echoBody(r))
	})
	mux.HandleFunc("/echo-fail", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, echoBody(r))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// remoteMCP is a streamable-HTTP MCP server that requires the Authorization
// header want ("" accepts anything). Its whoami tool answers with the
// header it got; leakfail fails with it in the error.
func remoteMCP(t *testing.T, want string) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	type in struct {
		Who string `json:"who"`
	}
	type out struct {
		Greeting string `json:"greeting"`
	}
	type none struct{}
	type seen struct {
		Authorization string `json:"authorization"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greet someone."}, func(ctx context.Context, req *mcp.CallToolRequest, i in) (*mcp.CallToolResult, out, error) {
		return nil, out{Greeting: "hello " + i.Who}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "The credentials the server saw."}, func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, seen, error) {
		return nil, seen{Authorization: req.Extra.Header.Get("Authorization")}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "leakfail", Description: "Fails, quoting the credentials."}, func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, out, error) {
		return nil, out{}, fmt.Errorf("access denied for credentials %q", req.Extra.Header.Get("Authorization"))
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if want != "" && r.Header.Get("Authorization") != want {
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

### whoami
The remote MCP tool answers with the header it got.
- type: mcp-remote-whoami

### local
Call the local stdio MCP server (its env holds the token).
- type: mcp-local-echo
- message: ${service.response.status}

### localenv
The local server reports the token from its environment.
- type: mcp-local-getenv
- name: TOKEN

## Outputs

### login
The account.
- source: ${user.response.login}

### greeting
The remote greeting.
- source: ${greet.greeting}

### seen
What the servers saw.
- source: ${whoami.authorization} ${localenv.result}
`

// Failing workflows: one per kind of step, each quoting its secrets in the
// failure (the command's stderr, the API's error body, the provider's error,
// the traceback, the server's stderr tail, the tool's error).
var failingWorkflows = map[string]string{
	"shell": `# Failing shell
Prints the token in several encodings, then fails.

## Inputs

### session_token
Token.
- type: string

## Steps

### leak
Print and fail.
- type: shell
- stdin: ${session_token}

` + "```shell command\ns=$(cat); printf 'got %s\\n' \"$s\" >&2; printf '%s' \"$s\" | base64 >&2; printf 'user:%s' \"$s\" | base64 >&2; printf 'env %s\\n' \"$GITHUB_TOKEN\"; exit 3\n```" + `
`,
	"http": `# Failing HTTP
Calls an API with credentials in the URL and a composed token; the API echoes them.

## Inputs

### api_url
Base URL (with user:password).
- type: string

### query_key
Key sent as ?api_key=.
- type: string

### key_prefix
First half of the token.
- type: string

### key_suffix
Second half of the token.
- type: string

## Steps

### basic
Basic auth from the URL's user info; the API echoes the header.
- type: http
- url: ${api_url}/echo

### call
Fails with 401, echoing the bearer token and the query.
- type: http
- url: ${api_url}/echo-fail?api_key=${query_key}
- auth_token: ${key_prefix}${key_suffix}
`,
	"file": `# Failing file
Reads a file named after the token.

## Inputs

### session_token
Token.
- type: string

### dir
Directory.
- type: string

## Steps

### read
Read a file that does not exist.
- type: read-file
- file_path: ${dir}/missing-${session_token}.txt
`,
	"llm": `# Failing LLM
The provider rejects the key and quotes it.

## Inputs

### session_token
Token.
- type: string

## Steps

### ask
Ask.
- type: llm
- model: openai/gpt-4o-mini
- retries: 1

` + "```prompt\nThe token is ${session_token}.\n```" + `
`,
	"code": `# Failing code
Prints the token in several encodings, then raises with it.

## Inputs

### session_token
Token.
- type: string

## Steps

### run
Leak and raise.
- type: code
- inputs: {tok: "${session_token}"}

` + "```python code\nimport base64, json, urllib.parse\n\ntok: str\nprint(json.dumps({\"t\": tok}), urllib.parse.quote(tok, safe=\"\"), urllib.parse.quote_plus(tok))\nprint(base64.b64encode(tok.encode()).decode(), base64.urlsafe_b64encode(tok.encode()).decode())\nresult: str = \"\"\nraise ValueError(\"bad token \" + tok)\n```" + `
`,
	"mcp-result": `# Failing MCP tool
A remote tool answers with the header it got; another fails quoting the Basic credentials.

## Steps

### who
Answers with the bearer header.
- type: mcp-remote-whoami

### deny
Fails quoting the Basic header.
- type: mcp-basic-leakfail
`,
	"mcp-crash": `# Crashing MCP server
The stdio server prints its env and args to stderr, then crashes mid-call.

## Steps

### call
Crash.
- type: mcp-crashy-echo
- message: hi
`,
	"mcp-down": `# Unreachable MCP server
The remote server (credentials in its URL) is gone.

## Steps

### call
Connection refused.
- type: mcp-down-greet
- who: nobody
`,
	"nested": `# Failing nested workflow
Maps a value to the child's secret-named input; the child fails printing it.

## Inputs

### nested_seed
Becomes the child's password.
- type: string

## Steps

### child
Run the child.
- type: workflow
- workflow_ref: nested-child.pflow.md
- param_mapping: {child_password: "${nested_seed}"}
`,
}

const nestedChild = `# Nested child
Fails printing its password.

## Inputs

### child_password
Password.
- type: string

## Steps

### use
Print and fail.
- type: shell
- stdin: ${child_password}

` + "```shell command\ns=$(cat); echo \"child got $s\" >&2; exit 4\n```" + `
`

// TestSecretsNeverLeak plants a distinct secret in every source pflow must
// treat as secret — secret-looking process variables, settings.json env,
// secret-named inputs, a secret-named param composed from plain inputs, a
// nested workflow's secret input, MCP server env, args, headers, basic auth
// and URLs, URL passwords and api keys in step params — makes every kind of
// step fail with its secrets in the failure (shell, http, file, llm, code,
// mcp tool error, mcp server crash, unreachable mcp server, nested
// workflow), runs everything with -v, with --output-format json and over
// `pflow mcp serve`, then scans every byte pflow wrote (stdout, stderr, every
// file under PFLOW_HOME, every MCP response) for every secret in every
// encoded form (encodedForms).
func TestSecretsNeverLeak(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is needed for the code step of the leak test")
		}
		t.Skip("python3 not installed (the code step needs it)")
	}
	root, src := t.TempDir(), t.TempDir()
	scan := &leakScanner{t: t}
	api := apiServer(t)
	remote := remoteMCP(t, "Bearer "+secretHeader)
	basic := remoteMCP(t, "Basic "+base64.StdEncoding.EncodeToString([]byte("user:"+secretBasic)))
	down := remoteMCP(t, "")
	llm := llmtest.NewOpenAI(t)
	llm.SetDefault(llmtest.Response{Status: http.StatusUnauthorized, ErrorType: "invalid_request_error",
		ErrorMessage: "Incorrect API key provided: " + secretOpenAI + ". You can find your API key at https://platform.example/account/api-keys."})
	secretEnv := []string{"GITHUB_TOKEN=" + secretGitHub, "OPENAI_API_KEY=" + secretOpenAI, "OPENAI_BASE_URL=" + llm.BaseURL}
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
	id := fakemcp.NewID()
	local := fakemcp.Entry(id, "")
	local["env"].(map[string]any)["TOKEN"] = "${GITHUB_TOKEN}"
	crashy := fakemcp.Entry(id, "", "print-env=SERVICE_TOKEN", "print-args", "crash-mid-call")
	crashy["env"].(map[string]any)["SERVICE_TOKEN"] = secretMCPEnv
	crashy["args"] = []any{"--api-key=" + secretMCPArgEq, "--token", secretMCPArgNext}
	downURL, _ := url.Parse(down.URL)
	downURL.User = url.UserPassword("user", secretMCPURLPass)
	downURL.Path = "/mcp"
	downURL.RawQuery = "api_key=" + secretMCPURLKey
	servers, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"remote": map[string]any{"type": "http", "url": remote.URL, "headers": map[string]any{"Authorization": "Bearer " + secretHeader}},
		"basic":  map[string]any{"type": "http", "url": basic.URL, "auth": map[string]any{"type": "basic", "username": "user", "password": secretBasic}},
		"down":   map[string]any{"type": "http", "url": downURL.String()},
		"local":  local,
		"crashy": crashy,
	}})
	cfg := writeFile(t, filepath.Join(src, "servers.json"), string(servers))
	run(0, "mcp", "add", cfg)
	run(0, "mcp", "list")
	run(0, "mcp", "list", "--json")
	run(0, "mcp", "sync", "--all")
	down.Close() // its tools are registered; from now on it refuses connections
	run(1, "mcp", "sync", "down")
	run(0, "mcp", "tools")
	run(0, "mcp", "info", "mcp-remote-greet")
	run(0, "settings", "show")
	run(0, "settings", "list-env")

	// Workflows that succeed, with secrets in their inputs, params and results.
	wf := writeFile(t, filepath.Join(src, "status.pflow.md"), secretWorkflow)
	gh := "github_token=" + secretGitHub
	r := run(0, wf, "api="+api.URL, gh)
	if !strings.Contains(r.Stdout, "alice") {
		t.Errorf("the workflow did not authenticate (the test proves nothing): %s %s", r.Stdout, r.Stderr)
	}
	r = run(0, "--output-format", "json", wf, "api="+api.URL, gh)
	if !strings.Contains(r.Stdout, "hello alice") || !strings.Contains(r.Stdout, `"seen": "<REDACTED> `) {
		t.Errorf("the remote MCP tools were not reached with their header, or their answers were not masked: %s %s", r.Stdout, r.Stderr)
	}
	run(0, "-v", wf, "api="+api.URL, gh)
	run(0, "-p", "-o", "keylen.stdout", wf, "api="+api.URL, gh)
	run(0, "-p", "-o", "seen", wf, "api="+api.URL, gh)

	// Every kind of step fails with its secrets in the failure.
	writeFile(t, filepath.Join(src, "nested-child.pflow.md"), nestedChild)
	apiURL, _ := url.Parse(api.URL)
	apiURL.User = url.UserPassword("user", secretURLPass)
	params := map[string]map[string]any{
		"shell":      {"session_token": secretInput},
		"http":       {"api_url": apiURL.String(), "query_key": secretURLKey, "key_prefix": secretParamHead, "key_suffix": secretParamTail},
		"file":       {"session_token": secretInput, "dir": src},
		"llm":        {"session_token": secretInput},
		"code":       {"session_token": secretInput},
		"mcp-result": {},
		"mcp-crash":  {},
		"mcp-down":   {},
		"nested":     {"nested_seed": secretNested},
	}
	failPaths := map[string]string{}
	for kind, md := range failingWorkflows {
		path := writeFile(t, filepath.Join(src, "fail-"+kind+".pflow.md"), md)
		failPaths[kind] = path
		args := []string{path}
		for k, v := range params[kind] {
			args = append(args, k+"="+fmt.Sprint(v))
		}
		text := run(1, append([]string{"-v"}, args...)...)
		js := run(1, append([]string{"--output-format", "json"}, args...)...)
		// The failure must carry masked secrets, or the scan proves nothing.
		if !strings.Contains(text.Stderr, "<REDACTED>") || !strings.Contains(js.Stdout, "<REDACTED>") {
			t.Errorf("%s: the failure does not show a masked secret, so this case tests nothing:\n-v stderr: %s\njson: %s", kind, text.Stderr, js.Stdout)
		}
	}
	if reqs := llm.Requests(); len(reqs) == 0 || reqs[0].Header.Get("Authorization") != "Bearer "+secretOpenAI {
		t.Errorf("the llm step did not reach the provider with its key")
	}

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
	run(0, "workflow", "save", failPaths["http"], "--name", "http-check")
	run(1, "http-check", "api_url="+apiURL.String(), "query_key="+secretURLKey, "key_prefix="+secretParamHead, "key_suffix="+secretParamTail)
	run(0, "workflow", "describe", "account-status")
	run(0, "workflow", "describe", "account-status", "--json")
	run(0, "registry", "run", "http", "url="+api.URL+"/user", "auth_token="+secretGitHub)
	run(1, "registry", "run", "http", "url="+apiURL.String()+"/echo-fail?api_key="+secretURLKey, "auth_token="+secretParam)

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
		{"workflow_execute", map[string]any{"workflow": secretWorkflow, "parameters": map[string]any{"api": api.URL, "github_token": secretGitHub}}},
		{"workflow_describe", map[string]any{"name": "account-status"}},
		{"workflow_list", map[string]any{}},
		{"registry_run", map[string]any{"node_type": "http", "parameters": map[string]any{"url": api.URL + "/user", "auth_token": secretGitHub}}},
		{"registry_run", map[string]any{"node_type": "http", "parameters": map[string]any{"url": apiURL.String() + "/echo-fail?api_key=" + secretURLKey, "auth_token": secretParam}}},
		{"registry_run", map[string]any{"node_type": "mcp-remote-whoami", "parameters": map[string]any{}}},
		{"registry_run", map[string]any{"node_type": "mcp-basic-leakfail", "parameters": map[string]any{}}},
		{"registry_run", map[string]any{"node_type": "mcp-crashy-echo", "parameters": map[string]any{"message": "hi"}}},
		{"registry_describe", map[string]any{"nodes": []any{"mcp-remote-greet", "mcp-local-echo"}}},
	}
	for kind, path := range failPaths {
		mcpCalls = append(mcpCalls, struct {
			tool string
			args map[string]any
		}{"workflow_execute", map[string]any{"workflow": path, "parameters": params[kind]}})
	}
	for _, mc := range mcpCalls {
		c.call(mc.tool, mc.args)
	}
	// Every trace the runs wrote, read back through the server.
	traces, _ := filepath.Glob(filepath.Join(root, "debug", "*.json"))
	if len(traces) < 2*len(failingWorkflows) {
		t.Errorf("only %d trace files in $PFLOW_HOME/debug: the runs did not trace, the scan proves little", len(traces))
	}
	for _, tr := range traces {
		c.call("trace_read", map[string]any{"trace_file": filepath.Base(tr)})
	}
	c.close()
	served := c.raw.String()
	scan.add("pflow mcp serve (every response on stdout)", served)
	scan.add("pflow mcp serve (stderr)", c.stderrText())
	if !strings.Contains(served, "hello alice") || strings.Count(served, "REDACTED") < len(failingWorkflows) {
		t.Errorf("workflow_execute over MCP did not run the workflows or masked nothing: the scan proves little")
	}

	if n := scan.addTree(root); n < 2*len(failingWorkflows) {
		t.Errorf("only %d files under $PFLOW_HOME to scan", n)
	}
	scan.check()
	if left := fakemcp.Leftovers(id); len(left) > 0 {
		t.Errorf("MCP server processes left running: %v", left)
	}
}
