package library

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil/fsutiltest"
	"github.com/pflow-go/pflow/internal/pferr"
)

func newLib(t *testing.T) (*Library, *bytes.Buffer) {
	t.Helper()
	root := t.TempDir()
	var log bytes.Buffer
	return &Library{Dir: filepath.Join(root, "workflows"), DraftsDir: filepath.Join(root, "drafts"), Log: &log}, &log
}

func hello(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/hello.pflow.md")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidateName(t *testing.T) {
	tests := []struct {
		name, kind, msg string
	}{
		{"hello-world", "", ""},
		{"a1", "", ""},
		{"../etc", pferr.Security, "looks like a path"},
		{"a/b", pferr.Security, "looks like a path"},
		{`a\b`, pferr.Security, "looks like a path"},
		{"a\x00b", pferr.Security, "looks like a path"},
		{"/abs", pferr.Security, "looks like a path"},
		{"Test", pferr.Validation, "'Test' is a reserved workflow name. Reserved names:"},
		{"registry", pferr.Validation, "reserved"},
		{"Hello", pferr.Validation, "lowercase letters, numbers, and single hyphens"},
		{"a--b", pferr.Validation, "single hyphens"},
		{"-a", pferr.Validation, "single hyphens"},
		{"my_flow", pferr.Validation, "single hyphens"},
		{strings.Repeat("a", 51), pferr.Validation, "cannot exceed 50 characters"},
		{"", pferr.Validation, "empty"},
	}
	for _, tc := range tests {
		err := ValidateName(tc.name)
		if tc.kind == "" {
			if err != nil {
				t.Errorf("ValidateName(%q) = %v, want nil", tc.name, err)
			}
			continue
		}
		if pferr.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ValidateName(%q) = %v (kind %q), want kind %s containing %q", tc.name, err, pferr.KindOf(err), tc.kind, tc.msg)
		}
	}
	if e := pferr.As(ValidateName("my_flow")); !strings.Contains(e.Hint, "my-flow") {
		t.Errorf("hint should suggest a valid name, got %q", e.Hint)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	s, err := l.Save(ctx, hello(t), "hello", SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.Path)
	if !strings.HasPrefix(string(data), "---\ncreated_at: ") {
		t.Fatalf("saved file should start with frontmatter:\n%s", data)
	}
	_, body, has, err := SplitFrontmatter(data)
	if err != nil || !has {
		t.Fatalf("frontmatter not readable: %v", err)
	}
	if strings.TrimLeft(body, "\n") != string(hello(t)) {
		t.Fatalf("body changed:\n%q", body)
	}
	got, err := l.Load("hello")
	if err != nil {
		t.Fatal(err)
	}
	if got.Description != "Greets someone by name and shouts it." || len(got.Workflow.Nodes) != 2 {
		t.Fatalf("loaded = %+v", got)
	}
	if got.Meta.Version != "1.0.0" || got.Meta.CreatedAt == "" || got.Meta.ExecutionCount != 0 {
		t.Fatalf("meta = %+v", got.Meta)
	}
	// The library directory holds only workflows (locks live in .locks).
	ents, _ := os.ReadDir(l.Dir)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), Ext) && e.Name() != ".locks" {
			t.Errorf("stray file in the library: %s", e.Name())
		}
	}
}

func TestSaveRefusesOverwriteWithoutForce(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	if _, err := l.Save(ctx, hello(t), "hello", SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := l.Save(ctx, hello(t), "hello", SaveOptions{Description: "changed"})
	if pferr.KindOf(err) != pferr.Validation || !strings.Contains(err.Error(), "Workflow 'hello' already exists") || !strings.Contains(pferr.As(err).Advice(pferr.Person), "Pass --force to overwrite it") ||
		!strings.Contains(pferr.As(err).Advice(pferr.Agent), "Pass force: true to overwrite it") {
		t.Fatalf("want already-exists error with --force hint, got %v", err)
	}
	if s, _ := l.Load("hello"); s.Description == "changed" {
		t.Fatal("file overwritten without force")
	}
	if _, err := l.Save(ctx, hello(t), "hello", SaveOptions{Force: true, Description: "changed"}); err != nil {
		t.Fatal(err)
	}
	if s, _ := l.Load("hello"); s.Description != "changed" {
		t.Fatalf("force did not overwrite: %q", s.Description)
	}
}

func TestSaveOfSavedFileDoesNotStackFrontmatter(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	s, err := l.Save(ctx, hello(t), "hello", SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.RecordRun(ctx, "hello", true, time.Second, map[string]any{"name": "x"}, nil)
	if _, err := l.SaveFile(ctx, s.Path, "hello-copy", SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(l.Path("hello-copy"))
	if n := strings.Count(string(data), "created_at:"); n != 1 {
		t.Fatalf("want one frontmatter block, found %d:\n%s", n, data)
	}
	c, _ := l.Load("hello-copy")
	if c.Meta.ExecutionCount != 0 {
		t.Fatal("copy inherited run history")
	}
	_, body, _, _ := SplitFrontmatter(data)
	if strings.TrimLeft(body, "\n") != string(hello(t)) {
		t.Fatalf("copy body differs:\n%q", body)
	}
}

func TestSaveRejectsInvalidWorkflowAndJSON(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	_, err := l.Save(ctx, []byte("# Broken\nNo steps here.\n"), "broken", SaveOptions{SourcePath: "broken.pflow.md"})
	if err == nil || pferr.KindOf(err) != pferr.Validation || !strings.Contains(err.Error(), "Steps") {
		t.Fatalf("want a validation error about the missing steps, got %v", err)
	}
	if l.Exists("broken") {
		t.Fatal("invalid workflow was saved")
	}
	p := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(p, []byte(`{}`), 0o644)
	if _, err := l.SaveFile(ctx, p, "x", SaveOptions{}); err == nil || !strings.Contains(err.Error(), ".pflow.md") {
		t.Fatalf("JSON save: %v", err)
	}
	if _, err := l.SaveFile(ctx, "nope.pflow.md", "x", SaveOptions{}); pferr.KindOf(err) != pferr.NotFound {
		t.Fatalf("missing file: %v", err)
	}
}

func TestDeleteDraftOnlyDeletesDrafts(t *testing.T) {
	l, log := newLib(t)
	ctx := context.Background()
	os.MkdirAll(l.DraftsDir, 0o755)
	draft := filepath.Join(l.DraftsDir, "hello.pflow.md")
	os.WriteFile(draft, hello(t), 0o644)
	if _, err := l.SaveFile(ctx, draft, "hello", SaveOptions{DeleteDraft: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(draft); !os.IsNotExist(err) {
		t.Fatal("draft not deleted")
	}
	other := filepath.Join(t.TempDir(), "mine.pflow.md")
	os.WriteFile(other, hello(t), 0o644)
	if _, err := l.SaveFile(ctx, other, "mine", SaveOptions{DeleteDraft: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatal("a non-draft file was deleted")
	}
	if !strings.Contains(log.String(), "not deleting") {
		t.Fatalf("want a note about not deleting, got %q", log.String())
	}
	// A symlink in drafts pointing elsewhere is not deleted.
	link := filepath.Join(l.DraftsDir, "link.pflow.md")
	os.Symlink(other, link)
	if l.IsDraft(link) {
		t.Fatal("symlink treated as draft")
	}
}

func TestLoadNotFoundSuggests(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	l.Save(ctx, hello(t), "hello-world", SaveOptions{})
	_, err := l.Load("hello-wrld")
	pe := pferr.As(err)
	if pe.Kind != pferr.NotFound || !strings.Contains(pe.Message, "Workflow 'hello-wrld' not found") {
		t.Fatalf("got %v", err)
	}
	if len(pe.Suggestions) == 0 || !strings.Contains(pe.Suggestions[0], "hello-world") {
		t.Fatalf("want did-you-mean hello-world, got %v", pe.Suggestions)
	}
}

func TestListFiltersAndSkipsBroken(t *testing.T) {
	l, log := newLib(t)
	ctx := context.Background()
	l.Save(ctx, hello(t), "hello", SaveOptions{})
	l.Save(ctx, hello(t), "release-notes", SaveOptions{Description: "Draft release notes from git"})
	os.WriteFile(l.Path("broken"), []byte("---\ncreated_at: [\n---\n# x\n"), 0o644)
	all, err := l.List("")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Name != "hello" || all[1].Name != "release-notes" {
		t.Fatalf("list = %v", names(all))
	}
	if !strings.Contains(log.String(), "skipping saved workflow 'broken'") {
		t.Fatalf("want warning for broken file, got %q", log.String())
	}
	got, _ := l.List("GIT release")
	if len(got) != 1 || got[0].Name != "release-notes" {
		t.Fatalf("filtered list = %v", names(got))
	}
}

func names(ss []*Saved) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

func TestDelete(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	l.Save(ctx, hello(t), "hello", SaveOptions{})
	if err := l.Delete("hello"); err != nil {
		t.Fatal(err)
	}
	if l.Exists("hello") {
		t.Fatal("still exists")
	}
	if err := l.Delete("hello"); pferr.KindOf(err) != pferr.NotFound {
		t.Fatalf("second delete: %v", err)
	}
	if err := l.Delete("../x"); pferr.KindOf(err) != pferr.Security {
		t.Fatalf("path delete: %v", err)
	}
}

func TestRecordRun(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	l.Save(ctx, hello(t), "hello", SaveOptions{})
	before, _ := os.ReadFile(l.Path("hello"))
	_, bodyBefore, _, _ := SplitFrontmatter(before)

	if err := l.RecordRun(ctx, "hello", false, time.Second, map[string]any{"name": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(l.Path("hello")); !bytes.Equal(before, after) {
		t.Fatal("a failed run changed the file")
	}
	params := map[string]any{
		"name": "zed", "count": int64(2), "api_key": "sk-secret", "max_tokens": int64(100), "author": "me",
		"custom": "hunter2", "long": strings.Repeat("x", 150),
	}
	if err := l.RecordRun(ctx, "hello", true, 1500*time.Millisecond, params, []string{"custom"}); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordRun(ctx, "hello", true, 500*time.Millisecond, params, []string{"custom"}); err != nil {
		t.Fatal(err)
	}
	s, err := l.Load("hello")
	if err != nil {
		t.Fatal(err)
	}
	m := s.Meta
	if m.ExecutionCount != 2 || m.AverageExecutionDurationSeconds != 1.0 || m.LastExecutionDurationSeconds != 0.5 || m.LastExecutionSuccess == nil || !*m.LastExecutionSuccess {
		t.Fatalf("meta = %+v", m)
	}
	p := m.LastExecutionParams
	if p["api_key"] != Redacted || p["custom"] != Redacted {
		t.Errorf("secrets not redacted: %v", p)
	}
	if p["max_tokens"] != int64(100) || p["author"] != "me" || p["name"] != "zed" {
		t.Errorf("non-secrets over-redacted: %v", p)
	}
	if p["long"] != strings.Repeat("x", 20)+"...<truncated>" {
		t.Errorf("long = %v", p["long"])
	}
	after, _ := os.ReadFile(l.Path("hello"))
	if strings.Contains(string(after), "sk-secret") || strings.Contains(string(after), "hunter2") {
		t.Fatal("secret written to disk")
	}
	_, bodyAfter, _, _ := SplitFrontmatter(after)
	if bodyAfter != bodyBefore {
		t.Fatal("RecordRun changed the body")
	}
}

// TestConcurrentSavesLoseNothing saves 20 workflows at once, half from
// goroutines and half from separate processes.
func TestConcurrentSavesLoseNothing(t *testing.T) {
	if os.Getenv("PFLOW_LIB_HELPER") != "" {
		return
	}
	l, _ := newLib(t)
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "hello.pflow.md")
	os.WriteFile(src, hello(t), 0o644)
	fsutiltest.Race(t, 10, "TestHelperSave",
		func(i int) []string {
			return []string{"PFLOW_LIB_HELPER=" + l.Dir, "PFLOW_LIB_SRC=" + src, fmt.Sprintf("PFLOW_LIB_NAME=p-%d", i)}
		},
		func(i int) error {
			_, err := l.SaveFile(ctx, src, fmt.Sprintf("g-%d", i), SaveOptions{})
			return err
		})
	all, err := l.List("")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 20 {
		t.Fatalf("want 20 valid saved workflows, got %d: %v", len(all), names(all))
	}
}

func TestHelperSave(t *testing.T) {
	dir := os.Getenv("PFLOW_LIB_HELPER")
	if dir == "" {
		return // a helper: it runs only as a process started by fsutiltest.Race
	}
	l := &Library{Dir: dir}
	if _, err := l.SaveFile(context.Background(), os.Getenv("PFLOW_LIB_SRC"), os.Getenv("PFLOW_LIB_NAME"), SaveOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentSameNameOnlyOneWins(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, exists := 0, 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := l.Save(ctx, hello(t), "same", SaveOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case strings.Contains(err.Error(), "already exists"):
				exists++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok != 1 || exists != 19 {
		t.Fatalf("ok=%d exists=%d, want 1 and 19", ok, exists)
	}
}

func TestConcurrentRecordRunCountsEveryRun(t *testing.T) {
	l, _ := newLib(t)
	ctx := context.Background()
	l.Save(ctx, hello(t), "hello", SaveOptions{})
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.RecordRun(ctx, "hello", true, 10*time.Millisecond, nil, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	s, err := l.Load("hello")
	if err != nil {
		t.Fatal(err)
	}
	if s.Meta.ExecutionCount != 20 {
		t.Fatalf("execution_count = %d, want 20", s.Meta.ExecutionCount)
	}
}

// TestSavedWorkflowsAreOwnerOnly: a saved workflow carries the parameters
// of its last run (last_execution_params), so it and the directories pflow
// makes for it are its user's alone, also after a run rewrites it, and a
// workflow saved by an older pflow (0644) is narrowed when it is rewritten.
func TestSavedWorkflowsAreOwnerOnly(t *testing.T) {
	old := syscallUmask(0)
	defer syscallUmask(old)
	l, _ := newLib(t)
	ctx := context.Background()
	check := func(when string) {
		t.Helper()
		for p, want := range map[string]os.FileMode{l.Dir: 0o700, l.Path("hello"): 0o600, filepath.Join(l.Dir, ".locks"): 0o700, filepath.Join(l.Dir, ".locks", "hello.lock"): 0o600} {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if got := st.Mode().Perm(); got != want {
				t.Errorf("%s: %s has mode %04o, want %04o", when, filepath.Base(p), got, want)
			}
		}
	}
	if _, err := l.Save(ctx, hello(t), "hello", SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	check("after save")
	os.Chmod(l.Path("hello"), 0o644)
	if err := l.RecordRun(ctx, "hello", true, time.Second, map[string]any{"name": "zed"}, nil); err != nil {
		t.Fatal(err)
	}
	check("after a run")
	if _, err := l.Save(ctx, hello(t), "hello", SaveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	check("after save --force")
}
