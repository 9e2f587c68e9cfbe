package http

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/node"
)

// seen records what the test server received.
type seen struct {
	Method  string
	Path    string
	Query   string
	Header  nethttp.Header
	Body    string
	Content string
}

type server struct {
	*httptest.Server
	mu   sync.Mutex
	last seen
}

func newServer(t *testing.T, h nethttp.HandlerFunc) *server {
	s := &server{}
	s.Server = httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.last = seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(b), r.Header.Get("Content-Type")}
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) got() seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func reply(status int, contentType, body string) nethttp.HandlerFunc {
	return func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.Header().Set("X-Request-Id", "abc")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func run(t *testing.T, ctx context.Context, params map[string]any) (*node.Result, error) {
	t.Helper()
	res, err := Spec().Node.Run(ctx, &node.Request{NodeID: "h", Params: params})
	if res != nil {
		for k := range res.Outputs {
			if _, ok := Spec().Interface.Output(k); !ok {
				t.Errorf("output %q is written but not declared", k)
			}
		}
	}
	return res, err
}

func TestHTTPRequests(t *testing.T) {
	tests := []struct {
		name    string
		handler nethttp.HandlerFunc
		params  map[string]any // "url" is prefixed with the server URL
		check   func(t *testing.T, got seen)
		want    map[string]any
	}{
		{
			name:    "GET parses JSON response",
			handler: reply(200, "application/json; charset=utf-8", `{"items":[{"id":7}],"big":1458059302022549698}`),
			params:  map[string]any{"url": "/items"},
			check: func(t *testing.T, got seen) {
				if got.Method != "GET" || got.Path != "/items" || got.Body != "" {
					t.Errorf("server saw %+v", got)
				}
			},
			want: map[string]any{"response": map[string]any{"items": []any{map[string]any{"id": int64(7)}}, "big": int64(1458059302022549698)}, "status_code": int64(200), "response_is_binary": false},
		},
		{
			name:    "dict body means POST with JSON",
			handler: reply(201, "text/plain", "created"),
			params:  map[string]any{"url": "/", "body": map[string]any{"name": "café", "tags": []any{"a"}}},
			check: func(t *testing.T, got seen) {
				if got.Method != "POST" || got.Content != "application/json" || got.Body != `{"name":"café","tags":["a"]}` {
					t.Errorf("server saw %+v", got)
				}
			},
			want: map[string]any{"response": "created", "status_code": int64(201)},
		},
		{
			name:    "list body is sent as JSON",
			handler: reply(200, "", ""),
			params:  map[string]any{"url": "/", "body": []any{int64(1), map[string]any{"a": true}}},
			check: func(t *testing.T, got seen) {
				if got.Method != "POST" || got.Content != "application/json" || got.Body != `[1,{"a":true}]` {
					t.Errorf("server saw %+v", got)
				}
			},
		},
		{
			name:    "string body raw with explicit method and content type",
			handler: reply(200, "", ""),
			params:  map[string]any{"url": "/", "method": "put", "body": "a=1&b=2", "headers": map[string]any{"Content-Type": "application/x-www-form-urlencoded"}},
			check: func(t *testing.T, got seen) {
				if got.Method != "PUT" || got.Content != "application/x-www-form-urlencoded" || got.Body != "a=1&b=2" {
					t.Errorf("server saw %+v", got)
				}
			},
		},
		{
			name:    "JSON text body is labelled as JSON",
			handler: reply(200, "", ""),
			params:  map[string]any{"url": "/", "body": `{"from":"a previous step"}`},
			check: func(t *testing.T, got seen) {
				if got.Method != "POST" || got.Content != "application/json" || got.Body != `{"from":"a previous step"}` {
					t.Errorf("server saw %+v", got)
				}
			},
		},
		{
			name:    "plain text body has no JSON content type",
			handler: reply(200, "", ""),
			params:  map[string]any{"url": "/", "body": "hello"},
			check: func(t *testing.T, got seen) {
				if got.Content == "application/json" || got.Body != "hello" {
					t.Errorf("server saw %+v", got)
				}
			},
		},
		{
			name:    "explicit content type wins over JSON default",
			handler: reply(200, "", ""),
			params:  map[string]any{"url": "/", "body": map[string]any{"a": int64(1)}, "headers": map[string]any{"content-type": "application/vnd.api+json"}},
			check: func(t *testing.T, got seen) {
				if got.Content != "application/vnd.api+json" {
					t.Errorf("content type %q", got.Content)
				}
			},
		},
		{
			name:    "query params merged into URL query",
			handler: reply(200, "", ""),
			params:  map[string]any{"url": "/search?x=1", "params": map[string]any{"q": "a b", "n": int64(5), "tag": []any{"a", "b"}}},
			check: func(t *testing.T, got seen) {
				if got.Query != "n=5&q=a+b&tag=a&tag=b&x=1" {
					t.Errorf("query %q", got.Query)
				}
			},
		},
		{
			name:    "headers and bearer token",
			handler: reply(200, "", ""),
			params:  map[string]any{"url": "/", "headers": map[string]any{"X-Trace": "t1", "X-Num": int64(3)}, "auth_token": "tok123"},
			check: func(t *testing.T, got seen) {
				if got.Header.Get("Authorization") != "Bearer tok123" || got.Header.Get("X-Trace") != "t1" || got.Header.Get("X-Num") != "3" {
					t.Errorf("headers %v", got.Header)
				}
			},
		},
		{
			name:    "api key default header",
			handler: reply(200, "", ""),
			params:  map[string]any{"url": "/", "api_key": "k1"},
			check: func(t *testing.T, got seen) {
				if got.Header.Get("X-API-Key") != "k1" || got.Header.Get("Authorization") != "" {
					t.Errorf("headers %v", got.Header)
				}
			},
		},
		{
			name:    "api key custom header",
			handler: reply(200, "", ""),
			params:  map[string]any{"url": "/", "api_key": "k2", "api_key_header": "Api-Token"},
			check: func(t *testing.T, got seen) {
				if got.Header.Get("Api-Token") != "k2" {
					t.Errorf("headers %v", got.Header)
				}
			},
		},
		{
			name:    "binary response is base64",
			handler: reply(200, "image/png", "\x89PNG\x00\x01"),
			params:  map[string]any{"url": "/img"},
			want:    map[string]any{"response": "iVBORwAB", "response_is_binary": true},
		},
		{
			name:    "invalid JSON falls back to text",
			handler: reply(200, "application/json", "{not json"),
			params:  map[string]any{"url": "/"},
			want:    map[string]any{"response": "{not json", "response_is_binary": false},
		},
		{
			name:    "non-UTF-8 text is base64",
			handler: reply(200, "text/plain", "caf\xe9"),
			params:  map[string]any{"url": "/"},
			want:    map[string]any{"response": "Y2Fm6Q==", "response_is_binary": true},
		},
		{
			name:    "text response",
			handler: reply(200, "text/html", "<p>hi</p>"),
			params:  map[string]any{"url": "/"},
			want:    map[string]any{"response": "<p>hi</p>"},
		},
		{
			name:    "empty JSON body is empty text",
			handler: reply(204, "application/json", ""),
			params:  map[string]any{"url": "/", "method": "DELETE"},
			want:    map[string]any{"response": "", "status_code": int64(204)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handler)
			params := map[string]any{}
			for k, v := range tt.params {
				params[k] = v
			}
			params["url"] = srv.URL + tt.params["url"].(string)
			res, err := run(t, context.Background(), params)
			if err != nil {
				t.Fatalf("Go error: %v", err)
			}
			if res.Action != "" {
				t.Fatalf("action %q: %v", res.Action, res.Outputs["error"])
			}
			if tt.check != nil {
				tt.check(t, srv.got())
			}
			for k, v := range tt.want {
				if !reflect.DeepEqual(res.Outputs[k], v) {
					t.Errorf("%s = %#v, want %#v", k, res.Outputs[k], v)
				}
			}
			hdrs := res.Outputs["response_headers"].(map[string]any)
			if hdrs["x-request-id"] != "abc" {
				t.Errorf("response_headers not lower-cased: %v", hdrs)
			}
			if rt, ok := res.Outputs["response_time"].(float64); !ok || rt < 0 {
				t.Errorf("response_time = %#v", res.Outputs["response_time"])
			}
		})
	}
}

func TestHTTPNon2xx(t *testing.T) {
	tests := []struct {
		status    int
		ct, body  string
		msg       string
		retryable bool
		response  any
	}{
		{404, "text/plain", "no such item\n", "HTTP 404 Not Found{url}: no such item", false, "no such item\n"},
		{400, "application/json", `{"error":"bad field"}`, `HTTP 400 Bad Request{url}: {"error":"bad field"}`, false, map[string]any{"error": "bad field"}},
		{429, "", "slow down", "HTTP 429 Too Many Requests{url}: slow down", true, "slow down"},
		{503, "", "", "HTTP 503 Service Unavailable{url}", true, ""},
		{500, "text/plain", strings.Repeat("x", 1000), "HTTP 500 Internal Server Error{url}: " + strings.Repeat("x", 300) + "…", true, strings.Repeat("x", 1000)},
		{302, "", "", "HTTP 302 Found{url}", false, ""},
		{599, "", "x", "HTTP 599 status code 599{url}: x", true, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.msg[:8], func(t *testing.T) {
			srv := newServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
				if tt.status == 302 {
					// A redirect with no Location cannot be followed.
					w.WriteHeader(302)
					return
				}
				reply(tt.status, tt.ct, tt.body)(w, r)
			})
			res, err := run(t, context.Background(), map[string]any{"url": srv.URL + "/x"})
			if err != nil {
				t.Fatalf("Go error: %v", err)
			}
			want := strings.Replace(tt.msg, "{url}", " from GET "+srv.URL+"/x", 1)
			if res.Action != "error" || res.Outputs["error"] != want {
				t.Fatalf("action=%q error=%q, want %q", res.Action, res.Outputs["error"], want)
			}
			if res.Retryable != tt.retryable {
				t.Errorf("Retryable = %v", res.Retryable)
			}
			if res.Outputs["status_code"] != int64(tt.status) || !reflect.DeepEqual(res.Outputs["response"], tt.response) {
				t.Errorf("status/body not kept: %v %#v", res.Outputs["status_code"], res.Outputs["response"])
			}
		})
	}
}

func TestHTTPFollowsRedirect(t *testing.T) {
	srv := newServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/old" {
			nethttp.Redirect(w, r, "/new", nethttp.StatusMovedPermanently)
			return
		}
		reply(200, "application/json", `{"ok":true}`)(w, r)
	})
	res, err := run(t, context.Background(), map[string]any{"url": srv.URL + "/old"})
	if err != nil || res.Action != "" || !reflect.DeepEqual(res.Outputs["response"], map[string]any{"ok": true}) {
		t.Fatalf("res=%+v err=%v", res, err)
	}
}

func TestHTTPTimeout(t *testing.T) {
	srv := newServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	res, err := run(t, context.Background(), map[string]any{"url": srv.URL + "/slow?token=SECRET", "timeout": 0.2})
	if err != nil || res.Action != "error" || res.Class != node.ClassTimeout {
		t.Fatalf("want a failed step of class timeout: %v %+v", err, res)
	}
	msg, _ := res.Outputs["error"].(string)
	want := "Request to " + srv.URL + "/slow timed out after 0.2 seconds"
	if !strings.Contains(msg, want) {
		t.Fatalf("error = %q, want it to contain %q", msg, want)
	}
	if strings.Contains(msg, "SECRET") {
		t.Fatalf("error leaks the query string: %q", msg)
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	res, err := run(t, context.Background(), map[string]any{"url": "http://user:pw@" + addr + "/api?key=SECRET"})
	if err != nil || res.Action != "error" || res.Class != node.ClassNetworkError || !res.Retryable {
		t.Fatalf("want a failed step of class network_error: %v %+v", err, res)
	}
	want := "Could not connect to http://" + addr + "/api. Please check the URL is correct and the service is running."
	if msg, _ := res.Outputs["error"].(string); !strings.Contains(msg, want) || strings.Contains(msg, "SECRET") {
		t.Fatalf("error = %q, want %q", msg, want)
	}
	for _, secret := range []string{"SECRET", "pw"} {
		if msg, _ := res.Outputs["error"].(string); strings.Contains(msg, secret) {
			t.Fatalf("error leaks %q: %q", secret, msg)
		}
	}
}

func TestHTTPCancel(t *testing.T) {
	started := make(chan struct{})
	srv := newServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		close(started)
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := run(t, ctx, map[string]any{"url": srv.URL})
		done <- err
	}()
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("request not interrupted by cancel")
	}
}

// TestHTTPParamErrors: params the node cannot use fail the step before
// anything is sent, as a failed result marked Permanent: no retry changes
// them, so the runtime tries once (not http's 3 attempts), even when the
// step sets retries.
func TestHTTPParamErrors(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"missing url", map[string]any{}, "'url'"},
		{"bad scheme", map[string]any{"url": "ftp://x/y"}, "must start with http:// or https://"},
		{"no host", map[string]any{"url": "http://"}, "has no host"},
		{"bad method", map[string]any{"url": "http://127.0.0.1/", "method": "FETCH"}, `"FETCH" is not supported; use one of GET, POST`},
		{"token and key", map[string]any{"url": "http://127.0.0.1/", "auth_token": "a", "api_key": "b"}, "Cannot specify both auth_token and api_key - they are mutually exclusive"},
		{"headers not a dict", map[string]any{"url": "http://127.0.0.1/", "headers": "X: y"}, "'headers'"},
		{"bad timeout", map[string]any{"url": "http://127.0.0.1/", "timeout": int64(0)}, "greater than 0"},
		{"headers a list", map[string]any{"url": "http://127.0.0.1/", "headers": []any{"a", "b"}}, "write it as '- headers: {name: value}'"},
		{"timeout a word", map[string]any{"url": "http://127.0.0.1/", "timeout": "soon"}, `expects seconds (e.g. 30) or a duration (e.g. 1m30s), got "soon"`},
		{"params a string", map[string]any{"url": "http://127.0.0.1/", "params": "a=b"}, "'params'"},
		{"bad api_key_header", map[string]any{"url": "http://127.0.0.1/", "api_key": "k", "api_key_header": "X Key"}, "not a valid HTTP header name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, context.Background(), tt.params)
			if err != nil {
				t.Fatalf("err = %v, want a failed result (a Go error is retried)", err)
			}
			if res == nil || res.Action != "error" || !res.Permanent {
				t.Fatalf("result = %+v, want a permanent failure", res)
			}
			if msg, _ := res.Outputs["error"].(string); !strings.Contains(msg, tt.want) {
				t.Fatalf("error = %q, want %q", msg, tt.want)
			}
		})
	}
}

// TestHTTPCheckRefusesLiteralValues: the static check refuses the literal
// values the run would refuse before sending, by the same code, and leaves
// templated values and wrong types (validation's type check) alone.
func TestHTTPCheckRefusesLiteralValues(t *testing.T) {
	bad := []struct {
		params      map[string]any
		param, want string
	}{
		{map[string]any{"url": "ftp://x/y"}, "url", "must start with http:// or https://"},
		{map[string]any{"url": "https://"}, "url", "has no host"},
		{map[string]any{"url": "https://x", "timeout": int64(-5)}, "timeout", "must be greater than 0 seconds, got -5"},
		{map[string]any{"url": "https://x", "timeout": "0s"}, "timeout", "must be greater than 0 seconds"},
		{map[string]any{"url": "https://x", "auth_token": "a", "api_key": "b"}, "auth_token", "mutually exclusive"},
		{map[string]any{"url": "https://x", "api_key": "b", "api_key_header": "X Key"}, "api_key_header", "not a valid HTTP header name"},
		{map[string]any{"url": "https://x", "headers": map[string]any{"Bad Name": "v"}}, "headers", `header name "Bad Name"`},
		{map[string]any{"url": "https://x", "headers": map[string]any{"X-A": "a\nb"}}, "headers", "line break"},
	}
	for _, c := range bad {
		probs := Spec().Check(context.Background(), c.params)
		if len(probs) != 1 || probs[0].Param != c.param || !strings.Contains(probs[0].Message, c.want) || probs[0].Hint == "" {
			t.Errorf("Check(%v) = %+v, want one problem in %s saying %q, with a fix", c.params, probs, c.param, c.want)
		}
	}
	fine := []map[string]any{
		{"url": "${base}/x", "timeout": "${t}"},
		{"url": "https://x/${id}", "auth_token": "${token}", "api_key": "b"},
		{"url": "https://x", "timeout": "soon", "headers": "X: y"}, // wrong types: validation's own check
		{"url": "https://x", "timeout": "1m30s", "headers": map[string]any{"Accept": "application/json"}},
	}
	for _, p := range fine {
		if probs := Spec().Check(context.Background(), p); len(probs) != 0 {
			t.Errorf("Check(%v) = %+v, want none", p, probs)
		}
	}
}

func TestHTTPSecretsNotInErrorResult(t *testing.T) {
	srv := newServer(t, reply(401, "text/plain", "unauthorized"))
	res, err := run(t, context.Background(), map[string]any{"url": srv.URL, "auth_token": "tok-SECRET"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Outputs)
	if strings.Contains(string(b), "tok-SECRET") {
		t.Fatalf("outputs leak the token: %s", b)
	}
	if res.Outputs["error"] != "HTTP 401 Unauthorized from GET "+srv.URL+": unauthorized" {
		t.Fatalf("error = %q", res.Outputs["error"])
	}
}

func TestHTTPSpec(t *testing.T) {
	s := Spec()
	if s.Type != "http" || s.Group != "http" || s.Attempts != 3 || s.RetryWait != time.Second {
		t.Fatalf("spec = %+v", s)
	}
	for _, k := range []string{"response", "status_code", "response_headers", "response_time", "response_is_binary", "error"} {
		if f, ok := s.Interface.Output(k); !ok || f.Description == "" {
			t.Errorf("output %q not declared", k)
		}
	}
	if p, _ := s.Interface.Param("url"); !p.Required {
		t.Error("url must be required")
	}
}

func TestHTTPResponseTooLarge(t *testing.T) {
	old := MaxResponseBytes
	MaxResponseBytes = 1000
	defer func() { MaxResponseBytes = old }()
	srv := newServer(t, reply(200, "text/plain", strings.Repeat("x", 1001)))
	res, err := run(t, context.Background(), map[string]any{"url": srv.URL + "/big"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Response from " + srv.URL + "/big is larger than 1000 bytes; pflow does not load bodies that large."
	if res.Action != "error" || !strings.HasPrefix(res.Outputs["error"].(string), want) {
		t.Fatalf("res = %+v", res)
	}
}

// A secret in an error body is masked before the body is cut to its first
// 300 characters: one that straddles the cut leaves no first half behind.
func TestHTTPErrorBodyMaskedBeforeTheCut(t *testing.T) {
	const secret = "sk-live-0123456789abcdef0123"
	body := strings.Repeat("x", 290) + secret + strings.Repeat("y", 100)
	srv := newServer(t, reply(500, "text/plain", body))
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "***") }
	res, err := Spec().Node.Run(context.Background(), &node.Request{NodeID: "h", Params: map[string]any{"url": srv.URL + "/x"}, Redact: redact})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := res.Outputs["error"].(string)
	if strings.Contains(msg, secret[:8]) || !strings.Contains(msg, "***") {
		t.Fatalf("the error shows part of the secret or no mask: %q", msg)
	}
}

// A refused request's failure names the URL it asked for, query included,
// with the URL's password and the values of credential parameters masked,
// and whatever else the run knows to be secret.
func TestHTTPFailureNamesTheURL(t *testing.T) {
	srv := newServer(t, reply(404, "text/plain", "no such item"))
	u := strings.Replace(srv.URL, "http://", "http://me:pa55word@", 1) + "/v1/items/42?expand=owner&api_key=SEKRET1&sig=SEKRET2&project=acme-corp"
	req := &node.Request{NodeID: "h", Params: map[string]any{"url": u}, Redact: func(s string) string { return strings.ReplaceAll(s, "acme-corp", "<REDACTED>") }}
	res, err := Spec().Node.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := res.Outputs["error"].(string)
	for _, want := range []string{"HTTP 404 Not Found from GET " + srv.URL + "/v1/items/42?", "expand=owner", "api_key=REDACTED", "sig=REDACTED", "project=<REDACTED>"} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in %q", want, msg)
		}
	}
	for _, secret := range []string{"SEKRET", "pa55word", "acme-corp"} {
		if strings.Contains(msg, secret) {
			t.Errorf("%q shown in %q", secret, msg)
		}
	}
}
