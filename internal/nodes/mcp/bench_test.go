package mcpnode

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// BenchmarkTwentyCallsNode: one run's scope, 20 node executions against the
// fake server, then the run's end (session close). Compare with
// BenchmarkTwentyCallsBareSDK in internal/app/mcptest.
func BenchmarkTwentyCallsNode(b *testing.B) {
	path := filepath.Join(b.TempDir(), "mcp-servers.json")
	entry := fakemcp.Entry(fakemcp.NewID(), "")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fake": entry}})
	os.WriteFile(path, data, 0o600)
	n := New(Config{ServersPath: path, Env: os.LookupEnv, Log: io.Discard})
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sc := &scope{}
		for j := 0; j < 20; j++ {
			res, err := n.Run(ctx, &node.Request{Type: "mcp-fake-echo", Params: map[string]any{ParamServer: "fake", ParamTool: "echo", "message": "hi"}, Scope: sc})
			if err != nil || res.Action == "error" {
				b.Fatal(err, res.Outputs["error"])
			}
		}
		sc.Close()
	}
}
