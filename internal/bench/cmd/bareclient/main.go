// Command bareclient is the comparison client of the MCP benchmarks
// (see docs/decisions.md, "Measured targets"): what a competent Go programmer
// writes with go-sdk to make
// N tool calls to one stdio server — CommandTransport, the protocol version
// pinned, no "roots" capability (a server that asks for roots and gets no
// answer lingers after stdin closes, so the close alone would cost seconds),
// a 2 s terminate delay.
//
//	bareclient [-calls 20] [-per-call] [-list] [-tool echo] [-args '{"message":"hi"}'] -- command [args...]
//
// -per-call starts the server, initializes, calls and closes for every call;
// -list connects, lists the tools (following nextCursor) and closes, the
// minimum any tool discovery costs.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	calls := flag.Int("calls", 20, "number of tools/call requests")
	perCall := flag.Bool("per-call", false, "start the server for every call")
	list := flag.Bool("list", false, "only connect, list the tools and close")
	tool := flag.String("tool", "echo", "tool to call")
	rawArgs := flag.String("args", `{"message":"hi"}`, "tool arguments as a JSON object")
	timeout := flag.Duration("timeout", 60*time.Second, "bound on the whole run")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "bareclient: missing the server command (bareclient [flags] -- command [args...])")
		os.Exit(2)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(*rawArgs), &args); err != nil {
		fmt.Fprintf(os.Stderr, "bareclient: -args is not a JSON object: %v\n", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, flag.Args(), *calls, *perCall, *list, *tool, args); err != nil {
		fmt.Fprintf(os.Stderr, "bareclient: %v\n", err)
		os.Exit(1)
	}
}

func connect(ctx context.Context, argv []string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bareclient", Version: "1.0.0"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cmd := exec.Command(argv[0], argv[1:]...)
	return c.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

func call(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return fmt.Errorf("calling %s: %w", tool, err)
	}
	if res.IsError {
		return fmt.Errorf("tool %s failed: %v", tool, res.Content)
	}
	return nil
}

func run(ctx context.Context, argv []string, calls int, perCall, list bool, tool string, args map[string]any) error {
	if list {
		cs, err := connect(ctx, argv)
		if err != nil {
			return fmt.Errorf("connecting to %s: %w", argv[0], err)
		}
		n := 0
		for _, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return fmt.Errorf("listing tools: %w", err)
			}
			n++
		}
		if n == 0 {
			return fmt.Errorf("server %s lists no tools", argv[0])
		}
		return cs.Close()
	}
	if perCall {
		for range calls {
			cs, err := connect(ctx, argv)
			if err != nil {
				return fmt.Errorf("connecting to %s: %w", argv[0], err)
			}
			if err := call(ctx, cs, tool, args); err != nil {
				cs.Close()
				return err
			}
			if err := cs.Close(); err != nil {
				return fmt.Errorf("closing: %w", err)
			}
		}
		return nil
	}
	cs, err := connect(ctx, argv)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", argv[0], err)
	}
	for range calls {
		if err := call(ctx, cs, tool, args); err != nil {
			cs.Close()
			return err
		}
	}
	return cs.Close()
}
