package validate

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/nodes/ask"
	"github.com/pflow-go/pflow/internal/nodes/switchnode"
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

// A switch whose default action is renamed never takes the step-order
// 'default' edge the file gives it; a step that every branch leads to runs
// on every path, and a step after it, or an output, may read it. The same switch with its
// default left as 'default' does take that edge, past the joined step.
func TestSwitchBranchesThatJoin(t *testing.T) {
	src := func(def string) string {
		return "# J\nBranches that join.\n\n## Inputs\n\n### n\nA number.\n- type: integer\n\n## Steps\n" +
			"\n### pick\nBranch.\n- type: switch\n- cases:\n    - yes: ${n} > 1\n" + def +
			"\n```yaml on\nyes: b\nno: b\n```\n" +
			"\n### b\nJoined.\n- type: shell\n- command: echo b\n\n```yaml on\ndefault: c\n```\n" +
			"\n### c\nReads b.\n- type: shell\n- command: echo \"${b.stdout}\"\n" +
			"\n## Outputs\n\n### out\nFrom b.\n- source: ${b.stdout}\n"
	}
	w, err := workflow.ParseMarkdown([]byte(src("- default: no\n")), "j.pflow.md")
	if err != nil {
		t.Fatal(err)
	}
	cat := testCatalog()
	cat["switch"] = switchnode.Spec()
	check := func(w *workflow.Workflow) []Diagnostic {
		errs, warns := Validate(context.Background(), w, Options{Catalog: cat})
		return append(errs, warns...)
	}
	if ds := check(w); len(ds) != 0 {
		t.Fatalf("every branch leads to b (a step reading it, an output reading it): %s", dump(ds))
	}
	w, err = workflow.ParseMarkdown([]byte(src("")), "j.pflow.md")
	if err != nil {
		t.Fatal(err)
	}
	find(t, check(w), "Step 'c' reads ${b.stdout}")

	// An ask step takes its choices (and timeout), never 'default': every
	// answer routed to b, b runs on every path too.
	cat["ask"] = ask.Spec()
	w, err = workflow.ParseMarkdown([]byte("# A\nAsk, then join.\n\n## Steps\n"+
		"\n### approve\nAsk.\n- type: ask\n- message: Go on?\n\n```yaml on\napproved: b\ndenied: b\ntimeout: b\n```\n"+
		"\n### b\nJoined.\n- type: shell\n- command: echo b\n\n```yaml on\ndefault: c\n```\n"+
		"\n### c\nReads b.\n- type: shell\n- command: echo \"${b.stdout}\"\n"+
		"\n## Outputs\n\n### out\nFrom b.\n- source: ${b.stdout}\n"), "a.pflow.md")
	if err != nil {
		t.Fatal(err)
	}
	if ds := check(w); len(ds) != 0 {
		t.Fatalf("every answer leads to b: %s", dump(ds))
	}
}

// Validation grows with the workflow, not with its square: the checks over
// paths (which steps run on every path, which outputs may be absent) once
// allocated a set of every step per step. A chain four times longer
// allocates about four times as much (a quadratic check, sixteen).
func TestValidationScalesWithTheWorkflow(t *testing.T) {
	// A plain chain, and one whose every step has a condition and routes
	// its error to one handler (so the output is warned about and the
	// steps on every path are worked out for the hint).
	chain := func(n int, branchy bool) *workflow.Workflow {
		var b strings.Builder
		b.WriteString("# Chain\nA long chain.\n\n## Inputs\n\n### seed\nStart.\n- type: string\n\n## Steps\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "\n### s%d\nStep %d.\n- type: shell\n- command: echo ${%s}\n", i, i, map[bool]string{true: "seed", false: fmt.Sprintf("s%d.stdout", i-1)}[i == 0])
			if branchy {
				b.WriteString("- when: ${seed} != \"x\"\n\n```yaml on\nerror: handler\n```\n")
			}
		}
		if branchy {
			b.WriteString("\n### handler\nOn failure.\n- type: shell\n- command: echo failed\n")
		}
		fmt.Fprintf(&b, "\n## Outputs\n\n### last\nThe end.\n- source: ${s%d.stdout}\n", n-1)
		w, err := workflow.ParseMarkdown([]byte(b.String()), "chain.pflow.md")
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	bytesFor := func(w *workflow.Workflow) uint64 {
		var before, after goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&before)
		if errs, _ := Validate(context.Background(), w, Options{Catalog: testCatalog()}); len(errs) > 0 {
			t.Fatalf("a valid chain: %s", dump(errs))
		}
		goruntime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	for _, branchy := range []bool{false, true} {
		small, large := bytesFor(chain(250, branchy)), bytesFor(chain(1000, branchy))
		if ratio := float64(large) / float64(small); ratio > 8 {
			t.Errorf("branchy=%v: validating 1,000 steps allocates %.1f× what 250 do (%d vs %d bytes): some check is quadratic", branchy, ratio, large, small)
		}
	}
}
