package mcpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHTTPAsTheSpecSays covers the MCP specification's rules for the
// streamable HTTP transport: a foreign Origin gets 403, the Bearer scheme is
// matched without
// regard to case, an unknown method in a session gets a JSON-RPC -32601
// body, a malformed frame its JSON-RPC error, a body over the stdio limit
// the size error, and the session keeps working after each.
func TestHTTPAsTheSpecSays(t *testing.T) {
	f := newFixture(t, nil)
	ts := httptest.NewServer(f.srv.Handler(HTTPOptions{Token: "tok-123"}))
	defer ts.Close()
	post := func(body string, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer tok-123")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

	// The scheme in any case.
	resp, body := post(init, map[string]string{"Authorization": "bearer tok-123"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("lower-case bearer: %d %s", resp.StatusCode, body)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	in := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	if resp, body := post(init, map[string]string{"Authorization": "Bearer wrong"}); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d %s", resp.StatusCode, body)
	}

	// A web page of another site.
	if resp, body := post(init, map[string]string{"Origin": "https://evil.example"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(init, map[string]string{"Origin": strings.Replace(ts.URL, "127.0.0.1", "localhost", 1)}); resp.StatusCode != http.StatusOK {
		t.Errorf("same site (localhost for 127.0.0.1): %d %s", resp.StatusCode, body)
	}

	rpcErr := func(what, body string) (float64, any) {
		t.Helper()
		var m struct {
			ID    any `json:"id"`
			Error struct {
				Code float64 `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("%s: not a JSON-RPC body: %q", what, body)
		}
		return m.Error.Code, m.ID
	}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range in {
			h[k] = v
		}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	_, body = post(`{"jsonrpc":"2.0","id":9,"method":"no/such"}`, in)
	if code, id := rpcErr("unknown method", body); code != -32601 || id != float64(9) {
		t.Errorf("unknown method: %s", body)
	}
	_, body = post(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, in)
	if code, _ := rpcErr("object id", body); code != -32600 {
		t.Errorf("object id: %s", body)
	}
	resp, body = post(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"`+strings.Repeat("a", maxLine)+`"}}`, with(nil))
	if code, _ := rpcErr("huge body", body); resp.StatusCode != http.StatusRequestEntityTooLarge || code != -32600 || !strings.Contains(body, "larger than 64 MiB") {
		t.Errorf("huge body: %d %.200s", resp.StatusCode, body)
	}
	// The session still answers.
	resp, body = post(`{"jsonrpc":"2.0","id":10,"method":"ping"}`, in)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"id":10`) {
		t.Fatalf("the session did not survive: %d %s", resp.StatusCode, body)
	}
}
