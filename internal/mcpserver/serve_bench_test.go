package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
	"github.com/pflow-go/pflow/internal/testutil/homefill"
)

// BenchmarkServeThreeCalls is BenchmarkWarmSessionsVsDirect's
// workflow_execute in-process (go-sdk in-memory client, the real
// server-everything), for profiling what pflow does per run:
//
//	go test -run '^$' -bench ServeThreeCalls -cpuprofile cpu.out ./internal/mcpserver
func BenchmarkServeThreeCalls(b *testing.B) {
	dir, node := peers(b)
	home := b.TempDir()
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	log := &fakemcp.Buffer{}
	a := app.New(testEnv(home), log)
	ctx := context.Background()
	if _, err := a.AddMCPServers(ctx, []string{fmt.Sprintf(`{"everything": {"command": %q, "args": [%q, "stdio"]}}`, node, entry)}); err != nil {
		b.Fatal(err)
	}
	if _, err := a.SyncMCP(ctx, []string{"everything"}, false, nil); err != nil {
		b.Fatal(err)
	}
	wf := threeCallsWorkflow(home)
	homefill.Runs(b, app.New(testEnv(home), &fakemcp.Buffer{}))
	srv := New(Options{App: a, Log: log})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { cs.Close(); ss.Close(); srv.Shutdown() }()
	exec := func() {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": wf, "parameters": map[string]any{}}})
		if err != nil || r.IsError {
			b.Fatalf("%v %+v\n%s", err, r, log)
		}
	}
	for i := 0; i < 3; i++ {
		exec()
	}
	for b.Loop() {
		exec()
	}
}
