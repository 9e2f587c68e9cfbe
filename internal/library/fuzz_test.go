package library

import (
	"context"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/workflow"
)

// FuzzFrontmatterRoundTrip: splitting never panics, and rendering metadata
// above any body then splitting gives that body back unchanged.
func FuzzFrontmatterRoundTrip(f *testing.F) {
	f.Add("# Hello\n\n## Steps\n")
	f.Add("---\nname: x\n---\n# T\n")
	f.Add("---\n---\n")
	f.Add("---\r\nfoo: [\r\n---\r\nbody")
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		SplitFrontmatter([]byte(body))
		out, err := render(Metadata{Version: "1.0.0", ExecutionCount: 2}, body)
		if err != nil {
			t.Fatal(err)
		}
		meta, got, has, err := SplitFrontmatter(out)
		if err != nil || !has {
			t.Fatalf("rendered frontmatter unreadable: %v", err)
		}
		if meta.ExecutionCount != 2 || strings.TrimPrefix(got, "\n") != body {
			t.Fatalf("round trip: meta %+v body %q want %q", meta, got, body)
		}
	})
}

// FuzzSaveRoundTrip is the library's save path as 'pflow workflow save
// x.json' takes it: a structurally valid JSON IR that FormatMarkdown accepts
// is saved (with a description), loaded back with the same params, and a
// recorded run keeps its parameter value.
func FuzzSaveRoundTrip(f *testing.F) {
	f.Add([]byte(`{"ir_version":"0.1.0","nodes":[{"id":"a","type":"shell","params":{"command":"echo hi"}}],"edges":[]}`), "Says hi.")
	f.Add([]byte(`{"ir_version":"0.1.0","nodes":[{"id":"a","type":"shell","params":{"command":"a\u007fb"}}],"edges":[]}`), "del \u007f here")
	f.Add([]byte(`{"ir_version":"0.1.0","inputs":{"x":{"type":"string","default":"\u0085"}},"nodes":[{"id":"a","type":"llm","params":{"prompt":"l1\nl2","n":1.5,"m":{"k":["\ufeff"]}}}],"edges":[]}`), "\u2028")
	dir := f.TempDir()
	lib := &Library{Dir: filepath.Join(dir, "workflows"), DraftsDir: filepath.Join(dir, "drafts"), Log: io.Discard}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, ir []byte, text string) {
		w, err := workflow.ParseJSON(ir, "fuzz.json")
		if err != nil || len(w.CheckStructure()) > 0 {
			return
		}
		md, err := workflow.FormatMarkdown(w)
		if err != nil {
			return
		}
		if _, err := lib.Save(ctx, md, "fuzz", SaveOptions{Force: true, Description: text}); err != nil {
			t.Fatalf("a valid workflow cannot be saved: %v\n%s", err, md)
		}
		got, err := lib.Load("fuzz")
		if err != nil {
			t.Fatalf("a saved workflow cannot be loaded: %v", err)
		}
		if want := strings.TrimSpace(text); got.Meta.Description != want && utf8.ValidString(want) {
			t.Fatalf("description %q came back as %q", want, got.Meta.Description)
		}
		if len(got.Workflow.Nodes) != len(w.Nodes) {
			t.Fatalf("%d nodes came back as %d", len(w.Nodes), len(got.Workflow.Nodes))
		}
		for i, n := range w.Nodes {
			if b := got.Workflow.Nodes[i]; b.ID != n.ID || b.Type != n.Type || !reflect.DeepEqual(b.Params, n.Params) {
				t.Fatalf("node %d: saved %s %s %#v, loaded %s %s %#v", i, n.ID, n.Type, n.Params, b.ID, b.Type, b.Params)
			}
		}
		params := map[string]any{"p": text}
		if err := lib.RecordRun(ctx, "fuzz", true, time.Second, params, nil); err != nil {
			t.Fatalf("recording a run failed: %v", err)
		}
		got, err = lib.Load("fuzz")
		if err != nil {
			t.Fatalf("a workflow with a recorded run cannot be loaded: %v", err)
		}
		if want := SanitizeParams(params, nil); utf8.ValidString(text) && !reflect.DeepEqual(got.Meta.LastExecutionParams, want) {
			t.Fatalf("recorded params %#v came back as %#v", want, got.Meta.LastExecutionParams)
		}
	})
}
