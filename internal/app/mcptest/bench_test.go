package mcptest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/cli"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// The MCP call overhead benchmarks (see docs/decisions.md, "Measured targets"):
// a workflow making 20
// calls to one stdio server, against a bare go-sdk client making the same
// 20 calls in one session, and against starting the server for every call.
// Each runs against the fault-injection fake server (a Go binary that starts
// in milliseconds) and, when the npm peers are installed, against the real
// server-everything (node). Compare within one kind:
//
//	go test -run '^$' -bench TwentyCalls -benchtime 10x ./internal/app/mcptest

type benchServer struct {
	name    string
	command string
	args    []string
	env     []string
	tool    string
	arg     map[string]any
}

func benchServers(b *testing.B) []benchServer {
	exe, _ := os.Executable()
	out := []benchServer{{name: "fake", command: exe, args: []string{"-test.run=^$"}, env: []string{fakemcp.EnvVar + "="}, tool: "echo", arg: map[string]any{"message": "hi"}}}
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		dir = filepath.Dir(dir)
	}
	js := filepath.Join(dir, "testdata/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(js); err == nil {
		out = append(out, benchServer{name: "everything", command: "node", args: []string{js, "stdio"}, tool: "echo", arg: map[string]any{"message": "hi"}})
	} else {
		b.Log("npm peers not installed: benchmarking the fake server only")
	}
	return out
}

func (s benchServer) configJSON() string {
	env := map[string]string{}
	for _, kv := range s.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	var args []string
	for _, a := range s.args {
		args = append(args, fmt.Sprintf("%q", a))
	}
	var envs []string
	for k, v := range env {
		envs = append(envs, fmt.Sprintf("%q: %q", k, v))
	}
	return fmt.Sprintf(`{"bench": {"command": %q, "args": [%s], "env": {%s}}}`, s.command, strings.Join(args, ", "), strings.Join(envs, ", "))
}

func twentyStepWorkflow(tool string) string {
	var b strings.Builder
	b.WriteString("# Twenty MCP calls\nCalls one MCP tool twenty times.\n\n## Steps\n")
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "\n### call%d\nCall the tool.\n- type: mcp-bench-%s\n- message: hi %d\n", i, tool, i)
	}
	b.WriteString("\n## Outputs\n\n### last\nThe last result.\n- source: ${call20.result}\n")
	return b.String()
}

// BenchmarkTwentyCallsWorkflow runs a .pflow.md workflow of 20 MCP steps
// through the pflow CLI (parse, validate, registry, run, session, trace).
func BenchmarkTwentyCallsWorkflow(b *testing.B) {
	for _, s := range benchServers(b) {
		b.Run(s.name, func(b *testing.B) {
			home := b.TempDir()
			environ := []string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH"), "HOME=" + home}
			run := func(args ...string) {
				var out, errb bytes.Buffer
				if code := cli.Main(context.Background(), args, &cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, environ); code != 0 {
					b.Fatalf("%v: exit %d\n%s\n%s", args, code, out.String(), errb.String())
				}
			}
			run("mcp", "add", s.configJSON())
			run("mcp", "sync", "bench")
			wf := filepath.Join(b.TempDir(), "twenty.pflow.md")
			os.WriteFile(wf, []byte(twentyStepWorkflow(s.tool)), 0o644)
			run(wf) // warm-up (first run also checks the sync state)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run(wf)
			}
		})
	}
}

func bareCommand(s benchServer) *exec.Cmd {
	cmd := exec.Command(s.command, s.args...)
	cmd.Env = append(os.Environ(), s.env...)
	return cmd
}

// bareSession is what a competent user of go-sdk writes: CommandTransport,
// no roots capability (or its close alone costs seconds), version pinned.
func bareSession(ctx context.Context, b *testing.B, s benchServer) *mcp.ClientSession {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: bareCommand(s), TerminateDuration: 2 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

// BenchmarkTwentyCallsBareSDK: one go-sdk session, 20 calls, close.
func BenchmarkTwentyCallsBareSDK(b *testing.B) {
	for _, s := range benchServers(b) {
		b.Run(s.name, func(b *testing.B) {
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				cs := bareSession(ctx, b, s)
				for j := 0; j < 20; j++ {
					if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: s.tool, Arguments: s.arg}); err != nil {
						b.Fatal(err)
					}
				}
				cs.Close()
			}
		})
	}
}

// BenchmarkTwentyCallsServerPerCall: 20 × (start server, initialize, call, close).
func BenchmarkTwentyCallsServerPerCall(b *testing.B) {
	for _, s := range benchServers(b) {
		b.Run(s.name, func(b *testing.B) {
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				for j := 0; j < 20; j++ {
					cs := bareSession(ctx, b, s)
					if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: s.tool, Arguments: s.arg}); err != nil {
						b.Fatal(err)
					}
					cs.Close()
				}
			}
		})
	}
}
