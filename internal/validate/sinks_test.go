package validate

import (
	"context"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/nodes/nested"
)

// sinkCatalog is testCatalog with the shell command marked as a shell sink.
func sinkCatalog() fakeCatalog {
	c := testCatalog()
	sh := *c["shell"]
	sh.Interface.Params = append([]node.Field(nil), sh.Interface.Params...)
	sh.Interface.Params[0].Sink = node.SinkShell
	sh.Interface.Params = append(sh.Interface.Params, node.Field{Key: node.UnsafeSpliceParam, Type: "bool"})
	c["shell"] = &sh
	return c
}

func TestShellSinkProblemsAreStaticErrors(t *testing.T) {
	w := wf(
		nd("src", "shell", map[string]any{"command": "echo hi"}),
		nd("quoted", "shell", map[string]any{"command": "cat <<'EOF'\nfirst\n${src.stdout}\nEOF"}),
		nd("ok", "shell", map[string]any{"command": "echo \"${src.stdout}\" '${src.stdout}'"}),
	)
	w.Nodes[1].SourceLines = map[string]int{"command": 31}
	errs, warns := Validate(context.Background(), w, Options{Catalog: sinkCatalog()})
	d := find(t, errs, "Step 'quoted' (shell), param 'command': template ${src.stdout} is where the shell reads literal text")
	if d.Line != 33 || d.Param != "command" || d.NodeID != "quoted" {
		t.Errorf("diagnostic should point at line 33 of param command of step quoted: %+v", d)
	}
	hasLines(t, d.Hint, "- stdin: ${src.stdout}")
	if len(errs) != 1 || len(warns) != 0 {
		t.Errorf("want exactly the one error:\n%s%s", dump(errs), dump(warns))
	}
}

func TestUnsafeSpliceIsAWarning(t *testing.T) {
	w := wf(
		nd("src", "shell", map[string]any{"command": "echo hi"}),
		nd("spliced", "shell", map[string]any{"command": "${src.stdout}", node.UnsafeSpliceParam: true}),
	)
	errs, warns := Validate(context.Background(), w, Options{Catalog: sinkCatalog()})
	if len(errs) != 0 {
		t.Fatalf("unsafe_splice is allowed:\n%s", dump(errs))
	}
	d := find(t, warns, "Step 'spliced' (shell) sets unsafe_splice: true")
	if d.Severity != SeverityWarning {
		t.Errorf("severity %s", d.Severity)
	}
}

// codeCatalog adds a code-like node whose 'code' param is a code sink.
func codeCatalog() fakeCatalog {
	c := testCatalog()
	c["code"] = &node.Spec{Type: "code", Interface: node.Interface{
		Params: []node.Field{
			{Key: "code", Type: "str", Required: true, Sink: node.SinkCode},
			{Key: "inputs", Type: "dict"},
			{Key: node.UnsafeSpliceParam, Type: "bool"},
		},
		Outputs: []node.Field{{Key: "result", Type: "any"}},
	}}
	return c
}

// TestTemplatesInCodeUseInferredTypes: each template in a code body is one
// error at its file line, and the annotation in the rewrite comes from the
// type validation infers for it.
func TestTemplatesInCodeUseInferredTypes(t *testing.T) {
	calc := nd("calc", "code", map[string]any{
		"code":   "n = ${log.summary.count}\nfor c in ${log.commits}:\n    print(c, '${log.summary.count}', ${whatever})\nresult: int = n",
		"inputs": map[string]any{"limit": int64(5)},
	})
	w := wf(nd("log", "git-log", map[string]any{}), calc)
	calc.SourceLines = map[string]int{"code": 40}
	errs, _ := Validate(context.Background(), w, Options{Catalog: codeCatalog()})
	var got []Diagnostic
	for _, d := range errs {
		if d.Param == "code" && strings.Contains(d.Message, "is inside the Python code") {
			got = append(got, d)
		}
	}
	if len(got) != 3 {
		t.Fatalf("want 3 code-sink errors (count, commits, whatever), got:\n%s", dump(errs))
	}
	inputs := "  - inputs: {limit: 5, n: \"${log.summary.count}\", commits: \"${log.commits}\", whatever: \"${whatever}\"}"
	for i, want := range []struct {
		line  int
		lines []string
	}{
		{40, []string{inputs, "Change line 40 to:\n  n: int\nChange line 42 to:\n      print(c, str(n), whatever)"}},
		{41, []string{inputs, "Add at the top of the code:\n  commits: list\nChange line 41 to:\n  for c in commits:"}},
		{42, []string{"Add at the top of the code:\n  whatever: object\n"}},
	} {
		if got[i].Line != want.line || got[i].NodeID != "calc" {
			t.Errorf("error %d at line %d, want %d: %s", i, got[i].Line, want.line, got[i])
		}
		hasLines(t, got[i].Hint, want.lines...)
	}
}

func TestUnsafeSpliceInCodeWarns(t *testing.T) {
	w := wf(nd("calc", "code", map[string]any{"code": "result: int = ${n}", node.UnsafeSpliceParam: true}))
	w.Inputs = append(w.Inputs, input("n", 2))
	errs, warns := Validate(context.Background(), w, Options{Catalog: codeCatalog()})
	if len(errs) > 0 {
		t.Fatalf("errors:\n%s", dump(errs))
	}
	d := find(t, warns, "Step 'calc' (code) sets unsafe_splice: true")
	if d.Param != node.UnsafeSpliceParam || !strings.Contains(d.Hint, "Remove '- unsafe_splice: true'") {
		t.Errorf("warning = %s", d)
	}
}

// A nested workflow's file, name or IR is written out: a template there
// would let data (a web page, an LLM answer) choose the code that runs.
func TestNestedWorkflowIsNotATemplate(t *testing.T) {
	c := testCatalog()
	c["workflow"] = nested.Spec()
	for _, k := range []string{"workflow_ref", "workflow_name", "workflow_ir"} {
		w := wf(
			nd("src", "shell", map[string]any{"command": "echo hi"}),
			nd("child", "workflow", map[string]any{k: "${src.stdout}"}),
		)
		errs, _ := Validate(context.Background(), w, Options{Catalog: c})
		d := find(t, errs, "Step 'child' (workflow), param '"+k+"': the workflow to run must be written out, not a template")
		if d.Param != k || !strings.Contains(d.Hint, "param_mapping") {
			t.Errorf("%s: %+v", k, d)
		}
	}
}
