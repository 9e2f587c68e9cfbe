package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// The stdio server survives malformed input: each bad line gets a JSON-RPC
// error and the session carries on.
func TestStdioSurvivesMalformedInput(t *testing.T) {
	home := t.TempDir()
	log := &fakemcp.Buffer{}
	a := app.New([]string{"PFLOW_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}, log)
	srv := New(Options{App: a, Log: log})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, inR, outW) }()
	defer func() {
		cancel()
		inW.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("ServeStdio did not return")
		}
	}()
	lines := make(chan map[string]any, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("non-JSON on stdout: %q", sc.Text())
				continue
			}
			lines <- m
		}
	}()
	next := func() map[string]any {
		t.Helper()
		select {
		case m := <-lines:
			return m
		case <-time.After(2 * time.Minute): // a hang detector, not a speed bound
			t.Fatal("no response")
		}
		return nil
	}
	send := func(s string) { inW.Write([]byte(s + "\n")) }
	errCode := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}

	send("this is not json")
	if c := errCode(next()); c != -32700 {
		t.Fatalf("garbage: code %v", c)
	}
	send(`{"foo": 1}`)
	if c := errCode(next()); c != -32600 {
		t.Fatalf("not JSON-RPC: code %v", c)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := next(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`[1, 2`)
	if c := errCode(next()); c != -32700 {
		t.Fatalf("truncated: code %v", c)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"no/such/method"}`)
	if c := errCode(next()); c != -32601 {
		t.Fatalf("unknown method: code %v", c)
	}
	big := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"workflow_validate","arguments":{"workflow":"` + strings.Repeat("x", 2<<20) + `"}}}`
	send(big)
	if m := next(); m["result"] == nil {
		t.Fatalf("large call: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	m := next()
	res, _ := m["result"].(map[string]any)
	if tools, _ := res["tools"].([]any); len(tools) != 16 {
		t.Fatalf("tools/list after bad input: %v", m)
	}
}
