package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/llmtest"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/value"
)

func envOf(maps ...map[string]string) func(string) (string, bool) {
	m := map[string]string{}
	for _, x := range maps {
		for k, v := range x {
			m[k] = v
		}
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

type runOut struct {
	res *node.Result
	err error
	log string
}

func runLLM(t *testing.T, spec *node.Spec, params map[string]any, env func(string) (string, bool)) runOut {
	t.Helper()
	var log bytes.Buffer
	req := &node.Request{NodeID: "ask", Type: "llm", Params: params, Env: env, Log: &log, Attempt: 1}
	res, err := spec.Node.Run(context.Background(), req)
	return runOut{res, err, log.String()}
}

// runWithRetries mimics the runtime: Go errors are retried up to Attempts.
func runWithRetries(t *testing.T, spec *node.Spec, params map[string]any, env func(string) (string, bool)) (runOut, int) {
	t.Helper()
	var out runOut
	for attempt := 1; attempt <= spec.Attempts; attempt++ {
		out = runLLM(t, spec, params, env)
		if out.err == nil {
			return out, attempt
		}
	}
	return out, spec.Attempts
}

func mustOK(t *testing.T, out runOut) map[string]any {
	t.Helper()
	if out.err != nil {
		t.Fatalf("Run returned a Go error: %v", out.err)
	}
	if out.res.Action == "error" {
		t.Fatalf("node failed: %v", out.res.Outputs["error"])
	}
	return out.res.Outputs
}

func mustFail(t *testing.T, out runOut, parts ...string) string {
	t.Helper()
	if out.err != nil {
		t.Fatalf("Run returned a Go error (would be retried), want a failure result: %v", out.err)
	}
	if out.res.Action != "error" {
		t.Fatalf("action = %q, want error; outputs %#v", out.res.Action, out.res.Outputs)
	}
	msg, _ := out.res.Outputs["error"].(string)
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error does not contain %q:\n%s", p, msg)
		}
	}
	if out.res.Outputs["response"] != "" || !reflect.DeepEqual(out.res.Outputs["llm_usage"], map[string]any{}) {
		t.Errorf("failure outputs must have response \"\" and llm_usage {}: %#v", out.res.Outputs)
	}
	if strings.Contains(msg, llmtest.TestAPIKey) {
		t.Errorf("error leaks the API key: %s", msg)
	}
	return msg
}

func TestSpec(t *testing.T) {
	s := Spec("")
	if s.Type != "llm" || s.Attempts != 3 || s.RetryWait.Seconds() != 1 {
		t.Fatalf("spec %s attempts %d wait %v, want llm 3 attempts 1s (docs/decisions.md: retries per node type)", s.Type, s.Attempts, s.RetryWait)
	}
	for _, k := range []string{"response", "llm_usage", "error"} {
		if _, ok := s.Interface.Output(k); !ok {
			t.Errorf("output %q not declared", k)
		}
	}
	if f, _ := s.Interface.Param("prompt"); !f.Required {
		t.Error("prompt must be required")
	}
}

// The request on the wire is what Anthropic documents for POST /v1/messages:
// x-api-key and anthropic-version headers; model, max_tokens, messages
// [{role: user, content}], system, temperature in the JSON body.
func TestAnthropicRequestOnTheWire(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	fake.Enqueue(llmtest.Response{Text: "Paris.", Usage: &llmtest.Usage{Input: 1000, Output: 200, CacheCreation: 100, CacheRead: 500}})
	out := mustOK(t, runLLM(t, Spec(""), map[string]any{
		"prompt": "Capital of France?", "system": "Answer in one word.", "model": "anthropic/claude-sonnet-4-5",
		"temperature": 0.3, "max_tokens": int64(100),
	}, envOf(fake.Env())))

	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/messages" {
		t.Errorf("request %s %s, want POST /v1/messages", r.Method, r.Path)
	}
	if got := r.Header.Get("x-api-key"); got != llmtest.TestAPIKey {
		t.Errorf("x-api-key = %q", got)
	}
	if got := r.Header.Get("anthropic-version"); got != "2023-06-01" {
		t.Errorf("anthropic-version = %q, want 2023-06-01", got)
	}
	if got := r.Header.Get("content-type"); !strings.HasPrefix(got, "application/json") {
		t.Errorf("content-type = %q", got)
	}
	if r.Header.Get("authorization") != "" {
		t.Errorf("Anthropic requests must not carry an Authorization header")
	}
	b := r.Body
	if b["model"] != "claude-sonnet-4-5" || b["max_tokens"] != 100.0 || b["temperature"] != 0.3 {
		t.Errorf("model/max_tokens/temperature wrong: %s", r.Raw)
	}
	wantMsgs := []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Capital of France?"}}}}
	if !reflect.DeepEqual(b["messages"], wantMsgs) {
		t.Errorf("messages = %#v", b["messages"])
	}
	if !reflect.DeepEqual(b["system"], []any{map[string]any{"type": "text", "text": "Answer in one word."}}) {
		t.Errorf("system = %#v", b["system"])
	}
	for _, k := range []string{"tools", "tool_choice", "stream"} {
		if _, ok := b[k]; ok {
			t.Errorf("unexpected %q in body", k)
		}
	}

	if out["response"] != "Paris." {
		t.Errorf("response = %#v", out["response"])
	}
	// 1000×3 + 100×3×2 + 500×3×0.1 + 200×15 per million.
	wantUsage := map[string]any{
		"model": "anthropic/claude-sonnet-4-5", "input_tokens": int64(1000), "output_tokens": int64(200),
		"total_tokens": int64(1800), "cache_creation_input_tokens": int64(100), "cache_read_input_tokens": int64(500),
		"cost_usd": 0.00675,
	}
	if !reflect.DeepEqual(out["llm_usage"], wantUsage) {
		t.Errorf("llm_usage =\n%#v\nwant\n%#v", out["llm_usage"], wantUsage)
	}
}

func TestAnthropicAlwaysSendsMaxTokens(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	mustOK(t, runLLM(t, Spec(""), map[string]any{"prompt": "hi", "model": "claude-haiku-4-5"}, envOf(fake.Env())))
	b := fake.LastRequest().Body
	if b["max_tokens"] != float64(DefaultMaxTokens) {
		t.Errorf("max_tokens = %v, want %d (Anthropic requires it)", b["max_tokens"], DefaultMaxTokens)
	}
	if _, ok := b["temperature"]; ok {
		t.Error("temperature sent although the step did not set it")
	}
	if _, ok := b["system"]; ok {
		t.Error("system sent although the step did not set it")
	}
}

// The request on the wire is what OpenAI documents for POST
// /v1/chat/completions: Authorization: Bearer; model, messages
// [{role: system}, {role: user}], temperature, max_completion_tokens.
func TestOpenAIRequestOnTheWire(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	fake.Enqueue(llmtest.Response{Text: "```json\n{\"a\": 1}\n```", Usage: &llmtest.Usage{Input: 1000, Output: 100, CacheRead: 1000}})
	out := mustOK(t, runLLM(t, Spec(""), map[string]any{
		"prompt": "Give JSON", "system": "You are terse.", "model": "openai/gpt-5.2",
		"temperature": 1.5, "max_tokens": int64(256),
	}, envOf(fake.Env())))

	r := fake.LastRequest()
	if r.Method != "POST" || r.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s, want POST /v1/chat/completions", r.Method, r.Path)
	}
	if got := r.Header.Get("authorization"); got != "Bearer "+llmtest.TestAPIKey {
		t.Errorf("authorization = %q", got)
	}
	b := r.Body
	want := map[string]any{
		"model": "gpt-5.2",
		"messages": []any{
			map[string]any{"role": "system", "content": "You are terse."},
			map[string]any{"role": "user", "content": "Give JSON"},
		},
		"temperature": 1.5, "max_completion_tokens": 256.0,
	}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("body =\n%s\nwant %#v", r.Raw, want)
	}
	if out["response"] != "{\"a\": 1}" {
		t.Errorf("response = %#v, want the fence stripped", out["response"])
	}
	u := out["llm_usage"].(map[string]any)
	if u["input_tokens"] != int64(1000) || u["cache_read_input_tokens"] != int64(1000) || u["output_tokens"] != int64(100) || u["total_tokens"] != int64(2100) {
		t.Errorf("usage = %#v", u)
	}
	// 1000×1.75 + 1000×1.75×0.1 + 100×14 per million.
	if u["cost_usd"] != 0.003325 {
		t.Errorf("cost_usd = %#v, want 0.003325", u["cost_usd"])
	}
}

func TestOpenAICompatibleEndpoints(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	tests := []struct {
		name      string
		params    map[string]any
		env       map[string]string
		wantModel string
		wantAuth  string
		wantID    string
	}{
		{"ollama with base_url", map[string]any{"model": "ollama/llama3.2", "base_url": fake.BaseURL}, nil, "llama3.2", "", "ollama/llama3.2"},
		{"ollama via OLLAMA_BASE_URL", map[string]any{"model": "ollama/qwen3:8b"}, map[string]string{"OLLAMA_BASE_URL": fake.BaseURL, "OPENAI_API_KEY": "sk-must-not-be-sent"}, "qwen3:8b", "", "ollama/qwen3:8b"},
		{"bare model with base_url", map[string]any{"model": "meta-llama/Llama-3.1-8B", "base_url": fake.BaseURL}, nil, "meta-llama/Llama-3.1-8B", "", "openai-compatible/meta-llama/Llama-3.1-8B"},
		{"bare model with OPENAI_BASE_URL", map[string]any{"model": "mistral"}, map[string]string{"OPENAI_BASE_URL": fake.BaseURL, "OPENAI_API_KEY": "sk-local"}, "mistral", "Bearer sk-local", "openai-compatible/mistral"},
		{"openrouter", map[string]any{"model": "openrouter/anthropic/claude-sonnet-4.5"}, map[string]string{"OPENROUTER_BASE_URL": fake.BaseURL, "OPENROUTER_API_KEY": "sk-or"}, "anthropic/claude-sonnet-4.5", "Bearer sk-or", "openrouter/anthropic/claude-sonnet-4.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := map[string]any{"prompt": "hi", "max_tokens": int64(50)}
			for k, v := range tt.params {
				params[k] = v
			}
			out := mustOK(t, runLLM(t, Spec(""), params, envOf(tt.env)))
			r := fake.LastRequest()
			if r.Body["model"] != tt.wantModel {
				t.Errorf("model on the wire = %v, want %s", r.Body["model"], tt.wantModel)
			}
			if got := r.Header.Get("authorization"); got != tt.wantAuth {
				t.Errorf("authorization = %q, want %q", got, tt.wantAuth)
			}
			if r.Body["max_tokens"] != 50.0 {
				t.Errorf("compatible servers get max_tokens; body %s", r.Raw)
			}
			u := out["llm_usage"].(map[string]any)
			if u["model"] != tt.wantID {
				t.Errorf("usage model = %v, want %s", u["model"], tt.wantID)
			}
		})
	}
	// Local servers cost nothing; unknown hosted models have no price.
	out := mustOK(t, runLLM(t, Spec(""), map[string]any{"prompt": "hi", "model": "ollama/llama3.2", "base_url": fake.BaseURL}, envOf()))
	if c := out["llm_usage"].(map[string]any)["cost_usd"]; c != 0.0 {
		t.Errorf("ollama cost = %#v, want 0", c)
	}
	out = mustOK(t, runLLM(t, Spec(""), map[string]any{"prompt": "hi", "model": "mistral", "base_url": fake.BaseURL}, envOf()))
	if c := out["llm_usage"].(map[string]any)["cost_usd"]; c != nil {
		t.Errorf("unknown model cost = %#v, want nil", c)
	}
}

func TestRateLimitIsRetriedThenSucceeds(t *testing.T) {
	for _, mk := range []func(testing.TB) *llmtest.Fake{llmtest.NewAnthropic, llmtest.NewOpenAI} {
		fake := mk(t)
		t.Run(fake.Provider, func(t *testing.T) {
			fake.Enqueue(llmtest.RateLimited(), llmtest.Text("after the limit"))
			model := "anthropic/claude-sonnet-4-5"
			if fake.Provider == llmtest.OpenAI {
				model = "openai/gpt-5.2"
			}
			spec := Spec("")
			params := map[string]any{"prompt": "hi", "model": model}

			first := runLLM(t, spec, params, envOf(fake.Env()))
			if first.err == nil {
				t.Fatalf("429 must be a Go error so the runtime retries it; got result %#v", first.res)
			}
			if !strings.Contains(first.err.Error(), "HTTP 429") || !strings.Contains(first.err.Error(), "Rate limit exceeded") {
				t.Errorf("429 error = %v", first.err)
			}
			var e *Error
			if !errors.As(first.err, &e) || !e.Retryable {
				t.Errorf("429 error must be a retryable *Error: %#v", first.err)
			}
			if n := len(fake.Requests()); n != 1 {
				t.Fatalf("%d requests after one attempt: the SDK must not retry by itself", n)
			}
			second := runLLM(t, spec, params, envOf(fake.Env()))
			if out := mustOK(t, second); out["response"] != "after the limit" {
				t.Errorf("response = %#v", out["response"])
			}
		})
	}
}

func TestServerErrorsAreRetriedUpToThreeAttempts(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	fake.SetDefault(llmtest.Overloaded())
	out, attempts := runWithRetries(t, Spec(""), map[string]any{"prompt": "hi", "model": "claude-sonnet-4-5"}, envOf(fake.Env()))
	if out.err == nil || attempts != 3 || len(fake.Requests()) != 3 {
		t.Fatalf("err %v after %d attempts, %d requests; want a Go error after 3", out.err, attempts, len(fake.Requests()))
	}
	if !strings.Contains(out.err.Error(), "LLM call failed. Model: anthropic/claude-sonnet-4-5. Error: anthropic at http://127.0.0.1") ||
		!strings.Contains(out.err.Error(), "server error (HTTP 503): Overloaded") {
		t.Errorf("error = %v", out.err)
	}
}

func TestMalformedResponseFailsWithoutRetry(t *testing.T) {
	for _, mk := range []func(testing.TB) *llmtest.Fake{llmtest.NewAnthropic, llmtest.NewOpenAI} {
		fake := mk(t)
		t.Run(fake.Provider, func(t *testing.T) {
			fake.Enqueue(llmtest.Malformed())
			model := "claude-sonnet-4-5"
			if fake.Provider == llmtest.OpenAI {
				model = "gpt-5.2"
			}
			out, _ := runWithRetries(t, Spec(""), map[string]any{"prompt": "hi", "model": model}, envOf(fake.Env()))
			mustFail(t, out, "invalid response from "+fake.Provider+" at "+fake.BaseURL, "not valid")
			if n := len(fake.Requests()); n != 1 {
				t.Errorf("%d requests; a malformed response must not be retried", n)
			}
		})
	}
	// Well-formed JSON that is not a completion.
	fake := llmtest.NewOpenAI(t)
	fake.Enqueue(llmtest.Response{Raw: `{"object": "list", "data": []}`})
	mustFail(t, runLLM(t, Spec(""), map[string]any{"prompt": "hi", "model": "gpt-5.2"}, envOf(fake.Env())), "invalid response from openai", "no choices")
}

func TestAuthAndClientErrorsFailAtOnce(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	fake.Enqueue(llmtest.Unauthorized())
	mustFail(t, runLLM(t, Spec(""), map[string]any{"prompt": "hi", "model": "claude-sonnet-4-5"}, envOf(fake.Env())),
		"rejected the API key (HTTP 401): invalid x-api-key", "pflow settings set-env ANTHROPIC_API_KEY=")

	fake.Enqueue(llmtest.Response{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "max_tokens: too large"})
	mustFail(t, runLLM(t, Spec(""), map[string]any{"prompt": "hi", "model": "claude-sonnet-4-5"}, envOf(fake.Env())),
		"rejected the request (HTTP 400): max_tokens: too large")

	oai := llmtest.NewOpenAI(t)
	oai.Enqueue(llmtest.Response{Status: 404, ErrorType: "model_not_found", ErrorMessage: "The model `gpt-9` does not exist"})
	mustFail(t, runLLM(t, Spec(""), map[string]any{"prompt": "hi", "model": "gpt-9"}, envOf(oai.Env())),
		"HTTP 404: The model `gpt-9` does not exist", "Check the model name 'gpt-9'")
}

func TestConnectionRefusedIsRetried(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	env := fake.Env()
	fake.Close()
	out := runLLM(t, Spec(""), map[string]any{"prompt": "hi", "model": "gpt-5.2"}, envOf(env))
	if out.err == nil || !strings.Contains(out.err.Error(), "could not reach openai at "+env["OPENAI_BASE_URL"]) {
		t.Fatalf("err = %v, want a retryable 'could not reach'", out.err)
	}
}

func TestMissingAPIKeySaysWhatToSet(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	tests := []struct {
		model, keyVar string
	}{
		{"anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"},
		{"gpt-5.2", "OPENAI_API_KEY"},
		{"openrouter/x/y", "OPENROUTER_API_KEY"},
	}
	for _, tt := range tests {
		mustFail(t, runLLM(t, Spec(""), map[string]any{"prompt": "hi", "model": tt.model}, envOf(map[string]string{"ANTHROPIC_BASE_URL": fake.BaseURL})),
			"API key required for model", "pflow settings set-env "+tt.keyVar+"=<your-key>", "export "+tt.keyVar+"=")
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests sent without a key", n)
	}
}

func TestDefaultModelSelection(t *testing.T) {
	ant := llmtest.NewAnthropic(t)
	oai := llmtest.NewOpenAI(t)
	both := envOf(ant.Env(), oai.Env())

	// settings.llm.default_model wins over auto-detection.
	mustOK(t, runLLM(t, Spec("openai/gpt-5-mini"), map[string]any{"prompt": "hi"}, both))
	if got := oai.LastRequest().Body["model"]; got != "gpt-5-mini" {
		t.Errorf("default model: sent %v", got)
	}
	// The step's model wins over the default.
	mustOK(t, runLLM(t, Spec("openai/gpt-5-mini"), map[string]any{"prompt": "hi", "model": "claude-opus-4-5"}, both))
	if got := ant.LastRequest().Body["model"]; got != "claude-opus-4-5" {
		t.Errorf("step model: sent %v", got)
	}
	// Auto-detection: Anthropic first, then OpenAI.
	out := mustOK(t, runLLM(t, Spec(""), map[string]any{"prompt": "hi"}, both))
	if out["llm_usage"].(map[string]any)["model"] != "anthropic/claude-sonnet-4-5" {
		t.Errorf("auto-detect with both keys: %v", out["llm_usage"])
	}
	out = mustOK(t, runLLM(t, Spec(""), map[string]any{"prompt": "hi"}, envOf(oai.Env())))
	if out["llm_usage"].(map[string]any)["model"] != "openai/gpt-5.2" {
		t.Errorf("auto-detect with the OpenAI key: %v", out["llm_usage"])
	}
	// Nothing configured.
	mustFail(t, runLLM(t, Spec(""), map[string]any{"prompt": "hi"}, envOf()),
		"No LLM model configured", "pflow settings set-env ANTHROPIC_API_KEY=", "pflow settings llm set-default")
}

func TestResolveModels(t *testing.T) {
	env := Env(envOf(map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o", "GEMINI_API_KEY": "g"}))
	tests := []struct {
		model, baseURL string
		wantID, wire   string
		wantBase       string
		wantErr        string
	}{
		{"anthropic/claude-sonnet-4-5", "", "anthropic/claude-sonnet-4-5", wireAnthropic, "https://api.anthropic.com", ""},
		{"claude-3-5-haiku-latest", "", "anthropic/claude-3-5-haiku-latest", wireAnthropic, "https://api.anthropic.com", ""},
		{"gpt-4o", "", "openai/gpt-4o", wireOpenAI, "https://api.openai.com/v1", ""},
		{"o3-mini", "", "openai/o3-mini", wireOpenAI, "https://api.openai.com/v1", ""},
		{"o4-mini", "", "openai/o4-mini", wireOpenAI, "https://api.openai.com/v1", ""},
		{"gemini-2.5-pro", "", "gemini/gemini-2.5-pro", wireOpenAI, "https://generativelanguage.googleapis.com/v1beta/openai/", ""},
		{"ollama/llama3.2", "", "ollama/llama3.2", wireOpenAI, "http://localhost:11434/v1", ""},
		{"lmstudio/qwen", "", "lmstudio/qwen", wireOpenAI, "http://localhost:1234/v1", ""},
		{"anthropic/claude-sonnet-4-5", "http://proxy:8080", "anthropic/claude-sonnet-4-5", wireAnthropic, "http://proxy:8080", ""},
		{"openai-compatible/x", "", "", "", "", "needs the URL of its OpenAI-compatible server"},
		{"llama3", "", "", "", "", "Unknown model: llama3"},
		{"mistral/large", "", "", "", "", "Unknown model provider 'mistral'"},
		{"ollama/", "", "", "", "", "has no model name"},
		{"gpt-4o", "ftp://x", "", "", "", "must start with http:// or https://"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got, err := resolve(tt.model, tt.baseURL, env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.id != tt.wantID || got.provider.wire != tt.wire || got.baseURL != tt.wantBase {
				t.Errorf("got id %s wire %s base %s", got.id, got.provider.wire, got.baseURL)
			}
		})
	}
}

func TestStructuredOutput(t *testing.T) {
	schema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}, "population": map[string]any{"type": "integer"}},
		"required":   []any{"city", "population"},
	}
	answer := map[string]any{"city": "Paris", "population": int64(2102650)}

	t.Run("anthropic forced tool", func(t *testing.T) {
		fake := llmtest.NewAnthropic(t)
		fake.Enqueue(llmtest.Structured(answer))
		out := mustOK(t, runLLM(t, Spec(""), map[string]any{"prompt": "Biggest French city?", "model": "claude-sonnet-4-5", "output_schema": schema}, envOf(fake.Env())))
		if !reflect.DeepEqual(out["response"], answer) {
			t.Errorf("response = %#v", out["response"])
		}
		b := fake.LastRequest().Body
		tools, _ := b["tools"].([]any)
		if len(tools) != 1 {
			t.Fatalf("tools = %#v", b["tools"])
		}
		tool := tools[0].(map[string]any)
		if tool["name"] != "structured_output" || !reflect.DeepEqual(tool["input_schema"], map[string]any{
			"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}, "population": map[string]any{"type": "integer"}},
			"required": []any{"city", "population"},
		}) {
			t.Errorf("tool = %#v", tool)
		}
		if !reflect.DeepEqual(b["tool_choice"], map[string]any{"type": "tool", "name": "structured_output"}) {
			t.Errorf("tool_choice = %#v", b["tool_choice"])
		}
	})

	t.Run("openai json_schema", func(t *testing.T) {
		fake := llmtest.NewOpenAI(t)
		fake.Enqueue(llmtest.Structured(answer))
		out := mustOK(t, runLLM(t, Spec(""), map[string]any{"prompt": "Biggest French city?", "model": "gpt-5.2", "output_schema": schema}, envOf(fake.Env())))
		if !reflect.DeepEqual(out["response"], answer) {
			t.Errorf("response = %#v", out["response"])
		}
		rf := fake.LastRequest().Body["response_format"].(map[string]any)
		js := rf["json_schema"].(map[string]any)
		if rf["type"] != "json_schema" || js["name"] != "response" || js["schema"].(map[string]any)["type"] != "object" {
			t.Errorf("response_format = %#v", rf)
		}
	})

	t.Run("non-object schema is wrapped", func(t *testing.T) {
		fake := llmtest.NewOpenAI(t)
		fake.Enqueue(llmtest.Structured(map[string]any{"result": []any{"a", "b"}}))
		out := mustOK(t, runLLM(t, Spec(""), map[string]any{"prompt": "List", "model": "gpt-5.2",
			"output_schema": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}, envOf(fake.Env())))
		if !reflect.DeepEqual(out["response"], []any{"a", "b"}) {
			t.Errorf("response = %#v", out["response"])
		}
	})

	t.Run("answer not matching the schema is retried", func(t *testing.T) {
		fake := llmtest.NewAnthropic(t)
		fake.Enqueue(llmtest.Structured(map[string]any{"city": "Paris"}), llmtest.Structured(answer))
		out, attempts := runWithRetries(t, Spec(""), map[string]any{"prompt": "x", "model": "claude-sonnet-4-5", "output_schema": schema}, envOf(fake.Env()))
		if o := mustOK(t, out); attempts != 2 || !reflect.DeepEqual(o["response"], answer) {
			t.Errorf("attempts %d response %#v", attempts, o["response"])
		}
		fake.Enqueue(llmtest.Structured(map[string]any{"city": 1}))
		bad := runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "claude-sonnet-4-5", "output_schema": schema}, envOf(fake.Env()))
		if bad.err == nil || !strings.Contains(bad.err.Error(), "does not match output_schema") {
			t.Errorf("err = %v", bad.err)
		}
	})

	t.Run("invalid schema fails before calling", func(t *testing.T) {
		fake := llmtest.NewOpenAI(t)
		mustFail(t, runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "output_schema": map[string]any{"type": 12}}, envOf(fake.Env())),
			"parameter 'output_schema': not a valid JSON Schema")
		if len(fake.Requests()) != 0 {
			t.Error("request sent with an invalid schema")
		}
	})
}

func TestImages(t *testing.T) {
	dir := t.TempDir()
	png := []byte("\x89PNG\r\n\x1a\nfake")
	if err := os.WriteFile(filepath.Join(dir, "shot.png"), png, 0o600); err != nil {
		t.Fatal(err)
	}
	enc := base64.StdEncoding.EncodeToString(png)

	ant := llmtest.NewAnthropic(t)
	req := &node.Request{NodeID: "see", WorkflowDir: dir, Env: envOf(ant.Env()), Params: map[string]any{
		"prompt": "Describe", "model": "claude-sonnet-4-5", "images": []any{"shot.png", "https://example.com/cat.jpg"},
	}}
	if res, err := Spec("").Node.Run(context.Background(), req); err != nil || res.Action == "error" {
		t.Fatalf("run: %v %#v", err, res)
	}
	content := ant.LastRequest().Messages()[0].(map[string]any)["content"].([]any)
	want := []any{
		map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": enc}},
		map[string]any{"type": "image", "source": map[string]any{"type": "url", "url": "https://example.com/cat.jpg"}},
		map[string]any{"type": "text", "text": "Describe"},
	}
	if !reflect.DeepEqual(content, want) {
		t.Errorf("anthropic content =\n%#v\nwant\n%#v", content, want)
	}

	oai := llmtest.NewOpenAI(t)
	mustOK(t, runLLM(t, Spec(""), map[string]any{"prompt": "Describe", "model": "gpt-5.2", "images": filepath.Join(dir, "shot.png")}, envOf(oai.Env())))
	parts := oai.LastRequest().Messages()[0].(map[string]any)["content"].([]any)
	wantParts := []any{
		map[string]any{"type": "text", "text": "Describe"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + enc}},
	}
	if !reflect.DeepEqual(parts, wantParts) {
		t.Errorf("openai content =\n%#v\nwant\n%#v", parts, wantParts)
	}

	missing := filepath.Join(dir, "nope.png")
	mustFail(t, runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "images": []any{missing}}, envOf(oai.Env())), "Image file not found: "+missing)
	if err := os.WriteFile(filepath.Join(dir, "a.bmp"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustFail(t, runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "images": filepath.Join(dir, "a.bmp")}, envOf(oai.Env())), `Unsupported image type ".bmp"`)
}

// TestParamFailures: params the node cannot use fail the step before any
// call, marked Permanent: not retried, even when the step sets retries.
func TestParamFailures(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	env := envOf(fake.Env())
	refused := func(out runOut, parts ...string) {
		t.Helper()
		mustFail(t, out, parts...)
		if !out.res.Permanent {
			t.Errorf("%s: not marked Permanent (a retry would send it again)", parts[0])
		}
	}
	refused(runLLM(t, Spec(""), map[string]any{"model": "gpt-5.2"}, env), MissingPrompt)
	refused(runLLM(t, Spec(""), map[string]any{"prompt": "  ", "model": "gpt-5.2"}, env), MissingPrompt)
	refused(runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "temperature": 3.5}, env), "'temperature': must be between 0 and 2, got 3.5")
	refused(runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "temperature": "warm"}, env), "'temperature'")
	refused(runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "max_tokens": "lots"}, env), "'max_tokens'")
	refused(runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "max_tokens": int64(-1)}, env), "'max_tokens': must be a positive number")
	refused(runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "timeout": "soon"}, env), "'timeout'")
	refused(runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "images": int64(5)}, env), "'images'")
	refused(runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "output_schema": "an object"}, env), "'output_schema'")
	refused(runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "output_schema": map[string]any{"type": int64(5)}}, env), "not a valid JSON Schema")
	if len(fake.Requests()) != 0 {
		t.Errorf("requests sent for invalid params")
	}
}

// TestCheckRefusesLiteralValues: the static check refuses the literal
// values the run would refuse before calling the model, by the same code,
// and leaves templated values and wrong types (validation's type check)
// alone.
func TestCheckRefusesLiteralValues(t *testing.T) {
	bad := []struct {
		params      map[string]any
		param, want string
	}{
		{map[string]any{"prompt": "x", "temperature": int64(5)}, "temperature", "must be between 0 and 2, got 5"},
		{map[string]any{"prompt": "x", "max_tokens": int64(-1)}, "max_tokens", "must be a positive number"},
		{map[string]any{"prompt": "x", "images": int64(5)}, "images", "expects a list of file paths or URLs"},
		{map[string]any{"prompt": "x", "images": []any{"a.png", map[string]any{"b": "c"}}}, "images", "each image must be a file path or URL"},
		{map[string]any{"prompt": "x", "output_schema": map[string]any{"type": int64(5)}}, "output_schema", "not a valid JSON Schema"},
	}
	for _, c := range bad {
		probs := Spec("").Check(context.Background(), c.params)
		if len(probs) != 1 || probs[0].Param != c.param || !strings.Contains(probs[0].Message, c.want) || probs[0].Hint == "" {
			t.Errorf("Check(%v) = %+v, want one problem in %s saying %q, with a fix", c.params, probs, c.param, c.want)
		}
	}
	for _, p := range []map[string]any{
		{"prompt": "x", "temperature": "${t}", "max_tokens": "${n}", "images": "${pics}"},
		{"prompt": "x", "temperature": "warm", "output_schema": "x"}, // wrong types: validation's own check
		{"prompt": "x", "temperature": 0.7, "max_tokens": int64(100), "images": "a.png", "output_schema": map[string]any{"type": "object"}},
	} {
		if probs := Spec("").Check(context.Background(), p); len(probs) != 0 {
			t.Errorf("Check(%v) = %+v, want none", p, probs)
		}
	}
}

func TestAnthropicTemperatureCappedWithWarning(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	out := runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "claude-sonnet-4-5", "temperature": 1.7}, envOf(fake.Env()))
	mustOK(t, out)
	if fake.LastRequest().Body["temperature"] != 1.0 {
		t.Errorf("temperature = %v", fake.LastRequest().Body["temperature"])
	}
	if !strings.Contains(out.log, "Anthropic accepts temperature up to 1") {
		t.Errorf("no warning logged: %q", out.log)
	}
}

func TestJSONPromptWarning(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	fake.Enqueue(llmtest.Text("Sure! Here it is: {}"))
	out := runLLM(t, Spec(""), map[string]any{"prompt": "Return JSON with the keys", "model": "gpt-5.2"}, envOf(fake.Env()))
	mustOK(t, out)
	if !strings.Contains(out.log, "asks for JSON") {
		t.Errorf("log = %q", out.log)
	}
}

func TestStripFence(t *testing.T) {
	tests := []struct{ in, want string }{
		{"```json\n{\"a\":1}\n```", "{\"a\":1}"},
		{"  ```\nplain\n```  \n", "plain"},
		{"```python\nprint(1)\nprint(2)\n```", "print(1)\nprint(2)"},
		{"no fence", "no fence"},
		{"Here:\n```\ncode\n```", "Here:\n```\ncode\n```"},
		{"```a\nx\n```\ntext\n```b\ny\n```", "```a\nx\n```\ntext\n```b\ny\n```"},
		{"```inline```", "```inline```"},
	}
	for _, tt := range tests {
		if got := stripFence(tt.in); got != tt.want {
			t.Errorf("stripFence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCost(t *testing.T) {
	tests := []struct {
		model string
		u     Usage
		want  any
	}{
		{"claude-sonnet-4-5", Usage{InputTokens: 1_000_000}, 3.0},
		{"anthropic/claude-sonnet-4-5-20250929", Usage{OutputTokens: 1_000_000}, 15.0},
		{"gpt-5.2", Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, 15.75},
		{"gpt-5-mini", Usage{InputTokens: 1_000_000}, 0.25},
		{"gpt-5-mini-2025-08-07", Usage{InputTokens: 1_000_000}, 0.25},
		{"claude-haiku-4-5", Usage{CacheReadInputTokens: 1_000_000, CacheCreationInputTokens: 1_000_000}, 2.1},
		{"llama3", Usage{InputTokens: 5}, nil},
		{"gpt-5-turbo-x", Usage{InputTokens: 5}, nil},
	}
	for _, tt := range tests {
		c := Cost(tt.model, tt.u)
		var got any
		if c != nil {
			got = *c
		}
		if got != tt.want {
			t.Errorf("Cost(%s) = %v, want %v", tt.model, got, tt.want)
		}
	}
}

func TestComplete(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	fake.Enqueue(llmtest.Response{Text: "```\nranked: b, a\n```", Usage: &llmtest.Usage{Input: 40, Output: 8}})
	temp := 0.0
	c, err := Complete(context.Background(), CompletionRequest{System: "Rank.", Prompt: "a or b?", MaxTokens: 64, Temperature: &temp}, envOf(fake.Env()))
	if err != nil {
		t.Fatal(err)
	}
	if c.Text != "ranked: b, a" || c.Usage.Model != "anthropic/claude-sonnet-4-5" || c.Usage.TotalTokens != 48 || c.Usage.CostUSD == nil {
		t.Errorf("completion = %+v", c)
	}
	b := fake.LastRequest().Body
	if b["max_tokens"] != 64.0 || b["temperature"] != 0.0 {
		t.Errorf("body = %s", fake.LastRequest().Raw)
	}

	fake.Enqueue(llmtest.RateLimited())
	_, err = Complete(context.Background(), CompletionRequest{Prompt: "x"}, envOf(fake.Env()))
	var e *Error
	if !errors.As(err, &e) || !e.Retryable {
		t.Errorf("err = %#v, want a retryable *Error", err)
	}
	_, err = Complete(context.Background(), CompletionRequest{Prompt: "x"}, envOf())
	if err == nil || !strings.Contains(err.Error(), "No LLM model configured") {
		t.Errorf("err = %v", err)
	}
}

func TestCancellationIsNotAFailureResult(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Spec("").Node.Run(ctx, &node.Request{Params: map[string]any{"prompt": "x", "model": "claude-sonnet-4-5"}, Env: envOf(fake.Env())})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("res %#v err %v, want a context.Canceled error", res, err)
	}
}

func TestTruncatedAnswers(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"items": map[string]any{"type": "array"}}}
	ant := llmtest.NewAnthropic(t)
	ant.Enqueue(llmtest.Response{Text: "{\"items\": [1, 2", StopReason: "max_tokens"})
	out, _ := runWithRetries(t, Spec(""), map[string]any{"prompt": "x", "model": "claude-sonnet-4-5", "max_tokens": int64(20), "output_schema": schema}, envOf(ant.Env()))
	mustFail(t, out, "cut off at max_tokens (20)", "Raise the step's max_tokens")
	if n := len(ant.Requests()); n != 1 {
		t.Errorf("%d requests; a cut-off structured answer is not retried with the same limit", n)
	}

	oai := llmtest.NewOpenAI(t)
	oai.Enqueue(llmtest.Response{Text: "{\"items\": [1, 2", StopReason: "length"})
	mustFail(t, runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "max_tokens": int64(20), "output_schema": schema}, envOf(oai.Env())), "cut off at max_tokens (20)")

	oai.Enqueue(llmtest.Response{Text: "The list is: one, two", StopReason: "length"})
	res := runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "gpt-5.2", "max_tokens": int64(5)}, envOf(oai.Env()))
	if o := mustOK(t, res); o["response"] != "The list is: one, two" {
		t.Errorf("response = %#v", o["response"])
	}
	if !strings.Contains(res.log, "cut off at max_tokens") {
		t.Errorf("no warning for a cut-off answer: %q", res.log)
	}
}

// No failure mode puts the API key in an error, an output or the log.
func TestAPIKeyNeverLeaks(t *testing.T) {
	const secret = "sk-ant-very-secret-key-123"
	for _, r := range []llmtest.Response{llmtest.Unauthorized(), llmtest.RateLimited(), llmtest.Overloaded(), llmtest.Malformed(),
		{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "bad key " + secret}} {
		fake := llmtest.NewAnthropic(t)
		fake.Enqueue(r)
		out := runLLM(t, Spec(""), map[string]any{"prompt": "x", "model": "claude-sonnet-4-5"},
			envOf(map[string]string{"ANTHROPIC_BASE_URL": fake.BaseURL, "ANTHROPIC_API_KEY": secret}))
		all := out.log
		if out.err != nil {
			all += out.err.Error()
		}
		if out.res != nil {
			all += value.Stringify(out.res.Outputs)
		}
		if strings.Contains(all, secret) {
			t.Errorf("status %d: the API key leaked: %s", r.Status, all)
		}
		if got := fake.LastRequest().Header.Get("x-api-key"); got != secret {
			t.Errorf("the key was not sent: %q", got)
		}
	}
}

// Parallel batch items call one Spec concurrently.
func TestConcurrentCalls(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	spec := Spec("openai/gpt-5-mini")
	env := envOf(fake.Env())
	errs := make(chan string, 20)
	for i := 0; i < 20; i++ {
		go func() {
			res, err := spec.Node.Run(context.Background(), &node.Request{Params: map[string]any{"prompt": "hi"}, Env: env})
			switch {
			case err != nil:
				errs <- err.Error()
			case res.Action == "error":
				errs <- res.Outputs["error"].(string)
			default:
				errs <- ""
			}
		}()
	}
	for i := 0; i < 20; i++ {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	if n := len(fake.Requests()); n != 20 {
		t.Errorf("%d requests, want 20", n)
	}
}

func TestUnreachableLocalServerSaysHowToStartIt(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	base := fake.BaseURL
	fake.Close()
	out := runLLM(t, Spec(""), map[string]any{"prompt": "hi", "model": "ollama/llama3.2"}, envOf(map[string]string{"OLLAMA_BASE_URL": base}))
	if out.err == nil || !strings.Contains(out.err.Error(), "could not reach ollama at "+base) || !strings.Contains(out.err.Error(), "ollama serve") {
		t.Fatalf("err = %v", out.err)
	}
}

// A provider's long text in a message is cut at a rune boundary (it was cut
// at byte 200 even inside a character).
func TestBriefCutsAtARune(t *testing.T) {
	got := brief("  " + strings.Repeat("a", 199) + "é and more")
	if want := strings.Repeat("a", 199) + "…"; got != want {
		t.Errorf("brief = %q, want %q", got, want)
	}
}
