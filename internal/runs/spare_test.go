package runs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil/fsutiltest"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/workflow"
)

// recordRun records a run of one step whose output is marker.
func recordRun(t *testing.T, s *Store, name, marker string, source []byte) string {
	t.Helper()
	r, err := s.Create(Options{Meta: Meta{Workflow: Workflow{Name: name, Kind: KindFile}}, Key: testKey,
		IR: []byte(`{"name":"` + name + `"}`), Source: source})
	if err != nil {
		t.Fatal(err)
	}
	n := &workflow.Node{ID: "a", Type: "shell", Params: map[string]any{"command": "echo"}}
	rec := stepRecord(n, -1, node.Effects{}, map[string]any{"command": "echo"})
	if _, err := r.Begin(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	finish(rec, map[string]any{"stdout": marker})
	r.End(rec)
	if err := r.Close(&runtime.Result{Status: runtime.RunSuccess}, ""); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

func inode(t *testing.T, path string) uint64 { return fsutiltest.Inode(t, path) }

// readAll returns every byte under dir.
func readAll(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			b.Write(data)
		}
		return nil
	})
	return b.String()
}

// checkRun checks that run id reads back as recorded: its workflow, its
// one step's output, its status, and nothing of another run.
func checkRun(t *testing.T, s *Store, id, name, marker string, source []byte) {
	t.Helper()
	m, err := s.Meta(id)
	if err != nil || m.Workflow.Name != name || m.ID != id {
		t.Fatalf("run.json of %s: %+v %v", id, m, err)
	}
	if st := s.Status(id); st == nil || st.Status != runtime.RunSuccess {
		t.Fatalf("status of %s: %+v", id, st)
	}
	log, err := s.Events(id)
	if err != nil || log.Skipped != 0 {
		t.Fatalf("events of %s: %v, %d lines skipped", id, err, log.Skipped)
	}
	ev := log.end(stepKey{path: "a", occ: 1, item: -1})
	if ev == nil || ev.Outputs()["stdout"] != marker {
		t.Fatalf("the step of %s: %+v", id, ev)
	}
	ir, src := s.Workflow(id)
	if string(ir) != `{"name":"`+name+`"}` || string(src) != string(source) {
		t.Fatalf("workflow of %s: %q %q", id, ir, src)
	}
	if _, err := os.Stat(filepath.Join(s.dir(id), sourceFile)); (err == nil) != (len(source) > 0) {
		t.Fatalf("%s: workflow.pflow.md present = %v, the run had text = %v", id, err == nil, len(source) > 0)
	}
	ents, _ := os.ReadDir(s.dir(id))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Fatalf("%s: temp file %s left", id, e.Name())
		}
	}
}

// Retention turns the directories of the runs it removes into spares
// (their data gone, as if deleted; never listed as runs), and the next runs
// are recorded in them — the same directory, no file made — reading back
// exactly as a record made from scratch.
func TestRetentionRecyclesRunDirectories(t *testing.T) {
	s := Open(t.TempDir())
	s.Now = func() time.Time { return time.Now() }
	var old []string
	for i, marker := range []string{"OLD-ONE", "OLD-TWO", "OLD-THREE"} {
		old = append(old, recordRun(t, s, "old", marker, []byte("# old\n")))
		time.Sleep(time.Duration(i+1) * time.Millisecond) // distinct ids in order
	}
	dirInodes := []uint64{inode(t, s.dir(old[0])), inode(t, s.dir(old[1]))}
	if n, err := s.Prune(Retention{Keep: 1}); err != nil || n != 2 {
		t.Fatalf("Prune removed %d (%v), want 2", n, err)
	}
	list, _ := s.List(0)
	if len(list) != 1 || list[0].ID != old[2] {
		t.Fatalf("listed after prune: %+v", list)
	}
	if id, err := s.Resolve("last"); err != nil || id != old[2] {
		t.Fatalf("last = %q %v", id, err)
	}
	for i := 1; i <= len(dirInodes); i++ {
		if !slices.Contains(dirInodes, inode(t, s.spare(i))) {
			t.Fatalf("spare %d is not a removed run's directory", i)
		}
	}
	if all := readAll(t, s.Dir); strings.Contains(all, "OLD-ONE") || strings.Contains(all, "OLD-TWO") {
		t.Fatal("a removed run's data is still on disk")
	}

	a := recordRun(t, s, "new-a", "NEW-A", nil) // inline: no workflow text
	b := recordRun(t, s, "new-b", "NEW-B", []byte("# b\n"))
	got := []uint64{inode(t, s.dir(a)), inode(t, s.dir(b))}
	slices.Sort(got)
	slices.Sort(dirInodes)
	if !slices.Equal(got, dirInodes) {
		t.Fatalf("the new runs were not recorded in the spares: %v vs %v", got, dirInodes)
	}
	checkRun(t, s, a, "new-a", "NEW-A", nil)
	checkRun(t, s, b, "new-b", "NEW-B", []byte("# b\n"))
	checkRun(t, s, old[2], "old", "OLD-THREE", []byte("# old\n"))
	// No spare is left; the next run makes its directory.
	c := recordRun(t, s, "new-c", "NEW-C", []byte("# c\n"))
	checkRun(t, s, c, "new-c", "NEW-C", []byte("# c\n"))
	if list, _ := s.List(0); len(list) != 4 {
		t.Fatalf("runs: %+v", list)
	}
}

// A run's directory that is not a record as setup makes it (a subdirectory
// in it) is deleted by retention, not recycled.
func TestRetentionDeletesWhatItCannotRecycle(t *testing.T) {
	s := Open(t.TempDir())
	a := recordRun(t, s, "a", "A", nil)
	time.Sleep(2 * time.Millisecond)
	recordRun(t, s, "b", "B", nil)
	os.Mkdir(filepath.Join(s.dir(a), "extra"), 0o700)
	if n, _ := s.Prune(Retention{Keep: 1}); n != 1 {
		t.Fatalf("removed %d", n)
	}
	if _, err := os.Stat(s.dir(a)); !os.IsNotExist(err) {
		t.Fatal("not deleted")
	}
	if _, err := os.Stat(s.spare(1)); !os.IsNotExist(err) {
		t.Fatal("recycled a directory it should have deleted")
	}
}
