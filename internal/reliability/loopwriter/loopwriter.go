// Package loopwriter is the writer of the kill-mid-write tests
// (internal/reliability): run as loopwriterd, it writes one pflow file over
// and over through the same code the CLI uses, each write a complete new
// version numbered one past the file's current one, until it is killed.
// Each version is large (PadPerWrite bytes) so that a write takes long
// enough for kills to land inside it. It prints "ready" before its first
// write and "wrote" after each, so the test can time its kills.
package loopwriter

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/settings"
)

// PadPerWrite is the size of a version's filler.
const PadPerWrite = 256 << 10

// Pad is version n's filler: the digit n%10 repeated, so a reader can tell
// whether the filler belongs to the version number next to it.
func Pad(n int) string { return strings.Repeat(strconv.Itoa(n%10), PadPerWrite) }

// Files that grow by one entry per write get smaller entries.
const (
	ServerPad   = 16 << 10
	RegistryPad = 8 << 10
	WorkflowPad = 64 << 10
)

// WFName is the saved workflow the "workflow" writer rewrites.
const WFName = "crash-test"

// Run writes the file of kind (settings, mcp-servers, registry or workflow)
// under the PFLOW_HOME of the environment until the process is killed; it
// returns only on an error, with the exit status.
func Run(kind string) int {
	a := app.New(os.Environ(), io.Discard)
	ctx := context.Background()
	var err error
	switch kind {
	case "settings":
		err = writeSettingsLoop(ctx, a)
	case "mcp-servers":
		err = writeServersLoop(ctx, a)
	case "registry":
		err = writeRegistryLoop(ctx, a)
	case "workflow":
		err = writeWorkflowLoop(ctx, a)
	default:
		err = fmt.Errorf("unknown writer %q", kind)
	}
	fmt.Fprintf(os.Stderr, "writer %s: %v\n", kind, err)
	return 3
}

// ready tells the parent the writer is about to start its write loop;
// wrote, that one more write finished (the parent times its kills by them).
func ready() { fmt.Fprintln(os.Stdout, "ready") }
func wrote() { fmt.Fprintln(os.Stdout, "wrote") }

func writeSettingsLoop(ctx context.Context, a *app.App) error {
	st, err := settings.Load(a.Paths.Settings, io.Discard)
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(st.Env["COUNTER"])
	ready()
	for n++; ; n++ {
		err := settings.Update(ctx, a.Paths.Settings, func(s *settings.Settings) error {
			if s.Env == nil {
				s.Env = map[string]string{}
			}
			s.Env["COUNTER"] = strconv.Itoa(n)
			s.Env["PAD"] = Pad(n)
			return nil
		})
		if err != nil {
			return err
		}
		wrote()
	}
}

// ServerName is the i-th server the mcp-servers writer adds (s-0, s-1, ...).
func ServerName(i int) string { return "s-" + strconv.Itoa(i) }

func writeServersLoop(ctx context.Context, a *app.App) error {
	f, err := mcpclient.LoadFile(a.Paths.MCPServers)
	if err != nil {
		return err
	}
	n := len(f.Servers)
	ready()
	for ; ; n++ {
		cfg := map[string]any{"mcpServers": map[string]any{ServerName(n): map[string]any{
			"command": "true", "args": []any{Pad(n)[:ServerPad]},
		}}}
		src, _ := json.Marshal(cfg)
		if _, err := a.AddMCPServers(ctx, []string{string(src)}); err != nil {
			return err
		}
		wrote()
	}
}

// ToolType is the i-th node the registry writer registers.
func ToolType(i int) string { return "mcp-crash-tool-" + strconv.Itoa(i) }

func writeRegistryLoop(ctx context.Context, a *app.App) error {
	store := a.RegistryStore()
	f, err := store.Load()
	if err != nil {
		return err
	}
	n := len(f.Nodes)
	ready()
	for ; ; n++ {
		i := n
		err := store.Update(ctx, func(f *registry.File) error {
			f.Nodes[ToolType(i)] = &registry.Entry{
				ClassName: "MCPNode", FilePath: "virtual://mcp", Type: registry.TypeMCP, Kind: "mcp",
				Interface: node.Interface{Description: Pad(i)[:RegistryPad], Actions: []string{"default", "error"}},
				MCP:       &registry.MCPInfo{Server: "crash", Tool: "tool-" + strconv.Itoa(i)},
			}
			return nil
		})
		if err != nil {
			return err
		}
		wrote()
	}
}

// WorkflowVersion is the content the workflow writer saves as version n.
func WorkflowVersion(n int) []byte {
	return []byte(fmt.Sprintf(`# Crash test v%d
Saved again and again while being killed.

## Steps

### say
Print the version.
- type: shell

`+"```shell command\necho v%d # %s\n```\n", n, n, Pad(n)[:WorkflowPad]))
}

func writeWorkflowLoop(ctx context.Context, a *app.App) error {
	lib := a.Library()
	n := 0
	if s, err := lib.Load(WFName); err == nil {
		n, _ = strconv.Atoi(strings.TrimPrefix(s.Meta.Description, "v"))
	}
	ready()
	for n++; ; n++ {
		if _, err := lib.Save(ctx, WorkflowVersion(n), WFName, library.SaveOptions{Force: true, Description: "v" + strconv.Itoa(n)}); err != nil {
			return err
		}
		wrote()
		// A recorded run rewrites the same file (metadata only).
		if err := lib.RecordRun(ctx, WFName, true, time.Millisecond, map[string]any{"n": n}, nil); err != nil {
			return err
		}
		wrote()
	}
}
