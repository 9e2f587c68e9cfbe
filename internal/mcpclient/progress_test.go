package mcpclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// manualTimer is a call's idle timer driven by the test: it fires when the
// test says so, and counts the resets progress makes.
type manualTimer struct {
	mu     sync.Mutex
	f      func()
	resets chan struct{}
}

func (m *manualTimer) Reset(time.Duration) bool { m.resets <- struct{}{}; return true }
func (m *manualTimer) Stop() bool               { return true }
func (m *manualTimer) fire()                    { m.mu.Lock(); f := m.f; m.mu.Unlock(); f() }

// A call's timeout is an idle timeout: each progress notification the
// server sends for the call (pflow sends a progress token) restarts it, so
// a long call that reports progress is not cut off; a call that goes
// quiet is. The server's log messages during the call
// are handed to the step. Driven by events: the timer is the test's.
func TestProgressKeepsACallAliveAndLogsReachTheStep(t *testing.T) {
	timers := make(chan *manualTimer, 4)
	orig := afterFunc
	afterFunc = func(d time.Duration, f func()) timer {
		m := &manualTimer{f: f, resets: make(chan struct{}, 16)}
		timers <- m
		return m
	}
	defer func() { afterFunc = orig }()

	release := make(chan struct{})
	//lint:ignore SA1019 pflow speaks the 2025 MCP revisions too, where logging is current (docs/decisions.md, "Both protocol revisions")
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}})
	gotToken := make(chan bool, 2)
	mcp.AddTool(srv, &mcp.Tool{Name: "work"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		tok := r.Params.GetProgressToken()
		gotToken <- tok != nil
		//lint:ignore SA1019 pflow speaks the 2025 MCP revisions too, where logging is current (docs/decisions.md, "Both protocol revisions")
		r.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "worker", Data: "halfway"})
		for i := 1; i <= 3; i++ {
			r.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3})
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	quietStop := make(chan struct{})
	mcp.AddTool(srv, &mcp.Tool{Name: "quiet"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		gotToken <- true
		select { // never answers, never reports progress
		case <-ctx.Done():
		case <-quietStop: // the test is over (the client's cancel may not have reached it)
		}
		return nil, nil, ctx.Err()
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	defer close(quietStop) // before ts.Close, which waits for the handler
	s, err := Resolve("slow", map[string]any{"type": "http", "url": ts.URL}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := Connect(context.Background(), s, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	// The working call: three progress notifications restart its timer;
	// then it answers.
	done := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(context.Background(), "work", nil, time.Second)
		done <- err
	}()
	m := <-timers
	if !<-gotToken {
		t.Fatal("the call carried no progress token")
	}
	for i := 0; i < 3; i++ {
		<-m.resets // each progress restarted the idle timeout
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("a call that reported progress failed: %v", err)
	}
	if logs := sess.DrainLogs(); len(logs) != 1 || logs[0] != "info worker: halfway" {
		t.Fatalf("logs: %q", logs)
	}

	// The quiet call: its idle timeout ends it.
	go func() {
		_, err := sess.CallTool(context.Background(), "quiet", nil, time.Second)
		done <- err
	}()
	m = <-timers
	<-gotToken
	m.fire()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "MCP tool timed out after 1 seconds") {
		t.Fatalf("a quiet call: %v", err)
	}
}
