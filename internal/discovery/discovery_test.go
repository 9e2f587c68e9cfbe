package discovery

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/workflow"
)

// MinHitRate is the documented floor for the discovery test set: the
// expected workflow must come first for at least this share of the tasks.
const MinHitRate = 0.90

const testSet = "../../testdata/discovery"

func loadTestLibrary(t testing.TB) []*library.Saved {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testSet, "workflows", "*.pflow.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test workflows: %v", err)
	}
	var out []*library.Saved
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		w, err := workflow.ParseMarkdown(src, f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, &library.Saved{Name: strings.TrimSuffix(filepath.Base(f), ".pflow.md"), Path: f, Description: w.Source.Description, Workflow: w})
	}
	return out
}

type task struct{ query, want string }

func loadTasks(t testing.TB) []task {
	f, err := os.Open(filepath.Join(testSet, "queries.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []task
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		q, w, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		out = append(out, task{q, w})
	}
	return out
}

// TestDiscoveryHitRate ranks every task of testdata/discovery/queries.tsv
// over the workflows of testdata/discovery/workflows and prints the share
// where the expected workflow comes first.
func TestDiscoveryHitRate(t *testing.T) {
	lib := loadTestLibrary(t)
	tasks := loadTasks(t)
	if len(lib) < 50 || len(tasks) < 20 {
		t.Fatalf("test set too small: %d workflows, %d tasks (need 50 and 20)", len(lib), len(tasks))
	}
	hits := 0
	for _, tk := range tasks {
		ms := RankWorkflows(tk.query, lib, 3)
		got := ""
		if len(ms) > 0 {
			got = ms[0].Name
		}
		if got == tk.want {
			hits++
			continue
		}
		var top []string
		for _, m := range ms {
			top = append(top, fmt.Sprintf("%s(%.2f)", m.Name, m.Confidence))
		}
		t.Logf("miss: %q → %v, want %s", tk.query, top, tk.want)
	}
	rate := float64(hits) / float64(len(tasks))
	fmt.Printf("discovery hit rate: %d/%d = %.1f%% over %d workflows (floor %.0f%%)\n", hits, len(tasks), 100*rate, len(lib), 100*MinHitRate)
	if rate < MinHitRate {
		t.Fatalf("hit rate %.2f below %.2f", rate, MinHitRate)
	}
}

func TestRankIsDeterministicAndExplains(t *testing.T) {
	lib := loadTestLibrary(t)
	a := RankWorkflows("summarize slack messages", lib, 5)
	for range 5 {
		b := RankWorkflows("summarize slack messages", lib, 5)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("ranking changed between calls:\n%v\n%v", a, b)
		}
	}
	if len(a) == 0 || a[0].Name != "slack-daily-digest" {
		t.Fatalf("top = %v", a)
	}
	for i, m := range a {
		if m.Confidence < 0 || m.Confidence > 1 {
			t.Fatalf("confidence out of range: %v", m)
		}
		if len(m.Reasons) == 0 {
			t.Fatalf("no reasons: %v", m)
		}
		if i > 0 && m.Confidence > a[0].Confidence {
			t.Fatalf("a lower-ranked match is more confident: %v", a)
		}
	}
	joined := strings.Join(a[0].Reasons, "; ")
	if !strings.Contains(joined, "slack") {
		t.Fatalf("reasons should mention the matched word: %s", joined)
	}
	if got := RankWorkflows("zebra quantum origami", lib, 5); len(got) != 0 {
		t.Fatalf("nonsense query matched: %v", got)
	}
	if got := RankWorkflows("the a of", lib, 5); got != nil {
		t.Fatalf("stopword query matched: %v", got)
	}
}

func TestConfidenceReflectsCoverage(t *testing.T) {
	docs := []Doc{
		{Name: "full", Fields: []Field{{Label: "name", Text: "github issue triage", Weight: 3}}},
		{Name: "partial", Fields: []Field{{Label: "name", Text: "github stars", Weight: 3}}},
	}
	ms := Rank("triage github issue", docs, 0)
	if len(ms) != 2 || ms[0].Name != "full" {
		t.Fatalf("ms = %v", ms)
	}
	if ms[0].Confidence < 0.8 || ms[1].Confidence > 0.5 {
		t.Fatalf("confidences = %.2f / %.2f; a full match should be high, a one-word match low", ms[0].Confidence, ms[1].Confidence)
	}
}

func TestRankNodesUsesServerAndDescription(t *testing.T) {
	specs := []*node.Spec{
		{Type: "shell", Group: "shell", Interface: node.Interface{Description: "Run a shell command"}},
		{Type: "http", Group: "http", Interface: node.Interface{Description: "Make an HTTP request to an API"}},
		{Type: "mcp-github-create-issue", Interface: node.Interface{Description: "Create a new issue"}, Extra: map[string]any{"mcp_server": "github", "mcp_tool": "create_issue"}},
		{Type: "mcp-slack-post-message", Interface: node.Interface{Description: "Post a message to a channel"}, Extra: map[string]any{"mcp_server": "slack", "mcp_tool": "post_message"}},
	}
	for q, want := range map[string]string{
		"open a ticket on github": "mcp-github-create-issue",
		"call a rest api":         "http",
		"send a message to slack": "mcp-slack-post-message",
		"execute a shell command": "shell",
	} {
		ms := RankNodes(q, specs, 3)
		if len(ms) == 0 || ms[0].Name != want {
			t.Errorf("RankNodes(%q) = %v, want %s first", q, ms, want)
		}
	}
}

func TestStemJoinsWordForms(t *testing.T) {
	for _, group := range [][]string{
		{"issues", "issue"}, {"summarizing", "summarize", "summary", "summaries"}, {"fetched", "fetch", "fetching"},
		{"shipped", "ship"}, {"categories", "category"}, {"files", "file"}, {"messages", "message"},
		{"branches", "branch"}, {"computing", "compute"},
	} {
		for _, w := range group[1:] {
			if stem(w) != stem(group[0]) {
				t.Errorf("stem(%q) = %q but stem(%q) = %q", w, stem(w), group[0], stem(group[0]))
			}
		}
	}
	if stem("status") != "status" {
		t.Errorf("stem(status) = %q", stem("status"))
	}
}

func BenchmarkWorkflowDiscover1000(b *testing.B) {
	base := loadTestLibrary(b)
	var lib []*library.Saved
	for i := 0; len(lib) < 1000; i++ {
		for _, s := range base {
			c := *s
			c.Name = fmt.Sprintf("%s-%d", s.Name, i)
			lib = append(lib, &c)
		}
	}
	lib = lib[:1000]
	b.ResetTimer()
	for b.Loop() {
		RankWorkflows("summarize yesterday's slack messages into a digest", lib, 10)
	}
}

// BenchmarkWorkflowDiscoverFromDisk1000 includes listing and parsing 1,000
// saved workflows from the library directory, as 'pflow workflow discover' does.
func BenchmarkWorkflowDiscoverFromDisk1000(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(testSet, "workflows", "*.pflow.md"))
	l := &library.Library{Dir: filepath.Join(b.TempDir(), "workflows")}
	ctx := context.Background()
	for i := 0; i < 1000; i++ {
		f := files[i%len(files)]
		if _, err := l.SaveFile(ctx, f, fmt.Sprintf("%s-%d", strings.TrimSuffix(filepath.Base(f), ".pflow.md"), i), library.SaveOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	ix := &Index{Path: filepath.Join(b.TempDir(), "cache", "discovery.idx")}
	if _, err := ix.Workflows(l); err != nil { // first query builds the index
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		docs, err := ix.Workflows(l)
		if err != nil {
			b.Fatal(err)
		}
		RankPrepared("summarize yesterday's slack messages into a digest", docs, 10)
	}
}

func TestIndexTracksChanges(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testSet, "workflows", "*.pflow.md"))
	l := &library.Library{Dir: filepath.Join(t.TempDir(), "workflows")}
	ctx := context.Background()
	for _, f := range files[:5] {
		if _, err := l.SaveFile(ctx, f, strings.TrimSuffix(filepath.Base(f), ".pflow.md"), library.SaveOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ix := &Index{Path: filepath.Join(t.TempDir(), "discovery.idx")}
	first, err := ix.Workflows(l)
	if err != nil || len(first) != 5 {
		t.Fatalf("first = %d, %v", len(first), err)
	}
	again, _ := ix.Workflows(l)
	if fmt.Sprint(first) != fmt.Sprint(again) {
		t.Fatal("cached index differs from the fresh one")
	}
	want := RankPrepared("release notes from git", first, 3)
	if got := RankPrepared("release notes from git", again, 3); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ranking differs with the cache: %v vs %v", got, want)
	}
	// A new workflow and a deletion are picked up.
	l.SaveFile(ctx, filepath.Join(testSet, "workflows", "weather-report.pflow.md"), "weather-report", library.SaveOptions{})
	l.Delete(first[0].Name)
	now, _ := ix.Workflows(l)
	if len(now) != 5 {
		t.Fatalf("after add+delete: %d docs", len(now))
	}
	if ms := RankPrepared("weather forecast for a city", now, 1); len(ms) == 0 || ms[0].Name != "weather-report" {
		t.Fatalf("new workflow not found: %v", ms)
	}
	// A corrupt cache is rebuilt.
	os.WriteFile(ix.Path, []byte("garbage"), 0o644)
	if docs, _ := ix.Workflows(l); len(docs) != 5 {
		t.Fatalf("corrupt cache: %d docs", len(docs))
	}
}

// TestIndexSeesInPlaceEditWithRestoredMtime: a workflow rewritten in place
// with the same size and its mtime set back (as 'cp -p' or rsync do) is
// re-read: the index keys entries by inode and ctime too (Linux).
func TestIndexSeesInPlaceEditWithRestoredMtime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ctime is only used on Linux")
	}
	l := &library.Library{Dir: filepath.Join(t.TempDir(), "workflows")}
	ctx := context.Background()
	if _, err := l.SaveFile(ctx, filepath.Join(testSet, "workflows", "weather-report.pflow.md"), "weather-report", library.SaveOptions{Description: "zzzzzz forecast"}); err != nil {
		t.Fatal(err)
	}
	ix := &Index{Path: filepath.Join(t.TempDir(), "discovery.idx")}
	if _, err := ix.Workflows(l); err != nil {
		t.Fatal(err)
	}
	path := l.Path("weather-report")
	fi, _ := os.Stat(path)
	data, _ := os.ReadFile(path)
	edited := bytes.Replace(data, []byte("zzzzzz"), []byte("qwerty"), 1)
	if bytes.Equal(edited, data) {
		t.Fatal("test set-up: description not in the file")
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(edited, 0)
	f.Close()
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	docs, _ := ix.Workflows(l)
	if ms := RankPrepared("qwerty", docs, 1); len(ms) == 0 || ms[0].Name != "weather-report" {
		t.Fatalf("in-place edit not seen by the index: %v", ms)
	}
}
