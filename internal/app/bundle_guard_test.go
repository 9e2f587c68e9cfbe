package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/pferr"
)

// A run sent to Temporal by pflow mcp serve --http --allow-dir reads its
// nested workflow files into the bundle on the serving machine: a
// workflow_ref outside the directories is refused there, with the reason;
// one inside is sent.
func TestBundleRefusesAWorkflowRefOutsideAllowDir(t *testing.T) {
	a, _ := testApp(t)
	allowed, outside := t.TempDir(), t.TempDir()
	child := "# Child\nA child.\n\n## Steps\n\n### hi\nSay hi.\n- type: shell\n- command: echo hi\n"
	os.WriteFile(filepath.Join(allowed, "child.pflow.md"), []byte(child), 0o644)
	os.WriteFile(filepath.Join(outside, "secret.pflow.md"), []byte(child), 0o644)
	parent := func(ref string) *Target {
		t.Helper()
		p := filepath.Join(allowed, "parent.pflow.md")
		os.WriteFile(p, []byte("# Parent\nRuns a child.\n\n## Steps\n\n### sub\nThe child.\n- type: workflow\n- workflow_ref: "+ref+"\n"), 0o644)
		tg, err := a.ResolveTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	guard := PathPolicy{Restrict: true, AllowDirs: []string{allowed}}.Guard()
	b, err := a.bundle(parent("./child.pflow.md"), guard)
	if err != nil || len(b.Files) != 1 {
		t.Fatalf("a child inside: %v %v", err, b.Files)
	}
	_, err = a.bundle(parent(filepath.Join(outside, "secret.pflow.md")), guard)
	if pe, ok := err.(*pferr.Error); !ok || pe.Kind != pferr.Security || !strings.Contains(pe.Message, "--allow-dir") || !strings.Contains(pe.Message, "step 'sub'") {
		t.Fatalf("a child outside: %v", err)
	}
	if _, err := a.bundle(parent(filepath.Join(outside, "secret.pflow.md")), nil); err != nil {
		t.Fatalf("without a bound: %v", err)
	}
}
