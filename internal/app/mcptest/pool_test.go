package mcptest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/proc"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// countWorkflow calls the counter server's count tool once.
const countWorkflow = "# Count\nCalls the counter.\n\n## Steps\n\n### c\nCount.\n- type: mcp-fake-count\n\n## Outputs\n\n### out\nThe count.\n- source: ${c.result}\n"

// runCount runs countWorkflow on a and returns the count and the server's pid.
func runCount(t *testing.T, a *app.App) (count, pid int) {
	t.Helper()
	wf := filepath.Join(t.TempDir(), "count.pflow.md")
	os.WriteFile(wf, []byte(countWorkflow), 0o644)
	target, err := a.ResolveTarget(wf)
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Run(context.Background(), app.RunRequest{Target: target, NoTrace: true, NoRecord: true})
	if err != nil || out.Result == nil || !out.Result.Success() {
		t.Fatalf("run: %v %+v %+v", err, out.ValidationErrors, out.Result)
	}
	var r struct{ Count, Pid int }
	b, _ := json.Marshal(out.Result.Outputs["out"])
	if err := json.Unmarshal(b, &r); err != nil || r.Pid == 0 {
		t.Fatalf("count result %s: %v", b, err)
	}
	return r.Count, r.Pid
}

// pooledApp is an app whose runs share warm MCP sessions, as pflow mcp
// serve's do, with a fake counter server synced as "fake".
func pooledApp(t *testing.T, idle time.Duration, modes ...string) (*app.App, string) {
	t.Helper()
	a, log := newApp(t)
	id := addFake(t, a, "fake", append([]string{"counter"}, modes...)...)
	if _, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil); err != nil {
		t.Fatal(err)
	}
	a.MCPPool = mcpclient.NewPool(idle, log)
	t.Cleanup(a.MCPPool.Close) // before addFake's leftover check
	return a, id
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	// A zombie is gone for our purposes.
	st, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "stat"))
	return err == nil && !containsState(string(st), 'Z')
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func containsState(stat string, s byte) bool {
	// The state follows the ")" that ends the command name.
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' {
			return i+2 < len(stat) && stat[i+2] == s
		}
	}
	return false
}

// waitFor waits for cond, polling: the event it waits for (a process
// exiting) has no notification to wait on. The bound only ends a test that
// would otherwise hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A stateful server keeps its state across runs in a long-lived process
// (see docs/decisions.md, "Warm sessions in long-lived processes"): the second
// run talks to the same process.
func TestPooledServerKeepsStateAcrossRuns(t *testing.T) {
	a, _ := pooledApp(t, time.Hour)
	c1, p1 := runCount(t, a)
	c2, p2 := runCount(t, a)
	if c1 != 1 || c2 != 2 || p1 != p2 {
		t.Fatalf("runs got count %d (pid %d) then %d (pid %d); want 1 then 2 from one process", c1, p1, c2, p2)
	}
	if !alive(p1) {
		t.Fatal("the pooled server stopped when the run ended")
	}
	a.MCPPool.Close()
	waitFor(t, "the server to stop with the pool", func() bool { return !alive(p1) })
}

// Without a pool (the one-shot CLI) or with "keep_alive": false, every run
// starts its own server and stops it.
func TestKeepAliveFalseStartsAFreshServerPerRun(t *testing.T) {
	a, _ := newApp(t)
	id := fakemcp.NewID()
	entry := fakemcp.Entry(id, "", "counter")
	entry["keep_alive"] = false
	b, _ := json.Marshal(map[string]any{"fake": entry})
	if _, err := a.AddMCPServers(context.Background(), []string{string(b)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SyncMCP(context.Background(), []string{"fake"}, false, nil); err != nil {
		t.Fatal(err)
	}
	a.MCPPool = mcpclient.NewPool(time.Hour, nil)
	defer a.MCPPool.Close()
	c1, p1 := runCount(t, a)
	c2, p2 := runCount(t, a)
	if c1 != 1 || c2 != 1 || p1 == p2 {
		t.Fatalf("keep_alive false: counts %d, %d from pids %d, %d; want 1 and 1 from two processes", c1, c2, p1, p2)
	}
	if alive(p1) || alive(p2) {
		t.Fatal("a keep_alive: false server outlived its run")
	}
}

// A pooled server that died between runs is replaced without the run
// noticing; a changed config restarts it.
func TestPooledServerRestartsAfterACrashOrAConfigChange(t *testing.T) {
	a, _ := pooledApp(t, time.Hour)
	_, p1 := runCount(t, a)
	syscall.Kill(p1, syscall.SIGKILL)
	// Exited, not merely a zombie: a multi-threaded server's main thread
	// shows state Z while its other threads are still being torn down, and
	// until they are the process has not exited (the pool would rightly keep
	// it). Whether pflow has reaped it yet does not matter.
	waitFor(t, "the killed server to exit", func() bool { return proc.Exited(p1) })
	c2, p2 := runCount(t, a)
	if c2 != 1 || p2 == p1 {
		t.Fatalf("after a crash: count %d from pid %d; want 1 from a new process", c2, p2)
	}
	// The same server, another config (an extra variable): a new process.
	f, err := mcpclient.LoadFile(a.Paths.MCPServers)
	if err != nil {
		t.Fatal(err)
	}
	entry := f.Servers["fake"]
	entry["env"].(map[string]any)["EXTRA"] = "changed"
	b, _ := json.Marshal(map[string]any{"fake": entry})
	if _, err := a.AddMCPServers(context.Background(), []string{string(b)}); err != nil {
		t.Fatal(err)
	}
	c3, p3 := runCount(t, a)
	if c3 != 1 || p3 == p2 {
		t.Fatalf("after a config change: count %d from pid %d; want 1 from a new process", c3, p3)
	}
	waitFor(t, "the server of the old config to stop", func() bool { return !alive(p2) })
}

// An unused pooled server stops after the idle timeout.
func TestPooledServerStopsWhenIdle(t *testing.T) {
	a, _ := pooledApp(t, 200*time.Millisecond)
	_, pid := runCount(t, a)
	waitFor(t, "the idle server to stop", func() bool { return !alive(pid) })
	if s := a.MCPPool.Servers(); len(s) != 0 {
		t.Fatalf("the pool still holds %v", s)
	}
	// The next run starts it again.
	if c, p := runCount(t, a); c != 1 || p == pid {
		t.Fatalf("after idling: count %d from pid %d", c, p)
	}
}

// A run reads the registry; it never rewrites it. (It did, on every run of
// a home with a registry cache: the cache lost the params' sink, so the
// core entries always looked stale and registry.json was rewritten, with a
// backup and an fsync, before each run.)
func TestRunsDoNotRewriteTheRegistry(t *testing.T) {
	a, _ := pooledApp(t, time.Hour)
	runCount(t, a)
	ino := func() uint64 {
		st, err := os.Stat(a.Paths.Registry)
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Ino
	}
	before := ino()
	runCount(t, a)
	runCount(t, a)
	if ino() != before {
		t.Fatal("a run replaced registry.json")
	}
}
