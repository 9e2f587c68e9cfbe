package mcpclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that asks the client for something during a call gets a prompt
// answer and the call goes on: sampling is refused with the standard error
// (pflow does not advertise it unless configured), roots/list is refused
// too (pflow offers no roots; go-sdk would answer an empty list); an
// elicitation with no asker in the call's context fails the call at once,
// naming the question. Nothing waits for an answer that never comes.
func TestServerToClientRequestsNeverHang(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	ask := func(name string, do func(ctx context.Context, ss *mcp.ServerSession) error) {
		mcp.AddTool(srv, &mcp.Tool{Name: name}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // only a hang reaches it
			defer cancel()
			err := do(ctx, r.Session)
			text := "answered"
			if err != nil {
				text = "refused: " + err.Error()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	}
	ask("sample", func(ctx context.Context, ss *mcp.ServerSession) error {
		//lint:ignore SA1019 pflow speaks the 2025 MCP revisions too, where sampling is current (docs/decisions.md, "Both protocol revisions")
		_, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}, MaxTokens: 10})
		return err
	})
	ask("elicit", func(ctx context.Context, ss *mcp.ServerSession) error {
		_, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "your name?"})
		return err
	})
	ask("roots", func(ctx context.Context, ss *mcp.ServerSession) error {
		//lint:ignore SA1019 pflow speaks the 2025 MCP revisions too, where roots is current (docs/decisions.md, "Both protocol revisions")
		_, err := ss.ListRoots(ctx, nil)
		return err
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()

	s, err := Resolve("asker", map[string]any{"type": "http", "url": ts.URL, "startup_timeout": int64(60)}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := Connect(ctx, s, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	_, err = sess.CallTool(ctx, "elicit", map[string]any{}, time.Minute)
	if err == nil || !strings.Contains(err.Error(), `asked a question and nobody can answer it in this run: "your name?"`) {
		t.Fatalf("elicit without an asker: %v", err)
	}
	for tool, refused := range map[string]bool{"sample": true, "roots": true} {
		res, err := sess.CallTool(ctx, tool, map[string]any{}, time.Minute)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if strings.HasPrefix(text, "refused: ") != refused {
			t.Errorf("%s: %q (want refused=%v)", tool, text, refused)
		}
	}
}

// A call on a session that was closed, or whose connection went away,
// fails at once with the message docs/troubleshooting.md quotes, never a
// hang or a bare transport error.
func TestCallsOnAGoneSessionSaySo(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "gone", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	s, err := Resolve("gone", map[string]any{"type": "http", "url": ts.URL}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := Connect(ctx, s, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.CallTool(ctx, "echo", nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	sess.Close()
	_, err = sess.CallTool(ctx, "echo", nil, time.Minute)
	if err == nil || err.Error() != "MCP session with server gone is closed" {
		t.Fatalf("a call after Close: %v", err)
	}
}
