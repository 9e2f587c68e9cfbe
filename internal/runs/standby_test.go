package runs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// standbys lists the standby directories of s.
func standbys(t *testing.T, s *Store) []string {
	t.Helper()
	ents, _ := os.ReadDir(s.Dir)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), standbyPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// A standby is made in the spare retention left (no file made), taken by
// the next run under that run's own id, and the run reads back exactly as
// one made from scratch; its first step with side effects is on disk when
// it starts. Without a refill there is none to take; closing gives it back
// as a spare.
func TestStandby(t *testing.T) {
	s := Open(t.TempDir())
	old := recordRun(t, s, "old", "OLD", []byte("# old\n"))
	time.Sleep(2 * time.Millisecond)
	recordRun(t, s, "kept", "KEPT", nil)
	if n, _ := s.Prune(Retention{Keep: 1}); n != 1 {
		t.Fatalf("pruned %d runs", n)
	}
	spare := inode(t, s.spare(1))
	sb := &Standby{}
	// A second refill finds the first one's standby and makes no other.
	if made, again := sb.Refill(s), sb.Refill(s); !made || !again {
		t.Fatalf("no standby made: first refill %v, second %v", made, again)
	}
	if got := standbys(t, s); len(got) != 1 {
		t.Fatalf("standbys: %v", got)
	}
	if _, err := os.Stat(s.spare(1)); !os.IsNotExist(err) {
		t.Fatal("the standby was not made in the spare")
	}
	if list, _ := s.List(0); len(list) != 1 {
		t.Fatalf("a standby is listed as a run: %+v", list)
	}

	before := time.Now()
	res := sb.Take(s)
	if res == nil || !validID(res.ID) || res.Started.Before(before) {
		t.Fatalf("taken: %+v", res)
	}
	if inode(t, s.dir(res.ID)) != spare {
		t.Fatal("the run's directory is not the standby's")
	}
	if sb.Take(s) != nil {
		t.Fatal("one standby taken twice")
	}
	r, err := s.Create(Options{Meta: Meta{Workflow: Workflow{Name: "wf", Kind: KindFile}}, Key: testKey,
		IR: []byte(`{"name":"wf"}`), Reserved: res})
	if err != nil || r.ID != res.ID {
		t.Fatalf("%v: run %s, reserved %s", err, r.ID, res.ID)
	}
	runOneStep(t, s, r, "OUT")
	checkRun(t, s, r.ID, "wf", "OUT", nil)
	if strings.Contains(readAll(t, s.dir(r.ID)), "OLD") {
		t.Fatal("the removed run's data is in the new run's directory")
	}
	if _, err := os.Stat(s.dir(old)); !os.IsNotExist(err) {
		t.Fatal("the pruned run is still there")
	}

	// Closing gives the standby back: a spare, no standby left.
	if !sb.Refill(s) {
		t.Fatal("no standby made without a spare")
	}
	sb.Close()
	if got := standbys(t, s); len(got) != 0 {
		t.Fatalf("standbys left after Close: %v", got)
	}
	if _, err := os.Stat(s.spare(1)); err != nil {
		t.Fatal("the closed standby is not a spare")
	}
	if readAll(t, s.spare(1)) != "" {
		t.Fatal("the spare is not empty")
	}
}

// A run prepared in a standby and refused (aborted) leaves no directory.
func TestAbortedRunInAStandby(t *testing.T) {
	s := Open(t.TempDir())
	sb := &Standby{}
	sb.Refill(s)
	res := sb.Take(s)
	r, err := s.Prepare(Options{Meta: Meta{Workflow: Workflow{Name: "wf", Kind: KindFile}}, Key: testKey,
		IR: []byte(`{"name":"wf"}`), Source: []byte("# wf\n"), Reserved: res})
	if err != nil {
		t.Fatal(err)
	}
	r.Abort()
	if _, err := os.Stat(s.dir(r.ID)); !os.IsNotExist(err) {
		t.Fatal("an aborted run's directory is left")
	}
	if list, _ := s.List(0); len(list) != 0 {
		t.Fatalf("listed: %+v", list)
	}
}

// A standby of another store is not taken (it is given back); a standby
// a killed process left (old, its lock free) is removed by retention, one
// held by a live process is not.
func TestStandbyOfAnotherStoreAndStaleOnes(t *testing.T) {
	s, other := Open(t.TempDir()), Open(t.TempDir())
	sb := &Standby{}
	sb.Refill(other)
	if sb.Take(s) != nil {
		t.Fatal("took another store's standby")
	}
	if got := standbys(t, other); len(got) != 0 {
		t.Fatalf("the other store's standby was not given back: %v", got)
	}

	live := &Standby{}
	live.Refill(s)
	defer live.Close()
	held := filepath.Join(s.Dir, standbys(t, s)[0])
	killed := filepath.Join(s.Dir, standbyPrefix+"killed")
	os.Mkdir(killed, 0o700)
	os.WriteFile(filepath.Join(killed, lockBase+".lock"), nil, 0o600)
	long := time.Now().Add(-time.Hour)
	for _, d := range []string{held, killed} {
		os.Chtimes(d, long, long)
	}
	recordRun(t, s, "wf", "OUT", nil)
	if _, err := s.Prune(Retention{Keep: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Fatal("a killed process's standby was not removed")
	}
	if _, err := os.Stat(held); err != nil {
		t.Fatal("a live process's standby was removed")
	}
	res := live.Take(s)
	if res == nil {
		t.Fatal("the live standby cannot be taken")
	}
	res.Release()
}
