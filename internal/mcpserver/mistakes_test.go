package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// mistakesThreshold is the share of testdata/mistakes cases whose message
// names the exact fix on both faces (CLI and MCP): issue #11 asks for 95%.
const mistakesThreshold = 0.95

// TestMistakesCorpus runs every broken workflow of testdata/mistakes through
// the validation the CLI uses (pflow --validate-only: App.ResolveTarget then
// App.Run with ValidateOnly) and through workflow_validate over MCP. No case
// may validate as valid, both faces must report the same number of
// problems, and the share of cases whose messages carry every fact listed in
// the case's .expect file (one required substring a line) must reach
// mistakesThreshold.
func TestMistakesCorpus(t *testing.T) {
	dir := filepath.Join(fakemcp.RepoRoot(t), "testdata", "mistakes")
	files, err := filepath.Glob(filepath.Join(dir, "*.pflow.md"))
	if err != nil || len(files) < 80 {
		t.Fatalf("testdata/mistakes holds %d cases (want at least 80): %v", len(files), err)
	}
	sort.Strings(files)
	f := newFixture(t, nil)
	good := 0
	var misses []string
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".pflow.md")
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
			continue
		}
		if cliValid {
			t.Errorf("%s: validates as valid; every corpus case is broken", name)
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
		} else {
			misses = append(misses, fmt.Sprintf("%s: missing %q\n    CLI: %s", name, missing, strings.ReplaceAll(cliText, "\n", " | ")))
		}
	}
	// Printed on every run (go test -v shows it), as issue #11 asks.
	fmt.Printf("mistakes corpus: %d/%d name the exact fix\n", good, len(files))
	t.Logf("%d/%d name the exact fix", good, len(files))
	for _, m := range misses {
		t.Log(m)
	}
	if float64(good) < mistakesThreshold*float64(len(files)) {
		t.Errorf("%d/%d name the exact fix, below the threshold %.0f%%", good, len(files), mistakesThreshold*100)
	}
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
