package cli

import (
	"bytes"
	"context"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/gctune"
)

// pflow mcp serve runs the garbage collector at gctune.LongLivedPercent
// (a user's GOGC wins): its small heap is otherwise collected every few
// requests, in the middle of the next one's MCP calls.
func TestMCPServeSetsTheLongLivedGCPace(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	for _, c := range []struct {
		env  []string
		want int
	}{{nil, gctune.LongLivedPercent}, {[]string{"GOGC=100"}, 100}} {
		debug.SetGCPercent(100)
		var out, errb bytes.Buffer
		ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb} // EOF: the server ends
		env := append([]string{"PFLOW_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, c.env...)
		if code := Main(context.Background(), []string{"mcp", "serve"}, ios, env); code != 0 {
			t.Fatalf("mcp serve %v: exit %d: %s", c.env, code, errb.String())
		}
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("mcp serve %v: GC percent %d, want %d", c.env, got, c.want)
		}
	}
}
