package mcptest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/testutil/homefill"
)

// BenchmarkRecordOverheadWork is the recording target (≤ 5%) for steps that
// do work, measured as BenchmarkRecordOverhead1000 measures the echo chain:
// App.Run with the trace off, record=off (--no-record) beside record=on in
// a home at its retention limit. Every step here is recorded (none is
// replayed): a 20-step chain of shell steps, a 200-item parallel batch of
// HTTP GETs to a server on 127.0.0.1 (10 at a time), and a 20-step chain of
// calls to a warm pooled MCP server (the fake, as pflow mcp serve keeps it).
//
//	go test -run '^$' -bench RecordOverheadWork -benchmem ./internal/app/mcptest
func BenchmarkRecordOverheadWork(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"path":%q,"ok":true}`, r.URL.Path)
	}))
	defer srv.Close()
	var shell, mcp strings.Builder
	shell.WriteString("# Shell\nA chain of processes.\n\n## Steps\n")
	mcp.WriteString("# MCP\nA chain of tool calls.\n\n## Steps\n")
	for i := 1; i <= 20; i++ {
		prev := "start"
		if i > 1 {
			prev = fmt.Sprintf("${s%d.stdout}", i-1)
		}
		fmt.Fprintf(&shell, "\n### s%d\nStep %d.\n- type: shell\n- command: echo %s | cut -c1-40\n", i, i, prev)
		fmt.Fprintf(&mcp, "\n### s%d\nCall %d.\n- type: mcp-fake-echo\n- message: m%d\n", i, i, i)
	}
	items := make([]any, 200)
	for i := range items {
		items[i] = fmt.Sprintf("%s/item/%d", srv.URL, i)
	}
	httpBatch := "# HTTP\nA batch of requests.\n\n## Inputs\n\n### urls\nThe URLs.\n- type: array\n\n## Steps\n\n" +
		"### get\nGet each.\n- type: http\n- url: ${item}\n\n```yaml batch\nitems: ${urls}\nparallel: true\nmax_concurrent: 10\n```\n"
	for _, w := range []struct {
		name, src string
		params    map[string]any
	}{{"shell-chain-20", shell.String(), nil}, {"http-batch-200", httpBatch, map[string]any{"urls": items}}, {"mcp-chain-20", mcp.String(), nil}} {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/record=%s", w.name, map[bool]string{false: "off", true: "on"}[on]), func(b *testing.B) {
				home := b.TempDir()
				a := app.New([]string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH"), "HOME=" + home}, nil)
				if strings.Contains(w.src, "mcp-fake") {
					addFakeB(b, a)
					a.MCPPool = mcpclient.NewPool(time.Hour, nil)
					defer a.MCPPool.Close()
				}
				wf := filepath.Join(b.TempDir(), "work.pflow.md")
				os.WriteFile(wf, []byte(w.src), 0o644)
				target, err := a.ResolveTarget(wf)
				if err != nil {
					b.Fatal(err)
				}
				if on {
					homefill.Runs(b, a)
				}
				for b.Loop() {
					out, err := a.Run(context.Background(), app.RunRequest{Target: target, Params: w.params, NoTrace: true, NoRecord: !on})
					if err != nil || out.Result == nil || !out.Result.Success() {
						b.Fatalf("%v %+v", err, out)
					}
				}
			})
		}
	}
}
