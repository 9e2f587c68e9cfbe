// Package conformance is a small client adapter over pflow's MCP client
// for the official conformance suite (@modelcontextprotocol/conformance):
// the suite starts a scenario server and runs the adapter with the server's
// URL as the last argument and the scenario in MCP_CONFORMANCE_SCENARIO.
// The adapter connects with pflow's client (streamable HTTP), lists the
// tools and calls each one, exactly as a workflow's MCP node would.
package conformance

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pflow-go/pflow/internal/mcp/client"
	"github.com/pflow-go/pflow/internal/value"
)

// EnvVar makes a test binary act as the adapter (see Run).
const EnvVar = "PFLOW_CONFORMANCE_ADAPTER"

// Run is the adapter's main: args[len(args)-1] is the server URL. It
// returns the process exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, "usage: adapter <server-url>")
		return 2
	}
	url := args[len(args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	srv, err := client.Resolve("conformance", map[string]any{"type": "http", "url": url, "startup_timeout": int64(20), "timeout": int64(20)}, nil, stderr)
	if err != nil {
		fmt.Fprintln(stderr, client.ErrorText(err))
		return 1
	}
	sess, err := client.Connect(ctx, srv, stderr)
	if err != nil {
		fmt.Fprintln(stderr, client.ErrorText(err))
		return 1
	}
	defer sess.Close()
	tools, err := sess.ListTools(ctx)
	if err != nil {
		fmt.Fprintln(stderr, client.ErrorText(err))
		return 1
	}
	fmt.Fprintf(stdout, "scenario %s: %d tools\n", scenario, len(tools))
	for _, t := range tools {
		args, err := client.CoerceArgs(t.Name, t.InputSchema, sampleArgs(t.InputSchema))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		res, err := sess.CallTool(ctx, t.Name, args, 20*time.Second)
		if err != nil {
			fmt.Fprintln(stderr, client.ErrorText(err))
			return 1
		}
		ex := client.ExtractResult(res)
		if ex.IsError {
			fmt.Fprintf(stderr, "tool %s failed: %s\n", t.Name, ex.Message)
			return 1
		}
		fmt.Fprintf(stdout, "%s -> %s\n", t.Name, value.Stringify(ex.Result))
	}
	return 0
}

// sampleArgs builds arguments for a tool: the numbers 1, 2, 3... for
// numeric properties (so add_numbers gets a=1, b=2), "test" for strings,
// true for booleans.
func sampleArgs(schema any) map[string]any {
	out := map[string]any{}
	n := int64(0)
	for _, f := range client.SchemaFields(schema) {
		switch f.Type {
		case "int", "float":
			n++
			out[f.Key] = n
		case "str":
			out[f.Key] = "test"
		case "bool":
			out[f.Key] = true
		}
	}
	return out
}
