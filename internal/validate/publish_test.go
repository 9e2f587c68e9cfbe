package validate

import (
	"context"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/workflow"
)

func validateSteps(t *testing.T, steps string) (errs, warns []Diagnostic) {
	t.Helper()
	src := "# W\nW.\n\n## Steps\n\n" + steps
	if strings.Contains(steps, "{stdout: config}") {
		src += "\n## Outputs\n\n### config\nThe config.\n"
	}
	w, err := workflow.ParseMarkdown([]byte(src), "w.pflow.md")
	if err != nil {
		t.Fatal(err)
	}
	return Validate(context.Background(), w, Options{Catalog: testCatalog()})
}

// TestOverwrittenPublish: a name two steps publish is refused when the
// second always runs after the first with nothing reading it between (the
// first value is lost: the trace of a dropped on_error); two branches that
// publish one name, a read in between, a 'when' or a route are fine.
func TestOverwrittenPublish(t *testing.T) {
	step := func(id, extra string) string {
		return "### " + id + "\nDoes " + id + ".\n- type: shell\n- command: echo " + id + "\n" + extra + "\n"
	}
	pub := "- output_mappings: {stdout: config}\n"
	cases := []struct {
		name, steps string
		want        string // "" when accepted
	}{
		{"one after the other", step("read", "") + step("show", pub) + step("defaults", pub), "Steps 'show' and 'defaults' both publish 'config'"},
		{"a step between", step("show", pub) + step("mid", "") + step("defaults", pub), "Steps 'show' and 'defaults' both publish 'config'"},
		{"the first routes its failure", step("show", pub+"- on_error: fix\n") + step("defaults", pub) + step("fix", ""), "Steps 'show' and 'defaults'"},
		{"branches", step("read", "- on_error: defaults\n") + step("show", pub) + step("defaults", pub), ""},
		{"read in between", step("show", pub) + "### use\nUses it.\n- type: shell\n- command: echo ${config}\n\n" + step("defaults", pub), ""},
		{"a when", step("show", pub) + step("defaults", pub+"- when: ${show.stdout} == 'x'\n"), ""},
		{"a route in between", step("show", pub) + step("mid", "- on_error: defaults\n") + step("other", "") + step("defaults", pub), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs, _ := validateSteps(t, c.steps)
			var got []Diagnostic
			for _, d := range errs {
				if strings.Contains(d.Message, "both publish") {
					got = append(got, d)
				}
			}
			if c.want == "" {
				if len(got) > 0 {
					t.Fatalf("want no error, got:\n%s", dump(got))
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0].Message, c.want) || got[0].Line == 0 || !strings.Contains(got[0].Hint, "on_error") {
				t.Fatalf("want one error %q with a line and an on_error hint, got:\n%s\nall: %s", c.want, dump(got), dump(errs))
			}
		})
	}
}

// TestFailureReads: reading the exit_code of a step that cannot have failed
// where it is read (no on_error, no ignore_errors) is a warning: it is
// always 0.
func TestFailureReads(t *testing.T) {
	reader := "### report\nReports.\n- type: shell\n- command: echo ${read.exit_code}\n"
	cases := []struct {
		name, read string
		warn       bool
	}{
		{"no route", "- command: cat x\n", true},
		{"on_error", "- command: cat x\n- on_error: report\n", false},
		{"ignore_errors", "- command: cat x\n- ignore_errors: true\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs, warns := validateSteps(t, "### read\nReads.\n- type: shell\n"+c.read+"\n"+reader)
			if len(errs) > 0 {
				t.Fatalf("errors:\n%s", dump(errs))
			}
			found := false
			for _, d := range warns {
				if strings.Contains(d.Message, "'read' cannot have failed") && strings.Contains(d.Hint, "- on_error: report") {
					found = true
				}
			}
			if found != c.warn {
				t.Fatalf("warning: got %v, want %v:\n%s", found, c.warn, dump(warns))
			}
		})
	}
}
