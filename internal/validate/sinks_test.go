package validate

import (
	"testing"

	"github.com/pflow-go/pflow/internal/node"
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
	errs, warns := Validate(w, Options{Catalog: sinkCatalog()})
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
	errs, warns := Validate(w, Options{Catalog: sinkCatalog()})
	if len(errs) != 0 {
		t.Fatalf("unsafe_splice is allowed:\n%s", dump(errs))
	}
	d := find(t, warns, "Step 'spliced' (shell) sets unsafe_splice: true")
	if d.Severity != SeverityWarning {
		t.Errorf("severity %s", d.Severity)
	}
}
