// Package http implements the `http` node: one HTTP request per step, with
// JSON bodies for dicts and lists, query params, bearer or API-key auth and a
// per-request timeout. A non-2xx answer fails the step with its status and
// body kept; 429 and 5xx are marked retryable.
//
// Template values never change a request's structure (see docs/decisions.md,
// "Template values are data"): the url
// param is a URL sink (internal/sink encodes each value for its part of the
// URL), a header value with CR, LF or NUL fails the step before sending and
// is never retried, and credential headers are dropped when a redirect
// leaves the original host (redirect.go).
package http

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	nethttp "net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/netpolicy"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/value"
)

const (
	// DefaultTimeout bounds one request (connect, send, and reading the body).
	DefaultTimeout = 30 * time.Second
	// errorBodyChars is how much of a non-2xx body the error message quotes.
	errorBodyChars = 300
)

// MaxResponseBytes is the largest response body the node reads (a var so
// tests can lower it).
var MaxResponseBytes = 64 << 20

// Methods are the accepted HTTP methods.
var Methods = []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}

// Spec returns the http node type.
func Spec() *node.Spec {
	return &node.Spec{
		Type:       "http",
		Group:      "http",
		Interface:  iface,
		Attempts:   3,
		RetryWait:  time.Second,
		Node:       httpNode{client: defaultClient()},
		Check:      check,
		StdinParam: "body",
		MainOutput: "response",
	}
}

var methodEnum = func() []any {
	out := make([]any, len(Methods))
	for i, m := range Methods {
		out[i] = m
	}
	return out
}()

var iface = node.Interface{
	Description: "Make an HTTP request. A dict or list body is sent as JSON; a JSON response is parsed " +
		"so that ${step.response.field} works. A non-2xx status fails the step (action 'error') with " +
		"the status and body kept in the outputs; 429 and 5xx answers and network errors are retried.",
	Params: []node.Field{
		{Key: "url", Type: "str", Required: true, Sink: node.SinkURL, Description: "URL to request (http:// or https://). " +
			"Template values are encoded for the part of the URL they land in: in the path a value is one segment ('/' becomes %2F), in the query a value cannot add parameters, after // it must be a host[:port]; " +
			"only a template that starts the URL (${base}/items) may set the scheme and host."},
		{Key: node.UnsafeSpliceParam, Type: "bool", Default: false, Description: "Paste template values into the url as text instead of encoding them (a value can then add path segments, query parameters or change the host). " +
			"Only for values you control, such as an 'owner/name' input meant as two path segments; --validate-only warns about it."},
		{Key: "method", Type: "str", Enum: methodEnum, Description: "HTTP method; POST when a body is given, GET otherwise."},
		{Key: "body", Type: "dict|list|str", Also: []string{"json", "data", "payload", "form", "request_body"}, Description: "Request body: a dict or list is sent as JSON (Content-Type: application/json unless a Content-Type header is set); a string is sent as-is (labelled application/json when it holds a JSON object or array)."},
		{Key: "headers", Type: "dict", Also: []string{"header", "request_headers"}, Description: "Request headers (name: value). A value with a line break (CR, LF) or NUL fails the step before sending, without retries. " +
			"Credential headers (Authorization, Cookie, API-key and token headers, any header holding auth_token, api_key or a secret-named input) are dropped when a redirect leads to another host or from https to http."},
		{Key: "params", Type: "dict", Also: []string{"query", "query_params", "querystring", "qs", "search_params", "parameters"}, Description: "Query-string parameters (name: value; a list value repeats the name), added to any query already in the URL."},
		{Key: "timeout", Type: "float", Default: int64(30), Description: "Seconds (e.g. 30 or 0.5) the whole request may take, including reading the response."},
		{Key: "auth_token", Type: "str", Description: "Bearer token, sent as 'Authorization: Bearer <token>'. Cannot be combined with api_key."},
		{Key: "api_key", Type: "str", Description: "API key, sent in the api_key_header header. Cannot be combined with auth_token."},
		{Key: "api_key_header", Type: "str", Default: "X-API-Key", Description: "Header that carries api_key."},
	},
	Outputs: []node.Field{
		{Key: "response", Type: "any", Description: "Response body: parsed JSON (dict, list, ...) when the content type is JSON, text otherwise, base64 for binary content (see response_is_binary)."},
		{Key: "status_code", Type: "int", Description: "HTTP status code."},
		// No Structure: headers are open-ended, and a partial list would make
		// the validator warn about every other header (etag, link, ...).
		{Key: "response_headers", Type: "dict", Description: "Response headers by lower-case name, e.g. ${step.response_headers.content-type} (repeated headers joined with ', ')."},
		{Key: "response_time", Type: "float", Description: "Seconds from sending the request to reading the whole response."},
		{Key: "response_is_binary", Type: "bool", Description: "True when response is base64-encoded binary content (images, PDF, archives, non-UTF-8 text)."},
		{Key: "error", Type: "str", Description: "Why the step failed, e.g. 'HTTP 404 Not Found from GET <url>: <body>' (the URL's credentials masked); only set on failure."},
		{Key: "error_class", Type: "str", Description: "What kind of failure: rate_limited (429), auth_failed (401/403), not_found (404/410), timeout (408/504, or no answer in time), invalid_params (400/422), server_error (5xx), network_error (no connection); an edge may route on it. Only set on failure."},
	},
	Actions: append([]string{"default", "error"}, httpClasses...),
}

// httpClasses are the error classes an http step's failure may take.
var httpClasses = []string{node.ClassRateLimited, node.ClassAuthFailed, node.ClassNotFound, node.ClassTimeout, node.ClassInvalidParams, node.ClassServerError, node.ClassNetworkError}

// defaultClient is made on first use (a transport is many allocations).
var defaultClient = sync.OnceValue(func() *nethttp.Client {
	// Every address dialled is checked against the request's guard;
	// through a proxy, the host a request is for is checked instead.
	t := netpolicy.Transport()
	t.MaxIdleConnsPerHost = 16
	return newClient(t)
})

type httpNode struct{ client *nethttp.Client }

// request is the validated form of the params.
type request struct {
	url         *url.URL
	method      string
	body        []byte
	hasBody     bool
	contentType string
	headers     nethttp.Header
	timeout     time.Duration
	// secrets are values that make a header holding them a credential:
	// auth_token, api_key and secret-named inputs (see credentials).
	secrets []string
	// credentialHeaders are the canonical names of headers set from
	// auth_token or api_key.
	credentialHeaders map[string]bool
}

func (n httpNode) Run(ctx context.Context, req *node.Request) (*node.Result, error) {
	r, err := parse(req.Params, req.Shared)
	if err != nil {
		var refused *refusedError
		if errors.As(err, &refused) {
			// Retrying cannot change the params: fail once, never retried.
			res := node.Fail(refused.msg, nil)
			res.Permanent = true
			return res, nil
		}
		if res, ok := node.ParamFailure(err); ok {
			return res, nil // a param of the wrong type or an invalid value: the same
		}
		return nil, err
	}
	shown := displayURL(r.url)

	rctx, cancel := context.WithTimeoutCause(ctx, r.timeout, errTimeout)
	defer cancel()
	rctx = context.WithValue(rctx, credentialsKey{}, credentials(r))
	rctx = withGuard(rctx, req.Network, r.url)
	var body io.Reader
	if r.hasBody {
		body = bytes.NewReader(r.body)
	}
	hreq, err := nethttp.NewRequestWithContext(rctx, r.method, r.url.String(), body)
	if err != nil {
		res, _ := node.ParamFailure(&node.ParamError{Param: "url", Message: fmt.Sprintf("cannot build a request for %s: %v", shown, unwrapURLError(err))})
		return res, nil
	}
	hreq.Header = r.headers
	if r.contentType != "" && hreq.Header.Get("Content-Type") == "" {
		hreq.Header.Set("Content-Type", r.contentType)
	}
	if hreq.Header.Get("User-Agent") == "" {
		hreq.Header.Set("User-Agent", "pflow")
	}

	start := time.Now()
	resp, err := n.client.Do(hreq)
	if err != nil {
		var refused *NetRefusedError
		if errors.As(err, &refused) && ctx.Err() == nil {
			// The settings decide, not the attempt: fail once, never retried.
			res := node.Fail(refused.Error(), nil)
			res.Permanent = true
			return res, nil
		}
		return n.networkFailure(ctx, rctx, shown, r.timeout, err)
	}
	defer resp.Body.Close()
	limit := MaxResponseBytes
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	elapsed := time.Since(start).Seconds()
	if err != nil {
		return n.networkFailure(ctx, rctx, shown, r.timeout, err)
	}
	if len(data) > limit {
		return node.Fail(fmt.Sprintf("Response from %s is larger than %s; pflow does not load bodies that large. Download it with a shell step (curl -o file) instead.", shown, sizeText(limit)), map[string]any{
			"status_code": int64(resp.StatusCode),
		}), nil
	}

	respValue, binary := decodeBody(resp.Header.Get("Content-Type"), data)
	out := map[string]any{
		"response":           respValue,
		"status_code":        int64(resp.StatusCode),
		"response_headers":   headerMap(resp.Header),
		"response_time":      elapsed,
		"response_is_binary": binary,
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return node.Ok(out), nil
	}
	// The standard reason phrase keeps messages predictable; a server's own
	// phrase is used only for codes without one.
	msg := fmt.Sprintf("HTTP %d %s", resp.StatusCode, nethttp.StatusText(resp.StatusCode))
	if nethttp.StatusText(resp.StatusCode) == "" {
		msg = "HTTP " + resp.Status
	}
	// Say which request got the answer, its credentials masked.
	requested := failureURL(r.url)
	if req.Redact != nil {
		requested = req.Redact(requested)
	}
	msg = strings.TrimSpace(msg) + " from " + r.method + " " + requested
	if snippet := bodySnippet(data, binary, req.Redact); snippet != "" {
		msg += ": " + snippet
	}
	res := node.Fail(msg, out)
	res.Retryable = resp.StatusCode == nethttp.StatusTooManyRequests || resp.StatusCode >= 500
	res.Class = node.ClassOfStatus(resp.StatusCode)
	if res.Class != "" {
		out["error_class"] = res.Class
	}
	res.RetryAfter = node.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return res, nil
}

// networkFailure is a request that got no answer: a failed step of class
// timeout or network_error (retried like a 5xx), or the run's interruption.
func (n httpNode) networkFailure(ctx, rctx context.Context, shown string, timeout time.Duration, err error) (*node.Result, error) {
	e := n.networkError(ctx, rctx, shown, timeout, err)
	if ctx.Err() != nil {
		return nil, e
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	class := ""
	switch {
	case context.Cause(rctx) == errTimeout || isTimeout(err):
		class = node.ClassTimeout
	case errors.As(err, &opErr) || errors.As(err, &dnsErr):
		class = node.ClassNetworkError
	}
	out := map[string]any{}
	if class != "" {
		out["error_class"] = class
	}
	res := node.Fail(e.Error(), out)
	// A request that got no answer may get one next time (the engine
	// retried transport errors before they were results).
	res.Class, res.Retryable = class, true
	return res, nil
}

var errTimeout = errors.New("http request timeout")

// networkError turns a transport failure into the message users see. The
// URL is shown without credentials or query (which may hold keys).
func (n httpNode) networkError(ctx, rctx context.Context, shown string, timeout time.Duration, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("request to %s was interrupted: %w", shown, context.Cause(ctx))
	}
	if context.Cause(rctx) == errTimeout || isTimeout(err) {
		return fmt.Errorf("Request to %s timed out after %s seconds. The server did not answer in time; check that it is up, or raise '- timeout: ...' on the step.", shown, value.FormatFloat(timeout.Seconds()))
	}
	inner := unwrapURLError(err)
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &opErr) || errors.As(err, &dnsErr) {
		return fmt.Errorf("Could not connect to %s. Please check the URL is correct and the service is running. (%v)", shown, inner)
	}
	return fmt.Errorf("HTTP request to %s failed: %v", shown, inner)
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// displayURL renders u for messages: no user info, no query, no fragment.
func displayURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.ForceQuery = false
	c.Fragment = ""
	c.RawFragment = ""
	return c.String()
}

// failureURL renders the URL of a request the server refused: its query
// kept (a wrong parameter is often why), the values of credential
// parameters masked (redact.IsSecretQueryParam), no user info, no
// fragment.
func failureURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.Fragment, c.RawFragment = "", ""
	if c.RawQuery != "" {
		q := c.Query()
		masked := false
		for k, vs := range q {
			if redact.IsSecretQueryParam(k) {
				for i := range vs {
					vs[i] = "REDACTED"
				}
				masked = true
			}
		}
		if masked {
			c.RawQuery = q.Encode()
		}
	}
	return c.String()
}

// parse validates the params; shared (the run's inputs and step outputs)
// tells which values are secrets (see credentials).
func parse(p map[string]any, shared map[string]any) (*request, error) {
	raw, err := node.RequireString(p, "url")
	if err != nil {
		return nil, err
	}
	u, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	r := &request{url: u, headers: nethttp.Header{}}

	if q, err := node.Map(p, "params"); err != nil {
		return nil, err
	} else if len(q) > 0 {
		values := u.Query()
		for _, k := range value.SortedKeys(q) {
			switch x := q[k].(type) {
			case nil:
				continue
			case []any:
				for _, e := range x {
					values.Add(k, value.Stringify(e))
				}
			default:
				values.Set(k, value.Stringify(x))
			}
		}
		u.RawQuery = values.Encode()
	}

	if b, ok := p["body"]; ok && b != nil {
		r.hasBody = true
		switch x := b.(type) {
		case string:
			r.body = []byte(x)
			// A string holding a JSON object or array (e.g. the output of
			// an earlier step) is labelled as JSON; a Content-Type header
			// given in headers still wins.
			if _, isJSON := value.TryParseContainer(x); isJSON {
				r.contentType = "application/json"
			}
		case map[string]any, []any:
			data, err := value.MarshalJSON(x)
			if err != nil {
				return nil, &node.ParamError{Param: "body", Message: fmt.Sprintf("cannot encode as JSON: %v", err)}
			}
			r.body = data
			r.contentType = "application/json"
		default:
			// Numbers and bools are valid JSON documents too.
			r.body = []byte(value.Stringify(x))
			r.contentType = "application/json"
		}
	}

	method := strings.ToUpper(strings.TrimSpace(node.String(p, "method", "")))
	switch {
	case method == "" && r.hasBody:
		method = "POST"
	case method == "":
		method = "GET"
	}
	valid := false
	for _, m := range Methods {
		valid = valid || m == method
	}
	if !valid {
		return nil, &node.ParamError{Param: "method", Message: fmt.Sprintf("%q is not supported; use one of %s", method, strings.Join(Methods, ", "))}
	}
	r.method = method

	hdrs, err := node.Map(p, "headers")
	if err != nil {
		return nil, err
	}
	token := node.String(p, "auth_token", "")
	apiKey := node.String(p, "api_key", "")
	r.secrets = inputSecrets(shared)
	for _, sec := range []string{token, apiKey} {
		if sec != "" {
			r.secrets = append(r.secrets, sec)
		}
	}
	for _, k := range value.SortedKeys(hdrs) {
		if hdrs[k] == nil {
			continue
		}
		v := value.Stringify(hdrs[k])
		if !validHeaderName(k) {
			return nil, &refusedError{fmt.Sprintf("Header name %q is not a valid HTTP header name (letters, digits and - only), so the request was not sent. Fix the name in the step's headers.", k)}
		}
		if err := checkHeaderValue(fmt.Sprintf("Header '%s'", k), v, isCredentialHeader(k) || containsAny(v, r.secrets...)); err != nil {
			return nil, err
		}
		r.headers.Set(k, v)
	}

	if token != "" && apiKey != "" {
		return nil, errBothAuth
	}
	r.credentialHeaders = map[string]bool{}
	if token != "" {
		if err := checkHeaderValue("auth_token", token, true); err != nil {
			return nil, err
		}
		r.headers.Set("Authorization", "Bearer "+token)
		r.credentialHeaders["Authorization"] = true
	}
	if apiKey != "" {
		h := node.String(p, "api_key_header", "X-API-Key")
		if err := checkKeyHeader(h); err != nil {
			return nil, err
		}
		if err := checkHeaderValue("api_key", apiKey, true); err != nil {
			return nil, err
		}
		r.headers.Set(h, apiKey)
		r.credentialHeaders[nethttp.CanonicalHeaderKey(h)] = true
	}

	if r.timeout, err = timeoutOf(p); err != nil {
		return nil, err
	}
	return r, nil
}

// parseURL reads the url param's value: an absolute http(s) URL with a host.
func parseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &node.ParamError{Param: "url", Message: fmt.Sprintf("%q is not a valid URL: %v", raw, unwrapURLError(err))}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &node.ParamError{Param: "url", Message: fmt.Sprintf("%q must start with http:// or https://", displayURL(u))}
	}
	if u.Host == "" {
		return nil, &node.ParamError{Param: "url", Message: fmt.Sprintf("%q has no host", raw)}
	}
	return u, nil
}

// errBothAuth refuses auth_token and api_key set together.
var errBothAuth error = &node.ParamError{Param: "auth_token", Message: "Cannot specify both auth_token and api_key - they are mutually exclusive. Keep the one the API documents"}

// checkKeyHeader refuses an api_key_header that is no header name.
func checkKeyHeader(h string) error {
	if !validHeaderName(h) {
		return &node.ParamError{Param: "api_key_header", Message: fmt.Sprintf("%q is not a valid HTTP header name (letters, digits and - only), e.g. X-API-Key", h)}
	}
	return nil
}

// timeoutOf reads the timeout param: seconds or a duration, above 0.
func timeoutOf(p map[string]any) (time.Duration, error) {
	d, err := node.Duration(p, "timeout", DefaultTimeout)
	if err == nil && d > 0 {
		return d, nil
	}
	if err != nil && !isTime(p["timeout"]) {
		return 0, err // not seconds or a duration at all
	}
	return 0, &node.ParamError{Param: "timeout", Message: fmt.Sprintf("must be greater than 0 seconds, got %s; write e.g. '- timeout: 30' (the default)", value.Stringify(p["timeout"]))}
}

// isTime reports whether v is a number or a duration text, of any sign.
func isTime(v any) bool {
	switch x := v.(type) {
	case int64, float64:
		return true
	case string:
		_, derr := time.ParseDuration(strings.TrimSpace(x))
		_, ferr := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return derr == nil || ferr == nil
	}
	return false
}

// check is the http node's static check: a literal param value the run
// would refuse before sending is refused before the run, by the same code
// (the type of a value is validation's own check).
func check(_ context.Context, params map[string]any) []node.Problem {
	p := node.Literal(params)
	var out []node.Problem
	add := func(err error, hint string) {
		param, msg := "", err.Error()
		var pe *node.ParamError
		if errors.As(err, &pe) {
			param = pe.Param
		}
		out = append(out, node.Problem{Param: param, Message: msg, Hint: hint})
	}
	if raw, ok := p["url"].(string); ok {
		if _, err := parseURL(raw); err != nil {
			add(err, "Write the whole URL, e.g. '- url: https://api.example.com/items'.")
		}
	}
	if hdrs, ok := p["headers"].(map[string]any); ok {
		for _, k := range value.SortedKeys(hdrs) {
			if hdrs[k] == nil {
				continue
			}
			if !validHeaderName(k) {
				add(&node.ParamError{Param: "headers", Message: fmt.Sprintf("header name %q is not a valid HTTP header name (letters, digits and - only)", k)},
					"Write one header per line under '- headers:', as 'Name: value', e.g. 'Accept: application/json'.")
			} else if err := checkHeaderValue(fmt.Sprintf("Header '%s'", k), value.Stringify(hdrs[k]), isCredentialHeader(k)); err != nil {
				out = append(out, node.Problem{Param: "headers", Message: err.Error(), Hint: "Write the header's value on one line."})
			}
		}
	}
	if node.String(p, "auth_token", "") != "" && node.String(p, "api_key", "") != "" {
		add(errBothAuth, "Remove '- auth_token:' or '- api_key:' from the step.")
	}
	if h, ok := p["api_key_header"].(string); ok {
		if err := checkKeyHeader(h); err != nil {
			add(err, "Write the header name the API documents, e.g. '- api_key_header: X-API-Key'.")
		}
	}
	if t, ok := p["timeout"]; ok && isTime(t) { // a wrong type is validation's own check
		if _, err := timeoutOf(p); err != nil {
			add(err, "Write the seconds the request may take, e.g. '- timeout: 30'.")
		}
	}
	return out
}

// refusedError is a request pflow will not send whatever the attempt (a
// header value that would split the request): the step fails once, with no
// retry.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// checkHeaderValue refuses a header value with CR, LF or NUL: sent, it would
// end the header and start another one (or a body). what names the header or
// param; a credential's value is never quoted.
func checkHeaderValue(what, v string, credential bool) error {
	i := strings.IndexAny(v, "\r\n\x00")
	if i < 0 {
		return nil
	}
	problem := "a line break (CR or LF)"
	if v[i] == 0 {
		problem = "a NUL byte"
	}
	msg := fmt.Sprintf("%s contains %s, so the request was not sent: a header value must be one line, and a line break would let the value add headers of its own.", what, problem)
	if !credential {
		shown := v
		if r := []rune(shown); len(r) > 60 {
			shown = string(r[:60]) + "…"
		}
		msg += fmt.Sprintf(" The value is %q.", shown)
	}
	msg += " If the value comes from data (a response, a file, an LLM answer), remove line breaks first or send it in the body."
	return &refusedError{msg}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if sub != "" && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// binaryTypes mark content types whose body is passed on as base64.
var binaryTypes = []string{"image/", "video/", "audio/", "application/pdf", "octet-stream", "zip", "gzip", "x-tar", "application/vnd.", "font/", "application/wasm", "protobuf"}

// decodeBody interprets a response body by its content type: JSON is parsed
// (falling back to text when it does not parse), binary types and non-UTF-8
// text become base64.
func decodeBody(contentType string, data []byte) (any, bool) {
	ct := strings.ToLower(contentType)
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		ct = mt
	}
	isJSON := strings.Contains(ct, "json")
	if !isJSON {
		for _, b := range binaryTypes {
			if strings.Contains(ct, b) {
				return base64.StdEncoding.EncodeToString(data), true
			}
		}
	}
	if isJSON && len(bytes.TrimSpace(data)) > 0 {
		if v, err := value.DecodeJSON(data); err == nil {
			return v, false
		}
	}
	if !utf8.Valid(data) {
		return base64.StdEncoding.EncodeToString(data), true
	}
	return string(data), false
}

func headerMap(h nethttp.Header) map[string]any {
	out := make(map[string]any, len(h))
	keys := value.SortedKeys(h)
	for _, k := range keys {
		out[strings.ToLower(k)] = strings.Join(h[k], ", ")
	}
	return out
}

func bodySnippet(data []byte, binary bool, redact func(string) string) string {
	if binary {
		return fmt.Sprintf("(binary body, %d bytes)", len(data))
	}
	s := strings.Join(strings.Fields(string(data)), " ")
	if redact != nil {
		s = redact(s) // before the cut: a secret at the cut must not leave its first half
	}
	if utf8.RuneCountInString(s) <= errorBodyChars {
		return s
	}
	r := []rune(s)
	return string(r[:errorBodyChars]) + "…"
}

func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
