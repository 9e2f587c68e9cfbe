package mcpclient

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that listens on a Unix socket ("type": "uds", "path": ...)
// speaks newline-delimited JSON-RPC over it.
func TestUnixSocketTransport(t *testing.T) {
	dir, err := os.MkdirTemp("", "pflow-uds-") // short: socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "mcp.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv := mcp.NewServer(&mcp.Implementation{Name: "uds", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hello"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi over a socket"}}}, nil, nil
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go srv.Run(context.Background(), &mcp.IOTransport{Reader: c, Writer: c})
		}
	}()
	s, err := Resolve("sock", map[string]any{"type": "uds", "path": sock}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := Connect(context.Background(), s, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), "hello", nil, time.Minute)
	if err != nil || ExtractResult(res).Result != "hi over a socket" {
		t.Fatalf("call: %v %+v", err, res)
	}
	// Nothing listening: a clear error naming the socket.
	s2, _ := Resolve("gone", map[string]any{"type": "uds", "path": filepath.Join(dir, "none.sock")}, env(nil), io.Discard)
	if _, err := Connect(context.Background(), s2, io.Discard); err == nil || !strings.Contains(err.Error(), "Could not connect to MCP server gone at the Unix socket") {
		t.Fatalf("no listener: %v", err)
	}
	// A uds entry without a path is refused when added.
	if err := ValidateEntry("x", map[string]any{"type": "uds"}); err == nil || !strings.Contains(err.Error(), "requires 'path'") {
		t.Fatalf("validation: %v", err)
	}
}
