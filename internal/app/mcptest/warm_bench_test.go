package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
	"github.com/pflow-go/pflow/internal/testutil/homefill"
)

// BenchmarkPooledRun is App.Run of a workflow of 3 calls to a warm pooled
// MCP server (the fake), in a home at its retention limit (homefill.Runs), with
// and without the run record and the trace:
// what a workflow_execute costs besides the calls; serve is record+trace
// as pflow mcp serve does it (the trace written after the answer).
func BenchmarkPooledRun(b *testing.B) {
	for _, c := range []struct {
		name              string
		noTrace, noRecord bool
		afterwards        bool
	}{{"record+trace", false, false, false}, {"serve", false, false, true}, {"record", true, false, false}, {"trace", false, true, false}, {"bare", true, true, false}} {
		b.Run(c.name, func(b *testing.B) {
			home := b.TempDir()
			a := app.New([]string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH"), "HOME=" + home}, nil)
			addFakeB(b, a)
			a.MCPPool = mcpclient.NewPool(time.Hour, nil)
			defer a.MCPPool.Close()
			if c.afterwards { // as pflow mcp serve: trace and retention after the answer
				a.Afterwards = app.NewAfterwards()
				defer a.Afterwards.Settle()
			}
			md := "# Three\nThree calls.\n\n## Steps\n"
			for i := 1; i <= 3; i++ {
				md += fmt.Sprintf("\n### s%d\nEcho.\n- type: mcp-fake-echo\n- message: m%d\n", i, i)
			}
			wf := filepath.Join(b.TempDir(), "three.pflow.md")
			os.WriteFile(wf, []byte(md), 0o644)
			target, err := a.ResolveTarget(wf)
			if err != nil {
				b.Fatal(err)
			}
			homefill.Runs(b, a)
			for b.Loop() {
				out, err := a.Run(context.Background(), app.RunRequest{Target: target, NoTrace: c.noTrace, NoRecord: c.noRecord})
				if err != nil || out.Result == nil || !out.Result.Success() {
					b.Fatalf("%v %+v", err, out)
				}
			}
		})
	}
}

func addFakeB(b *testing.B, a *app.App) {
	b.Helper()
	entry := fakemcp.Entry(fakemcp.NewID(), "")
	raw, _ := json.Marshal(map[string]any{"fake": entry})
	if _, err := a.AddMCPServers(context.Background(), []string{string(raw)}); err != nil {
		b.Fatal(err)
	}
	if _, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil); err != nil {
		b.Fatal(err)
	}
}
