package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/workflow"
)

// TestAllowDirBoundsFilesAndNestedWorkflows: an agent's run under an HTTP
// server's --allow-dir may read and write files, and run nested workflows
// by workflow_ref, only under the allowed directories (symlinks resolved,
// also for a file not written yet); the refusal names the step, the param
// and the fix. A local run is not bounded.
func TestAllowDirBoundsFilesAndNestedWorkflows(t *testing.T) {
	a, _ := testApp(t)
	allowed, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s3cr3t-value"), 0o600)
	os.WriteFile(filepath.Join(outside, "child.pflow.md"), []byte("# Child\nA child.\n\n## Steps\n\n### s\nSay.\n- type: echo\n- message: hi\n"), 0o600)
	os.Symlink(outside, filepath.Join(allowed, "escape"))
	pol := PathPolicy{Restrict: true, AllowDirs: []string{allowed}}

	run := func(pol PathPolicy, steps string) (bool, string) {
		t.Helper()
		src := "# W\nA workflow.\n\n## Steps\n\n" + steps
		w, err := workflow.ParseMarkdown([]byte(src), "")
		if err != nil {
			t.Fatal(err)
		}
		out, err := a.Run(context.Background(), RunRequest{Target: &Target{Workflow: w, Name: "w"}, NoTrace: true, Policy: pol})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.ValidationErrors) > 0 {
			t.Fatalf("validation: %+v", out.ValidationErrors)
		}
		if out.Result.Success() {
			return true, ""
		}
		return false, out.Result.Failure.NodeID + ": " + out.Result.Failure.Message
	}
	refused := map[string]string{
		"read outside":           "### r\nRead.\n- type: read-file\n- file_path: " + filepath.Join(outside, "secret.txt") + "\n",
		"write outside":          "### r\nWrite.\n- type: write-file\n- file_path: " + filepath.Join(outside, "new.txt") + "\n- content: x\n",
		"write through symlink":  "### r\nWrite.\n- type: write-file\n- file_path: " + filepath.Join(allowed, "escape", "new.txt") + "\n- content: x\n",
		"copy out":               "### r\nCopy.\n- type: copy-file\n- source_path: " + filepath.Join(allowed, "in.txt") + "\n- dest_path: " + outside + "\n",
		"nested workflow_ref":    "### r\nNested.\n- type: workflow\n- workflow_ref: " + filepath.Join(outside, "child.pflow.md") + "\n",
		"parent written by hand": "### r\nRead.\n- type: read-file\n- file_path: " + allowed + "/../" + filepath.Base(outside) + "/secret.txt\n",
	}
	os.WriteFile(filepath.Join(allowed, "in.txt"), []byte("in"), 0o600)
	for name, steps := range refused {
		ok, msg := run(pol, steps)
		if ok {
			t.Errorf("%s: the run succeeded", name)
			continue
		}
		if !strings.HasPrefix(msg, "r: ") || !strings.Contains(msg, "--allow-dir "+allowed) || !strings.Contains(msg, "outside the directories") {
			t.Errorf("%s: failure %q: want the step, the allowed directories and the fix", name, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Fatal("a file was written outside --allow-dir")
	}
	// Inside the allowed directory, and without the policy, files work.
	if ok, msg := run(pol, "### r\nWrite.\n- type: write-file\n- file_path: "+filepath.Join(allowed, "sub", "new.txt")+"\n- content: x\n"); !ok {
		t.Errorf("write inside --allow-dir: %s", msg)
	}
	if ok, msg := run(PathPolicy{}, refused["read outside"]); !ok {
		t.Errorf("a local run was bounded: %s", msg)
	}
}
