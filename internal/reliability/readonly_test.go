package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/home"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
	"github.com/pflow-go/pflow/internal/testutil/pflowbin"
)

// nobody is the user the read-only home test runs pflow as when the suite
// runs as root (root ignores directory permissions).
const nobody = 65534

// worldReadable copies the executable at src into a fresh 0755 directory
// (go test builds into 0700 directories that user nobody cannot enter) and
// returns the copy's path.
func worldReadable(t *testing.T, src string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pflow-ro-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(dir, filepath.Base(src))
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestReadOnlyHome: every write pflow makes into a PFLOW_HOME it cannot
// write (settings set-env, workflow save, mcp add, mcp sync, the trace of a
// run) names the directory, says it is not writable, and gives the fix —
// instead of a lock that "may be stuck" or a bare "permission denied". The
// home is a real 0555 directory; as root, pflow runs as user nobody so that
// the permissions apply.
func TestReadOnlyHome(t *testing.T) {
	asRoot := os.Geteuid() == 0
	bin := pflowBin(t)
	fake, err := pflowbin.FakeMCP()
	if err != nil {
		t.Fatal(err)
	}
	if asRoot {
		bin, fake = worldReadable(t, bin), worldReadable(t, fake)
	}
	base, err := os.MkdirTemp("", "pflow-ro-home-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(base, 0o755)
	root := filepath.Join(base, "home")
	p := home.Resolve(root)
	t.Cleanup(func() {
		filepath.WalkDir(base, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(path, 0o755)
			}
			return nil
		})
		os.RemoveAll(base)
	})

	// A home that was used before (a configured server, settings, a saved
	// workflow), then made read-only.
	id := fakemcp.NewID()
	t.Cleanup(func() {
		if left := fakemcp.Leftovers(id); len(left) > 0 {
			t.Errorf("fake MCP servers still running: %v", left)
		}
	})
	entry := fakemcp.Entry(id, "", "tools=2")
	entry["command"] = fake
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fake": entry}})
	writeFile(t, p.MCPServers, string(cfg))
	writeFile(t, p.Settings, `{"env": {}}`)
	wf := writeFile(t, filepath.Join(base, "hello.pflow.md"), helloWorkflow)
	mustPflow(t, root, nil, "workflow", "save", wf, "--name", "old")
	if asRoot {
		// The home is the user's own (pflow refuses another user's home
		// before anything else), only not writable.
		filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil {
				os.Lchown(path, nobody, nobody)
			}
			return nil
		})
	}
	for _, d := range []string{root, p.Workflows} {
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}

	run := func(args ...string) runResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env(root)
		cmd.Dir = base
		if asRoot {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, NoSetGroups: true}}
		}
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("pflow %s: %v", strings.Join(args, " "), err)
		}
		return runResult{so.String(), se.String(), code}
	}
	// The directory that refuses the write (the home or one inside it) and
	// the two ways out.
	wantAll := []string{"the directory " + root, "is not writable", "Fix the permissions of " + root, "PFLOW_HOME"}
	for _, c := range []struct {
		name string
		args []string
		ok   bool     // the command itself succeeds (the write is best effort)
		want []string // in stderr, besides wantAll
	}{
		{"settings set-env", []string{"settings", "set-env", "KEY", "value"}, false, []string{"settings.json"}},
		{"workflow save", []string{"workflow", "save", wf, "--name", "hello"}, false, []string{"hello.pflow.md"}},
		{"workflow save --force", []string{"workflow", "save", wf, "--name", "old", "--force"}, false, []string{"old.pflow.md"}},
		{"mcp add", []string{"mcp", "add", `{"other": {"command": "true"}}`}, false, []string{"mcp-servers.json"}},
		{"mcp sync", []string{"mcp", "sync", "fake"}, false, []string{"registry.json"}},
		{"run (trace)", []string{wf}, true, []string{"could not write the trace"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(c.args...)
			if (r.Code == 0) != c.ok {
				t.Fatalf("exit %d, want success=%v\nstderr: %s", r.Code, c.ok, r.Stderr)
			}
			for _, w := range append(c.want, wantAll...) {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
				}
			}
			for _, bad := range []string{"stuck", "could not lock"} {
				if strings.Contains(r.Stderr, bad) {
					t.Errorf("stderr blames a lock (%q):\n%s", bad, r.Stderr)
				}
			}
		})
	}
}
