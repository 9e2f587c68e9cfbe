// Command relay is the comparison server of the warm-hub benchmark (issue
// #15, docs/BENCHMARKS.md): the least any MCP server that runs a workflow
// of tool calls for its client can do — a go-sdk server on stdio whose one
// tool, "three", makes the 3 echo calls the benchmark's workflow makes, on
// one go-sdk client session to the server, opened at start and kept. No
// workflow, template, validation, record or trace: what it costs above the
// client's own 3 calls is the floor of pflow's workflow_execute.
//
//	relay -- command [args...]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "relay: missing the server command (relay -- command [args...])")
		os.Exit(2)
	}
	ctx := context.Background()
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "relay", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	defer cmd.Process.Kill() // server-everything does not exit when its stdin closes
	s := mcp.NewServer(&mcp.Implementation{Name: "relay", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "three", Description: "Makes 3 echo calls.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for _, m := range []string{"one", "two", "three"} {
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": m}})
				if err != nil {
					return nil, err
				}
				if r.IsError {
					return r, nil
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
	}
}
