package workflow

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/pflow-go/pflow/internal/value"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected sections of testdata/parse/*.txtar")

// TestParseGolden parses the input.pflow.md of each testdata/parse/*.txtar and
// compares the IR (ir.json) and the source information (source.json) with the
// archive. Run with -update to rewrite them, then review the diff.
func TestParseGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "parse", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var input []byte
			want := map[string][]byte{}
			for _, f := range ar.Files {
				if f.Name == "input.pflow.md" {
					input = f.Data
				} else {
					want[f.Name] = f.Data
				}
			}
			w, err := ParseMarkdown(input, "")
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if errs := w.CheckStructure(); len(errs) != 0 {
				t.Errorf("structure errors: %v", errs)
			}
			got := map[string][]byte{
				"ir.json": indentJSON(t, w),
				"source.json": indentJSON(t, map[string]any{
					"title": w.Source.Title, "description": w.Source.Description,
					"metadata": w.Source.Metadata, "warnings": w.Source.Warnings,
				}),
			}
			if *update {
				ar.Files = []txtar.File{{Name: "input.pflow.md", Data: input}, {Name: "ir.json", Data: got["ir.json"]}, {Name: "source.json", Data: got["source.json"]}}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for name, g := range got {
				if !bytes.Equal(g, want[name]) {
					t.Errorf("%s differs (run go test -run TestParseGolden -update and review):\n got:\n%s\n want:\n%s", name, g, want[name])
				}
			}
		})
	}
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := value.MarshalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}
