package fsutil

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TryLockFile makes one attempt: it fails only while another holder has the
// lock, never because a deadline passed before the attempt.
func TestTryLockFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run")
	held, err := LockFile(context.Background(), p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := TryLockFile(p); ok || err != nil {
		t.Fatalf("a held lock: ok=%v err=%v", ok, err)
	}
	held.Unlock()
	lk, ok, err := TryLockFile(p)
	if !ok || err != nil {
		t.Fatalf("a free lock: ok=%v err=%v", ok, err)
	}
	lk.Unlock()
}

// A lock held by another holder past the timeout names the file, the wait
// and the way out, as docs/troubleshooting.md quotes it.
func TestLockTimeoutSaysWhatToDo(t *testing.T) {
	p := filepath.Join(t.TempDir(), "registry.json")
	held, err := LockFile(context.Background(), p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	_, err = LockFile(context.Background(), p, 50*time.Millisecond)
	want := "could not lock " + p + " within 50ms (another pflow process may be stuck; remove " + p + ".lock if none is running)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}
