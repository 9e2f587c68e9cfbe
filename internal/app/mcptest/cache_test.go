package mcptest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
	"github.com/pflow-go/pflow/internal/workflow"
)

// addLookupServer configures a fake server with the read-only lookup tool,
// counting its calls in the returned file; trusted sets trust_readonly.
func addLookupServer(t *testing.T, a *app.App, name string, trusted bool) string {
	t.Helper()
	calls := filepath.Join(t.TempDir(), "calls")
	id := fakemcp.NewID()
	entry := fakemcp.Entry(id, "", "lookup", "calls="+calls)
	if trusted {
		entry["trust_readonly"] = true
	}
	b, _ := json.Marshal(map[string]any{name: entry})
	if _, err := a.AddMCPServers(context.Background(), []string{string(b)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(3 * time.Second)
		for len(fakemcp.Leftovers(id)) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	})
	return calls
}

func lookupWorkflow(server string) *workflow.Workflow {
	w := &workflow.Workflow{
		Inputs:  workflow.Inputs{{Name: "key", Type: "string"}},
		Nodes:   []*workflow.Node{{ID: "look", Type: "mcp-" + server + "-lookup", Params: map[string]any{"key": "${key}"}}},
		Outputs: workflow.Outputs{{Name: "value", Source: "${look.result}"}},
	}
	w.Normalize()
	return w
}

func callCount(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "lookup ")
}

// clock is a test clock that ticks a millisecond per reading.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func runLookup(t *testing.T, a *app.App, server, key string, mod func(*app.RunRequest)) *app.RunOutcome {
	t.Helper()
	req := app.RunRequest{Target: &app.Target{Workflow: lookupWorkflow(server), Name: "lookup"}, Params: map[string]any{"key": key}, NoTrace: true}
	if mod != nil {
		mod(&req)
	}
	out, err := a.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if out.Result == nil || !out.Result.Success() || out.Result.Outputs["value"] != "value of "+key {
		t.Fatalf("run: %+v %+v", out.ValidationErrors, out.Result)
	}
	return out
}

// A read-only tool of a trusted server is called once for two identical
// runs, again when its input changes or its entry expires; the run record
// and the step mark the cache hit.
func TestStepCacheTrustedReadOnlyTool(t *testing.T) {
	a, _ := newApp(t)
	clk := &clock{t: time.Now()}
	a.Now = clk.now
	calls := addLookupServer(t, a, "kb", true)

	runLookup(t, a, "kb", "alpha", nil)
	second := runLookup(t, a, "kb", "alpha", nil)
	if n := callCount(t, calls); n != 1 {
		t.Fatalf("two identical runs called the tool %d times, want 1", n)
	}
	if s := second.Result.Steps[0]; s.Source != runtime.SourceCache {
		t.Fatalf("the second run's step source is %q, want cache", s.Source)
	}
	if list, _ := a.ListRuns(1); list[0].Cached != 1 || list[0].Ran != 0 {
		t.Fatalf("the run record must count the cache hit: %+v", list[0])
	}
	d, err := a.ShowRun(second.RunID)
	if err != nil || len(d.Steps) != 1 || d.Steps[0].Source != runtime.SourceCache {
		t.Fatalf("the record's step must be marked as a cache hit: %+v %v", d, err)
	}
	entries, _ := a.CacheList()
	if len(entries) != 1 || entries[0].NodeType != "mcp-kb-lookup" || entries[0].Step != "look" {
		t.Fatalf("cache entries %+v", entries)
	}

	runLookup(t, a, "kb", "beta", nil)
	if n := callCount(t, calls); n != 2 {
		t.Fatalf("a changed input must call the tool again: %d calls", n)
	}
	clk.advance(runsTTL + time.Minute) // the alpha entry expires
	runLookup(t, a, "kb", "alpha", nil)
	if n := callCount(t, calls); n != 3 {
		t.Fatalf("an expired entry must call the tool again: %d calls", n)
	}
	runLookup(t, a, "kb", "alpha", func(r *app.RunRequest) { r.NoCache = true })
	if n := callCount(t, calls); n != 4 {
		t.Fatalf("--no-cache must call the tool: %d calls", n)
	}
	if n, err := a.CacheClear(false); err != nil || n == 0 {
		t.Fatalf("clear: %d %v", n, err)
	}
	runLookup(t, a, "kb", "alpha", nil)
	if n := callCount(t, calls); n != 5 {
		t.Fatalf("a cleared cache must call the tool: %d calls", n)
	}
}

// runsTTL is the default lifetime of a cache entry of a read-only tool.
const runsTTL = time.Hour

// An untrusted server's tools are never cached, whatever they declare —
// unless the run passes --trust-readonly.
func TestStepCacheUntrustedServerNeverCached(t *testing.T) {
	a, _ := newApp(t)
	calls := addLookupServer(t, a, "web", false)
	for i := 0; i < 3; i++ {
		out := runLookup(t, a, "web", "alpha", nil)
		if out.Result.Steps[0].Source != "" {
			t.Fatalf("run %d: source %q", i, out.Result.Steps[0].Source)
		}
	}
	if n := callCount(t, calls); n != 3 {
		t.Fatalf("an untrusted server's read-only tool was called %d times for 3 runs, want 3", n)
	}
	if entries, _ := a.CacheList(); len(entries) != 0 {
		t.Fatalf("nothing may be cached: %+v", entries)
	}
	trust := func(r *app.RunRequest) { r.TrustReadOnly = true }
	runLookup(t, a, "web", "alpha", trust)
	runLookup(t, a, "web", "alpha", trust)
	if n := callCount(t, calls); n != 4 {
		t.Fatalf("with --trust-readonly two identical runs must call the tool once: %d calls in all, want 4", n)
	}
}

// --trust-readonly is one run's: in a process that keeps its catalog while
// the files are unchanged (pflow mcp serve), the next run without it does
// not inherit it (its call is neither served from the cache nor cached).
func TestTrustIsOneRunsOnly(t *testing.T) {
	a, _ := newApp(t)
	calls := addLookupServer(t, a, "web", false)
	runLookup(t, a, "web", "warm", nil)
	time.Sleep(1100 * time.Millisecond) // the files' versions are kept once a second old (fsutil.Memo)
	trust := func(r *app.RunRequest) { r.TrustReadOnly = true }
	runLookup(t, a, "web", "alpha", trust)
	runLookup(t, a, "web", "alpha", trust)
	if n := callCount(t, calls); n != 2 {
		t.Fatalf("with --trust-readonly: %d calls in all, want 2", n)
	}
	if out := runLookup(t, a, "web", "alpha", nil); out.Result.Steps[0].Source != "" {
		t.Fatalf("a run without --trust-readonly was served from the cache (source %q)", out.Result.Steps[0].Source)
	}
	if n := callCount(t, calls); n != 3 {
		t.Fatalf("a run without --trust-readonly did not call the tool: %d calls in all, want 3", n)
	}
}

// The step cache is keyed by who is asking: a server whose config differs
// only in its token (alice's, then bob's) never serves the entries made
// with the other's, and serves each its own again.
func TestStepCacheKeyedByServerCredentials(t *testing.T) {
	a, _ := newApp(t)
	calls := addLookupServer(t, a, "kb", true) // its env says TOKEN: ${TOKEN}
	base := a.Environ
	as := func(token string) { a.Environ = append(append([]string(nil), base...), "TOKEN="+token) }

	as("alice-token-1234")
	runLookup(t, a, "kb", "alpha", nil)
	as("bob-token-5678")
	second := runLookup(t, a, "kb", "alpha", nil)
	if n := callCount(t, calls); n != 2 {
		t.Fatalf("the tool was called %d times for two users, want 2: bob was served alice's entry", n)
	}
	if s := second.Result.Steps[0]; s.Source == runtime.SourceCache {
		t.Fatalf("bob's run was served from the cache")
	}
	as("alice-token-1234")
	third := runLookup(t, a, "kb", "alpha", nil)
	if n := callCount(t, calls); n != 2 || third.Result.Steps[0].Source != runtime.SourceCache {
		t.Fatalf("alice again: %d calls, source %q; want her own entry from the cache", n, third.Result.Steps[0].Source)
	}
}
