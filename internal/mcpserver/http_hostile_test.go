package mcpserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// guard bounds how long a test waits for something that should happen at
// once; it only decides failure, never success.
const guard = 20 * time.Second

// spyBody records whether anything read the request body.
type spyBody struct {
	r    io.Reader
	read bool
}

func (b *spyBody) Read(p []byte) (int, error) { b.read = true; return b.r.Read(p) }
func (b *spyBody) Close() error               { return nil }

// An unauthenticated request gets 401 before any byte of its body is read:
// a malformed body does not get the -32700 of a parse, and a client that
// announces a body and never sends it is answered at once.
func TestHTTPUnauthenticatedBodyIsNeverRead(t *testing.T) {
	f := newFixture(t, nil, httpMode())
	h := f.srv.Handler(HTTPOptions{Token: "tok-123"})
	for _, auth := range []string{"", "Bearer wrong", "Basic tok-123", "Bearer tok-12"} {
		body := &spyBody{r: strings.NewReader("{bad")}
		req := httptest.NewRequest(http.MethodPost, "/mcp", body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || strings.Contains(rec.Body.String(), "-32700") ||
			!strings.Contains(rec.Body.String(), "unauthorized: send 'Authorization: Bearer <token>' with this server's token (the one pflow mcp serve printed") {
			t.Errorf("Authorization %q: %d %s, want 401", auth, rec.Code, rec.Body)
		}
		if !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("Authorization %q: WWW-Authenticate %q", auth, rec.Header().Get("WWW-Authenticate"))
		}
		if body.read {
			t.Errorf("Authorization %q: the body was read before authentication", auth)
		}
	}
	// With the token, the same body is parsed (and refused as JSON).
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{bad"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer tok-123")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), "-32700") {
		t.Errorf("authenticated {bad: %d %s, want -32700", rec.Code, rec.Body)
	}

	// Over the network: the body is announced and never sent.
	ts := httptest.NewServer(h)
	defer ts.Close()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(guard))
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{bad", ts.Listener.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer while the body is incomplete (the server waits for it): %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
}

// serveHTTP runs ServeHTTP on a loopback port with o and returns its
// address; the server stops when the test ends.
func serveHTTP(t *testing.T, f *fixture, o HTTPOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.srv.ServeHTTP(ctx, ln, o, nil)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// waitClosed reads from c until the server closes it.
func waitClosed(t *testing.T, what string, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(guard))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: the server kept the connection open", what)
	}
}

// A client that stalls while sending its headers, or its body, is
// disconnected after the read timeouts; a call that runs longer than them
// still gets its answer.
func TestHTTPStalledClientIsDisconnected(t *testing.T) {
	f := newFixture(t, nil, httpMode())
	addr := serveHTTP(t, f, HTTPOptions{Token: "tok-123", ReadHeaderTimeout: 100 * time.Millisecond, ReadTimeout: 300 * time.Millisecond})
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	c := dial()
	io.WriteString(c, "P")
	waitClosed(t, "one byte of headers", c)

	c = dial()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer tok-123\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", addr)
	waitClosed(t, "a body that stops coming", c)

	// The read timeout bounds sending the request, not running it.
	cs := connectHTTP(t, "http://"+addr+"/mcp", "tok-123")
	md := "# Slow\nTakes a while.\n\n## Steps\n\n### nap\nWaits.\n- type: shell\n\n```shell command\nsleep 1; echo done\n```\n\n## Outputs\n\n### out\nThe word.\n- source: ${nap.stdout}\n"
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": md}})
	if err != nil {
		t.Fatalf("a call longer than the read timeout: %v", err)
	}
	if r := decodeResult(t, "workflow_execute", res); r.IsError || !strings.Contains(r.Text, "done") {
		t.Fatalf("a call longer than the read timeout: %s", r.Text)
	}
}

// At most MaxConns connections are served at once: another waits until
// one closes.
func TestHTTPConnectionsAreCapped(t *testing.T) {
	f := newFixture(t, nil, httpMode())
	addr := serveHTTP(t, f, HTTPOptions{Token: "tok-123", MaxConns: 2})
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// Both slots are taken once the server has answered on each.
	for _, c := range held {
		fmt.Fprintf(c, "GET /elsewhere HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer tok-123\r\n\r\n", addr)
		c.SetReadDeadline(time.Now().Add(guard))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	third, err := net.Dial("tcp", addr) // the kernel accepts it; pflow does not yet
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	fmt.Fprintf(third, "GET /elsewhere HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer tok-123\r\n\r\n", addr)
	third.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := third.Read(make([]byte, 1)); err == nil {
		t.Fatal("a third connection was served while two were open (MaxConns 2)")
	}
	held[0].Close()
	third.SetReadDeadline(time.Now().Add(guard))
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	if err != nil {
		t.Fatalf("the waiting connection was not served once a slot was free: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// Connections that never make an authenticated request (another local user
// opening sockets and sending nothing) cannot hold every slot: when all are
// taken, the oldest of them is closed to admit a new connection, which is
// served at once, not after the header timeout. Connections that did
// authenticate are never closed for that.
func TestHTTPIdleUnauthenticatedConnectionsGiveWay(t *testing.T) {
	f := newFixture(t, nil, httpMode())
	// A header timeout far beyond the test: only eviction can free a slot.
	addr := serveHTTP(t, f, HTTPOptions{Token: "tok-123", MaxConns: 3, ReadHeaderTimeout: time.Hour, ReadTimeout: time.Hour})
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	request := func(c net.Conn) int {
		fmt.Fprintf(c, "GET /elsewhere HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer tok-123\r\n\r\n", addr)
		c.SetReadDeadline(time.Now().Add(guard))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("an authenticated request was not served: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	mine := dial()
	if request(mine) != http.StatusNotFound { // authenticated, kept alive
		t.Fatal("want 404 for /elsewhere")
	}
	idle1, idle2 := dial(), dial() // the other user's: connect, send nothing
	// The three slots are taken: each new client (kept connected) is served
	// only if an idle connection gives way, the oldest first.
	for i := range 2 {
		if got := request(dial()); got != http.StatusNotFound {
			t.Fatalf("request %d: status %d", i, got)
		}
	}
	waitClosed(t, "the oldest idle connection", idle1)
	waitClosed(t, "the other idle connection", idle2)
	if request(mine) != http.StatusNotFound {
		t.Fatal("the authenticated connection was closed")
	}
}

// An initialize beyond MaxSessions open sessions gets 503 with a JSON-RPC
// error that says why.
func TestHTTPSessionsAreCapped(t *testing.T) {
	f := newFixture(t, nil, httpMode()) // holds one in-memory session
	ts := httptest.NewServer(f.srv.Handler(HTTPOptions{MaxSessions: 2}))
	t.Cleanup(ts.Close)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initialize := func() (int, string) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if code, body := initialize(); code != http.StatusOK {
		t.Fatalf("the second session (of 2): %d %s", code, body)
	}
	if code, body := initialize(); code != http.StatusServiceUnavailable || !strings.Contains(body, "too many MCP sessions: this server already has 2 open") {
		t.Fatalf("a third session: %d %s", code, body)
	}
}

// ServeToken makes a 32-byte hex token in a 0600 file, keeps it across
// restarts, and replaces a file others could read.
func TestServeTokenIsOwnerOnlyAndKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-serve.token")
	tok, how, err := ServeToken(path)
	if err != nil || how != TokenCreated || len(tok) != 64 || strings.Trim(tok, "0123456789abcdef") != "" {
		t.Fatalf("first token: %q %s %v", tok, how, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v, want mode 0600", st.Mode(), err)
	}
	if again, how, err := ServeToken(path); err != nil || again != tok || how != TokenReused {
		t.Fatalf("second start: %q %s %v, want the same token", again, how, err)
	}
	os.Chmod(path, 0o644)
	fresh, how, err := ServeToken(path)
	if err != nil || fresh == tok || how != TokenReplaced {
		t.Fatalf("a world-readable token file: %q %s %v, want a new token", fresh, how, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("replaced token file mode %v", st.Mode())
	}
}
