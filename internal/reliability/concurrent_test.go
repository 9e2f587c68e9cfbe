package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pflow-go/pflow/internal/home"
	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/settings"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

const writers = 20

// parallel runs n copies of fn at once and waits for all of them.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

const helloWorkflow = `# Hello
Says hello.

## Steps

### greet
Say hello.
- type: shell

` + "```shell command\necho hello\n```\n"

// TestConcurrentWriters runs 20 pflow processes at once for each kind of
// write (mcp add, settings set-env, workflow save, mcp sync) and checks that
// every one of them landed and every file is valid.
func TestConcurrentWriters(t *testing.T) {
	root := t.TempDir()
	p := home.Resolve(root)
	var mu sync.Mutex
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		t.Errorf(format, args...)
	}
	run := func(args ...string) {
		r := pflow(t, root, nil, "", args...)
		if r.Code != 0 {
			fail("pflow %s: exit %d: %s", strings.Join(args, " "), r.Code, r.Stderr)
		}
	}

	t.Run("mcp add", func(t *testing.T) {
		parallel(writers, func(i int) {
			run("mcp", "add", fmt.Sprintf(`{"mcpServers": {"srv-%d": {"command": "true", "args": ["%d"]}}}`, i, i))
		})
		f, err := mcpclient.LoadFile(p.MCPServers)
		if err != nil {
			t.Fatalf("mcp-servers.json after %d concurrent adds: %v", writers, err)
		}
		for i := 0; i < writers; i++ {
			if _, ok := f.Servers[fmt.Sprintf("srv-%d", i)]; !ok {
				t.Errorf("srv-%d was lost (servers: %v)", i, f.Names())
			}
		}
	})

	t.Run("settings set-env", func(t *testing.T) {
		parallel(writers, func(i int) { run("settings", "set-env", fmt.Sprintf("KEY_%d=value-%d", i, i)) })
		st, err := settings.Load(p.Settings, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < writers; i++ {
			if v := st.Env[fmt.Sprintf("KEY_%d", i)]; v != fmt.Sprintf("value-%d", i) {
				t.Errorf("KEY_%d = %q after concurrent set-env", i, v)
			}
		}
		if fi, err := os.Stat(p.Settings); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("settings.json mode: %v %v", fi.Mode(), err)
		}
	})

	t.Run("workflow save", func(t *testing.T) {
		src := writeFile(t, filepath.Join(root, "hello.pflow.md"), helloWorkflow)
		parallel(writers, func(i int) { run("workflow", "save", src, "--name", fmt.Sprintf("hello-%d", i)) })
		// And 20 overwrites of one name at once.
		parallel(writers, func(i int) {
			run("workflow", "save", src, "--name", "shared", "--force", "--description", fmt.Sprintf("writer %d", i))
		})
		lib := &library.Library{Dir: p.Workflows, DraftsDir: p.Drafts}
		names, err := lib.Names()
		if err != nil {
			t.Fatal(err)
		}
		if len(names) != writers+1 {
			t.Errorf("library has %d workflows, want %d: %v", len(names), writers+1, names)
		}
		for _, n := range names {
			if _, err := lib.Load(n); err != nil {
				t.Errorf("saved workflow %s does not load: %v", n, err)
			}
		}
		s, err := lib.Load("shared")
		if err != nil || !strings.HasPrefix(s.Meta.Description, "writer ") {
			t.Errorf("the concurrently overwritten workflow: %v %+v", err, s)
		}
	})

	t.Run("mcp sync", func(t *testing.T) {
		id := fakemcp.NewID()
		t.Cleanup(func() {
			if left := fakemcp.Leftovers(id); len(left) > 0 {
				t.Errorf("fake MCP servers still running after the syncs: %v", left)
			}
		})
		servers := map[string]any{}
		for i := 0; i < writers; i++ {
			servers[fmt.Sprintf("fake-%d", i)] = fakemcp.Entry(id, "", "tools=3")
		}
		cfg, _ := json.Marshal(map[string]any{"mcpServers": servers})
		run("mcp", "add", string(cfg))
		parallel(writers, func(i int) { run("mcp", "sync", fmt.Sprintf("fake-%d", i)) })
		data, err := os.ReadFile(p.Registry)
		if err != nil {
			t.Fatal(err)
		}
		var f registry.File
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("registry.json after %d concurrent syncs is not valid JSON: %v", writers, err)
		}
		for i := 0; i < writers; i++ {
			for j := 1; j <= 3; j++ {
				k := fmt.Sprintf("mcp-fake-%d-tool-%d", i, j)
				if f.Nodes[k] == nil {
					t.Errorf("%s was lost", k)
				}
			}
		}
		// The servers added earlier are all still configured.
		if f, err := mcpclient.LoadFile(p.MCPServers); err != nil || len(f.Servers) != 2*writers {
			t.Errorf("mcp-servers.json: %v, %d servers, want %d", err, len(f.Servers), 2*writers)
		}
	})

	// Every kind at once: adds and syncs race on mcp-servers.json and
	// registry.json, saves and set-envs on their own files.
	t.Run("mixed", func(t *testing.T) {
		src := filepath.Join(root, "hello.pflow.md")
		parallel(writers, func(i int) {
			switch i % 4 {
			case 0:
				run("mcp", "add", fmt.Sprintf(`{"mcpServers": {"mixed-%d": {"command": "true"}}}`, i))
			case 1:
				run("mcp", "sync", fmt.Sprintf("fake-%d", i))
			case 2:
				run("workflow", "save", src, "--name", fmt.Sprintf("mixed-%d", i))
			case 3:
				run("settings", "set-env", fmt.Sprintf("MIXED_%d=v", i))
			}
		})
		f, err := mcpclient.LoadFile(p.MCPServers)
		if err != nil {
			t.Fatal(err)
		}
		st, err := settings.Load(p.Settings, nil)
		if err != nil {
			t.Fatal(err)
		}
		lib := &library.Library{Dir: p.Workflows, DraftsDir: p.Drafts}
		data, err := os.ReadFile(p.Registry)
		var reg registry.File
		if err == nil {
			err = json.Unmarshal(data, &reg)
		}
		if err != nil {
			t.Fatalf("registry.json after the mixed run: %v", err)
		}
		for i := 0; i < writers; i++ {
			switch i % 4 {
			case 0:
				if _, ok := f.Servers[fmt.Sprintf("mixed-%d", i)]; !ok {
					t.Errorf("server mixed-%d was lost", i)
				}
			case 1:
				if reg.Nodes[fmt.Sprintf("mcp-fake-%d-tool-1", i)] == nil {
					t.Errorf("the tools of fake-%d were lost", i)
				}
			case 2:
				if _, err := lib.Load(fmt.Sprintf("mixed-%d", i)); err != nil {
					t.Errorf("workflow mixed-%d: %v", i, err)
				}
			case 3:
				if st.Env[fmt.Sprintf("MIXED_%d", i)] != "v" {
					t.Errorf("setting MIXED_%d was lost", i)
				}
			}
		}
		// Nothing from the earlier rounds was lost either.
		if len(f.Servers) != 2*writers+writers/4 || len(st.Env) != writers+writers/4 {
			t.Errorf("after the mixed round: %d servers (want %d), %d settings (want %d)", len(f.Servers), 2*writers+writers/4, len(st.Env), writers+writers/4)
		}
	})
}
