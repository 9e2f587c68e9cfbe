package llm_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/llmtest"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/llm"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

type catalog map[string]*node.Spec

func (c catalog) Lookup(t string) (*node.Spec, bool) { s, ok := c[t]; return s, ok }
func (c catalog) Types() []string                    { return value.SortedKeys(c) }

const summarize = "# Summarize\n\nSummarizes a text.\n\n## Inputs\n\n### text\n\nThe text.\n\n- type: string\n\n## Steps\n\n### summary\n\nAsk the model.\n\n- type: llm\n- model: anthropic/claude-sonnet-4-5\n- max_tokens: 200\n\n```prompt\nSummarize in one line:\n${text}\n```\n\n## Outputs\n\n### result\n\nThe summary.\n\n- source: ${summary.response}\n"

func run(t *testing.T, fake *llmtest.Fake, settings map[string]string) *runtime.Result {
	t.Helper()
	w, err := workflow.ParseMarkdown([]byte(summarize), filepath.Join(t.TempDir(), "summarize.pflow.md"))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	env := fake.Env()
	return runtime.Run(context.Background(), w, map[string]any{"text": "pflow turns agent work into workflows."}, runtime.Options{
		Catalog: catalog{"llm": llm.Spec("")},
		Env: runtime.EnvLookup{
			Process:  func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			Settings: func(k string) (string, bool) { v, ok := settings[k]; return v, ok },
		},
	})
}

// Through the runtime: the prompt block's template is resolved, a 429 is
// retried after the 1 s wait, and the usage reaches the run's LLM calls.
func TestWorkflowRetriesRateLimitAndRecordsUsage(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	fake.Enqueue(llmtest.RateLimited(), llmtest.Response{Text: "Agents' work, made repeatable.", Usage: &llmtest.Usage{Input: 100, Output: 10}})
	res := run(t, fake, nil)
	if !res.Success() {
		t.Fatalf("run failed: %#v", res.Failure)
	}
	if got := res.Outputs["result"]; got != "Agents' work, made repeatable." {
		t.Errorf("output = %#v", got)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (429 then success)", len(reqs))
	}
	msg := reqs[1].Messages()[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	if msg != "Summarize in one line:\npflow turns agent work into workflows." {
		t.Errorf("prompt on the wire = %q", msg)
	}
	if len(res.LLMCalls) != 1 {
		t.Fatalf("LLMCalls = %#v", res.LLMCalls)
	}
	c := res.LLMCalls[0]
	if c["node_id"] != "summary" || c["model"] != "anthropic/claude-sonnet-4-5" || c["input_tokens"] != int64(100) || c["cost_usd"] != 0.00045 {
		t.Errorf("LLM call record = %#v", c)
	}
}

// An API key from settings env (not the process env) is used.
func TestWorkflowKeyFromSettingsAndMalformedResponse(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	fake.Enqueue(llmtest.Malformed())
	w, _ := workflow.ParseMarkdown([]byte(summarize), "summarize.pflow.md")
	res := runtime.Run(context.Background(), w, map[string]any{"text": "x"}, runtime.Options{
		Catalog: catalog{"llm": llm.Spec("")},
		Env: runtime.EnvLookup{
			Process: func(k string) (string, bool) {
				return map[string]string{"ANTHROPIC_BASE_URL": fake.BaseURL}[k], k == "ANTHROPIC_BASE_URL"
			},
			Settings: func(k string) (string, bool) { return llmtest.TestAPIKey, k == "ANTHROPIC_API_KEY" },
		},
	})
	if res.Success() || res.Failure == nil || res.Failure.NodeID != "summary" {
		t.Fatalf("status %s failure %#v, want the malformed response to fail the step", res.Status, res.Failure)
	}
	if !strings.Contains(res.Failure.Message, "invalid response from anthropic") {
		t.Errorf("failure = %q", res.Failure.Message)
	}
	if got := fake.LastRequest().Header.Get("x-api-key"); got != llmtest.TestAPIKey {
		t.Errorf("x-api-key = %q, want the settings key", got)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("%d requests; a malformed response is not retried", n)
	}
}
