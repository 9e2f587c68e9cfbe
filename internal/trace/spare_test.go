package trace

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil/fsutiltest"

	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/retention"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/workflow"
)

// Traces retention removes become spares (emptied: their content is gone),
// up to spareSlots, and the next traces are written into them: the same
// files, whole and readable, with nothing of the old ones and no temp file
// left; a spare that is not empty is not written into.
func TestTracesRecycleRemovedFiles(t *testing.T) {
	dir := t.TempDir()
	res := func(marker string) *runtime.Result {
		return &runtime.Result{Status: runtime.RunSuccess, Started: time.Now(), Outputs: map[string]any{"out": marker}}
	}
	old := map[uint64]bool{} // the inodes of the traces written before the prune
	for i := 0; i < spareSlots+2; i++ {
		p, err := Write(dir, "flow", &workflow.Workflow{}, nil, res("OLD-MARKER"), redact.NewRedactor())
		if err != nil {
			t.Fatal(err)
		}
		past := time.Now().Add(time.Duration(i-100) * time.Minute)
		os.Chtimes(p, past, past)
		old[fsutiltest.Inode(t, p)] = true
	}
	n, err := retention.Prune(dir, FilePattern, retention.Policy{MaxCount: 1, Recycle: Recycler(dir)}, time.Now())
	if err != nil || n != spareSlots+1 {
		t.Fatalf("pruned %d (%v), want %d", n, err, spareSlots+1)
	}
	var spares []uint64
	for i := 1; i <= spareSlots; i++ {
		st, err := os.Stat(spareName(dir, i))
		if err != nil || st.Size() != 0 {
			t.Fatalf("spare %d: %v (size %d)", i, err, st.Size())
		}
		ino := fsutiltest.Inode(t, spareName(dir, i))
		if !old[ino] {
			t.Fatalf("spare %d is a new file, not a removed trace", i)
		}
		spares = append(spares, ino)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1+spareSlots {
		t.Fatalf("%d entries, want the newest trace and %d spares", len(ents), spareSlots)
	}

	p, err := Write(dir, "flow", &workflow.Workflow{}, nil, res("NEW-MARKER"), redact.NewRedactor())
	if err != nil {
		t.Fatal(err)
	}
	if ino := fsutiltest.Inode(t, p); ino != spares[0] {
		t.Fatal("the new trace was not written into the first spare")
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), "NEW-MARKER") || strings.Contains(string(data), "OLD-MARKER") {
		t.Fatalf("the recycled trace: %s", data)
	}
	if _, err := os.Stat(spareName(dir, 1)); !os.IsNotExist(err) {
		t.Fatal("the claimed spare is still a spare")
	}

	// A spare that is not empty is removed, not written into.
	os.WriteFile(spareName(dir, 2), []byte("junk"), 0o600)
	for i := 3; i <= spareSlots; i++ {
		os.Remove(spareName(dir, i))
	}
	p, err = Write(dir, "flow", &workflow.Workflow{}, nil, res("THIRD"), redact.NewRedactor())
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(p); !strings.Contains(string(data), "THIRD") || strings.Contains(string(data), "junk") {
		t.Fatalf("trace written over a non-empty spare: %s", data)
	}
	ents, _ = os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") || strings.HasPrefix(e.Name(), ".trace-spare") {
			t.Fatalf("left in the directory: %s", e.Name())
		}
	}
}
