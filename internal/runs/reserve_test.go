package runs

import (
	"context"
	"os"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/workflow"
)

// A run made with a reservation is recorded in the reserved directory,
// under the reserved id, exactly as one made without; releasing it after
// changes nothing.
func TestReservedRun(t *testing.T) {
	s := Open(t.TempDir())
	res := s.Reserve()
	r, err := s.Create(Options{Meta: Meta{Workflow: Workflow{Name: "wf", Kind: KindFile}}, Key: testKey,
		IR: []byte(`{"name":"wf"}`), Source: []byte("# wf\n"), Reserved: res})
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != res.ID || !r.Meta.Started.Equal(res.Started) {
		t.Fatalf("run %s started %v, reserved %s at %v", r.ID, r.Meta.Started, res.ID, res.Started)
	}
	runOneStep(t, s, r, "OUT")
	res.Release()
	checkRun(t, s, r.ID, "wf", "OUT", []byte("# wf\n"))
	if _, err := os.Stat(s.spare(1)); !os.IsNotExist(err) {
		t.Fatal("releasing a taken reservation made a spare")
	}
}

// A reservation no run took becomes a spare, its files empty, never a
// listed run; a run prepared after the release makes its own directory and
// the next one claims the spare.
func TestReleasedReservationIsASpare(t *testing.T) {
	s := Open(t.TempDir())
	res := s.Reserve()
	res.Release()
	res.Release() // twice is fine
	if list, _ := s.List(0); len(list) != 0 {
		t.Fatalf("a released reservation is listed: %+v", list)
	}
	spare := inode(t, s.spare(1))
	if all := readAll(t, s.spare(1)); all != "" {
		t.Fatalf("the spare's files are not empty: %q", all)
	}
	r, err := s.Create(Options{Key: testKey, Reserved: res}) // released: not taken
	if err != nil {
		t.Fatal(err)
	}
	if r.ID == res.ID {
		t.Fatal("a run took a released reservation")
	}
	if err := r.Close(&runtime.Result{Status: runtime.RunSuccess}, ""); err != nil {
		t.Fatal(err)
	}
	if inode(t, s.dir(r.ID)) != spare {
		t.Fatal("the run did not claim the released reservation's directory")
	}
	if list, _ := s.List(0); len(list) != 1 || list[0].ID != r.ID {
		t.Fatalf("runs: %+v", list)
	}
}

// runOneStep records one shell step of r that outputs marker, checking its
// start is on disk when it starts, and closes r as a success.
func runOneStep(t *testing.T, s *Store, r *Run, marker string) {
	t.Helper()
	n := &workflow.Node{ID: "a", Type: "shell", Params: map[string]any{"command": "echo"}}
	rec := stepRecord(n, -1, node.Effects{}, map[string]any{"command": "echo"})
	if _, err := r.Begin(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if log, _ := s.Events(r.ID); len(log.InFlight()) != 1 {
		t.Fatal("the start of a step with side effects is not on disk when it starts")
	}
	finish(rec, map[string]any{"stdout": marker})
	r.End(rec)
	if err := r.Close(&runtime.Result{Status: runtime.RunSuccess}, ""); err != nil {
		t.Fatal(err)
	}
}
