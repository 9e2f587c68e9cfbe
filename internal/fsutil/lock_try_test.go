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
