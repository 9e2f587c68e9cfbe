package validate

import (
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/workflow"
)

func TestAfterLists(t *testing.T) {
	sh := func(id string, extra map[string]any) *workflow.Node {
		p := map[string]any{"command": "echo " + id}
		for k, v := range extra {
			p[k] = v
		}
		return nd(id, "shell", p)
	}
	// In a parallel workflow: an unknown step, a later step and the step
	// itself are refused, naming the fix; a list of earlier steps is fine.
	w := wf(sh("a", nil), sh("b", map[string]any{"after": []any{"a", "nope"}}), sh("c", map[string]any{"after": "d"}), sh("d", map[string]any{"after": "d"}))
	w.Parallel = 4
	errs, _ := run(t, w)
	if d := find(t, errs, "Step 'b': 'after' names 'nope', which is not a step"); !strings.Contains(d.Hint, "a, b, c, d") {
		t.Errorf("hint: %s", d.Hint)
	}
	if d := find(t, errs, "Step 'c': 'after' names 'd', which comes later in the file"); d.Hint != "Move step 'd' above 'c'." {
		t.Errorf("hint: %s", d.Hint)
	}
	find(t, errs, "Step 'd': 'after' names 'd', which comes later in the file")

	w = wf(sh("a", nil), sh("b", map[string]any{"after": []any{"a"}}))
	w.Parallel = 4
	if errs, warns := run(t, w); len(errs) != 0 || len(warns) != 0 {
		t.Fatalf("a valid after: %s%s", dump(errs), dump(warns))
	}
	// Without parallel, after changes nothing: a warning says so.
	w = wf(sh("a", nil), sh("b", map[string]any{"after": []any{"a"}}))
	_, warns := run(t, w)
	if d := find(t, warns, "Step 'b' sets 'after', which only matters when steps run in parallel"); !strings.Contains(d.Hint, "- parallel: true") {
		t.Errorf("hint: %s", d.Hint)
	}
}

func TestWhenInQuotesAndSyntax(t *testing.T) {
	w := wf(nd("a", "shell", map[string]any{"command": "echo a"}),
		nd("b", "shell", map[string]any{"command": "echo b", "when": `"${a.stdout}" == "x"`}),
		nd("c", "shell", map[string]any{"command": "echo c", "when": "${a.stdout} =="}))
	errs, _ := run(t, w)
	if d := find(t, errs, "Step 'b': in '- when:"); !strings.Contains(d.Message, "inside quotes") || !strings.Contains(d.Hint, `${a.stdout} == "text"`) {
		t.Errorf("quotes: %s / %s", d.Message, d.Hint)
	}
	if d := find(t, errs, "Step 'c': in '- when:"); !strings.Contains(d.Message, "not a valid expression") {
		t.Errorf("syntax: %s", d.Message)
	}
}
