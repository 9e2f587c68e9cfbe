package cli

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/gctune"
)

// pflow mcp serve runs the garbage collector at gctune.LongLivedPercent
// (a user's GOGC wins): its small heap is otherwise collected every few
// requests, in the middle of the next one's MCP calls.
func TestMCPServeSetsTheLongLivedGCPace(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	for _, c := range []struct {
		env  []string
		want int
	}{{nil, gctune.LongLivedPercent}, {[]string{"GOGC=100"}, 100}} {
		debug.SetGCPercent(100)
		var out, errb bytes.Buffer
		ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb} // EOF: the server ends
		env := append([]string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, c.env...)
		if code := Main(context.Background(), []string{"mcp", "serve"}, ios, env); code != 0 {
			t.Fatalf("mcp serve %v: exit %d: %s", c.env, code, errb.String())
		}
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("mcp serve %v: GC percent %d, want %d", c.env, got, c.want)
		}
	}
}

// lineWatch is a writer that reports each complete line on a channel.
type lineWatch struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line)
			return len(p), nil
		}
		select {
		case w.lines <- strings.TrimRight(line, "\n"):
		default:
		}
	}
}

// Without --token or PFLOW_MCP_TOKEN, 'mcp serve --http' makes a token,
// stores it in $PFLOW_HOME/mcp-serve.token (0600), prints the header to
// send, and requires it: without it a request gets 401.
func TestMCPServeHTTPGeneratesAToken(t *testing.T) {
	home := t.TempDir()
	errw := &lineWatch{lines: make(chan string, 100)}
	ios := &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: errw}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"mcp", "serve", "--http", "127.0.0.1:0"}, ios, []string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH")})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("mcp serve did not stop when its context ended")
		}
	}()
	var url, header string
	for url == "" || header == "" {
		select {
		case line := <-errw.lines:
			if u, ok := strings.CutPrefix(line, "pflow MCP server listening on "); ok {
				url = u
			}
			if h, ok := strings.CutPrefix(strings.TrimSpace(line), "Authorization: Bearer "); ok {
				header = h
			}
		case code := <-done:
			t.Fatalf("mcp serve exited %d", code)
		case <-time.After(60 * time.Second):
			t.Fatalf("mcp serve printed no URL and header")
		}
	}
	path := filepath.Join(home, "mcp-serve.token")
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v, want mode 0600 (%v)", path, st, err)
	}
	b, _ := os.ReadFile(path)
	token := strings.TrimSpace(string(b))
	if len(token) != 64 || header != token {
		t.Fatalf("the printed token %q is not the stored one %q", header, token)
	}
	post := func(auth string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := post(""); c != http.StatusUnauthorized {
		t.Fatalf("no token: %d, want 401", c)
	}
	if c := post("Bearer " + token); c != http.StatusOK {
		t.Fatalf("the generated token: %d, want 200", c)
	}
}

// --no-auth is a usage error off loopback (exit 2, saying why and what to
// do), and with --token.
func TestMCPServeNoAuthOnlyOnLoopback(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--http", "0.0.0.0:0", "--no-auth"}, []string{"refusing to serve MCP on 0.0.0.0:0 with --no-auth", "anyone who can reach that address", "Drop --no-auth"}},
		{[]string{"--http", "127.0.0.1:0", "--no-auth", "--token", "x"}, []string{"--no-auth and --token"}},
		{[]string{"--no-auth"}, []string{"--no-auth only applies to --http"}},
	} {
		var out, errb bytes.Buffer
		ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}
		home := t.TempDir()
		code := Main(context.Background(), append([]string{"mcp", "serve"}, c.args...), ios, []string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH")})
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", c.args, code, errb.String())
		}
		for _, w := range c.want {
			if !strings.Contains(errb.String(), w) {
				t.Errorf("%v: stderr lacks %q: %s", c.args, w, errb.String())
			}
		}
		if _, err := os.Stat(filepath.Join(home, "mcp-serve.token")); err == nil {
			t.Errorf("%v: a refused serve made a token file", c.args)
		}
	}
}
