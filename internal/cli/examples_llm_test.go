package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/llmtest"
)

// TestLLMExampleAgainstFakeProviders runs examples/llm-summarize.pflow.md
// against local fakes of both providers' APIs: the prompt carries the file's
// text, the summary comes back as the output, and tokens/cost reach the
// JSON envelope's metrics.
func TestLLMExampleAgainstFakeProviders(t *testing.T) {
	example, _ := filepath.Abs("../../examples/llm-summarize.pflow.md")
	text := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(text, []byte("Quarterly revenue grew 12 percent on strong cloud sales."), 0o644)
	for _, c := range []struct {
		fake  func(testing.TB) *llmtest.Fake
		model string
	}{
		{llmtest.NewAnthropic, "anthropic/claude-sonnet-4-5"},
		{llmtest.NewOpenAI, "openai/gpt-5.2"},
	} {
		t.Run(c.model, func(t *testing.T) {
			fake := c.fake(t)
			fake.Enqueue(llmtest.Response{Text: "Revenue up 12% on cloud.", Usage: &llmtest.Usage{Input: 120, Output: 8}})
			env := []string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
			for k, v := range fake.Env() {
				env = append(env, k+"="+v)
			}
			var out, errb bytes.Buffer
			ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}
			code := Main(context.Background(), []string{"--output-format", "json", example, "file=" + text, "model=" + c.model}, ios, env)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
			}
			var doc struct {
				Result  map[string]any `json:"result"`
				Metrics map[string]any `json:"metrics"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Result["summary"] != "Revenue up 12% on cloud." {
				t.Errorf("summary = %v", doc.Result["summary"])
			}
			if doc.Metrics["tokens_total"] != float64(128) || doc.Metrics["llm_calls"] != float64(1) {
				t.Errorf("metrics = %v", doc.Metrics)
			}
			reqs := fake.Requests()
			if len(reqs) != 1 || !strings.Contains(string(reqs[0].Raw), "Quarterly revenue grew 12 percent") {
				t.Fatalf("the prompt must carry the file's text: %+v", reqs)
			}
			if strings.Contains(out.String()+errb.String(), llmtest.TestAPIKey) {
				t.Error("the API key leaked into the output")
			}
		})
	}
}

// TestTextRunShowsLLMCost: a text-mode run that called a priced model ends
// with the cost and token count on stderr.
func TestTextRunShowsLLMCost(t *testing.T) {
	example, _ := filepath.Abs("../../examples/llm-summarize.pflow.md")
	text := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(text, []byte("Quarterly revenue grew 12 percent."), 0o644)
	fake := llmtest.NewAnthropic(t)
	fake.Enqueue(llmtest.Response{Text: "Revenue up 12%.", Usage: &llmtest.Usage{Input: 120, Output: 8}})
	env := []string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	for k, v := range fake.Env() {
		env = append(env, k+"="+v)
	}
	var out, errb bytes.Buffer
	ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}
	if code := Main(context.Background(), []string{example, "file=" + text, "model=anthropic/claude-sonnet-4-5"}, ios, env); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "Cost: $") || !strings.Contains(errb.String(), "(128 tokens)") {
		t.Errorf("stderr must show the run's cost and tokens:\n%s", errb.String())
	}
}
