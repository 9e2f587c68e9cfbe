package http

import (
	"context"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
)

// TestHTTPHeaderLineBreaksRefused: a header value with CR, LF or NUL fails
// the step before any request, as a Permanent result (never retried), naming
// the header and quoting the value only when it is no credential.
func TestHTTPHeaderLineBreaksRefused(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	tests := []struct {
		name   string
		params map[string]any
		want   string // in the message
		secret string // must not be in the message ("" when the value is shown)
	}{
		{"CRLF", map[string]any{"headers": map[string]any{"X-Title": "a\r\nX-Injected: 1"}}, `Header 'X-Title' contains a line break (CR or LF)`, ""},
		{"LF", map[string]any{"headers": map[string]any{"X-Title": "a\nb"}}, `Header 'X-Title' contains a line break`, ""},
		{"CR", map[string]any{"headers": map[string]any{"X-Title": "a\rb"}}, `Header 'X-Title' contains a line break`, ""},
		{"NUL", map[string]any{"headers": map[string]any{"X-Title": "a\x00b"}}, `Header 'X-Title' contains a NUL byte`, ""},
		{"credential header", map[string]any{"headers": map[string]any{"Authorization": "Bearer tok-SECRET\r\nX: 1"}}, `Header 'Authorization' contains a line break`, "tok-SECRET"},
		{"api-key style header", map[string]any{"headers": map[string]any{"X-Goog-Api-Key": "key-SECRET\n"}}, `Header 'X-Goog-Api-Key'`, "key-SECRET"},
		{"header holding the token", map[string]any{"auth_token": "tok-SECRET", "headers": map[string]any{"X-Forward": "tok-SECRET\n"}}, `Header 'X-Forward'`, "tok-SECRET"},
		{"auth_token", map[string]any{"auth_token": "tok-SECRET\r\nX-Injected: 1"}, `auth_token contains a line break`, "tok-SECRET"},
		{"api_key", map[string]any{"api_key": "key-SECRET\nX-Injected: 1"}, `api_key contains a line break`, "key-SECRET"},
		{"header holding a secret input", map[string]any{"headers": map[string]any{"X-Forward": "s3cr3t-input\n"}}, `Header 'X-Forward'`, "s3cr3t-input"},
		{"bad name", map[string]any{"headers": map[string]any{"X-A\r\nX-Injected": "1"}}, `Header name "X-A\r\nX-Injected" is not a valid HTTP header name`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.params["url"] = srv.URL
			res, err := Spec().Node.Run(context.Background(), &node.Request{NodeID: "h", Params: tt.params, Shared: map[string]any{"api_token": "s3cr3t-input"}})
			if err != nil {
				t.Fatalf("want an error result, got Go error %v", err)
			}
			msg, _ := res.Outputs["error"].(string)
			if res.Action != "error" || !res.Permanent || res.Retryable || !strings.Contains(msg, tt.want) {
				t.Fatalf("res = %+v, want a permanent error containing %q", res, tt.want)
			}
			if tt.secret != "" && strings.Contains(msg, tt.secret) {
				t.Errorf("the message shows a credential: %q", msg)
			}
			if tt.secret == "" && !strings.Contains(msg, "The value is") && tt.name != "bad name" {
				t.Errorf("the message should quote a non-credential value: %q", msg)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server got %d requests; none may be sent", n)
	}
}

// TestHTTPQueryParamsAreData: hostile names and values in the params dict
// arrive as exactly one query parameter each, next to the URL's own query.
func TestHTTPQueryParamsAreData(t *testing.T) {
	var mu sync.Mutex
	var got url.Values
	var path string
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		got, path = r.URL.Query(), r.URL.Path
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	params := map[string]any{"a&admin=1": "x#frag", "q": "1&admin=1 ünï\r\n", "list": []any{"a=b", "c&d"}}
	if _, err := run(t, context.Background(), map[string]any{"url": srv.URL + "/s?keep=1", "params": params}); err != nil {
		t.Fatal(err)
	}
	want := url.Values{"keep": {"1"}, "a&admin=1": {"x#frag"}, "q": {"1&admin=1 ünï\r\n"}, "list": {"a=b", "c&d"}}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(got, want) || path != "/s" {
		t.Errorf("server got %q %v, want /s %v", path, got, want)
	}
}

// hostsClient resolves every host name to 127.0.0.1 (keeping the port), so
// tests can use a.test, b.test, sub.a.test.
func hostsClient() *nethttp.Client {
	tr := nethttp.DefaultTransport.(*nethttp.Transport).Clone()
	d := &net.Dialer{}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
	}
	return newClient(tr)
}

// hopServer redirects /hop?to=URL to URL and records the headers of every
// other request by host.
type hopServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string]nethttp.Header // "host path" → headers
}

func newHopServer(t *testing.T) *hopServer {
	s := &hopServer{seen: map[string]nethttp.Header{}}
	s.Server = httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if to := r.URL.Query().Get("to"); r.URL.Path == "/hop" && to != "" {
			nethttp.Redirect(w, r, to, nethttp.StatusFound)
			return
		}
		s.mu.Lock()
		s.seen[r.Host+" "+r.URL.Path] = r.Header.Clone()
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *hopServer) headers(t *testing.T, hostPath string) nethttp.Header {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.seen[hostPath]
	if !ok {
		t.Fatalf("no request reached %q (seen: %v)", hostPath, s.seen)
	}
	return h
}

func hop(from, to string) string { return from + "/hop?to=" + url.QueryEscape(to) }

// credentialParams sets one header of every credential kind, and one plain
// header that must always follow.
func credentialParams(u string) map[string]any {
	return map[string]any{
		"url":        u,
		"auth_token": "tok-SECRET",
		"headers": map[string]any{
			"Cookie":                    "session=abc",
			"Proxy-Authorization":       "Basic eA==",
			"X-Auth-Token":              "xat",
			"Private-Token":             "pt",
			"Ocp-Apim-Subscription-Key": "azure",
			"X-Signature":               "sig with tok-SECRET inside", // holds auth_token's value
			"X-Forwarded-Secret":        "s3cr3t-input",               // secret-like name
			"X-Echo":                    "s3cr3t-input",               // holds a secret-named input's value
			"X-Plain":                   "kept",
		},
	}
}

var credentialNames = []string{"Authorization", "Cookie", "Proxy-Authorization", "X-Auth-Token", "Private-Token", "Ocp-Apim-Subscription-Key", "X-Signature", "X-Forwarded-Secret", "X-Echo"}

func runWith(t *testing.T, client *nethttp.Client, params map[string]any) *node.Result {
	t.Helper()
	res, err := httpNode{client: client}.Run(context.Background(), &node.Request{NodeID: "h", Params: params,
		Shared: map[string]any{"api_token": "s3cr3t-input", "name": "kept"}})
	if err != nil || res.Action != "" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	return res
}

func checkDropped(t *testing.T, h nethttp.Header, dropped bool, where string) {
	t.Helper()
	for _, name := range credentialNames {
		if has := h.Get(name) != ""; has == dropped {
			t.Errorf("%s: %s present=%v, want %v", where, name, has, !dropped)
		}
	}
	if h.Get("X-Plain") != "kept" || h.Get("User-Agent") != "pflow" {
		t.Errorf("%s: plain headers lost: %v", where, h)
	}
}

// TestHTTPRedirectDropsCredentials: when a redirect changes host (name or
// port), credential headers stay behind; on the same host they follow.
func TestHTTPRedirectDropsCredentials(t *testing.T) {
	a, b := newHopServer(t), newHopServer(t)
	aHost, bHost := strings.TrimPrefix(a.URL, "http://"), strings.TrimPrefix(b.URL, "http://")

	t.Run("go alone leaks to another port", func(t *testing.T) {
		// Why pflow needs its own policy: Go compares host names only, so
		// 127.0.0.1:A → 127.0.0.1:B keeps Authorization; and it never
		// drops API-key style headers.
		req, _ := nethttp.NewRequest("GET", hop(a.URL, b.URL+"/go"), nil)
		req.Header.Set("Authorization", "Bearer tok-SECRET")
		req.Header.Set("X-Auth-Token", "xat")
		resp, err := (&nethttp.Client{}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if h := b.headers(t, bHost+" /go"); h.Get("Authorization") == "" || h.Get("X-Auth-Token") == "" {
			t.Fatalf("Go's default policy changed; revisit this test: %v", h)
		}
	})

	t.Run("another port", func(t *testing.T) {
		runWith(t, defaultClient(), credentialParams(hop(a.URL, b.URL+"/landing")))
		h := b.headers(t, bHost+" /landing")
		checkDropped(t, h, true, "127.0.0.1:A → 127.0.0.1:B")
		if h.Get("Referer") != "" {
			t.Errorf("Referer followed to another host: %q", h.Get("Referer"))
		}
	})

	t.Run("same host", func(t *testing.T) {
		runWith(t, defaultClient(), credentialParams(hop(a.URL, a.URL+"/same")))
		checkDropped(t, a.headers(t, aHost+" /same"), false, "same host")
	})

	_, port, _ := net.SplitHostPort(aHost)
	at := func(host string) string { return "http://" + host + ":" + port }
	client := hostsClient()
	for _, tc := range []struct {
		name, url, landed string
		dropped           bool
	}{
		{"a.test → b.test", hop(at("a.test"), at("b.test")+"/x"), "b.test:" + port + " /x", true},
		{"a.test → sub.a.test (Go keeps Authorization)", hop(at("a.test"), at("sub.a.test")+"/x"), "sub.a.test:" + port + " /x", true},
		{"a.test → b.test → a.test", hop(at("a.test"), hop(at("b.test"), at("a.test")+"/back")), "a.test:" + port + " /back", true},
		{"a.test → a.test", hop(at("a.test"), "/rel"), "a.test:" + port + " /rel", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runWith(t, client, credentialParams(tc.url))
			checkDropped(t, a.headers(t, tc.landed), tc.dropped, tc.name)
		})
	}

	t.Run("api_key under a custom header", func(t *testing.T) {
		runWith(t, client, map[string]any{"url": hop(at("a.test"), at("b.test")+"/key"), "api_key": "k-SECRET", "api_key_header": "X-Custom"})
		if h := a.headers(t, "b.test:"+port+" /key"); h.Get("X-Custom") != "" {
			t.Errorf("the api_key header followed to another host: %v", h)
		}
		runWith(t, client, map[string]any{"url": hop(at("a.test"), at("a.test")+"/key"), "api_key": "k-SECRET", "api_key_header": "X-Custom"})
		if h := a.headers(t, "a.test:"+port+" /key"); h.Get("X-Custom") != "k-SECRET" {
			t.Errorf("the api_key header must follow on the same host: %v", h)
		}
	})

	t.Run("redirect limit", func(t *testing.T) {
		u := a.URL + "/end"
		for i := 0; i < maxRedirects+1; i++ {
			u = hop(a.URL, u)
		}
		res, err := httpNode{client: client}.Run(context.Background(), &node.Request{Params: map[string]any{"url": u}})
		if msg, _ := res.Outputs["error"].(string); err != nil || !strings.Contains(msg, "stopped after 10 redirects") {
			t.Fatalf("err = %v, res = %+v", err, res)
		}
	})
}

func TestLeavesOrigin(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"https://a.test/x", "https://a.test/y", false},
		{"https://a.test/x", "https://a.test:443/y", false},
		{"https://a.test/x", "https://A.Test/y", false},
		{"http://a.test/x", "https://a.test/y", false},
		{"https://a.test/x", "http://a.test/y", true},
		{"https://a.test/x", "https://a.test:8443/y", true},
		{"http://a.test:8080/x", "https://a.test:8080/y", false},
		{"https://a.test/x", "https://b.test/y", true},
		{"https://a.test/x", "https://sub.a.test/y", true},
		{"https://sub.a.test/x", "https://a.test/y", true},
	} {
		from, _ := url.Parse(tc.from)
		to, _ := url.Parse(tc.to)
		if got := leavesOrigin(from, to); got != tc.want {
			t.Errorf("leavesOrigin(%s, %s) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestIsCredentialHeader(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "Proxy-Authorization": true, "Cookie": true, "X-API-Key": true, "Api-Key": true,
		"X-Auth-Token": true, "Private-Token": true, "Ocp-Apim-Subscription-Key": true, "X-Key": true, "apikey": true,
		"X-Access-Token": true, "X-Client-Secret": true,
		"Accept": false, "Content-Type": false, "User-Agent": false, "X-Request-Id": false, "Keep-Alive": false, "X-Max-Tokens": false,
	} {
		if got := isCredentialHeader(name); got != want {
			t.Errorf("isCredentialHeader(%q) = %v, want %v", name, got, want)
		}
	}
}
