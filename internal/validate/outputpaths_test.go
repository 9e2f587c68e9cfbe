package validate

import (
	"context"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/workflow"
)

// TestOutputsFromStepsNotOnEveryPath: an output whose source reads a step
// that some successful run skips (a step only reached through on_error or
// 'on', or one after such a branch) is a warning naming the output, the
// step and the paths without it, with the fix; an output from a step every
// run goes through is not.
func TestOutputsFromStepsNotOnEveryPath(t *testing.T) {
	const branch = "### read\nReads.\n- type: shell\n- command: cat x\n- on_error: defaults\n\n" +
		"### show\nShows.\n- type: shell\n- command: echo shown\n\n" +
		"### defaults\nFalls back.\n- type: shell\n- command: echo defaults\n"
	const rejoin = "### read\nReads.\n- type: shell\n- command: cat x\n- on_error: defaults\n\n" +
		"### show\nShows.\n- type: shell\n- command: echo shown\n- next: report\n\n" +
		"### defaults\nFalls back.\n- type: shell\n- command: echo defaults\n- next: report\n\n" +
		"### report\nReports.\n- type: shell\n- command: echo done\n"
	const after = "### read\nReads.\n- type: shell\n- command: cat x\n- on_error: handle\n\n" +
		"### parse\nParses.\n- type: shell\n- command: echo parsed\n\n" +
		"### summary\nSums up.\n- type: shell\n- command: echo ${parse.stdout}\n- next: end\n\n" +
		"### handle\nHandles.\n- type: shell\n- command: echo handled\n\n" +
		"### end\nEnds.\n- type: shell\n- command: echo end\n"
	cases := []struct {
		name, steps, source string
		want                []string // empty: no warning
	}{
		{"step after the success edge", branch, "${show.stdout}", []string{"Output 'out' reads step 'show', which does not run on every path", "the path read -[error]-> defaults", "'out' is absent", "a step that runs on every path ('read')"}},
		{"the error handler", branch, "${defaults.stdout}", []string{"reads step 'defaults'", "the path read -> show"}},
		{"a step after a branch", after, `"summary ${summary.stdout}, parsed ${parse.stdout}"`, []string{"reads steps 'summary', 'parse', which do not run on every path", "the path read -[error]-> handle ends"}},
		{"the step the branches rejoin", rejoin, "${report.stdout}", nil},
		{"the first step", branch, "${read.stdout}", nil},
		{"a bare source", rejoin, "show.stdout", []string{"reads step 'show'", "the path read -[error]-> defaults -> report"}},
		{"an input", branch, "${who}", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inputs := ""
			if strings.Contains(c.source, "${who}") {
				inputs = "## Inputs\n\n### who\nWho.\n- type: string\n\n"
			}
			src := "# W\nW.\n\n" + inputs + "## Steps\n\n" + c.steps + "\n## Outputs\n\n### out\nThe output.\n- source: " + c.source + "\n"
			w, err := workflow.ParseMarkdown([]byte(src), "w.pflow.md")
			if err != nil {
				t.Fatal(err)
			}
			errs, warns := Validate(context.Background(), w, Options{Catalog: testCatalog()})
			if len(errs) > 0 {
				t.Fatalf("errors:\n%s", dump(errs))
			}
			var got []Diagnostic
			for _, d := range warns {
				if strings.Contains(d.Message, "run on every path") {
					got = append(got, d)
				}
			}
			if len(c.want) == 0 {
				if len(got) > 0 {
					t.Errorf("want no warning, got:\n%s", dump(got))
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one warning, got:\n%s", dump(got))
			}
			text := got[0].Message + "\n" + got[0].Hint
			for _, want := range c.want {
				if !strings.Contains(text, want) {
					t.Errorf("warning lacks %q:\n%s", want, text)
				}
			}
			if got[0].Param != "source" || got[0].Line == 0 || got[0].Severity != SeverityWarning {
				t.Errorf("warning at param %q line %d severity %s; want the output's source line, a warning", got[0].Param, got[0].Line, got[0].Severity)
			}
		})
	}
}
