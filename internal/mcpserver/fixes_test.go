package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/app"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// TestCorpusFixesWorkWhenFollowed follows every fix that proposes an edit
// (a key or a node type to write instead) in the answers to the mistakes
// corpus: it makes the edit on the line the fix names and validates again.
// The problem the fix was for must be gone: a hint that is wrong when
// followed is worse than none.
func TestCorpusFixesWorkWhenFollowed(t *testing.T) {
	dir := filepath.Join(fakemcp.RepoRoot(t), "testdata", "mistakes")
	files, err := filepath.Glob(filepath.Join(dir, "*.pflow.md"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, nil)
	work := t.TempDir()
	followed := 0
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".pflow.md")
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out := validateFile(t, f.app, path)
		if out == nil {
			continue
		}
		for _, d := range out.ValidationErrors {
			for _, fx := range d.Fixes {
				if fx.Replacement == "" || fx.Line <= 0 || fx.Param == "" {
					continue
				}
				lines := strings.Split(string(src), "\n")
				if fx.Line > len(lines) {
					t.Errorf("%s: fix for %q names line %d of %d", name, d.Message, fx.Line, len(lines))
					continue
				}
				old := lines[fx.Line-1]
				var edited string
				if fx.Param == "type" {
					edited = regexp.MustCompile(`(-\s*type:\s*)\S+`).ReplaceAllString(old, "${1}"+fx.Replacement)
				} else {
					edited = regexp.MustCompile(`\b`+regexp.QuoteMeta(fx.Param)+`\b(\s*:)`).ReplaceAllString(old, fx.Replacement+"${1}")
				}
				if edited == old {
					continue // the fix's param is not written on its line (a value, not a key)
				}
				lines[fx.Line-1] = edited
				fixed := filepath.Join(work, name+".pflow.md")
				if err := os.WriteFile(fixed, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
					t.Fatal(err)
				}
				after := validateFile(t, f.app, fixed)
				followed++
				if after == nil {
					continue
				}
				for _, d2 := range after.ValidationErrors {
					if d2.Message == d.Message {
						t.Errorf("%s: following the fix (line %d: %q → %q) leaves the problem: %s", name, fx.Line, strings.TrimSpace(old), strings.TrimSpace(edited), d.Message)
					}
				}
			}
		}
	}
	if followed < 20 {
		t.Errorf("only %d fixes with an edit were followed; the corpus should exercise more", followed)
	}
	t.Logf("%d fixes followed", followed)
}

// validateFile validates a workflow file as pflow --validate-only does; nil
// when it does not even parse.
func validateFile(t *testing.T, a *app.App, path string) *app.RunOutcome {
	t.Helper()
	tg, err := a.ResolveTarget(path)
	if err != nil {
		return nil
	}
	out, err := a.Run(context.Background(), app.RunRequest{Target: tg, ValidateOnly: true, NoTrace: true})
	if err != nil {
		return nil
	}
	return out
}
