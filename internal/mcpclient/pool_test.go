package mcpclient

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/proc"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// A pooled server that crashed between two runs is replaced by the next
// Acquire even when pflow has not reaped it yet. Its exit is visible to
// everyone else at once (it is a zombie, then gone), but the pool learned of
// it only when cmd.Wait returned, which can be much later: under load, or up
// to WaitDelay later when a grandchild holds the server's stderr. In that
// window Acquire handed out the dead session and the run failed with "MCP
// server process terminated unexpectedly" where a restart is promised. The
// test makes that window last: the reaper is held until the end.
func TestPoolReplacesACrashedServerBeforeItIsReaped(t *testing.T) {
	hold := make(chan struct{})
	reap = func(c *exec.Cmd) error { <-hold; return c.Wait() }
	id := fakemcp.NewID()
	srv, err := Resolve("fake", fakemcp.Entry(id, "", "counter"), os.LookupEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := NewPool(time.Hour, nil)
	defer func() {
		close(hold)
		pool.Close()
		reap = (*exec.Cmd).Wait
		if left := fakemcp.Leftovers(id); len(left) > 0 {
			t.Errorf("processes left running: %v", left)
		}
	}()
	ctx := context.Background()

	s1, release, err := pool.Acquire(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	if c, pid := count(t, s1); c != 1 || pid != s1.Pid() {
		t.Fatalf("first call: count %d from pid %d (server pid %d)", c, pid, s1.Pid())
	}
	release()

	pid1 := s1.Pid()
	if err := syscall.Kill(pid1, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitZombie(t, pid1)

	s2, release, err := pool.Acquire(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if s2 == s1 {
		t.Fatal("Acquire returned the session of the crashed server")
	}
	if c, pid := count(t, s2); c != 1 || pid == pid1 {
		t.Fatalf("after the crash: count %d from pid %d; want 1 from a new process (the old was %d)", c, pid, pid1)
	}
}

// count calls the fake server's count tool and returns the count and the
// server's pid.
func count(t *testing.T, s *Session) (n, pid int) {
	t.Helper()
	res, err := s.CallTool(context.Background(), "count", nil, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ Count, Pid int }
	text := res.Content[0].(*mcp.TextContent).Text
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("count result %q: %v", text, err)
	}
	return r.Count, r.Pid
}

// waitZombie waits until pid has exited (the kernel reports it waitable:
// every thread is gone, which a multi-threaded server's are shortly after
// its main thread shows state Z) and is not reaped, which it stays while
// the reaper is held. The bound only ends a test that would otherwise hang.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !proc.Exited(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not exit after SIGKILL", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
		t.Fatalf("pid %d: %v (reaped although the reaper is held?)", pid, err)
	}
}
