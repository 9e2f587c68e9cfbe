package code_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/code"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

type catalog map[string]*node.Spec

func (c catalog) Lookup(t string) (*node.Spec, bool) { s, ok := c[t]; return s, ok }
func (c catalog) Types() []string                    { return value.SortedKeys(c) }

// runFile parses a .pflow.md written to a temp dir and runs it with only the
// code node registered.
func runFile(t *testing.T, src string) *runtime.Result {
	t.Helper()
	needPython(t)
	path := filepath.Join(t.TempDir(), "report.pflow.md")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := workflow.ParseMarkdown([]byte(src), path)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return runtime.Run(context.Background(), w, nil, runtime.Options{
		Catalog: catalog{"code": code.Spec()},
		Env:     runtime.EnvLookup{Process: os.LookupEnv},
	})
}

// lineOf returns the 1-based line of the first line of src containing s.
func lineOf(t *testing.T, src, s string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%q not in source", s)
	return 0
}

func TestWorkflowSyntaxErrorPointsAtTheFileLine(t *testing.T) {
	src := "# Report\n\nSums numbers.\n\n## Steps\n\n### total\n\nAdd them up.\n\n- type: code\n- inputs:\n    nums: [1, 2, 3]\n\n```python code\nnums: list\nresult: int = 0\nfor n in nums\n    result += n\n```\n"
	res := runFile(t, src)
	if res.Success() || res.Failure == nil {
		t.Fatalf("run succeeded, want a syntax error")
	}
	want := "Line " + strconv.Itoa(lineOf(t, src, "for n in nums")) + " in report.pflow.md (line 3 of the code block): SyntaxError:"
	if !strings.Contains(res.Failure.Message, want) || !strings.Contains(res.Failure.Message, "Source: for n in nums") {
		t.Errorf("failure = %q, want it to contain %q", res.Failure.Message, want)
	}
}

func TestWorkflowRuntimeErrorAndTypedInputs(t *testing.T) {
	src := "# Report\n\nSums numbers.\n\n## Steps\n\n### total\n\nAdd them up.\n\n- type: code\n- inputs:\n    nums: [1, 2.5, 3]\n    label: total\n\n```python code\nnums: list\nlabel: str\nresult: dict = {label: sum(nums)}\n```\n\n### fail\n\nBreaks.\n\n- type: code\n- inputs:\n    data: ${total.result}\n\n```python code\ndata: dict\nprint(data)\nresult: float = data['missing']\n```\n"
	res := runFile(t, src)
	if res.Success() || res.Failure == nil || res.Failure.NodeID != "fail" {
		t.Fatalf("status %s failure %#v, want the 'fail' step to fail", res.Status, res.Failure)
	}
	want := "Line " + strconv.Itoa(lineOf(t, src, "data['missing']")) + " in report.pflow.md (line 3 of the code block): KeyError: 'missing'"
	if !strings.Contains(res.Failure.Message, want) {
		t.Errorf("failure = %q, want it to contain %q", res.Failure.Message, want)
	}
	total, _ := res.Shared["total"].(map[string]any)
	if total == nil || total["result"].(map[string]any)["total"] != 6.5 {
		t.Errorf("total.result = %#v", res.Shared["total"])
	}
}
