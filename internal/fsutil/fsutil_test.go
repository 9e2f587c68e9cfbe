package fsutil

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestWriteFileAtomicReplacesAndCleansStaleTemps(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	stale := filepath.Join(dir, ".settings.json.123.tmp")
	fresh := filepath.Join(dir, ".settings.json.456.tmp")
	os.WriteFile(stale, []byte("half"), 0o600)
	os.WriteFile(fresh, []byte("in progress"), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(stale, old, old)
	if err := WriteFileAtomic(p, []byte("v1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(p); string(data) != "v1" {
		t.Fatalf("content %q", data)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a temp file left by a crashed writer long ago must be removed")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a recent temp file may belong to a live writer and must stay")
	}
}

func TestCreateFileAtomicRefusesExisting(t *testing.T) {
	p := filepath.Join(t.TempDir(), "wf.pflow.md")
	if err := CreateFileAtomic(p, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CreateFileAtomic(p, []byte("b"), 0o644); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("want ErrExist, got %v", err)
	}
	if data, _ := os.ReadFile(p); string(data) != "a" {
		t.Fatalf("content %q", data)
	}
}

// TestLockSerializesReadModifyWrite: 20 goroutines increment a counter file
// under the lock; none of the increments is lost.
func TestLockSerializesReadModifyWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "counter")
	os.WriteFile(p, []byte("0"), 0o600)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := LockFile(context.Background(), p, 10*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			defer l.Unlock()
			data, _ := os.ReadFile(p)
			n, _ := strconv.Atoi(string(data))
			if err := WriteFileAtomic(p, []byte(strconv.Itoa(n+1)), 0o600); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if data, _ := os.ReadFile(p); string(data) != "20" {
		t.Fatalf("lost updates: counter = %s", data)
	}
}
