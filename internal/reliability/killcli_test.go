package reliability

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/home"
	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/settings"
)

// cliKill is one pflow command whose write is killed: args(n) writes version
// n; state reads the version on disk (failing the test when the file is
// broken).
type cliKill struct {
	name  string
	args  func(root string, n int) []string
	state func(t *testing.T, p home.Paths) int
}

var cliKills = []cliKill{
	{"settings set-env",
		func(root string, n int) []string {
			return []string{"settings", "set-env", fmt.Sprintf("VERSION=%d", n)}
		},
		func(t *testing.T, p home.Paths) int {
			var warn bytes.Buffer
			st, err := settings.Load(p.Settings, &warn)
			if err != nil || warn.Len() > 0 {
				t.Errorf("settings.json after the kill: %v %s", err, warn.String())
				return -1
			}
			var n int
			fmt.Sscan(st.Env["VERSION"], &n)
			return n
		}},
	{"mcp add",
		func(root string, n int) []string {
			return []string{"mcp", "add", fmt.Sprintf(`{"mcpServers": {"v-%d": {"command": "true"}}}`, n)}
		},
		func(t *testing.T, p home.Paths) int {
			f, err := mcpclient.LoadFile(p.MCPServers)
			if err != nil {
				t.Errorf("mcp-servers.json after the kill: %v", err)
				return -1
			}
			for i := 1; i <= len(f.Servers); i++ {
				if _, ok := f.Servers[fmt.Sprintf("v-%d", i)]; !ok {
					t.Errorf("mcp-servers.json has %d servers but v-%d is missing: %v", len(f.Servers), i, f.Names())
				}
			}
			return len(f.Servers)
		}},
	{"workflow save --force",
		func(root string, n int) []string {
			src := filepath.Join(root, fmt.Sprintf("v%d.pflow.md", n))
			return []string{"workflow", "save", src, "--name", "versioned", "--force", "--description", fmt.Sprintf("v%d", n)}
		},
		func(t *testing.T, p home.Paths) int {
			lib := &library.Library{Dir: p.Workflows, DraftsDir: p.Drafts}
			if !lib.Exists("versioned") {
				return 0
			}
			s, err := lib.Load("versioned")
			if err != nil {
				t.Errorf("saved workflow after the kill: %v", err)
				return -1
			}
			var n int
			fmt.Sscanf(s.Meta.Description, "v%d", &n)
			if !strings.Contains(s.Workflow.Source.Title, fmt.Sprintf("v%d", n)) {
				t.Errorf("saved workflow mixes versions: description v%d, title %q", n, s.Workflow.Source.Title)
			}
			return n
		}},
}

// TestKillCLIMidWrite SIGKILLs real pflow processes (settings set-env, mcp
// add, workflow save --force) at random points of their lifetime; after
// each kill the file holds the version before the command or the one it
// was writing.
func TestKillCLIMidWrite(t *testing.T) {
	bin := pflowBin(t)
	for _, k := range cliKills {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			p := home.Resolve(root)
			for n := 1; n <= 400; n++ {
				writeFile(t, filepath.Join(root, fmt.Sprintf("v%d.pflow.md", n)), strings.Replace(helloWorkflow, "# Hello", fmt.Sprintf("# Hello v%d", n), 1))
			}
			// How long one command takes, to spread the kills over its lifetime.
			start := time.Now()
			mustPflow(t, root, nil, k.args(root, 1)...)
			life := time.Since(start)
			cur := k.state(t, p)
			if cur != 1 {
				t.Fatalf("after one uninterrupted write the version is %d, want 1", cur)
			}
			deadline := time.Now().Add(budget(4*time.Second, 60*time.Second))
			kills, landed := 0, 0
			for n := 2; n <= 400 && (kills < 20 || time.Now().Before(deadline)); n++ {
				cmd := exec.Command(bin, k.args(root, n)...)
				cmd.Env = env(root)
				cmd.Dir = root
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(rand.Int64N(int64(life) * 13 / 10)))
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				cmd.Wait()
				kills++
				got := k.state(t, p)
				switch got {
				case cur:
				case n:
					landed++
				default:
					t.Fatalf("kill %d: version on disk is %d; want %d (old) or %d (new)", kills, got, cur, n)
				}
				if k.name == "mcp add" && got == cur {
					// The server list must stay contiguous: redo the lost write.
					mustPflow(t, root, nil, k.args(root, n)...)
					got = n
				}
				cur = got
				if t.Failed() {
					t.FailNow()
				}
			}
			t.Logf("%d kills of a %v command: %d left the new version, %d the old", kills, life.Round(time.Millisecond), landed, kills-landed)
		})
	}
}
