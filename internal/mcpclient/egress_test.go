package mcpclient

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/netpolicy"
	"github.com/pflow-go/pflow/internal/pferr"
)

// helloHandler is a real MCP server (streamable HTTP) with one tool.
func helloHandler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "egress-test", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hello", Description: "says hello"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

// counted wraps h, counting the requests that reach it.
func counted(h http.Handler, n *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	})
}

func errText(err error) string {
	pe := pferr.As(err)
	return pe.Message + "\n" + pe.Hint
}

// behindRedirect starts a real MCP server on 127.0.0.1 and, in front of
// it, another whose every request is redirected (307) to it. It returns
// the front's URL and how many requests reached the server.
func behindRedirect(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	back := httptest.NewServer(counted(helloHandler(), &hits))
	t.Cleanup(back.Close)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, back.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(front.Close)
	return front.URL + "/mcp", &hits
}

// In a run an agent started, a remote server whose answer redirects to a
// loopback address is refused before the redirect is followed: nothing
// reaches the server behind it, and the failure names the server, the
// host, the address, the rule and the setting that allows it.
func TestRemoteRedirectToLoopbackRefusedForAgent(t *testing.T) {
	front, hits := behindRedirect(t)
	srv, err := Resolve("hop", map[string]any{"type": "http", "url": front, "startup_timeout": int64(20)}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv.Network = &netpolicy.Policy{Agent: true}
	_, err = Discover(context.Background(), srv, io.Discard)
	if err == nil {
		t.Fatal("the redirect to loopback was followed in an agent's run")
	}
	if hits.Load() != 0 {
		t.Fatalf("%d requests reached the server behind the redirect", hits.Load())
	}
	text := errText(err)
	for _, want := range []string{"the redirect of MCP server 'hop' from " + front + " to 127.0.0.1", "resolves to 127.0.0.1, a loopback address",
		"no redirect may lead to a loopback, private or link-local address", `"network": {"allow_hosts": ["127.0.0.1"]}`, `"allow_private": true`, "settings.json", "ask the user"} {
		if !strings.Contains(text, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, text)
		}
	}
	if c := ErrorClass(err); c != "network_error" || !Permanent(err) {
		t.Errorf("error class %q, permanent %v", c, Permanent(err))
	}
}

// The same redirect is followed from the command line, and in an agent's
// run when the settings allow private addresses or name the host.
func TestRemoteRedirectToLoopbackAllowed(t *testing.T) {
	for _, c := range []struct {
		name string
		p    *netpolicy.Policy
	}{
		{"no-policy", nil},
		{"cli", &netpolicy.Policy{}},
		{"agent-allow_private", &netpolicy.Policy{Agent: true, AllowPrivate: true}},
		{"agent-allow_hosts", &netpolicy.Policy{Agent: true, AllowHosts: []string{"127.0.0.1"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			front, hits := behindRedirect(t)
			srv, err := Resolve("hop", map[string]any{"type": "http", "url": front, "startup_timeout": int64(20)}, env(nil), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			srv.Network = c.p
			tools, err := Discover(context.Background(), srv, io.Discard)
			if err != nil || len(tools) != 1 || hits.Load() == 0 {
				t.Fatalf("tools=%v err=%v hits=%d", tools, err, hits.Load())
			}
		})
	}
}

// An agent's remote server on loopback (its url, not a redirect) is
// reached, as the http node's first URL is.
func TestRemoteLoopbackServerAllowedForAgent(t *testing.T) {
	ts := httptest.NewServer(helloHandler())
	defer ts.Close()
	srv, err := Resolve("local", map[string]any{"type": "http", "url": ts.URL, "startup_timeout": int64(20)}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv.Network = &netpolicy.Policy{Agent: true}
	if tools, err := Discover(context.Background(), srv, io.Discard); err != nil || len(tools) != 1 {
		t.Fatalf("tools=%v err=%v", tools, err)
	}
}

// A server whose url is the cloud metadata address is refused where it is
// dialled, before a packet is sent, in every run (the command line too):
// the refusal names the server, the host, the rule and the setting.
func TestRemoteServerAtMetadataAddressRefused(t *testing.T) {
	for _, p := range []*netpolicy.Policy{nil, {}, {Agent: true}, {AllowPrivate: true}} {
		for _, u := range []string{"https://169.254.169.254/mcp", "http://169.254.169.254/latest", "https://[fe80::1]:8443/mcp"} {
			srv, err := Resolve("meta", map[string]any{"type": "http", "url": u, "insecure": true, "startup_timeout": int64(10)}, env(nil), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			srv.Network = p
			_, err = Connect(context.Background(), srv, io.Discard)
			pu, _ := url.Parse(u)
			host := pu.Hostname()
			text := errText(err)
			for _, want := range []string{"pflow refused the connection to MCP server 'meta' at " + host, "no MCP server is reached at a link-local or cloud metadata address",
				`"network": {"allow_hosts": ["` + host + `"]}`} {
				if err == nil || !strings.Contains(text, want) {
					t.Errorf("policy %+v, %s: the refusal does not say %q:\n%s", p, u, want, text)
				}
			}
			if strings.Contains(text, "allow_private") {
				t.Errorf("allow_private is offered for a link-local address: %s", text)
			}
		}
	}
}

// pinOf is the pin of a test server's certificate.
func pinOf(ts *httptest.Server) string { return SPKIPin(ts.Certificate()) }

// tlsServer starts a real MCP server over TLS counting its requests, and
// writes its certificate as a ca_file.
func tlsServer(t *testing.T) (*httptest.Server, string, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	ts := httptest.NewUnstartedServer(counted(helloHandler(), &hits))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	ts.StartTLS()
	t.Cleanup(ts.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return ts, ca, &hits
}

// A pin that matches the server's key lets the connection through, in
// every accepted form (with or without "sha256//", in a list next to an
// old pin, in a pin_file with comments).
func TestPinMatch(t *testing.T) {
	ts, ca, hits := tlsServer(t)
	pin := pinOf(ts)
	other := base64.StdEncoding.EncodeToString(make([]byte, 32))
	file := filepath.Join(t.TempDir(), "pins")
	os.WriteFile(file, []byte("# the server's key\n\nsha256//"+other+"\nsha256//"+pin+"\n"), 0o600)
	for name, extra := range map[string]map[string]any{
		"prefixed":        {"pin_sha256": "sha256//" + pin},
		"bare":            {"pin_sha256": pin},
		"list":            {"pin_sha256": []any{"sha256//" + other, "sha256//" + pin}},
		"curl-semicolons": {"pin_sha256": "sha256//" + other + ";sha256//" + pin},
		"pin_file":        {"pin_file": file},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := map[string]any{"type": "http", "url": ts.URL, "ca_file": ca, "startup_timeout": int64(20)}
			for k, v := range extra {
				cfg[k] = v
			}
			srv, err := Resolve("pinned", cfg, env(nil), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			before := hits.Load()
			tools, err := Discover(context.Background(), srv, io.Discard)
			if err != nil || len(tools) != 1 || hits.Load() == before {
				t.Fatalf("tools=%v err=%v", tools, err)
			}
		})
	}
}

// A pin that matches no certificate of the server's chain fails the TLS
// handshake: no request reaches the server, and the failure names the
// server, the pinned and the presented fingerprints, and how to update
// the pin.
func TestPinMismatchFailsBeforeAnyRequest(t *testing.T) {
	ts, ca, hits := tlsServer(t)
	sum := sha256.Sum256([]byte("another key"))
	wrong := base64.StdEncoding.EncodeToString(sum[:])
	srv, err := Resolve("pinned", map[string]any{"type": "http", "url": ts.URL, "ca_file": ca, "pin_sha256": "sha256//" + wrong, "startup_timeout": int64(20)}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Discover(context.Background(), srv, io.Discard)
	if err == nil {
		t.Fatal("a connection with a mismatched pin succeeded")
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the server despite the pin mismatch", n)
	}
	text := errText(err)
	t.Log(text)
	host := strings.TrimPrefix(ts.URL, "https://")
	for _, want := range []string{"MCP server 'pinned' at " + host, "no request was sent", "sha256//" + wrong, "sha256//" + pinOf(ts),
		`set "pin_sha256" of server 'pinned'`, "intercepting"} {
		if !strings.Contains(text, want) {
			t.Errorf("the failure does not say %q:\n%s", want, text)
		}
	}
	if !Permanent(err) {
		t.Error("a pin mismatch would be retried")
	}
	if strings.Contains(text, "not trusted") {
		t.Errorf("a pin mismatch is reported as an untrusted certificate:\n%s", text)
	}
}

// Pins apply to the host of the server's url only: a request to another
// host (an authorization server) is not held to them.
func TestPinsApplyToTheServersHost(t *testing.T) {
	ts, ca, _ := tlsServer(t)
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer other.Close()
	srv, err := Resolve("pinned", map[string]any{"type": "http", "url": ts.URL, "ca_file": ca, "pin_sha256": pinOf(ts)}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tr := newRemoteTransport(srv)
	defer tr.CloseIdleConnections()
	// The other host's certificate is trusted here through the pool of
	// the test client; only the pin could refuse it.
	tr.base.TLSClientConfig = other.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	resp, err := (&http.Client{Transport: tr}).Get(other.URL)
	if err != nil {
		t.Fatalf("a request to another host was held to the server's pins: %v", err)
	}
	resp.Body.Close()
}

// Pins are checked when the config is added or loaded: a pin that is not
// a base64 SHA-256, a pin_sha256 of the wrong shape, an unreadable or bad
// pin_file and pins on a plain http:// url are refused naming the key.
func TestBadPinsRefusedAtConfigTime(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(make([]byte, 32))
	for _, c := range []struct {
		name string
		pin  any
		want string
	}{
		{"not base64", "sha256//not-base64!", `pin_sha256: "sha256//not-base64!" is not a SHA-256 key pin`},
		{"wrong length", "sha256//" + base64.StdEncoding.EncodeToString(make([]byte, 20)), "is not a SHA-256 key pin"},
		{"md5 prefix", "md5//" + good, "is not a SHA-256 key pin"},
		{"number", int64(3), "pin_sha256 must be a pin"},
		{"list of numbers", []any{int64(3)}, "pin_sha256 must be a pin"},
		{"empty", "", "pin_sha256: \"\" holds no pin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := map[string]any{"type": "http", "url": "https://mcp.example.com/mcp", "pin_sha256": c.pin}
			err := ValidateEntry("svc", cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "Server 'svc'") {
				t.Fatalf("ValidateEntry: %v, want %q", err, c.want)
			}
			if _, err := Resolve("svc", cfg, env(nil), io.Discard); err == nil {
				t.Fatal("Resolve accepted it")
			}
			b := `{"svc": {"type": "http", "url": "https://mcp.example.com/mcp", "pin_sha256": ` + jsonOf(c.pin) + `}}`
			if _, err := ParseSource(b); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("mcp add's parse: %v", err)
			}
		})
	}
	// A pin from a variable is checked once expanded.
	_, err := Resolve("svc", map[string]any{"type": "http", "url": "https://mcp.example.com/mcp", "pin_sha256": "${PIN}"}, env(map[string]string{"PIN": "nope"}), io.Discard)
	if err == nil || !strings.Contains(err.Error(), `MCP server 'svc': pin_sha256: "nope" is not a SHA-256 key pin`) {
		t.Errorf("an expanded bad pin: %v", err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "pins")
	os.WriteFile(bad, []byte("# ok\nsha256//"+good+"\nsha256//short\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("# nothing\n\n"), 0o600)
	for file, want := range map[string]string{
		bad:                           "pin_file " + bad + ", line 3: \"sha256//short\" is not a SHA-256 key pin",
		empty:                         "pin_file " + empty + " holds no pin",
		filepath.Join(dir, "missing"): "cannot read pin_file",
	} {
		_, err := Resolve("svc", map[string]any{"type": "http", "url": "https://mcp.example.com/mcp", "pin_file": file}, env(nil), io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("pin_file %s: %v, want %q", file, err, want)
		}
	}
	if err := ValidateEntry("svc", map[string]any{"type": "http", "url": "https://h/mcp", "pin_file": ""}); err == nil || !strings.Contains(err.Error(), "pin_file must be") {
		t.Errorf("an empty pin_file: %v", err)
	}
	_, err = Resolve("svc", map[string]any{"type": "http", "url": "http://127.0.0.1:9/mcp", "pin_sha256": good}, env(nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "its url is not https://") {
		t.Errorf("pins on http://: %v", err)
	}
}

func jsonOf(v any) string {
	switch x := v.(type) {
	case string:
		return `"` + x + `"`
	case int64:
		return "3"
	case []any:
		return "[3]"
	}
	return "null"
}

// A pooled session opened under one network policy is not handed to a run
// under another.
func TestPoolHashCarriesThePolicy(t *testing.T) {
	srv, err := Resolve("r", map[string]any{"type": "http", "url": "https://h.example/mcp"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cli := srv.poolHash()
	srv.Network = &netpolicy.Policy{Agent: true}
	agent := srv.poolHash()
	srv.Network = &netpolicy.Policy{Agent: true, AllowHosts: []string{"10.0.0.1"}}
	if cli == agent || agent == srv.poolHash() {
		t.Fatal("the pool's hash does not tell the policies apart")
	}
}

// A legacy SSE server names the address pflow posts its messages to: in
// an agent's run an address on another host that is loopback is refused
// as a redirect is, before anything is posted to it; from the command
// line it is used.
func TestSSEEndpointOnAnotherHostIsCheckedAsARedirect(t *testing.T) {
	var posts atomic.Int32
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer sink.Close()
	stream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\ndata: "+sink.URL+"/messages?session=1\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	}))
	defer stream.Close()
	// The server's url names "localhost"; the endpoint it names, 127.0.0.1.
	u := strings.Replace(stream.URL, "127.0.0.1", "localhost", 1) + "/sse"
	connect := func(p *netpolicy.Policy) error {
		srv, err := Resolve("legacy", map[string]any{"type": "sse", "url": u, "startup_timeout": int64(1)}, env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		srv.Network = p
		_, err = Connect(context.Background(), srv, io.Discard)
		return err
	}
	err := connect(&netpolicy.Policy{Agent: true})
	if err == nil || posts.Load() != 0 {
		t.Fatalf("an agent's run posted to the endpoint: err=%v posts=%d", err, posts.Load())
	}
	text := errText(err)
	for _, want := range []string{"the request to 127.0.0.1, an address MCP server 'legacy' (" + u + ") named", "a loopback address",
		"no redirect, nor any address a server names, may lead to a loopback"} {
		if !strings.Contains(text, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, text)
		}
	}
	connect(&netpolicy.Policy{})
	if posts.Load() == 0 {
		t.Fatal("from the command line, nothing was posted to the endpoint")
	}
}
