package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string) (int, map[string]any, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("content-type", "application/json")
	req.Header.Set("x-api-key", TestAPIKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, string(raw)
}

func TestFakeScriptsRepliesInOrderAndRecords(t *testing.T) {
	f := NewAnthropic(t)
	if !strings.HasPrefix(f.URL, "http://127.0.0.1:") || f.BaseURL != f.URL {
		t.Fatalf("URL %s BaseURL %s", f.URL, f.BaseURL)
	}
	f.Enqueue(RateLimited(), Text("second"))
	code, body, _ := post(t, f.URL+"/v1/messages", `{"model":"m","max_tokens":5,"messages":[]}`)
	if code != 429 || body["type"] != "error" || body["error"].(map[string]any)["type"] != "rate_limit_error" {
		t.Errorf("first reply %d %v", code, body)
	}
	code, body, _ = post(t, f.URL+"/v1/messages", `{"model":"m","max_tokens":5,"messages":[]}`)
	if code != 200 || body["content"].([]any)[0].(map[string]any)["text"] != "second" || body["model"] != "m" {
		t.Errorf("second reply %d %v", code, body)
	}
	code, body, _ = post(t, f.URL+"/v1/messages", `{"model":"m","max_tokens":5,"messages":[]}`)
	if code != 200 || !strings.Contains(body["content"].([]any)[0].(map[string]any)["text"].(string), "fake anthropic") {
		t.Errorf("default reply %d %v", code, body)
	}
	code, _, raw := post(t, f.URL+"/v1/chat/completions", `{}`)
	if code != 404 || !strings.Contains(raw, "want POST /v1/messages") {
		t.Errorf("wrong path: %d %s", code, raw)
	}
	reqs := f.Requests()
	if len(reqs) != 4 || reqs[0].Body["max_tokens"] != 5.0 || reqs[0].Path != "/v1/messages" || reqs[0].Method != "POST" {
		t.Errorf("requests = %v", reqs)
	}
}

func TestFakeOpenAIShapes(t *testing.T) {
	f := NewOpenAI(t)
	if got := f.EnvList(); len(got) != 2 || got[0] != "OPENAI_API_KEY="+TestAPIKey || got[1] != "OPENAI_BASE_URL="+f.BaseURL {
		t.Errorf("EnvList = %v", got)
	}
	if f.BaseURL != f.URL+"/v1" || f.Env()["OPENAI_BASE_URL"] != f.BaseURL || f.Env()["OPENAI_API_KEY"] != TestAPIKey {
		t.Fatalf("env = %v", f.Env())
	}
	f.Enqueue(Structured(map[string]any{"a": 1}), Response{Text: "t", Usage: &Usage{Input: 7, Output: 3, CacheRead: 2}}, Malformed())
	_, body, _ := post(t, f.BaseURL+"/chat/completions", `{"model":"gpt","messages":[]}`)
	msg := body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["content"] != `{"a":1}` {
		t.Errorf("structured content = %v", msg["content"])
	}
	_, body, _ = post(t, f.BaseURL+"/chat/completions", `{"model":"gpt","messages":[]}`)
	u := body["usage"].(map[string]any)
	if u["prompt_tokens"] != 9.0 || u["completion_tokens"] != 3.0 || u["total_tokens"] != 12.0 || u["prompt_tokens_details"].(map[string]any)["cached_tokens"] != 2.0 {
		t.Errorf("usage = %v", u)
	}
	code, _, raw := post(t, f.BaseURL+"/chat/completions", `{"model":"gpt","messages":[]}`)
	if code != 200 || json.Valid([]byte(raw)) {
		t.Errorf("malformed reply %d %q should be invalid JSON", code, raw)
	}
}

func TestFakeRejectsWhatTheRealAPIRejects(t *testing.T) {
	f := NewAnthropic(t)
	req, _ := http.NewRequest("POST", f.URL+"/v1/messages", strings.NewReader(`{"model":"m","messages":[]}`))
	req.Header.Set("x-api-key", "k")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(raw), "max_tokens: Field required") {
		t.Errorf("missing max_tokens: %d %s", resp.StatusCode, raw)
	}
	resp, err = http.Post(f.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","max_tokens":1,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("missing x-api-key: %d", resp.StatusCode)
	}
}
