package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// mistakesThreshold is the share of testdata/mistakes cases whose message
// names the exact fix on both faces (CLI and MCP).
const mistakesThreshold = 0.90

// minCasesPerClass is how many independently written cases each class of
// testdata/mistakes/CLASSES.md must have.
const minCasesPerClass = 3

var (
	// classLine is a class of CLASSES.md: "- `class-id` — mistake — message".
	classLine = regexp.MustCompile("^- `([a-z0-9-]+)` — ")
	// classMapLine maps a case written before the classes: "- `case` → `class`".
	classMapLine = regexp.MustCompile("^- `([a-z0-9-]+)` → `([a-z0-9-]+)`")
)

// readClasses reads testdata/mistakes/CLASSES.md: the class ids in the
// order written and the class map of the cases not named CLASS--N.
func readClasses(t *testing.T, dir string) ([]string, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "CLASSES.md"))
	if err != nil {
		t.Fatalf("testdata/mistakes has no CLASSES.md: %v", err)
	}
	var ids []string
	caseClass := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := classMapLine.FindStringSubmatch(line); m != nil {
			caseClass[m[1]] = m[2]
		} else if m := classLine.FindStringSubmatch(line); m != nil {
			ids = append(ids, m[1])
		}
	}
	return ids, caseClass
}

// classOf is the class of a case: the part of its name before "--", or
// its entry in the class map of CLASSES.md.
func classOf(name string, caseClass map[string]string) string {
	if i := strings.Index(name, "--"); i > 0 {
		return name[:i]
	}
	return caseClass[name]
}

// classTally counts a class's cases and those named with the fix.
type classTally struct{ good, total int }

// TestMistakesCorpus runs every broken workflow of testdata/mistakes through
// the validation the CLI uses (pflow --validate-only: App.ResolveTarget then
// App.Run with ValidateOnly) and through workflow_validate over MCP. No case
// may validate as valid, both faces must report the same number of
// problems, and the share of cases whose messages carry every fact listed in
// the case's .expect file (one required substring a line) must reach
// mistakesThreshold. Every case belongs to a class of CLASSES.md (by its
// name CLASS--N or the class map there); the share is printed overall and
// per class, with the classes below 100% and their failing cases.
func TestMistakesCorpus(t *testing.T) {
	dir := filepath.Join(fakemcp.RepoRoot(t), "testdata", "mistakes")
	files, err := filepath.Glob(filepath.Join(dir, "*.pflow.md"))
	if err != nil || len(files) < 200 {
		t.Fatalf("testdata/mistakes holds %d cases (want at least 200): %v", len(files), err)
	}
	sort.Strings(files)
	classIDs, caseClass := readClasses(t, dir)
	known := map[string]bool{}
	for _, id := range classIDs {
		if known[id] {
			t.Errorf("CLASSES.md lists the class %q twice", id)
		}
		known[id] = true
	}
	tally := map[string]*classTally{}
	for _, id := range classIDs {
		tally[id] = &classTally{}
	}
	// classMisses holds, per class, each failing case with the first line
	// of what pflow says now.
	classMisses := map[string][]string{}
	f := newFixture(t, nil)
	good := 0
	var misses []string
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".pflow.md")
		class := classOf(name, caseClass)
		if !known[class] {
			t.Errorf("%s: no class in CLASSES.md (got %q): name it CLASS--N or map it there", name, class)
			class = "(unclassified)"
			if tally[class] == nil {
				tally[class] = &classTally{}
			}
		}
		tally[class].total++
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := os.ReadFile(strings.TrimSuffix(path, ".pflow.md") + ".expect")
		if err != nil {
			t.Fatalf("%s: no .expect file: %v", name, err)
		}
		cliText, cliN, cliValid := cliValidate(t, f.app, path)
		r := f.call("workflow_validate", map[string]any{"workflow": string(src)})
		mcpText := flatten(r.Env)
		mcpValid := !r.IsError
		mcpN := 1
		if errs, ok := r.errDetails()["diagnostics"].([]any); ok {
			mcpN = len(errs)
		}
		if cliValid != mcpValid {
			t.Errorf("%s: the CLI and MCP disagree (cli valid=%v, mcp valid=%v)", name, cliValid, mcpValid)
			classMisses[class] = append(classMisses[class], fmt.Sprintf("%s: the faces disagree (cli valid=%v, mcp valid=%v): %s", name, cliValid, mcpValid, firstLine(cliText)))
			continue
		}
		if cliValid {
			t.Errorf("%s: validates as valid; every corpus case is broken", name)
			classMisses[class] = append(classMisses[class], name+": validates as valid")
			continue
		}
		// A hint naming a CLI command where a tool exists is useless to an agent.
		for _, cli := range []string{"pflow registry", "pflow workflow list"} {
			if strings.Contains(mcpText, cli) {
				t.Errorf("%s: MCP output names the CLI command %q where a tool exists:\n%s", name, cli, mcpText)
			}
		}
		if cliN != mcpN {
			t.Errorf("%s: the CLI reports %d problem(s), MCP %d\nCLI: %s\nMCP: %s", name, cliN, mcpN, cliText, mcpText)
		}
		var missing []string
		for _, want := range strings.Split(strings.TrimSpace(string(exp)), "\n") {
			if want = strings.TrimSpace(want); want == "" {
				continue
			}
			if !strings.Contains(cliText, want) || !strings.Contains(mcpText, want) {
				missing = append(missing, want)
			}
		}
		if len(missing) == 0 {
			good++
			tally[class].good++
		} else {
			misses = append(misses, fmt.Sprintf("%s: missing %q\n    CLI: %s", name, missing, strings.ReplaceAll(cliText, "\n", " | ")))
			classMisses[class] = append(classMisses[class], fmt.Sprintf("%s: missing %q; says: %s", name, missing, firstLine(cliText)))
		}
	}
	// Printed on every run (go test -v shows it), so the figure is always in sight.
	fmt.Printf("mistakes corpus: %d/%d (%.1f%%) name the exact fix\n", good, len(files), pct(good, len(files)))
	t.Logf("%d/%d name the exact fix", good, len(files))
	classes := make([]string, 0, len(tally))
	for id := range tally {
		classes = append(classes, id)
	}
	sort.Strings(classes)
	var below []string
	for _, id := range classes {
		c := tally[id]
		if c.total < minCasesPerClass {
			t.Errorf("class %s has %d case(s); each class needs at least %d", id, c.total, minCasesPerClass)
		}
		fmt.Printf("  %-24s %3d/%-3d %5.1f%%\n", id, c.good, c.total, pct(c.good, c.total))
		if c.good < c.total {
			below = append(below, id)
		}
	}
	if len(below) == 0 {
		fmt.Println("mistakes corpus: every class at 100%")
	} else {
		fmt.Printf("mistakes corpus: classes below 100%%: %s\n", strings.Join(below, ", "))
		for _, id := range below {
			fmt.Printf("  %s (%d/%d):\n", id, tally[id].good, tally[id].total)
			for _, m := range classMisses[id] {
				fmt.Printf("    %s\n", m)
			}
		}
	}
	for _, m := range misses {
		t.Log(m)
	}
	if float64(good) < mistakesThreshold*float64(len(files)) {
		t.Errorf("%d/%d name the exact fix, below the threshold %.0f%%", good, len(files), mistakesThreshold*100)
	}
}

// pct is good/total as a percentage (100 for an empty class).
func pct(good, total int) float64 {
	if total == 0 {
		return 100
	}
	return 100 * float64(good) / float64(total)
}

// firstLine is the first non-blank line of a message, trimmed, past the
// "invalid workflow syntax in FILE" header a parse error starts with.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "invalid workflow syntax in ") {
			return l
		}
	}
	return ""
}

// cliValidate does what `pflow <file> --validate-only` does and returns the
// text the user sees, the number of problems and whether it was valid.
func cliValidate(t *testing.T, a *app.App, path string) (string, int, bool) {
	t.Helper()
	tg, err := a.ResolveTarget(path)
	if err != nil {
		return err.Error(), 1, false
	}
	out, err := a.Run(context.Background(), app.RunRequest{Target: tg, ValidateOnly: true, NoTrace: true})
	if err != nil {
		return err.Error(), 1, false
	}
	var b strings.Builder
	for _, d := range out.ValidationErrors {
		b.WriteString(d.String() + "\n")
	}
	return b.String(), len(out.ValidationErrors), len(out.ValidationErrors) == 0
}

// flatten joins every string inside a decoded JSON value.
func flatten(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x + "\n")
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		default:
			if x != nil {
				fmt.Fprint(&b, x, "\n")
			}
		}
	}
	walk(v)
	return b.String()
}
