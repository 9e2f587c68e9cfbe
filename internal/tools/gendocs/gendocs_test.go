package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/builtin"
)

// TestCommittedDocsAreCurrent fails when docs/nodes.md or docs/cli.md differ
// from what the generator produces from the code: a changed node interface or
// command without regenerated docs.
func TestCommittedDocsAreCurrent(t *testing.T) {
	files, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nodes.md", "cli.md"} {
		path := filepath.Join("..", "..", "..", "docs", name)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("docs/%s: %v; run `go run ./internal/tools/gendocs` to generate it", name, err)
			continue
		}
		if !bytes.Equal(got, files[name]) {
			t.Errorf("docs/%s is out of date (first difference at line %d); run `go run ./internal/tools/gendocs` to refresh", name, firstDiffLine(got, files[name]))
		}
	}
}

func firstDiffLine(a, b []byte) int {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// TestNodesDocCoversEveryBuiltin: every visible built-in appears with its
// params, every nested output path and a usage snippet; hidden test nodes don't.
func TestNodesDocCoversEveryBuiltin(t *testing.T) {
	specs := builtin.Specs(builtin.Config{})
	doc := NodesMarkdown(specs)
	for _, s := range specs {
		if s.Hidden {
			if strings.Contains(doc, "### "+s.Type+"\n") {
				t.Errorf("hidden node %s is documented", s.Type)
			}
			continue
		}
		if !strings.Contains(doc, "### "+s.Type+"\n") {
			t.Errorf("node %s has no section", s.Type)
		}
		for _, p := range s.Interface.Params {
			if !strings.Contains(doc, "| `"+p.Key+"` |") {
				t.Errorf("%s: param %s missing", s.Type, p.Key)
			}
		}
		if !strings.Contains(doc, "- type: "+s.Type+"\n") {
			t.Errorf("%s: usage snippet missing", s.Type)
		}
	}
}

func TestNodesDocNestedOutputsAndEscaping(t *testing.T) {
	spec := &node.Spec{Type: "fetch", Group: "demo", Attempts: 3, Interface: node.Interface{
		Description: "Fetch things.",
		Params:      []node.Field{{Key: "mode", Type: "str", Description: "a|b", Enum: []any{"a", "b"}, Default: "a"}},
		Outputs: []node.Field{{Key: "items", Type: "list[dict]", Structure: []node.Field{
			{Key: "id", Type: "int", Description: "Item id"},
			{Key: "tags", Type: "list[str]"},
		}}},
		Actions: []string{"default", "error"},
	}}
	doc := NodesMarkdown([]*node.Spec{spec, {Type: "secret-test-node", Hidden: true}})
	for _, want := range []string{
		"| `${fetch.items}` | list[dict] |",
		"| `${fetch.items[0].id}` | int | Item id |",
		"| `${fetch.items[0].tags}` | list[str] |",
		"| `mode` | str | no | `a` | a\\|b One of: `a`, `b`. |",
		"**Attempts**: 3",
		"**Actions**: `default`, `error`",
		"- **demo**: [`fetch`](#fetch)",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("missing %q in:\n%s", want, doc)
		}
	}
	if strings.Contains(doc, "secret-test-node") {
		t.Error("hidden node documented")
	}
}

func TestCLIDocListsEveryCommand(t *testing.T) {
	files, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	doc := string(files["cli.md"])
	for _, want := range []string{
		"## pflow workflow save\n", "## pflow mcp serve\n", "## pflow registry run\n",
		"## pflow settings set-env\n", "## pflow instructions\n", "## pflow completion bash\n",
		"--force", "pflow workflow save ./hello.pflow.md --name hello",
		"--output-format string",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("cli.md lacks %q", want)
		}
	}
	if strings.Contains(doc, "__complete") || strings.Contains(doc, "/nonexistent") {
		t.Error("cli.md shows hidden commands or the generator's fake home")
	}
}

func TestCheckModeReportsStaleFile(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run(dir, true, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "run `go run ./internal/tools/gendocs` to refresh") {
		t.Fatalf("check on empty dir: code %d, stderr %q", code, errOut.String())
	}
	if code := run(dir, false, &out, &errOut); code != 0 {
		t.Fatalf("write: code %d, stderr %q", code, errOut.String())
	}
	errOut.Reset()
	if code := run(dir, true, &out, &errOut); code != 0 {
		t.Fatalf("check after write: code %d, stderr %q", code, errOut.String())
	}
}

// TestTroubleshootingMessagesExist keeps docs/troubleshooting.md honest: the
// literal parts of every message it quotes in a heading must still occur in
// pflow's source, so a reworded error cannot leave a stale entry behind, and
// in a test's expectations (a _test.go file or a testdata file), so that a
// test produces it (most are in cmd/pflow's
// TestTroubleshootingMessagesAreProduced, which matches the heading's text).
func TestTroubleshootingMessagesExist(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	var src, tests strings.Builder
	root := filepath.Join("..", "..", "..")
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		switch {
		case d.IsDir():
		case strings.HasSuffix(path, "_test.go"), strings.Contains(path, "testdata"+string(filepath.Separator)) && (strings.HasSuffix(path, ".txtar") || strings.HasSuffix(path, ".json")):
			data, _ := os.ReadFile(path)
			tests.Write(data)
		case strings.HasSuffix(path, ".go"):
			data, _ := os.ReadFile(path)
			src.Write(data)
		}
		return nil
	})
	code, expectations := src.String(), tests.String()
	checked := 0
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "### `") {
			continue
		}
		// Every backquoted message in the heading.
		parts := strings.Split(line, "`")
		for i := 1; i < len(parts); i += 2 {
			msg := parts[i]
			for _, frag := range literalFragments(msg) {
				checked++
				if !strings.Contains(code, frag) {
					t.Errorf("troubleshooting.md quotes %q, but %q is not in the source any more: update the entry", msg, frag)
				} else if !strings.Contains(expectations, frag) {
					t.Errorf("troubleshooting.md quotes %q, but no test expects %q: add the case to cmd/pflow's TestTroubleshootingMessagesAreProduced (or assert it where it is produced)", msg, frag)
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d message fragments checked; is the heading format still ### `message`?", checked)
	}
}

// literalFragments splits a documented message at its <placeholders>, quotes
// and backslashes (which the Go source spells differently) and returns the
// literal pieces long enough to be distinctive.
func literalFragments(msg string) []string {
	var pieces []string
	inside := false
	cur := ""
	flush := func() {
		pieces = append(pieces, cur)
		cur = ""
	}
	for _, r := range msg {
		switch {
		case r == '<':
			inside = true
			flush()
		case r == '>' && inside:
			inside = false
		case inside:
		case r == '\'', r == '"', r == '\\', r == '$', r == '{', r == '}':
			flush()
		default:
			cur += string(r)
		}
	}
	flush()
	var out []string
	for _, p := range pieces {
		p = strings.Trim(p, " .:;,()")
		if len(p) >= 8 {
			out = append(out, p)
		}
	}
	return out
}
