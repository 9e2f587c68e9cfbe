package mutate

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/llmtest"
)

var (
	full       = flag.Bool("mutate.full", false, "check every mutant (make mutate), not the 1-in-10 sample")
	reportPath = flag.String("mutate.report", "", "write the markdown report to this file")
	only       = flag.String("mutate.only", "", "check only the workflows whose name contains this")
)

// sampleEvery is the sample `go test` checks: the mutants whose id hashes to
// 0 modulo this.
const sampleEvery = 10

// repoRoot is the repository's root (this package is internal/mutate).
func repoRoot(t testing.TB) string {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// subjects are the workflows the harness mutates: every example (the ones
// that need MCP servers are listed with why they are left out) and this
// package's fixtures, which use the keys the examples do not (retries,
// retry_wait, timeout, cache, next, JSON IR edges). The cases are the
// inputs the example tests run them with.
func subjects(t testing.TB) []Subject {
	root := repoRoot(t)
	p := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	list := []Subject{
		{Name: "examples/hello.pflow.md", Cases: []Case{{Name: "name=World", Params: []string{"name=World"}}}},
		{Name: "examples/batch-parallel.pflow.md", Cases: []Case{{Name: "default"}, {Name: "a bb ccc", Params: []string{"sentence=a bb ccc"}}}},
		{Name: "examples/code-stats.pflow.md", Cases: []Case{{Name: "stdin", Stdin: "the cat and the dog and the bird"}}},
		{Name: "examples/error-handling.pflow.md", Cases: []Case{{Name: "missing file"}, {Name: "app.conf", Params: []string{"path=$FLOWDIR/app.conf"}}}},
		{Name: "examples/files.pflow.md", Cases: []Case{{Name: "dir", Params: []string{"dir=$WORK/out"}}}},
		{Name: "examples/http-api.pflow.md", Cases: []Case{{Name: "api", Params: []string{"api=$API"}}, {Name: "unknown project", Params: []string{"api=$API", "project=none/x"}}}},
		{Name: "examples/llm-summarize.pflow.md", Cases: []Case{{Name: "anthropic", Params: []string{"file=$FLOWDIR/notes.txt"}}}},
		{Name: "examples/mappings.pflow.md", Cases: []Case{{Name: "default"}}},
		{Name: "examples/branch-on-data.pflow.md", Cases: []Case{{Name: "none", Params: []string{"count=0"}}, {Name: "some", Params: []string{"count=5"}}, {Name: "many", Params: []string{"count=12"}}}},
		{Name: "examples/fan-out.pflow.md", Cases: []Case{{Name: "no wait", Params: []string{"delay=0"}}}},
		{Name: "examples/approval.pflow.md", Cases: []Case{{Name: "waits", Params: []string{"what=web"}}}},
		{Name: "examples/nested/publish.pflow.md", Siblings: []string{p("examples/nested/slugify.pflow.md")}, Cases: []Case{{Name: "title", Params: []string{"title=Hello, World!"}}}},
		{Name: "examples/nested/slugify.pflow.md", Cases: []Case{{Name: "title", Params: []string{"title=Hello, World!"}}}},
		{Name: "internal/mutate/testdata/workflows/step-keys.pflow.md", Cases: []Case{{Name: "3 lines"}, {Name: "6 lines", Params: []string{"lines=6"}}}},
		{Name: "internal/mutate/testdata/workflows/branch.json", Cases: []Case{{Name: "default"}, {Name: "goodbye", Params: []string{"name=goodbye", "times=1"}}}},
	}
	mcp := "needs the MCP servers of the npm test peers (internal/app/mcptest runs it); each mutant run would start them"
	for _, s := range []string{"examples/mcp/everything.pflow.md", "examples/mcp/filesystem.pflow.md", "examples/mcp/memory.pflow.md"} {
		list = append(list, Subject{Name: s, Skip: mcp})
	}
	// every .pflow.md under examples/ (outside invalid/) is in the list
	named := map[string]bool{}
	for _, s := range list {
		named[s.Name] = true
	}
	filepath.WalkDir(p("examples"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "invalid" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasSuffix(rel, ".pflow.md") && !named[rel] {
			t.Errorf("%s is an example the mutation harness does not know: add it to subjects (with its inputs) or skip it with a reason", rel)
		}
		return nil
	})
	for i := range list {
		list[i].Path = p(list[i].Name)
	}
	return list
}

// fakes starts the fake API of the http example and a fake Anthropic API,
// and returns the Exec's environment, variables and observer.
func fakes(t testing.TB, ex *CLIExec) {
	var mu sync.Mutex
	var seen []string
	record := func(s string) {
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /projects/{p}/releases", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if p := r.PathValue("p"); p != "pflow" {
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]any{"error": "unknown project " + p})
			return
		}
		if r.Header.Get("Accept") != "application/json" || r.URL.Query().Get("per_page") != "5" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"expected Accept: application/json and per_page=5"}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"releases": []any{
			map[string]any{"id": 42, "version": "v2.1.0"}, map[string]any{"id": 41, "version": "v2.0.0"}}})
	})
	mux.HandleFunc("GET /releases/42/notes", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"text":"Faster batches."}`))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"not found"}`))
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(fmt.Sprintf("api: %s %s accept=%q", r.Method, r.URL.RequestURI(), r.Header.Get("Accept")))
		mux.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	api := "http://" + l.Addr().String()

	llm := llmtest.NewAnthropic(t)
	llm.SetDefault(llmtest.Response{Text: "Revenue up 12% on cloud.", Usage: &llmtest.Usage{Input: 120, Output: 8}})
	ex.Env = append(ex.Env, llm.EnvList()...)
	ex.Vars = map[string]string{"API": api}
	done := 0
	ex.Observe = func() string {
		reqs := llm.Requests()
		for _, r := range reqs[done:] {
			record(fmt.Sprintf("llm: %s %s", r.Path, r.Raw))
		}
		done = len(reqs)
		mu.Lock()
		defer mu.Unlock()
		s := strings.ReplaceAll(strings.Join(seen, "\n"), api, "$API")
		seen = nil
		return s
	}
}

// TestMutationHarness mutates every subject, checks each mutant (by
// default a 1-in-10 sample; -mutate.full: all) and fails when a mutant
// survives that internal/mutate/testdata/known-survivors.txt does not list.
func TestMutationHarness(t *testing.T) {
	if testing.Short() && !*full {
		t.Skip("the mutation sample runs workflows")
	}
	every := sampleEvery
	if *full {
		every = 1
	}
	known, err := os.ReadFile("testdata/known-survivors.txt")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	ex := &CLIExec{Dir: filepath.Join(tmp, "homes"), Timeout: 30 * time.Second}
	fakes(t, ex)
	ck := &Checker{Exec: ex, Dir: filepath.Join(tmp, "work")}
	rep := &Report{Skipped: map[string]string{}, Known: ParseKnown(string(known)), Sample: every}
	ctx := context.Background()
	for _, s := range subjects(t) {
		if *only != "" && !strings.Contains(s.Name, *only) {
			continue
		}
		if s.Skip != "" {
			rep.Skipped[s.Name] = s.Skip
			continue
		}
		// files the cases read, beside the workflow
		s.Siblings = append(s.Siblings, writeInputs(t, tmp)...)
		for i := range s.Cases {
			for j := range s.Cases[i].Params {
				s.Cases[i].Params[j] = strings.ReplaceAll(s.Cases[i].Params[j], "$FLOWDIR", filepath.Join(tmp, "inputs"))
			}
		}
		if err := ck.Original(ctx, s); err != nil {
			t.Errorf("%v", err)
			continue
		}
		b, err := os.ReadFile(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		n, start := 0, time.Now()
		for _, m := range Generate(Parse(s.Name, string(b))) {
			if !Sampled(m.ID, every) {
				continue
			}
			t0 := time.Now()
			r := ck.Check(ctx, s, m)
			if d := time.Since(t0); d > time.Second {
				t.Logf("slow mutant (%v, %s): %s", d.Round(time.Millisecond), r.Verdict, m.ID)
			}
			rep.Results = append(rep.Results, r)
			n++
		}
		t.Logf("%s: %d mutants checked in %v", s.Name, n, time.Since(start).Round(time.Millisecond))
	}
	var buf bytes.Buffer
	rep.Write(&buf)
	if *reportPath != "" {
		if err := os.WriteFile(*reportPath, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tot := rep.Total()
	t.Logf("%d mutants: %d caught (%d located), %d equivalent, %d survivors, %d errors", tot.Mutants, tot.Caught, tot.Located, tot.Equivalent, tot.Survivors, tot.Errors)
	knownS, unknown := rep.Survivors()
	if len(knownS) > 0 {
		var ids []string
		for _, x := range knownS {
			ids = append(ids, x.Mutant.ID)
		}
		sort.Strings(ids)
		t.Logf("%d known survivors in this sample (tolerated; listed in testdata/known-survivors.txt, to be fixed in validation):\n  %s", len(ids), strings.Join(ids, "\n  "))
	}
	if fixed := rep.Fixed(); len(fixed) > 0 {
		var ids []string
		for _, x := range fixed {
			ids = append(ids, x.Mutant.ID+" ("+string(x.Verdict)+")")
		}
		t.Logf("%d known survivors no longer survive; remove them from testdata/known-survivors.txt:\n  %s", len(ids), strings.Join(ids, "\n  "))
	}
	var errs []string
	for _, x := range rep.Results {
		if x.Verdict == Broken {
			errs = append(errs, x.Mutant.ID+": "+x.Diff)
		}
	}
	if len(errs) > 0 {
		t.Errorf("the harness could not decide %d mutants:\n%s", len(errs), strings.Join(errs, "\n"))
	}
	if len(unknown) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%d mutants validate but run differently from the original (validation vouched for what it did not check).\n"+
			"Make validation refuse each (naming the line or step), or, if that must wait, add its id to internal/mutate/testdata/known-survivors.txt:\n\n", len(unknown))
		for _, x := range unknown {
			WriteResult(&b, x, false)
		}
		t.Error(b.String())
	}
}

// writeInputs writes the files the cases read ($FLOWDIR/notes.txt,
// $FLOWDIR/app.conf) once, and returns nothing to copy: they are read in
// place.
func writeInputs(t testing.TB, tmp string) []string {
	dir := filepath.Join(tmp, "inputs")
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("Quarterly revenue grew 12 percent on strong cloud sales.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "app.conf"), []byte("x=1\n"), 0o644)
	return nil
}
