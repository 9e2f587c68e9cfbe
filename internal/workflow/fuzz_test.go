package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/txtar"
)

func FuzzParseMarkdown(f *testing.F) {
	f.Add([]byte(wrap("### a\nStep a.\n- type: shell\n- command: |\n    echo one\n    # not a heading\n")))
	f.Add([]byte(wrap("### a\nA.\n- type: shell\n- on_error: b\n### b\nB.\n- type: shell\n- next: a\n")))
	// Real documents as seeds: the golden inputs and the worked example.
	if b, err := os.ReadFile(filepath.Join("testdata", "worked.pflow.md")); err == nil {
		f.Add(b)
	}
	golden, _ := filepath.Glob(filepath.Join("testdata", "parse", "*.txtar"))
	for _, file := range golden {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, af := range ar.Files {
			if strings.HasSuffix(af.Name, ".pflow.md") {
				f.Add(af.Data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		w, err := ParseMarkdown(src, "fuzz.pflow.md")
		lines := bytes.Count(src, []byte("\n")) + bytes.Count(src, []byte("\r")) + 1
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is %T, want *ParseError: %v", err, err)
			}
			if pe.Line < 0 || pe.Line > lines {
				t.Fatalf("error line %d outside the file (%d lines): %v", pe.Line, lines, err)
			}
			if pe.Message == "" {
				t.Fatalf("empty message")
			}
			return
		}
		if len(w.Nodes) == 0 || w.Source == nil || w.IRVersion == "" {
			t.Fatalf("parsed workflow incomplete: %+v", w)
		}
		for _, n := range w.Nodes {
			if n.Line < 1 || n.Line > lines {
				t.Fatalf("node %q line %d outside the file", n.ID, n.Line)
			}
		}
		if _, err := json.Marshal(w); err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if len(w.CheckStructure()) == 0 && utf8.Valid(src) {
			formatProperty(t, w)
		}
	})
}

// formatProperty: a structurally valid workflow that FormatMarkdown accepts
// parses back to the same IR (prose aside, which may be escaped, and
// ir_version, which markdown does not write).
func formatProperty(t *testing.T, w *Workflow) {
	md, err := FormatMarkdown(w)
	if err != nil {
		return
	}
	back, err := ParseMarkdown(md, "")
	if err != nil {
		t.Fatalf("formatted markdown does not parse: %v\n%s", err, md)
	}
	got, want := noProse(irOnly(back)), noProse(irOnly(w))
	want.IRVersion = IRVersion // markdown has no ir_version: it reads as the current one
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Fatalf("format round trip differs:\n got  %s\n want %s\nmarkdown:\n%s", gb, wb, md)
	}
}

func noProse(w *Workflow) *Workflow {
	for _, in := range w.Inputs {
		in.Description = ""
	}
	for _, o := range w.Outputs {
		o.Description = ""
	}
	for _, n := range w.Nodes {
		n.Purpose = ""
	}
	return w
}

func FuzzParseJSON(f *testing.F) {
	f.Add([]byte(`{"ir_version":"0.1.0","nodes":[{"id":"a","type":"shell","params":{"command":"echo"}}],"edges":[]}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		w, err := ParseJSON(src, "fuzz.json")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is %T, want *ParseError", err)
			}
			return
		}
		if len(w.CheckStructure()) == 0 {
			formatProperty(t, w)
		}
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, err := ParseJSON(b, ""); err != nil {
			t.Fatalf("re-parse of marshalled IR failed: %v\n%s", err, b)
		}
	})
}

// FuzzFastItem checks that the fast path for one-line items agrees with the
// YAML parser whenever it accepts an item.
func FuzzFastItem(f *testing.F) {
	for _, s := range []string{"- type: shell", "- timeout: 30", "- x: 007", "- a: true", "- b: Null", "- c: ${x.y}", "- d: tr a-z A-Z",
		"- e: a, b", "- f: 1e3", "- g: .5", "- h: yes", "- i: a: b", "- j: x #c", "- k: -1", "- l: 9223372036854775807",
		"- x: _1", "- NULL: 1", "- x: Yes", "- x: 0x1F", "- x: a_1e3", "- x: $1", "- x: /a/b", "- x: .5", "- x: _", "- on: x", "- x: a, b ,c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		k, v, ok := fastItem(line)
		if !ok {
			return
		}
		y, err := parseYAML(line + "\n")
		if err != nil {
			t.Fatalf("fast path accepted %q but YAML rejects it: %v", line, err)
		}
		want := []any{map[string]any{k: v}}
		if !reflect.DeepEqual(y, want) {
			t.Fatalf("%q: fast path %#v, YAML %#v", line, want, y)
		}
	})
}
