package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/nodes/file"
	"github.com/pflow-go/pflow/internal/workflow"
)

// TestPathSinkKeepsDataInItsFolder: in every file node, a template value
// that makes a ".." path segment fails the step before anything is read,
// written, copied, moved or deleted, naming the param and the template; a
// ".." the author wrote, a value inside the folder and a step that sets
// allow_parent_paths still work.
func TestPathSinkKeepsDataInItsFolder(t *testing.T) {
	cat := testCatalog(nil)
	for _, s := range file.Specs() {
		cat[s.Type] = s
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "out"), 0o755)
	secret := filepath.Join(dir, "secret.txt")
	os.WriteFile(secret, []byte("keep"), 0o600)
	os.WriteFile(filepath.Join(dir, "out", "in.txt"), []byte("in"), 0o600)

	run := func(typ string, params map[string]any, inputs map[string]any) *Result {
		t.Helper()
		w := chain(step("s", typ, params))
		w.Source = &workflow.Source{Path: filepath.Join(dir, "w.pflow.md")}
		return Run(context.Background(), w, inputs, Options{Catalog: cat})
	}
	refused := []struct {
		typ    string
		params map[string]any
		param  string
	}{
		{"read-file", map[string]any{"file_path": "out/${name}"}, "file_path"},
		{"write-file", map[string]any{"file_path": "out/${name}", "content": "x"}, "file_path"},
		{"delete-file", map[string]any{"file_path": "out/${name}", "confirm": true}, "file_path"},
		{"copy-file", map[string]any{"source_path": "out/in.txt", "dest_path": "out/${name}", "overwrite": true}, "dest_path"},
		{"move-file", map[string]any{"source_path": "out/${name}", "dest_path": "out/moved.txt"}, "source_path"},
	}
	for _, c := range refused {
		for _, name := range []string{"../secret.txt", "..", "a/../../secret.txt"} {
			res := run(c.typ, c.params, map[string]any{"name": name})
			if res.Success() || res.Failure == nil || res.Failure.NodeID != "s" || res.Failure.Category != CategoryTemplate ||
				!strings.Contains(res.Failure.Message, "Parameter '"+c.param+"'") || !strings.Contains(res.Failure.Message, "${name}") ||
				!strings.Contains(res.Failure.Message, `".."`) || !strings.Contains(res.Failure.Message, "allow_parent_paths: true") {
				t.Fatalf("%s with name=%q: success=%v failure=%+v", c.typ, name, res.Success(), res.Failure)
			}
		}
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "keep" {
		t.Fatalf("the file outside the folder was touched: %q %v", b, err)
	}
	// A value that only looks like a parent ("..." or "..x") and a value
	// joined to ".." written by the author make no ".." segment.
	if res := run("write-file", map[string]any{"file_path": "out/${name}", "content": "x"}, map[string]any{"name": "..x"}); !res.Success() {
		t.Fatalf("name=..x: %+v", res.Failure)
	}
	if res := run("read-file", map[string]any{"file_path": "out/../out/${name}"}, map[string]any{"name": "in.txt"}); !res.Success() {
		t.Fatalf("author's ..: %+v", res.Failure)
	}
	// Half a segment from the value is enough: "." + "." is "..".
	if res := run("read-file", map[string]any{"file_path": "out/.${name}/secret.txt"}, map[string]any{"name": "."}); res.Success() {
		t.Fatalf("'.' + value '.' made a '..' segment and was let through")
	}
	// The documented opt-out.
	res := run("read-file", map[string]any{"file_path": "out/${name}", "allow_parent_paths": true}, map[string]any{"name": "../secret.txt"})
	if !res.Success() || res.Shared["s"].(map[string]any)["content"] != "keep" {
		t.Fatalf("allow_parent_paths: %+v", res.Failure)
	}
}
