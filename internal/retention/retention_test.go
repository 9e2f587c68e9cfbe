package retention

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// touch creates dir/name (a directory when name ends in "/") last modified
// age before now.
func touch(t *testing.T, dir, name string, age time.Duration) {
	t.Helper()
	p := filepath.Join(dir, filepath.Clean(name))
	if name[len(name)-1] == '/' {
		if err := os.MkdirAll(filepath.Join(p, "inner"), 0o755); err != nil {
			t.Fatal(err)
		}
	} else if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestPrune(t *testing.T) {
	day := 24 * time.Hour
	cases := []struct {
		name   string
		policy Policy
		want   []string // t-* entries left
	}{
		{"count keeps the newest", Policy{MaxCount: 2}, []string{"t-1", "t-2"}},
		{"age removes the old", Policy{MaxAge: 3 * day}, []string{"t-1", "t-2", "t-3"}},
		{"both: the stricter wins", Policy{MaxCount: 1, MaxAge: 3 * day}, []string{"t-1"}},
		{"zero policy keeps everything", Policy{}, []string{"t-1", "t-2", "t-3", "t-4", "t-5/"}},
		{"count larger than the directory", Policy{MaxCount: 50}, []string{"t-1", "t-2", "t-3", "t-4", "t-5/"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			touch(t, dir, "t-1", time.Hour) // newest
			touch(t, dir, "t-2", day)
			touch(t, dir, "t-3", 2*day)
			touch(t, dir, "t-4", 10*day)
			touch(t, dir, "t-5/", 20*day) // a directory entry (a run record could be one)
			touch(t, dir, "other.json", 100*day)
			touch(t, dir, ".t-9.123.tmp", 2*time.Hour)      // an abandoned atomic-write temp file
			touch(t, dir, ".t-8.456.tmp", time.Minute)      // a writer still at work
			touch(t, dir, ".other.json.7.tmp", 2*time.Hour) // temp of a non-matching name
			n, err := Prune(dir, "t-*", c.policy, now)
			if err != nil {
				t.Fatal(err)
			}
			got := names(t, dir)
			want := []string{".other.json.7.tmp", ".t-8.456.tmp"}
			for _, w := range c.want {
				want = append(want, filepath.Clean(w))
			}
			want = append(want, "other.json")
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("left %v, want %v", got, want)
			}
			if wantN := 5 - len(c.want) + 1; n != wantN {
				t.Fatalf("removed %d, want %d", n, wantN)
			}
		})
	}
}

func TestPruneMissingDirAndBadPattern(t *testing.T) {
	if n, err := Prune(filepath.Join(t.TempDir(), "nope"), "t-*", Policy{MaxCount: 1}, now); n != 0 || err != nil {
		t.Fatalf("missing dir: %d %v", n, err)
	}
	if _, err := Prune(t.TempDir(), "[", Policy{MaxCount: 1}, now); err == nil {
		t.Fatal("a malformed pattern must be an error")
	}
}

func TestPruneDoesNotFollowSymlinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	touch(t, outside, "keep-me", 100*24*time.Hour)
	if err := os.Symlink(outside, filepath.Join(dir, "t-link")); err != nil {
		t.Fatal(err)
	}
	if _, err := Prune(dir, "t-*", Policy{MaxAge: time.Nanosecond}, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "t-link")); !os.IsNotExist(err) {
		t.Fatalf("the link itself should be removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep-me")); err != nil {
		t.Fatalf("the link's target must survive: %v", err)
	}
}

// Many runs finishing at once each prune the same directory: none fails,
// and the newest entries survive.
func TestPruneConcurrent(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 200; i++ {
		touch(t, dir, fmt.Sprintf("t-%03d", i), time.Duration(i)*time.Minute)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for g := 0; g < 20; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := Prune(dir, "t-*", Policy{MaxCount: 10}, now); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := names(t, dir)
	want := []string{"t-000", "t-001", "t-002", "t-003", "t-004", "t-005", "t-006", "t-007", "t-008", "t-009"}
	if !slices.Equal(got, want) {
		t.Fatalf("left %v", got)
	}
}
