package workflow

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/value"
)

func parseMD(t *testing.T, src string) *Workflow {
	t.Helper()
	w, err := ParseMarkdown([]byte(src), "test.pflow.md")
	if err != nil {
		t.Fatalf("ParseMarkdown: %v", err)
	}
	return w
}

func parseErr(t *testing.T, src string) *ParseError {
	t.Helper()
	_, err := ParseMarkdown([]byte(src), "test.pflow.md")
	if err == nil {
		t.Fatalf("ParseMarkdown succeeded, want an error")
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error is %T, want *ParseError: %v", err, err)
	}
	return pe
}

// wrap puts step text under a minimal document.
func wrap(steps string) string {
	return "# T\n\nDoc.\n\n## Steps\n\n" + steps
}

func TestInvalidExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file       string
		line       int
		message    string
		suggestion string // checked when not empty (prefix match)
	}{
		{"bare-code-block", 13, "Code block has no tag.", "Add a tag after the opening fence"},
		{"duplicate-ids", 14, "Duplicate entity ID 'fetch'.", "An entity with ID 'fetch' was already defined at line 7."},
		{"duplicate-param", 14, "Parameter 'command' is defined both inline and as a code block.", "Remove either the inline '- command: ...' or the code block. Each parameter should be defined only once."},
		{"missing-description", 7, "Entity 'fetch' (line 7) is missing a description.", "Add a line of prose under the heading"},
		{"missing-steps", 0, "Missing '## Steps' section.", "Line 5 has '## Step' — did you mean '## Steps'?\n\nAdd a '## Steps' section"},
		{"missing-type", 7, "Node 'fetch' is missing a 'type' parameter.", "Add the node type under the heading"},
		{"unclosed-fence", 13, "Unclosed code block.", "Add a closing fence (```) to match the opening fence at line 13."},
		{"yaml-syntax-error", 10, "YAML syntax error in parameter 'command' of 'process': line 10: did not find expected ',' or ']'", "Each '- key: value' line must be valid YAML."},
		{"invalid-entity-id", 7, "Invalid entity ID 'Fetch Data'.", "IDs must start with a lowercase letter and contain only lowercase letters, digits, hyphens, and underscores.\nPattern: ^[a-z][a-z0-9_-]*$"},
		{"duplicate-code-block", 15, "Duplicate code block for 'command'.", "A 'command' code block was already defined at line 11. Each parameter can only have one code block."},
		{"non-mapping-item", 10, "'just a note about fetching' is not a valid parameter. Use * for documentation bullets.", ""},
		{"unknown-edge-target", 10, "Unknown step 'recovr' in 'on_error' of step 'fetch'.", "Did you mean 'recover'? Available steps: fetch, recover"},
		{"nested-fence", 15, "Code block has no tag (likely caused by nested ``` in the `markdown prompt` block at line 11).", "The `markdown prompt` block at line 11 probably contains a ``` line"},
		{"frontmatter-yaml", 1, "Invalid YAML in frontmatter: line 2: did not find expected ',' or ']'", ""},
		{"yaml-block-error", 12, "YAML syntax error in 'yaml batch' block: line 14: mapping values are not allowed in this context", ""},
		{"empty-steps", 5, "The '## Steps' section has no nodes.", ""},
		{"invalid-edge-value", 11, "'on' for step 'fetch' must map actions to step IDs, got 'error'.", "Write '- on: {error: <step-id>}'"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file+".pflow.md"] = true
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("..", "..", "examples", "invalid", tt.file+".pflow.md")
			_, err := ParseFile(path)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %T %v, want *ParseError", err, err)
			}
			if pe.Line != tt.line || pe.Message != tt.message {
				t.Errorf("got  Line %d: %s\nwant Line %d: %s", pe.Line, pe.Message, tt.line, tt.message)
			}
			if tt.suggestion != "" && !strings.HasPrefix(pe.Suggestion, tt.suggestion) {
				t.Errorf("suggestion %q does not start with %q", pe.Suggestion, tt.suggestion)
			}
			if abs, _ := filepath.Abs(path); pe.Path != abs {
				t.Errorf("Path = %q, want %q", pe.Path, abs)
			}
			want := tt.message
			if tt.line > 0 {
				want = "Line " + itoa(tt.line) + ": " + want
			}
			if !strings.HasPrefix(pe.Error(), want) {
				t.Errorf("Error() = %q, want prefix %q", pe.Error(), want)
			}
			if pe.Suggestion != "" && !strings.Contains(pe.Error(), "\n\n"+pe.Suggestion) {
				t.Errorf("Error() lacks blank line + suggestion: %q", pe.Error())
			}
		})
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "invalid", "*.pflow.md"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("examples/invalid/%s has no expectation in TestInvalidExamples", filepath.Base(f))
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestWorkedExampleGolden(t *testing.T) {
	t.Parallel()
	w, err := ParseFile(filepath.Join("testdata", "worked.pflow.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "worked.ir.json"))
	if err != nil {
		t.Fatal(err)
	}
	gv, _ := value.DecodeJSON(got)
	wv, _ := value.DecodeJSON(want)
	if !reflect.DeepEqual(gv, wv) {
		t.Fatalf("IR mismatch\n got  %s\n want %s", got, want)
	}
	// Document order of inputs and the source information.
	if w.Source.Title != "Hello" || w.Source.Description != "Greets someone." {
		t.Errorf("title/description = %q/%q", w.Source.Title, w.Source.Description)
	}
	if !filepath.IsAbs(w.Source.Path) || !strings.HasSuffix(w.Source.Path, "worked.pflow.md") {
		t.Errorf("Source.Path = %q, want absolute", w.Source.Path)
	}
	if w.Inputs[0].Line != 4 || w.Nodes[0].Line != 9 || w.Nodes[1].Line != 15 || w.Outputs[0].Line != 21 {
		t.Errorf("lines: input %d, nodes %d %d, output %d", w.Inputs[0].Line, w.Nodes[0].Line, w.Nodes[1].Line, w.Outputs[0].Line)
	}
	if len(w.CheckStructure()) != 0 {
		t.Errorf("worked example has structure errors: %v", w.CheckStructure())
	}
}

func TestFences(t *testing.T) {
	t.Parallel()
	src := wrap("### a\nStep a.\n- type: llm\n\n" +
		"````markdown prompt\nSummarize:\n```python\nprint(1)\n```\n````\n\n" +
		"~~~shell command\necho ~ tilde\n~~~\n\n" +
		"```yaml batch\nitems: ${list.files}\nas: file\nparallel: true\nmax_concurrent: 5\n```\n\n" +
		"```json body\n{\"a\": 1}\n```\n\n" +
		"```yaml headers\nAccept: text/plain\nX-N: 3\n```\n\n" +
		"```text system\n  indented\nkept\n```\n\n" +
		"```stdin\nraw single word\n```\n" +
		"## Inputs\n\n### cfg\nA config.\n- type: object\n\n```yaml default\na: 1\n```\n")
	w := parseMD(t, src)
	n := w.Nodes[0]
	wantParams := map[string]any{
		"prompt":  "Summarize:\n```python\nprint(1)\n```",
		"command": "echo ~ tilde",
		"body":    "{\"a\": 1}",
		"headers": map[string]any{"Accept": "text/plain", "X-N": int64(3)},
		"system":  "  indented\nkept",
		"stdin":   "raw single word",
	}
	if !reflect.DeepEqual(n.Params, wantParams) {
		t.Errorf("params:\n got  %#v\n want %#v", n.Params, wantParams)
	}
	wantBatch := &Batch{Items: "${list.files}", As: "file", Parallel: true, MaxConcurrent: 5}
	if !reflect.DeepEqual(n.Batch, wantBatch) {
		t.Errorf("batch = %#v", n.Batch)
	}
	wantLines := map[string]int{"prompt": 12, "command": 19, "body": 30, "system": 39, "stdin": 44}
	if !reflect.DeepEqual(n.SourceLines, wantLines) {
		t.Errorf("_source_lines = %v, want %v", n.SourceLines, wantLines)
	}
	// Inputs blocks are never YAML-parsed.
	if d := w.Inputs.Get("cfg").Default; d != "a: 1" {
		t.Errorf("input default = %#v, want raw string", d)
	}
}

func TestInlineYAML(t *testing.T) {
	t.Parallel()
	src := wrap("### a\nStep a.\n- type: http\n- timeout: 30\n- ratio: 0.5\n- append: true\n- x: \"30\"\n- date: 2024-01-02\n- none:\n" +
		"- headers:\n    Accept: application/json\n    Nested:\n      deep: [1, 2]\n" +
		"- items:\n  - one\n  - two\n" +
		"* a documentation bullet\nMore prose after params.\n#### sub heading here\n")
	w := parseMD(t, src)
	n := w.Nodes[0]
	want := map[string]any{
		"timeout": int64(30), "ratio": 0.5, "append": true, "x": "30", "date": "2024-01-02", "none": nil,
		"headers": map[string]any{"Accept": "application/json", "Nested": map[string]any{"deep": []any{int64(1), int64(2)}}},
		"items":   []any{"one", "two"},
	}
	if !reflect.DeepEqual(n.Params, want) {
		t.Errorf("params:\n got  %#v\n want %#v", n.Params, want)
	}
	if n.Purpose != "Step a.\n* a documentation bullet\nMore prose after params.\n#### sub heading here" {
		t.Errorf("purpose = %q", n.Purpose)
	}
}

// The Python pflow silently truncated a block scalar at an indented '# comment'
// line (it took it for an H1). Continuation lines belong to the item.
func TestIndentedHashInBlockScalarIsKept(t *testing.T) {
	t.Parallel()
	w := parseMD(t, wrap("### a\nStep a.\n- type: shell\n- command: |\n    echo one\n    # a comment\n    echo two\n- stdin: x\n"))
	if got := w.Nodes[0].Params["command"]; got != "echo one\n# a comment\necho two\n" {
		t.Errorf("command = %q", got)
	}
	if w.Nodes[0].Purpose != "Step a." {
		t.Errorf("purpose = %q (continuation lines leaked into prose)", w.Nodes[0].Purpose)
	}
}

// A parameter set twice is an error naming both lines (the original let the
// later one win silently, so a step did what its first line did not say).
func TestDuplicateParamIsAnError(t *testing.T) {
	t.Parallel()
	pe := parseErr(t, wrap("### a\nStep a.\n- type: shell\n- command: one\n\nprose\n\n- command: two\n"))
	if pe.Line != 14 || pe.Message != "Parameter 'command' of 'a' is set twice (lines 10 and 14); only one value can be used." {
		t.Errorf("got Line %d: %s", pe.Line, pe.Message)
	}
}

// A tab in a parameter's indentation is named with the corrected line
// instead of the line silently becoming prose.
func TestTabIndentIsAnError(t *testing.T) {
	t.Parallel()
	pe := parseErr(t, wrap("### a\nStep a.\n- type: shell\n- env:\n\tFOO: bar\n"))
	if pe.Line != 11 || !strings.Contains(pe.Message, "indented with a tab inside the '- env:' parameter of 'a'") || !strings.Contains(pe.Suggestion, "\n  FOO: bar") {
		t.Errorf("got Line %d: %s\n%s", pe.Line, pe.Message, pe.Suggestion)
	}
}

func TestSectionsAndHeadings(t *testing.T) {
	t.Parallel()
	src := "---\nname: demo\ncount: 2\n---\n# My Flow\nLine one.\nLine two.\n\nSecond para.\n# Ignored H1\n\n## step\n\n## STEPS\n\n### a\nStep a.\n- type: shell\n\n## Notes\n\n### note-1\nSome notes.\n```\nuntagged is fine here\n```\n\n## Output\n"
	w := parseMD(t, src)
	s := w.Source
	if s.Title != "My Flow" || s.Description != "Line one.\nLine two.\nSecond para." {
		t.Errorf("title/description = %q / %q", s.Title, s.Description)
	}
	if !reflect.DeepEqual(s.Metadata, map[string]any{"name": "demo", "count": int64(2)}) {
		t.Errorf("metadata = %#v", s.Metadata)
	}
	wantWarn := []string{
		"Line 12: '## step' looks like a typo — did you mean '## Steps'?",
		"Line 28: '## Output' looks like a typo — did you mean '## Outputs'?",
	}
	if !reflect.DeepEqual(s.Warnings, wantWarn) {
		t.Errorf("warnings = %q", s.Warnings)
	}
	if s.Raw != src {
		t.Errorf("Raw not kept")
	}
	if len(w.Nodes) != 1 || w.Nodes[0].Line != 16 {
		t.Errorf("nodes = %+v", w.Nodes)
	}
	w = parseMD(t, "# T\n## Inputs:\n## Nodes\n## Steps\n### a\nA.\n- type: shell\n")
	wantWarn = []string{
		"Line 2: '## Inputs:' looks like a typo — did you mean '## Inputs'?",
		"Line 3: '## Nodes' looks like a typo — did you mean '## Steps'?",
	}
	if !reflect.DeepEqual(w.Source.Warnings, wantWarn) {
		t.Errorf("warnings = %q", w.Source.Warnings)
	}
	// H3 ids are checked in ignored sections too.
	pe := parseErr(t, wrap("### a\nStep a.\n- type: shell\n\n## Notes\n\n### Some Note\ntext\n"))
	if pe.Line != 13 || pe.Message != "Invalid entity ID 'Some Note'." {
		t.Errorf("got %v", pe)
	}
	// An entry under a misspelt section is an error naming the heading.
	pe = parseErr(t, wrap("### a\nStep a.\n- type: shell\n\n## Output\n\n### o\nThe o.\n- source: x\n"))
	if pe.Message != "'## Output' is not a section pflow reads — did you mean '## Outputs'?" || !strings.Contains(pe.Suggestion, "## Outputs") {
		t.Errorf("got %v", pe)
	}
	// The same id may appear in Inputs and Steps.
	parseMD(t, "# T\n## Inputs\n### a\nIn.\n## Steps\n### a\nStep.\n- type: shell\n")
}

func TestCRLF(t *testing.T) {
	t.Parallel()
	w := parseMD(t, strings.ReplaceAll(wrap("### a\nStep a.\n- type: shell\n```shell command\necho hi\n```\n"), "\n", "\r\n"))
	if w.Nodes[0].Params["command"] != "echo hi" || w.Nodes[0].SourceLines["command"] != 11 {
		t.Errorf("node = %+v", w.Nodes[0])
	}
}

func TestBOMAndRawBatchBlock(t *testing.T) {
	t.Parallel()
	w := parseMD(t, "\ufeff---\nname: x\n---\n"+wrap("### a\nStep a.\n- type: shell\n```text batch\nitems: ${x.y}\n```\n")[0:])
	if w.Source.Title != "T" || w.Source.Metadata["name"] != "x" {
		t.Errorf("BOM broke frontmatter/title: %+v", w.Source)
	}
	// A non-YAML batch block stays a string, which the structure check rejects.
	got := render(w.CheckStructure())
	if !strings.Contains(got, "Validation error at nodes[0].batch: 'items: ${x.y}' is not of type 'object'") {
		t.Errorf("structure errors:\n%s", got)
	}
}

func TestTypeErrors(t *testing.T) {
	t.Parallel()
	pe := parseErr(t, wrap("### a\nStep a.\n- type: 5\n"))
	if pe.Line != 9 || !strings.Contains(pe.Message, "invalid 'type' 5") {
		t.Errorf("got %v", pe)
	}
	pe = parseErr(t, wrap("### a\nStep a.\n- type:\n"))
	if pe.Line != 7 || pe.Message != "Node 'a' is missing a 'type' parameter." {
		t.Errorf("got %v", pe)
	}
	// Inline + yaml block for batch.
	pe = parseErr(t, wrap("### a\nStep a.\n- type: shell\n- batch: {items: [1]}\n```yaml batch\nitems: [2]\n```\n"))
	if pe.Line != 11 || pe.Message != "Parameter 'batch' is defined both inline and as a code block." {
		t.Errorf("got %v", pe)
	}
}

func TestStructureErrorsFromMarkdown(t *testing.T) {
	t.Parallel()
	w := parseMD(t, wrap("### a\nStep a.\n- type: shell\n```yaml batch\nitems: files\nmax_concurrent: 0\ncolour: red\n```\n## Inputs\n### x\nAn input.\n- type: text\n- requird: true\n"))
	got := render(w.CheckStructure())
	for _, want := range []string{
		"nodes[0].batch: Additional properties are not allowed ('colour' was unexpected)",
		"nodes[0].batch.max_concurrent: 0 is less than the minimum of 1",
		"nodes[0].batch.items: 'files' does not match",
		"inputs.x: Additional properties are not allowed ('requird' was unexpected)",
		"inputs.x.type: 'text' is not one of",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

func TestParseFileExtensions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	md := wrap("### a\nStep a.\n- type: shell\n")
	if _, err := ParseFile(write("UPPER.PFLOW.MD", md)); err != nil {
		t.Errorf(".PFLOW.MD: %v", err)
	}
	w, err := ParseFile(write("flow.json", `{"nodes":[{"id":"a","type":"shell"}]}`))
	if err != nil || w.Nodes[0].ID != "a" || w.IRVersion != IRVersion {
		t.Errorf(".json: %v %+v", err, w)
	}
	p := write("notes.md", md)
	_, err = ParseFile(p)
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Message, "Wrong file extension: "+p) || pe.Suggestion != "Rename to: "+strings.TrimSuffix(p, ".md")+".pflow.md" {
		t.Errorf("notes.md: %v", err)
	}
	_, err = ParseFile(write("flow.yaml", "x"))
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "Unsupported workflow file") {
		t.Errorf("flow.yaml: %v", err)
	}
	_, err = ParseFile(filepath.Join(dir, "missing.pflow.md"))
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Message, "Workflow file not found") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if pe.PFError().Kind != "not_found" {
		t.Errorf("PFError kind = %q", pe.PFError().Kind)
	}
}

func TestBlankLineEndingItemWarns(t *testing.T) {
	t.Parallel()
	w := parseMD(t, wrap("### a\nStep a.\n- type: shell\n- command: |\n    echo one\n\n    echo two\n"))
	if got := w.Nodes[0].Params["command"]; got != "echo one\n" {
		t.Errorf("command = %q", got)
	}
	want := []string{"Line 13: the blank line above ended the '- command: |' parameter (line 10), so this indented text became part of the description of 'a'. Put multi-line text in a fenced code block."}
	if !reflect.DeepEqual(w.Source.Warnings, want) {
		t.Errorf("warnings = %q", w.Source.Warnings)
	}
}

func TestYAMLItemErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ steps, msg string }{
		{"### a\nA.\n- type: shell\n- headers:\n    A: 1\n    A: 2\n", "YAML syntax error in parameter 'headers' of 'a': line 12: mapping key \"A\" already defined at line 11"},
		{"### a\nA.\n- type: shell\n- command: echo '{\"x\": 1}'\n", "YAML syntax error in parameter 'command' of 'a': line 10: mapping values are not allowed in this context"},
	}
	for _, tt := range tests {
		pe := parseErr(t, wrap(tt.steps))
		if pe.Line != 10 || pe.Message != tt.msg {
			t.Errorf("got Line %d: %s\nwant Line 10: %s", pe.Line, pe.Message, tt.msg)
		}
		if strings.Contains(tt.steps, "command:") && !strings.HasSuffix(pe.Suggestion, "Corrected, if the value is text:\n\n- command: \"echo '{\\\"x\\\": 1}'\"") {
			t.Errorf("a one-line value gets its quoted form:\n%s", pe.Suggestion)
		}
	}
}

func TestFenceInListItem(t *testing.T) {
	t.Parallel()
	w := parseMD(t, wrap("### a\nA.\n- type: shell\n  ```shell command\n  echo hi\n  ```\n- stdin: x\n"))
	if w.Nodes[0].Params["command"] != "echo hi" || w.Nodes[0].Params["stdin"] != "x" {
		t.Errorf("params = %v", w.Nodes[0].Params)
	}
	pe := parseErr(t, wrap("### a\nA.\n- type: shell\n  ```shell command\n  echo hi\n```\n"))
	if pe.Line != 10 || pe.Message != "Unclosed code block." || !strings.HasPrefix(pe.Suggestion, "The fence at line 12 does not close it") {
		t.Errorf("got %v", pe)
	}
}

// A library file saved twice has a second frontmatter block before the H1;
// it must not turn into sections (the description still parses), and a
// setext heading after the H1 is text plus a warning.
func TestSetextAndSecondFrontmatter(t *testing.T) {
	t.Parallel()
	src := "---\nname: x\n---\n---\ncreated_at: '2026'\nversion: 1.0.0\n---\n# T\nThe description.\n\n## Steps\n### a\nA.\nNot a heading\n---\n- type: shell\n"
	w := parseMD(t, src)
	if w.Source.Title != "T" || w.Source.Description != "The description." || w.Source.Metadata["name"] != "x" {
		t.Errorf("source = %+v", w.Source)
	}
	if w.Nodes[0].Purpose != "A.\nNot a heading" {
		t.Errorf("purpose = %q", w.Nodes[0].Purpose)
	}
	want := []string{"Line 13: 'A. Not a heading' underlined with '---' renders as a heading, but pflow reads it as text. Write '## A. Not a heading' for a heading, or put a blank line before '---' for a horizontal rule."}
	if !reflect.DeepEqual(w.Source.Warnings, want) {
		t.Errorf("warnings = %q", w.Source.Warnings)
	}
}
