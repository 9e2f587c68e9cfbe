package app

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/pflow-go/pflow/internal/pferr"
)

// sync and test resolve server names and --all the same way: both refuse
// names with --all and an unknown name before any server is started, with
// the configured servers and how to add one (test used to take --all over
// the names, and to find an unknown name only when it came to it).
func TestMCPServerNamesResolvedAlike(t *testing.T) {
	a := New([]string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, nil)
	if _, err := a.AddMCPServers(context.Background(), []string{`{"only": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}`}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, call := range map[string]func([]string, bool) error{
		"sync": func(n []string, all bool) error { _, err := a.SyncMCP(ctx, n, all, nil); return err },
		"test": func(n []string, all bool) error { _, err := a.TestMCPServers(ctx, n, all); return err },
	} {
		var pe *pferr.Error
		if err := call([]string{"only"}, true); !errors.As(err, &pe) || pe.Kind != pferr.Usage {
			t.Errorf("%s with a name and --all: %v", name, err)
		}
		if err := call(nil, false); !errors.As(err, &pe) || pe.Kind != pferr.Usage {
			t.Errorf("%s with neither: %v", name, err)
		}
		err := call([]string{"only", "nope"}, false)
		if !errors.As(err, &pe) || pe.Kind != pferr.NotFound || pe.Message != "Server 'nope' not found" ||
			pe.Hint != "Configured MCP servers: only." || len(pe.Fixes) != 1 {
			t.Errorf("%s with an unknown name: %#v", name, err)
		}
	}
	_, err := a.RemoveMCPServer(ctx, "nope")
	var pe *pferr.Error
	if !errors.As(err, &pe) || pe.Hint != "Configured MCP servers: only." {
		t.Errorf("remove of an unknown name: %#v", err)
	}
}
