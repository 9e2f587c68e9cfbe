package app

//lint:file-ignore SA1019 this file tests MCP sampling, which the 2025 MCP revisions pflow still speaks define (docs/decisions.md, "Both protocol revisions")

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/llmtest"
)

// A server whose config says "sampling": true gets its
// sampling/createMessage answered by pflow's configured LLM (here the
// OpenAI wire format of a local fake); without it pflow advertises no
// sampling and the request is refused.
func TestSamplingOptIn(t *testing.T) {
	llm := llmtest.NewOpenAI(t)
	llm.SetDefault(llmtest.Text("a short poem"))
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		res, err := r.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 50, SystemPrompt: "Be brief.",
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Write a poem"}}}})
		text := "refused: "
		if err != nil {
			text += err.Error()
		} else {
			text = "answered: " + res.Content.(*mcp.TextContent).Text + " by " + res.Model
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()

	for _, optIn := range []bool{true, false} {
		home := t.TempDir()
		a := New(append(llm.EnvList(), "PFLOW_HOME="+home, "PATH="+os.Getenv("PATH")), nil)
		cfg := map[string]any{"asker": map[string]any{"type": "http", "url": ts.URL, "sampling": optIn}}
		b, _ := json.Marshal(cfg)
		if _, err := a.AddMCPServers(context.Background(), []string{string(b)}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.SyncMCP(context.Background(), []string{"asker"}, false, nil); err != nil {
			t.Fatal(err)
		}
		wf := filepath.Join(t.TempDir(), "ask.pflow.md")
		os.WriteFile(wf, []byte("# Ask\nAsks through the server.\n\n## Steps\n\n### q\nAsk.\n- type: mcp-asker-ask\n\n## Outputs\n\n### said\nThe answer.\n- source: ${q.result}\n"), 0o644)
		target, _ := a.ResolveTarget(wf)
		out, err := a.Run(context.Background(), RunRequest{Target: target, NoTrace: true, NoRecord: true})
		if err != nil || out.Result == nil || !out.Result.Success() {
			t.Fatalf("run: %v %+v %+v", err, out.ValidationErrors, out.Result)
		}
		said, _ := out.Result.Outputs["said"].(string)
		if optIn && !strings.HasPrefix(said, "answered: a short poem by ") {
			t.Fatalf("with sampling: %q", said)
		}
		if !optIn && !strings.HasPrefix(said, "refused: ") {
			t.Fatalf("without sampling: %q", said)
		}
	}
	req := llm.LastRequest()
	if body := string(req.Raw); !strings.Contains(body, "Be brief.") || !strings.Contains(body, "Write a poem") {
		t.Fatalf("the LLM got %s", body)
	}
	if n := len(llm.Requests()); n != 1 {
		t.Fatalf("the LLM was called %d times; only the opted-in server may use it", n)
	}
}
