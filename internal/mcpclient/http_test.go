package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestBuildHeaders(t *testing.T) {
	cases := []struct {
		name string
		cfg  map[string]any
		want map[string]string
		warn string
	}{
		{"bearer", map[string]any{"auth": map[string]any{"type": "bearer", "token": "tok"}}, map[string]string{"Authorization": "Bearer tok"}, ""},
		{"api_key default header", map[string]any{"auth": map[string]any{"type": "api_key", "key": "k1"}}, map[string]string{"X-Api-Key": "k1"}, ""},
		{"api_key custom header", map[string]any{"auth": map[string]any{"type": "api_key", "key": "k1", "header": "X-Custom"}}, map[string]string{"X-Custom": "k1"}, ""},
		{"basic", map[string]any{"auth": map[string]any{"type": "basic", "username": "u", "password": "p"}}, map[string]string{"Authorization": "Basic dTpw"}, ""},
		{"basic username with colon", map[string]any{"auth": map[string]any{"type": "basic", "username": "u:x", "password": "p"}}, map[string]string{"Authorization": "Basic dTp4OnA="}, "contains ':'"},
		{"custom + bearer", map[string]any{"headers": map[string]any{"X-Client": "pflow", "Authorization": "old"}, "auth": map[string]any{"type": "bearer", "token": "t"}}, map[string]string{"X-Client": "pflow", "Authorization": "Bearer t"}, ""},
		{"bearer with newline", map[string]any{"auth": map[string]any{"type": "bearer", "token": "a\nb"}}, map[string]string{}, "control characters"},
		{"empty token (undefined variable)", map[string]any{"auth": map[string]any{"type": "bearer", "token": ""}}, map[string]string{}, "is empty"},
		{"basic password with control char", map[string]any{"auth": map[string]any{"type": "basic", "username": "u", "password": "p\x01"}}, map[string]string{}, "control characters"},
		{"unknown type", map[string]any{"auth": map[string]any{"type": "unknown_type"}}, map[string]string{}, "Unknown auth type: unknown_type"},
		{"auth not dict", map[string]any{"auth": "string"}, map[string]string{}, "Auth config is not a dictionary"},
		{"empty auth", map[string]any{}, map[string]string{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			cfg := DecodeConfig(c.cfg)
			got := BuildHeaders("srv", &cfg, &log)
			if len(got) != len(c.want) {
				t.Fatalf("headers %v want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Fatalf("header %s = %q want %q (all %v)", k, got[k], v, got)
				}
			}
			if c.warn == "" && log.Len() > 0 || c.warn != "" && !strings.Contains(log.String(), c.warn) {
				t.Fatalf("log %q, want %q", log.String(), c.warn)
			}
		})
	}
}

// An HTTP server that needs a bearer token: the configured auth reaches it,
// and each HTTP failure maps to its documented message.
func TestHTTPAuthAndStatusErrors(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	type in struct {
		Msg string `json:"msg"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(ctx context.Context, r *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo " + a.Msg}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	status := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status != 0 {
			w.WriteHeader(status)
			return
		}
		if r.Header.Get("Authorization") != "Bearer s3cret-token" {
			w.WriteHeader(401)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	lookup := func(k string) (string, bool) {
		if k == "API_TOKEN" {
			return "s3cret-token", true
		}
		return "", false
	}
	raw := map[string]any{"type": "http", "url": ts.URL, "auth": map[string]any{"type": "bearer", "token": "${API_TOKEN}"}, "startup_timeout": int64(5)}
	s, err := Resolve("api", raw, lookup, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := Connect(ctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.CallTool(ctx, "echo", map[string]any{"msg": "hi"}, time.Second*5)
	if err != nil || ExtractResult(res).Result != "echo hi" {
		t.Fatalf("%v %v", res, err)
	}
	sess.Close()

	for code, want := range map[int]string{
		401: "Authentication failed: MCP server api refused the request (HTTP 401)",
		403: "Access forbidden: MCP server api refused the request (HTTP 403)",
		404: "Session expired or endpoint not found.",
		429: "Rate limited. Too many requests. Please wait and try again.",
		502: "Server error (HTTP 502). The server encountered an error.",
	} {
		status = code
		s, _ := Resolve("api", raw, lookup, nil)
		_, err := Connect(ctx, s, nil)
		if err == nil || !strings.HasPrefix(ErrorText(err), want) {
			t.Errorf("HTTP %d: %v, want %q", code, err, want)
		}
		if err != nil && strings.Contains(ErrorText(err), "s3cret-token") {
			t.Errorf("secret in error: %v", err)
		}
	}
}

// A remote server whose answer exceeds max_response_mb fails the call with
// the documented message instead of being read into memory whole, over
// both HTTP transports' response kinds (a JSON body, an event stream); a
// big stream of small events is fine.
func TestHTTPResponseTooLarge(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	type in struct {
		MB int `json:"mb"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "blob"}, func(ctx context.Context, r *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", a.MB<<20)}}}, nil, nil
	})
	for _, jsonResponse := range []bool{false, true} {
		t.Run(map[bool]string{false: "event stream", true: "json body"}[jsonResponse], func(t *testing.T) {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
			ts := httptest.NewServer(h)
			defer ts.Close()
			s, err := Resolve("big", map[string]any{"type": "http", "url": ts.URL, "max_response_mb": int64(2)}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			sess, err := Connect(ctx, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			if res, err := sess.CallTool(ctx, "blob", map[string]any{"mb": 1}, 10*time.Second); err != nil || len(ExtractResult(res).Result.(string)) != 1<<20 {
				t.Fatalf("a 1 MB answer under a 2 MB limit: %v", err)
			}
			_, err = sess.CallTool(ctx, "blob", map[string]any{"mb": 3}, 10*time.Second)
			if err == nil || !strings.Contains(ErrorText(err), "MCP response too large: the tool's result exceeded 2 MB") {
				t.Fatalf("a 3 MB answer: %v", err)
			}
		})
	}
}

// A 429 (or 503) carries the server's Retry-After, as delay-seconds or as
// an HTTP date, in the error: its message says it and RetryAfter returns it
// for the step's retry to wait.
func TestHTTPRetryAfterCarried(t *testing.T) {
	header := ""
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if header != "" {
			w.Header().Set("Retry-After", header)
		}
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer ts.Close()
	for _, c := range []struct {
		header   string
		min, max time.Duration
	}{
		{"7", 7 * time.Second, 7 * time.Second},
		{time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat), 25 * time.Second, 31 * time.Second},
		{"", 0, 0},
	} {
		header = c.header
		s, err := Resolve("busy", map[string]any{"type": "http", "url": ts.URL, "startup_timeout": int64(5)}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Connect(context.Background(), s, nil)
		if ErrorClass(err) != "rate_limited" {
			t.Fatalf("Retry-After %q: class %q of %v", c.header, ErrorClass(err), err)
		}
		if got := RetryAfter(err); got < c.min || got > c.max {
			t.Errorf("Retry-After %q: waits %v, want %v..%v", c.header, got, c.min, c.max)
		}
		if said := strings.Contains(ErrorText(err), "asked to wait"); said != (c.max > 0) {
			t.Errorf("Retry-After %q: message %q", c.header, ErrorText(err))
		}
	}
}

// A server that refuses pflow's credentials (401/403) is told apart by
// whether it publishes OAuth metadata: an API-key gateway (none) fails
// with "Authentication failed", naming the server, the config keys that
// carry credentials and the variables they come from, and never suggests
// a sign-in that cannot work; a server with protected-resource metadata
// says to sign in.
func TestAuthRefusalSaysWhatCanFixIt(t *testing.T) {
	prm := false
	status := http.StatusUnauthorized
	var ts *httptest.Server
	ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case prm && r.URL.Path == "/.well-known/oauth-protected-resource/mcp":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"resource": %q, "authorization_servers": ["https://auth.example.com"]}`, ts.URL+"/mcp")
		case r.URL.Path == "/mcp":
			if prm {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+ts.URL+`/.well-known/oauth-protected-resource/mcp"`)
			}
			w.WriteHeader(status)
		default:
			http.NotFound(w, r)
		}
	}))
	defer ts.Close()
	lookup := func(k string) (string, bool) {
		if k == "GW_KEY" {
			return "gw-s3cret", true
		}
		return "", false
	}
	connect := func(cfg map[string]any) error {
		t.Helper()
		cfg["type"], cfg["url"], cfg["startup_timeout"] = "http", ts.URL+"/mcp", int64(5)
		s, err := Resolve("gw", cfg, lookup, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.TokenFile = filepath.Join(t.TempDir(), "gw.json") // as every configured http server has
		_, err = Connect(context.Background(), s, nil)
		return err
	}
	for _, c := range []struct {
		name   string
		status int
		cfg    map[string]any
		want   []string
	}{
		{"api key refused", 401, map[string]any{"auth": map[string]any{"type": "api_key", "key": "${GW_KEY}"}},
			[]string{"Authentication failed: MCP server gw refused the request (HTTP 401)", `"headers"`, `"auth"`, "token_env", "GW_KEY", "publishes no OAuth metadata"}},
		{"bearer refused", 401, map[string]any{"auth": map[string]any{"type": "bearer", "token_env": "GW_KEY"}},
			[]string{"Authentication failed: MCP server gw refused the request (HTTP 401)", "GW_KEY"}},
		{"no credentials", 401, map[string]any{},
			[]string{"Authentication failed: MCP server gw refused the request (HTTP 401): pflow sent no credentials", `"headers"`, `"auth"`, "token_env"}},
		{"forbidden", 403, map[string]any{"headers": map[string]any{"X-Api-Key": "${GW_KEY}"}},
			[]string{"Access forbidden: MCP server gw refused the request (HTTP 403)", "GW_KEY", "lacks a permission"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			prm, status = false, c.status
			err := connect(c.cfg)
			text := ErrorText(err)
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in:\n%s", w, text)
				}
			}
			if strings.Contains(text, "sign-in") || strings.Contains(text, "mcp login") || strings.Contains(text, "gw-s3cret") {
				t.Errorf("an API-key gateway's refusal suggests a sign-in or shows the key:\n%s", text)
			}
			if ErrorClass(err) != "auth_failed" || !strings.Contains(text, "(server 'gw')") {
				t.Errorf("class %q, text %s", ErrorClass(err), text)
			}
		})
	}
	t.Run("oauth server", func(t *testing.T) {
		prm, status = true, 401
		err := connect(map[string]any{})
		if text := ErrorText(err); !strings.Contains(text, "Server gw needs sign-in: run 'pflow mcp login gw'") || ErrorClass(err) != "auth_failed" {
			t.Errorf("a server with OAuth metadata: %s", text)
		}
	})
}

// blankLines puts a blank line between the items of every JSON body the
// handler answers with (valid JSON: whitespace between tokens).
func blankLines(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(bytes.ReplaceAll(rec.Body.Bytes(), []byte("},{"), []byte("},\n\n{")))
	})
}

// A JSON body counts whole against max_response_mb: blank lines between
// its items (",\n\n") do not start a new message as they do in an event
// stream. The error names the server, the limit and the key raising it.
func TestHTTPJSONBodyWithBlankLinesIsCappedWhole(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	type in struct {
		Items int `json:"items"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "many"}, func(ctx context.Context, r *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		res := &mcp.CallToolResult{}
		for range a.Items {
			res.Content = append(res.Content, &mcp.TextContent{Text: strings.Repeat("x", 1000)})
		}
		return res, nil, nil
	})
	ts := httptest.NewServer(blankLines(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})))
	defer ts.Close()
	s, err := Resolve("chatty", map[string]any{"type": "http", "url": ts.URL, "max_response_mb": int64(1)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := Connect(ctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if res, err := sess.CallTool(ctx, "many", map[string]any{"items": 100}, 10*time.Second); err != nil || len(res.Content) != 100 {
		t.Fatalf("100 KB under a 1 MB limit: %v", err)
	}
	_, err = sess.CallTool(ctx, "many", map[string]any{"items": 3000}, 10*time.Second)
	if err == nil {
		t.Fatal("a 3 MB JSON body with blank lines between its items passed a 1 MB limit")
	}
	for _, want := range []string{"MCP response too large: the tool's result exceeded 1 MB", "server 'chatty'", "max_response_mb"} {
		if !strings.Contains(ErrorText(err), want) {
			t.Errorf("error lacks %q: %s", want, ErrorText(err))
		}
	}
}

// In an event stream each event counts on its own: many small events add
// up to more than the limit and are all read (CRLF line ends included).
func TestHTTPEventStreamCountsEachEvent(t *testing.T) {
	var b strings.Builder
	ev := "data: " + strings.Repeat("y", 1000)
	for i := range 3000 {
		if i%2 == 0 {
			b.WriteString(ev + "\n\n")
		} else {
			b.WriteString(ev + "\r\n\r\n")
		}
	}
	rt := &recordingTransport{limit: 1 << 20}
	body := &cappedBody{rc: io.NopCloser(strings.NewReader(b.String())), limit: rt.limit, t: rt, events: isEventStream("text/event-stream; charset=utf-8")}
	if n, err := io.Copy(io.Discard, body); err != nil || n != int64(b.Len()) {
		t.Fatalf("3 MB of 1 KB events under a 1 MB limit: %d bytes, %v", n, err)
	}
	one := "data: " + strings.Repeat("z", 2<<20) + "\n\n"
	body = &cappedBody{rc: io.NopCloser(strings.NewReader(one)), limit: rt.limit, t: rt, events: true}
	if _, err := io.Copy(io.Discard, body); !errors.Is(err, errMessageTooLarge) || !rt.tooLarge.Load() {
		t.Fatalf("one 2 MB event under a 1 MB limit: %v", err)
	}
}
