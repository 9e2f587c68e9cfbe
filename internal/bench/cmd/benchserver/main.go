// Command benchserver is a minimal go-sdk MCP server over stdio for the
// benchmarks: an "echo" tool (like server-everything's) that answers at once,
// plus -tools N more tools with a two-parameter input schema, so that
// `pflow mcp sync` can register 1,000 MCP tools the way a user's would be.
// It starts in a few milliseconds, which makes a client's own overhead
// visible next to the server's start-up.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Message string `json:"message" jsonschema:"the message to echo back"`
}

func main() {
	tools := flag.Int("tools", 0, "number of extra tools to list")
	flag.Parse()
	s := mcp.NewServer(&mcp.Implementation{Name: "benchserver", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes back the input string"},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
		})
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "What to look for"},
			"limit": map[string]any{"type": "integer", "description": "Maximum results"},
		},
		"required": []any{"query"},
	}
	topics := []string{"issue", "file", "ticket", "message", "record", "invoice", "page", "event"}
	for i := range *tools {
		name := fmt.Sprintf("search_%s_%04d", topics[i%len(topics)], i)
		s.AddTool(&mcp.Tool{Name: name, Description: fmt.Sprintf("Search %ss in collection %d and return the matches", topics[i%len(topics)], i), InputSchema: schema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "[]"}}}, nil
			})
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintf(os.Stderr, "benchserver: %v\n", err)
		os.Exit(1)
	}
}
