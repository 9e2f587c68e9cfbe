package runtime

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/workflow"
)

// recordingScheduler is a Scheduler that counts what the engine asks of it
// (a durable engine's coroutines and timers stand behind the same calls).
type recordingScheduler struct {
	mu       sync.Mutex
	parallel []int
	sleeps   []time.Duration
}

func (s *recordingScheduler) Parallel(ctx context.Context, n int, fn func(ctx context.Context)) {
	s.mu.Lock()
	s.parallel = append(s.parallel, n)
	s.mu.Unlock()
	goScheduler{}.Parallel(ctx, n, fn)
}

func (s *recordingScheduler) Sleep(ctx context.Context, d time.Duration) bool {
	s.mu.Lock()
	s.sleeps = append(s.sleeps, d)
	s.mu.Unlock()
	return ctx.Err() == nil // no real pause
}

// TestSchedulerRunsParallelBatchesAndRetryPauses: a durable engine replaces
// the goroutines of parallel batch items and the timers between retries;
// the engine must use it for both, and never its own.
func TestSchedulerRunsParallelBatchesAndRetryPauses(t *testing.T) {
	sched := &recordingScheduler{}
	items := []any{int64(1), int64(2), int64(3), int64(4), int64(5)}
	n := step("each", "echo", map[string]any{"value": "${item}"})
	n.Batch = &workflow.Batch{Items: "${list}", Parallel: true, MaxConcurrent: 3}
	retry := step("f", "flaky", map[string]any{"succeed_on": int64(3), "retry_wait": "7s"})
	var calls atomic.Int64
	res := Run(context.Background(), chain(n, retry), map[string]any{"list": items}, Options{Catalog: testCatalog(&calls), Scheduler: sched})
	if !res.Success() {
		t.Fatalf("%+v", res.Failure)
	}
	if len(sched.parallel) != 1 || sched.parallel[0] != 3 {
		t.Errorf("Parallel calls = %v, want one with 3 workers (max_concurrent)", sched.parallel)
	}
	if len(sched.sleeps) != 2 || sched.sleeps[0] != 7*time.Second || sched.sleeps[1] != 7*time.Second {
		t.Errorf("Sleep calls = %v, want two pauses of 7s between three attempts", sched.sleeps)
	}
	if got := res.Shared["each"].(map[string]any)["success_count"]; got != int64(5) {
		t.Errorf("success_count = %v", got)
	}
}

// TestParseFileReadsNestedWorkflowRefs: nested workflow_ref paths are read
// through Options.ParseFile (a durable engine serves them from the bundle
// sent with the run).
func TestParseFileReadsNestedWorkflowRefs(t *testing.T) {
	child := chain(step("inner", "echo", map[string]any{"value": "from the bundle"}))
	child.Outputs = workflow.Outputs{{Name: "said", Source: "${inner.out}"}}
	var asked []string
	parent := chain(step("sub", "workflow", map[string]any{"workflow_ref": "/nowhere/child.pflow.md"}))
	res := Run(context.Background(), parent, nil, Options{Catalog: testCatalog(nil), ParseFile: func(path string) (*workflow.Workflow, error) {
		asked = append(asked, path)
		return child, nil
	}})
	if !res.Success() {
		t.Fatalf("%+v", res.Failure)
	}
	if len(asked) != 1 || asked[0] != "/nowhere/child.pflow.md" {
		t.Errorf("ParseFile asked for %v", asked)
	}
	if got := res.Shared["sub"].(map[string]any)["said"]; got != "from the bundle" {
		t.Errorf("nested output = %v", got)
	}
}
