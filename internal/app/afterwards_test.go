package app

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/pflow-go/pflow/internal/runs"
)

// Work queued after a run is done in order, and Settle returns only when
// all of it is.
func TestAfterwardsRunsInOrderAndSettles(t *testing.T) {
	w := NewAfterwards()
	var got []int
	release := make(chan struct{})
	w.Do(func() { <-release; got = append(got, 1) })
	for i := 2; i <= 50; i++ {
		w.Do(func() { got = append(got, i) })
	}
	close(release)
	w.Settle()
	if len(got) != 50 {
		t.Fatalf("ran %d of 50", len(got))
	}
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("out of order: %v", got)
		}
	}
	w.Settle() // nothing queued: returns at once
}

// In a long-lived process a run answers with its trace's path before the
// trace is written; the trace is there once the work has settled, and the
// readers of traces settle first.
func TestTraceIsWrittenAfterTheAnswer(t *testing.T) {
	home := t.TempDir()
	a := New([]string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH")}, nil)
	a.Afterwards = NewAfterwards()
	wf := filepath.Join(t.TempDir(), "t.pflow.md")
	os.WriteFile(wf, []byte("# T\nA test.\n\n## Steps\n\n### a\nEcho.\n- type: shell\n- command: echo hi\n"), 0o644)
	target, err := a.ResolveTarget(wf)
	if err != nil {
		t.Fatal(err)
	}
	var held atomic.Bool
	gate := make(chan struct{})
	a.Afterwards.Do(func() { held.Store(true); <-gate }) // the queue is busy: the trace waits
	out, err := a.Run(context.Background(), RunRequest{Target: target})
	if err != nil || !out.Result.Success() || out.TracePath == "" {
		t.Fatalf("%v %+v", err, out)
	}
	if _, err := os.Stat(out.TracePath); err == nil {
		t.Fatal("the trace was written before the run answered")
	}
	close(gate)
	path, doc, err := a.ReadTraceFile("latest") // settles first
	if err != nil || path != out.TracePath || doc == nil {
		t.Fatalf("trace_read latest: %v %s (want %s)", err, path, out.TracePath)
	}
}

// A long-lived process prunes its traces after every traceSlack-th run:
// never more than that many traces over the retention count, and back to
// it at each prune; so are run records (runSlack), and the next run's
// directory is ready after each run (runs.Standby).
func TestLongLivedPruning(t *testing.T) {
	home := t.TempDir()
	a := New([]string{"PFLOW_HOME=" + home, "PATH=" + os.Getenv("PATH")}, nil)
	a.Afterwards = NewAfterwards()
	a.RunStandby = &runs.Standby{}
	defer a.RunStandby.Close()
	keep := 40
	if _, err := a.SetRetention(context.Background(), &keep, nil); err != nil {
		t.Fatal(err)
	}
	slack := traceSlack(keep)
	if slack != 2 || runSlack(keep) != 2 || runSlack(1000) != runs.SpareSlots {
		t.Fatalf("slack for %d = %d (runs %d), want 2", keep, slack, runSlack(keep))
	}
	wf := filepath.Join(t.TempDir(), "t.pflow.md")
	os.WriteFile(wf, []byte("# T\nA test.\n\n## Steps\n\n### a\nEcho.\n- type: echo\n- message: hi\n"), 0o644)
	target, err := a.ResolveTarget(wf)
	if err != nil {
		t.Fatal(err)
	}
	count := func(dir, prefix string) int {
		ents, _ := os.ReadDir(dir)
		n := 0
		for _, e := range ents {
			if len(e.Name()) > len(prefix) && e.Name()[:len(prefix)] == prefix {
				n++
			}
		}
		return n
	}
	pruned, runsPruned := false, false
	for i := 1; i <= keep+6; i++ {
		out, err := a.Run(context.Background(), RunRequest{Target: target})
		if err != nil || !out.Result.Success() || out.RunID == "" {
			t.Fatalf("run %d: %v", i, err)
		}
		a.Afterwards.Settle()
		// The record's end is written after the answer, naming the trace.
		if st := a.RunStore().Status(out.RunID); st == nil || st.Status != "success" || st.TracePath != out.TracePath {
			t.Fatalf("run %d: status %+v, trace %s", i, st, out.TracePath)
		}
		traces := count(a.Paths.Debug, "workflow-trace-")
		if traces > keep+slack-1 || traces > i {
			t.Fatalf("after run %d: %d traces, keep %d, slack %d", i, traces, keep, slack)
		}
		pruned = pruned || (i > keep && traces == keep)
		list, _ := a.ListRuns(0)
		if n := len(list); n > keep+slack-1 || n > i {
			t.Fatalf("after run %d: %d run records, keep %d, slack %d", i, n, keep, slack)
		}
		runsPruned = runsPruned || (i > keep && len(list) == keep)
		if n := count(a.Paths.Runs, ".standby-"); n != 1 {
			t.Fatalf("after run %d: %d standby run directories, want 1", i, n)
		}
	}
	if !pruned || !runsPruned {
		t.Fatalf("never pruned back to the retention count: traces %v, runs %v", pruned, runsPruned)
	}
}
