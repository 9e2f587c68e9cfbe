// Package llmtest runs local fake LLM provider servers that speak the
// Anthropic Messages API and the OpenAI Chat Completions API on 127.0.0.1.
// Tests (and examples) point pflow at them through ANTHROPIC_BASE_URL /
// OPENAI_BASE_URL (see Fake.Env), script their replies with Enqueue and
// inspect what was sent with Requests.
//
//	f := llmtest.NewAnthropic(t)
//	f.Enqueue(llmtest.RateLimited(), llmtest.Text("hello"))
//	... run an llm node with f.Env() ...
//	reqs := f.Requests() // method, path, headers, decoded JSON body
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Provider names.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
)

// TestAPIKey is the API key Env hands out.
const TestAPIKey = "sk-test-0123456789"

// Request is one recorded request.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// Body is the decoded JSON body (nil when it was not JSON).
	Body map[string]any
	Raw  []byte
}

// Usage is the token usage a scripted reply reports.
type Usage struct {
	Input, Output, CacheCreation, CacheRead int
}

// Response scripts one reply.
type Response struct {
	// Status is the HTTP status (0 means 200).
	Status int
	// Text is the assistant's text.
	Text string
	// Structured, when set, is the structured output: an Anthropic tool_use
	// block's input (the tool named by the request's tool_choice), or the JSON
	// text of an OpenAI message.
	Structured any
	// Usage is reported in the reply (zero → 10 in, 5 out).
	Usage *Usage
	// Raw replaces the whole body (e.g. malformed JSON).
	Raw string
	// ErrorType and ErrorMessage build the provider's error body for a
	// non-2xx Status when Raw is empty.
	ErrorType, ErrorMessage string
	// Header sets extra response headers.
	Header map[string]string
	// StopReason overrides Anthropic's stop_reason / OpenAI's finish_reason
	// (e.g. "max_tokens" / "length" for a cut-off answer).
	StopReason string
}

// Text replies with assistant text.
func Text(s string) Response { return Response{Text: s} }

// Structured replies with structured output v.
func Structured(v any) Response { return Response{Structured: v} }

// RateLimited replies 429 with the provider's rate-limit error body.
func RateLimited() Response {
	return Response{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: "Rate limit exceeded, slow down", Header: map[string]string{"retry-after": "0"}}
}

// Overloaded replies 529 (Anthropic) / 503 with a server error body.
func Overloaded() Response {
	return Response{Status: 503, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"}
}

// Unauthorized replies 401 with an authentication error body.
func Unauthorized() Response {
	return Response{Status: 401, ErrorType: "authentication_error", ErrorMessage: "invalid x-api-key"}
}

// Malformed replies 200 with a body that is not valid JSON.
func Malformed() Response {
	return Response{Raw: `{"id": "msg_broken", "content": [ {"type": "text", "text": "truncat`}
}

// Fake is a fake provider server.
type Fake struct {
	// URL is the server root, e.g. http://127.0.0.1:41234.
	URL string
	// BaseURL is what the provider's SDK expects as base URL: URL for
	// Anthropic (paths /v1/messages), URL+"/v1" for OpenAI.
	BaseURL string
	// Provider is Anthropic or OpenAI.
	Provider string

	srv *httptest.Server

	mu       sync.Mutex
	requests []Request
	queue    []Response
	def      Response
}

// NewAnthropic starts a fake Anthropic Messages API (POST /v1/messages).
func NewAnthropic(t testing.TB) *Fake { return start(t, Anthropic) }

// NewOpenAI starts a fake OpenAI Chat Completions API (POST /v1/chat/completions).
func NewOpenAI(t testing.TB) *Fake { return start(t, OpenAI) }

func start(t testing.TB, provider string) *Fake {
	t.Helper()
	f := &Fake{Provider: provider, def: Text("Hello from the fake " + provider + " API")}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("llmtest: listen on 127.0.0.1: %v", err)
	}
	f.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(f.serve)}}
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	f.BaseURL = f.URL
	if provider == OpenAI {
		f.BaseURL = f.URL + "/v1"
	}
	return f
}

// Close stops the server (also done by t.Cleanup).
func (f *Fake) Close() { f.srv.Close() }

// Env returns the environment that points pflow at the fake: the provider's
// base URL variable and an API key.
func (f *Fake) Env() map[string]string {
	if f.Provider == Anthropic {
		return map[string]string{"ANTHROPIC_BASE_URL": f.BaseURL, "ANTHROPIC_API_KEY": TestAPIKey}
	}
	return map[string]string{"OPENAI_BASE_URL": f.BaseURL, "OPENAI_API_KEY": TestAPIKey}
}

// EnvList returns Env as KEY=VALUE pairs (for exec.Cmd.Env or testscript).
func (f *Fake) EnvList() []string {
	var out []string
	for k, v := range f.Env() {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Enqueue scripts the next replies, in order. When the queue is empty the
// default reply (SetDefault) is used.
func (f *Fake) Enqueue(rs ...Response) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, rs...)
}

// SetDefault sets the reply used when nothing is queued.
func (f *Fake) SetDefault(r Response) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.def = r
}

// Requests returns a copy of the recorded requests.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// LastRequest returns the last recorded request (zero when none).
func (f *Fake) LastRequest() Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) == 0 {
		return Request{}
	}
	return f.requests[len(f.requests)-1]
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
	var body map[string]any
	if json.Unmarshal(raw, &body) == nil {
		rec.Body = body
	}
	f.mu.Lock()
	f.requests = append(f.requests, rec)
	resp := f.def
	if len(f.queue) > 0 {
		resp = f.queue[0]
		f.queue = f.queue[1:]
	}
	f.mu.Unlock()

	wantPath := "/v1/messages"
	if f.Provider == OpenAI {
		wantPath = "/v1/chat/completions"
	}
	if r.Method != http.MethodPost || r.URL.Path != wantPath {
		resp = Response{Status: 404, ErrorType: "not_found_error", ErrorMessage: fmt.Sprintf("fake %s API: no route for %s %s (want POST %s)", f.Provider, r.Method, r.URL.Path, wantPath)}
	} else if problem := f.checkRequest(r, body); problem != nil {
		resp = *problem
	}

	w.Header().Set("Content-Type", "application/json")
	for k, v := range resp.Header {
		w.Header().Set(k, v)
	}
	status := resp.Status
	if status == 0 {
		status = 200
	}
	var out []byte
	switch {
	case resp.Raw != "":
		out = []byte(resp.Raw)
	case status >= 300:
		out = f.errorBody(resp)
	default:
		out = f.successBody(resp, body)
	}
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// checkRequest rejects what the real API rejects: Anthropic needs x-api-key,
// anthropic-version, model, max_tokens and messages; OpenAI needs model and
// messages. The scripted reply is consumed either way.
func (f *Fake) checkRequest(r *http.Request, body map[string]any) *Response {
	bad := func(status int, typ, msg string) *Response {
		return &Response{Status: status, ErrorType: typ, ErrorMessage: msg}
	}
	if body == nil {
		return bad(400, "invalid_request_error", "request body is not a JSON object")
	}
	if f.Provider == Anthropic {
		if r.Header.Get("x-api-key") == "" {
			return bad(401, "authentication_error", "x-api-key header is required")
		}
		if r.Header.Get("anthropic-version") == "" {
			return bad(400, "invalid_request_error", "anthropic-version: header is required")
		}
		for _, k := range []string{"model", "max_tokens", "messages"} {
			if _, ok := body[k]; !ok {
				return bad(400, "invalid_request_error", k+": Field required")
			}
		}
		return nil
	}
	for _, k := range []string{"model", "messages"} {
		if _, ok := body[k]; !ok {
			return bad(400, "invalid_request_error", "Missing required parameter: '"+k+"'.")
		}
	}
	return nil
}

func (f *Fake) errorBody(resp Response) []byte {
	var v any
	if f.Provider == Anthropic {
		v = map[string]any{"type": "error", "error": map[string]any{"type": resp.ErrorType, "message": resp.ErrorMessage}}
	} else {
		v = map[string]any{"error": map[string]any{"message": resp.ErrorMessage, "type": resp.ErrorType, "param": nil, "code": resp.ErrorType}}
	}
	b, _ := json.Marshal(v)
	return b
}

func (f *Fake) successBody(resp Response, req map[string]any) []byte {
	u := Usage{Input: 10, Output: 5}
	if resp.Usage != nil {
		u = *resp.Usage
	}
	model, _ := req["model"].(string)
	var v any
	if f.Provider == Anthropic {
		content := []any{map[string]any{"type": "text", "text": resp.Text}}
		stop := "end_turn"
		if resp.Structured != nil {
			name := "structured_output"
			if tc, ok := req["tool_choice"].(map[string]any); ok {
				if n, ok := tc["name"].(string); ok {
					name = n
				}
			}
			content = []any{map[string]any{"type": "tool_use", "id": "toolu_fake_1", "name": name, "input": resp.Structured}}
			stop = "tool_use"
		}
		if resp.StopReason != "" {
			stop = resp.StopReason
		}
		v = map[string]any{
			"id": "msg_fake_1", "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{
				"input_tokens": u.Input, "output_tokens": u.Output,
				"cache_creation_input_tokens": u.CacheCreation, "cache_read_input_tokens": u.CacheRead,
			},
		}
	} else {
		text := resp.Text
		if resp.Structured != nil {
			b, _ := json.Marshal(resp.Structured)
			text = string(b)
		}
		finish := "stop"
		if resp.StopReason != "" {
			finish = resp.StopReason
		}
		prompt := u.Input + u.CacheRead
		v = map[string]any{
			"id": "chatcmpl-fake1", "object": "chat.completion", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{
				"index": 0, "finish_reason": finish, "logprobs": nil,
				"message": map[string]any{"role": "assistant", "content": text, "refusal": nil},
			}},
			"usage": map[string]any{
				"prompt_tokens": prompt, "completion_tokens": u.Output, "total_tokens": prompt + u.Output,
				"prompt_tokens_details":     map[string]any{"cached_tokens": u.CacheRead},
				"completion_tokens_details": map[string]any{"reasoning_tokens": 0},
			},
		}
	}
	b, _ := json.Marshal(v)
	return b
}

// Messages returns the body's messages array (nil when absent).
func (r Request) Messages() []any {
	m, _ := r.Body["messages"].([]any)
	return m
}

// String summarises the request for test failure messages.
func (r Request) String() string {
	return fmt.Sprintf("%s %s %s", r.Method, r.Path, strings.TrimSpace(string(r.Raw)))
}
