package app

//lint:file-ignore SA1019 this file answers MCP sampling requests, which the 2025 MCP revisions pflow still speaks define (docs/decisions.md, "Both protocol revisions")

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/nodes/llm"
)

// sampler answers an MCP server's sampling/createMessage with pflow's
// configured LLM (a server whose config says "sampling": true). The
// conversation's text messages become the prompt, the
// server's system prompt and limits are kept; the model is settings'
// default (or the one the API keys select).
func sampler(env func(string) (string, bool), model string) mcpclient.Sampler {
	return func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		var b strings.Builder
		for i, m := range p.Messages {
			tc, ok := m.Content.(*mcp.TextContent)
			if !ok {
				return nil, fmt.Errorf("pflow answers sampling requests of text messages only (message %d is %T)", i+1, m.Content)
			}
			if len(p.Messages) > 1 {
				fmt.Fprintf(&b, "%s: ", m.Role)
			}
			b.WriteString(tc.Text)
			b.WriteString("\n\n")
		}
		used := model
		if used == "" {
			m, ok := llm.DefaultModel(env)
			if !ok {
				return nil, fmt.Errorf("pflow has no LLM configured to answer this server's sampling request (set an API key, or pflow settings llm)")
			}
			used = m
		}
		req := llm.CompletionRequest{Model: used, System: p.SystemPrompt, Prompt: strings.TrimSpace(b.String()), MaxTokens: int(p.MaxTokens)}
		if p.Temperature != 0 {
			t := p.Temperature
			req.Temperature = &t
		}
		c, err := llm.Complete(ctx, req, env)
		if err != nil {
			return nil, err
		}
		return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: c.Text}, Model: used, Role: "assistant", StopReason: "endTurn"}, nil
	}
}
