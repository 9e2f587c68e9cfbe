package library

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func descOf(t *testing.T, l *Library, name string) (string, *Saved) {
	t.Helper()
	all, err := l.List("")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Name == name {
			return s.Description, s
		}
	}
	return "", nil
}

// TestListReflectsTheFilesOnDisk: the in-process parse cache never serves
// stale data — every kind of change is seen by the next List, including an
// in-place rewrite of the same size whose mtime is set back.
func TestListReflectsTheFilesOnDisk(t *testing.T) {
	l, log := newLib(t)
	ctx := context.Background()
	if _, err := l.Save(ctx, hello(t), "hello", SaveOptions{Description: "first AAAA"}); err != nil {
		t.Fatal(err)
	}
	if d, _ := descOf(t, l, "hello"); d != "first AAAA" {
		t.Fatalf("description = %q", d)
	}

	// Saved again through pflow (atomic rename).
	if _, err := l.Save(ctx, hello(t), "hello", SaveOptions{Force: true, Description: "second"}); err != nil {
		t.Fatal(err)
	}
	if d, _ := descOf(t, l, "hello"); d != "second" {
		t.Fatalf("after re-save: description = %q, want second", d)
	}

	// Edited in place by hand: same size, mtime restored.
	path := l.Path("hello")
	fi, _ := os.Stat(path)
	data, _ := os.ReadFile(path)
	edited := bytes.Replace(data, []byte("description: second"), []byte("description: SECOND"), 1)
	if bytes.Equal(edited, data) || len(edited) != len(data) {
		t.Fatalf("test set-up: frontmatter has no 'description: second':\n%s", data)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(edited, 0)
	f.Close()
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	if runtime.GOOS == "linux" {
		if d, _ := descOf(t, l, "hello"); d != "SECOND" {
			t.Fatalf("after in-place same-size edit: description = %q, want SECOND", d)
		}
	}

	// Broken, then fixed.
	os.WriteFile(path, []byte("---\ncreated_at: [\n---\n# x\n"), 0o644)
	if d, s := descOf(t, l, "hello"); s != nil {
		t.Fatalf("broken file still listed (description %q)", d)
	}
	if !strings.Contains(log.String(), "skipping saved workflow 'hello'") {
		t.Fatalf("no warning for the broken file: %q", log.String())
	}
	os.WriteFile(path, hello(t), 0o644)
	if d, _ := descOf(t, l, "hello"); d != "Greets someone by name and shouts it." {
		t.Fatalf("after fix: description = %q", d)
	}

	// Deleted, then added under another name.
	os.Remove(path)
	if _, s := descOf(t, l, "hello"); s != nil {
		t.Fatal("deleted workflow still listed")
	}
	os.WriteFile(l.Path("other"), hello(t), 0o644)
	if _, s := descOf(t, l, "other"); s == nil {
		t.Fatal("new workflow not listed")
	}
}

// TestListParsesOnlyChangedFiles: an unchanged file is not parsed again
// (its Workflow is the cached one), a changed file is.
func TestListParsesOnlyChangedFiles(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	l.Save(ctx, hello(t), "a", SaveOptions{})
	l.Save(ctx, hello(t), "b", SaveOptions{})
	first, _ := l.List("")
	l.Save(ctx, hello(t), "b", SaveOptions{Force: true, Description: "changed"})
	second, _ := l.List("")
	if len(first) != 2 || len(second) != 2 {
		t.Fatalf("lists = %v, %v", names(first), names(second))
	}
	if first[0].Workflow != second[0].Workflow {
		t.Error("unchanged workflow 'a' was parsed again")
	}
	if first[1].Workflow == second[1].Workflow || second[1].Description != "changed" {
		t.Error("changed workflow 'b' was served from the cache")
	}
	// Callers get their own Saved: changing one does not change the cache.
	second[0].Description = "mutated"
	if third, _ := l.List(""); third[0].Description == "mutated" {
		t.Error("List returned the cached Saved itself")
	}
}

// BenchmarkList measures a listing of unchanged saved workflows (what
// workflow_list costs in 'pflow mcp serve' after the first call).
func BenchmarkList(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			root := b.TempDir()
			l := &Library{Dir: root + "/workflows", DraftsDir: root + "/drafts"}
			data, err := os.ReadFile("testdata/hello.pflow.md")
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				if _, err := l.Save(context.Background(), data, fmt.Sprintf("wf-%04d", i), SaveOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			if list, _ := l.List(""); len(list) != n {
				b.Fatalf("listed %d, want %d", len(list), n)
			}
			b.ReportMetric(float64(time.Since(start).Microseconds()), "first-µs")
			for b.Loop() {
				l.List("deploy")
			}
		})
	}
}

// TestListCountedCountsEveryFile: the total is every workflow file, the list
// only the parseable ones matching the filter.
func TestListCountedCountsEveryFile(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	l.Save(ctx, hello(t), "hello", SaveOptions{})
	l.Save(ctx, hello(t), "release-notes", SaveOptions{Description: "Draft release notes"})
	os.WriteFile(l.Path("broken"), []byte("---\ncreated_at: [\n---\n# x\n"), 0o644)
	list, total, err := l.ListCounted("release")
	if err != nil {
		t.Fatal(err)
	}
	if total != 3 || len(list) != 1 || list[0].Name != "release-notes" {
		t.Fatalf("ListCounted = %v, %d; want [release-notes], 3", names(list), total)
	}
}
