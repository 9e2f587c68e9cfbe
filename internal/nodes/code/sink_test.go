package code_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/nodes/code"
	"github.com/pflow-go/pflow/internal/nodes/shell"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/validate"
	"github.com/pflow-go/pflow/internal/workflow"
)

// needPython skips without python3, except on CI where the tests must run.
func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil && os.Getenv("PFLOW_PYTHON") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 is required on CI for the code node tests: %v", err)
		}
		t.Skip("SKIPPING: python3 not on PATH")
	}
}

var sinkCatalog = catalog{"code": code.Spec(), "shell": shell.Spec()}

// greet is a workflow whose code step pastes templates into its source: a
// string input in an assignment, in an f-string and in a comment; a shell
// step's JSON text in json.loads; an integer input that the step already
// binds through inputs.
const greet = "# Greeting\nGreets someone with tags from a shell step.\n\n" +
	"## Inputs\n\n### title\nThe title.\n- type: string\n\n### count\nHow many.\n- type: integer\n\n" +
	"## Steps\n\n### emit\nPrint tags as JSON.\n- type: shell\n\n```shell command\nprintf '{\"tags\": [\"a\", \"b\"]}'\n```\n\n" +
	"### use\nBuild the greeting.\n- type: code\n- inputs: {count: \"${count}\"}\n\n" +
	"```python code\n" +
	"import json\n" +
	"count: int\n" +
	"name = \"${title}\"\n" +
	"tags = json.loads('${emit.stdout}')[\"tags\"]\n" +
	"line = f\"{len(tags)} tags for ${title}\"  # was: \"${title}\"\n" +
	"result: dict = {\"name\": name, \"tags\": tags, \"line\": line, \"c\": ${count} + 1}\n" +
	"```\n\n" +
	"## Outputs\n\n### result\nThe greeting.\n- source: ${use.result}\n"

// hostileCode are values that run code if they are pasted into Python
// source, whichever quotes surround the template. PWNED is replaced by a
// path in the test's temp dir.
var hostileCode = []string{
	`x"; __import__('os').system('touch PWNED'); "`,
	`'); import os; os.system('touch PWNED'); print('`,
	`"""; import os; os.system("touch PWNED"); """`,
	"'''\nimport os\nos.system('touch PWNED')\n'''",
	"a\nimport os\nos.system('touch PWNED')\n#",
	`__import__('os').system('touch PWNED')`,
	`{__import__('os').system('touch PWNED')}`,
	`\"; import os; os.system('touch PWNED') #`,
	"${emit.stdout} $${x} {0} %s \\n \\x00 \u2028 ü",
}

func parse(t *testing.T, src string) *workflow.Workflow {
	t.Helper()
	path := filepath.Join(t.TempDir(), "greet.pflow.md")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := workflow.ParseMarkdown([]byte(src), path)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	return w
}

func lineNo(t *testing.T, src, s string) int { return lineOf(t, src, s) }

// applyHints applies the rewrites that validation's hints show, as a user
// copying them would: "Change line N to:" blocks, "Add at the top of the
// code:" lines (once each) and the step's "- inputs:" line.
func applyHints(t *testing.T, src string, diags []validate.Diagnostic) string {
	t.Helper()
	lines := strings.Split(src, "\n")
	type change struct {
		first, last int
		text        []string
	}
	changes := map[int]change{}
	var top []string
	inputs := ""
	changeRe := regexp.MustCompile(`^Change lines? (\d+)(?:-(\d+))? to:$`)
	for _, d := range diags {
		hint := strings.Split(d.Hint, "\n")
		for i := 0; i < len(hint); i++ {
			block := func() []string {
				var out []string
				for i+1 < len(hint) && strings.HasPrefix(hint[i+1], "  ") {
					i++
					out = append(out, strings.TrimPrefix(hint[i], "  "))
				}
				return out
			}
			switch h := hint[i]; {
			case strings.HasPrefix(h, "  - inputs: "):
				inputs = strings.TrimPrefix(h, "  ")
			case h == "Add at the top of the code:":
				for _, l := range block() {
					if !slices.Contains(top, l) {
						top = append(top, l)
					}
				}
			case changeRe.MatchString(h):
				m := changeRe.FindStringSubmatch(h)
				first, _ := strconv.Atoi(m[1])
				last := first
				if m[2] != "" {
					last, _ = strconv.Atoi(m[2])
				}
				changes[first] = change{first, last, block()}
			}
		}
	}
	firsts := make([]int, 0, len(changes))
	for f := range changes {
		firsts = append(firsts, f)
	}
	slices.Sort(firsts)
	for i := len(firsts) - 1; i >= 0; i-- {
		c := changes[firsts[i]]
		lines = slices.Replace(lines, c.first-1, c.last, c.text...)
	}
	fence := slices.Index(lines, "```python code")
	if fence < 0 {
		t.Fatal("no ```python code block")
	}
	lines = slices.Insert(lines, fence+1, top...)
	if inputs != "" {
		if i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "- inputs:") }); i >= 0 {
			lines[i] = inputs
		} else {
			i = slices.Index(lines, "- type: code")
			lines = slices.Insert(lines, i+1, inputs)
		}
	}
	return strings.Join(lines, "\n")
}

// TestTemplateInCodeIsRefusedWithTheExactRewrite: validation refuses every
// template in a code body with a hint that, applied as written, gives a
// workflow that validates and computes what the author meant.
func TestTemplateInCodeIsRefusedWithTheExactRewrite(t *testing.T) {
	needPython(t)
	w := parse(t, greet)
	errs, _ := validate.Validate(context.Background(), w, validate.Options{Catalog: sinkCatalog})
	var sinkErrs []validate.Diagnostic
	for _, d := range errs {
		if d.Param == "code" {
			sinkErrs = append(sinkErrs, d)
		} else {
			t.Errorf("unexpected error: %s", d)
		}
	}
	if len(sinkErrs) != 3 {
		t.Fatalf("want one error per template (title, emit.stdout, count), got %d:\n%v", len(sinkErrs), sinkErrs)
	}
	inputs := "Replace the step's inputs with:\n  - inputs: {count: \"${count}\", name: \"${title}\", stdout: \"${emit.stdout}\"}\n"
	nameLine, tagsLine, lineLine, resultLine := lineNo(t, greet, `name = "${title}"`), lineNo(t, greet, "tags = json.loads"), lineNo(t, greet, "line = f"), lineNo(t, greet, "result: dict")
	want := []struct {
		line    int
		message string
		hint    string
	}{
		{nameLine, "Step 'use' (code), param 'code': template ${title} is inside the Python code; its value would be pasted into the source and could run as code",
			"Pass it in through the step's inputs: inputs arrive as Python values and never run as code.\n" + inputs +
				fmt.Sprintf("Change line %d to:\n  name: str\nChange line %d to:\n  line = f\"{len(tags)} tags for {name}\"  # was: \"$${title}\"", nameLine, lineLine)},
		{tagsLine, "Step 'use' (code), param 'code': template ${emit.stdout} is inside the Python code; its value would be pasted into the source and could run as code",
			"Pass it in through the step's inputs: inputs arrive as Python values and never run as code.\n" + inputs +
				fmt.Sprintf("Add at the top of the code:\n  stdout: object\nChange line %d to:\n  tags = stdout[\"tags\"]", tagsLine)},
		{resultLine, "Step 'use' (code), param 'code': template ${count} is inside the Python code; its value would be pasted into the source and could run as code",
			"The step's inputs already bind it as 'count': use the variable, which holds the value and never runs as code.\n" + inputs +
				fmt.Sprintf("Change line %d to:\n  result: dict = {\"name\": name, \"tags\": tags, \"line\": line, \"c\": count + 1}", resultLine)},
	}
	for i, wd := range want {
		d := sinkErrs[i]
		if d.Line != wd.line || d.Message != wd.message || d.Hint != wd.hint {
			t.Errorf("diagnostic %d:\n got  line %d: %s\n%s\n want line %d: %s\n%s", i, d.Line, d.Message, d.Hint, wd.line, wd.message, wd.hint)
		}
	}

	// The rewrite, applied as shown, validates and runs.
	fixed := applyHints(t, greet, sinkErrs)
	fw := parse(t, fixed)
	if errs, warns := validate.Validate(context.Background(), fw, validate.Options{Catalog: sinkCatalog}); len(errs)+len(warns) > 0 {
		t.Fatalf("the rewritten workflow has findings %v %v:\n%s", errs, warns, fixed)
	}
	for _, h := range hostileCode {
		dir := t.TempDir()
		marker := filepath.Join(dir, "PWNED")
		title := strings.ReplaceAll(h, "PWNED", marker)
		res := runtime.Run(context.Background(), fw, map[string]any{"title": title, "count": int64(41)}, runtime.Options{Catalog: sinkCatalog, Env: runtime.EnvLookup{Process: os.LookupEnv}})
		if !res.Success() {
			t.Fatalf("value %q: run failed: %v", h, res.Failure)
		}
		want := map[string]any{"name": title, "tags": []any{"a", "b"}, "line": "2 tags for " + title, "c": int64(42)}
		if got := res.Shared["use"].(map[string]any)["result"]; !reflect.DeepEqual(got, want) {
			t.Errorf("value %q: result = %#v, want %#v", h, got, want)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("value %q ran code: %s exists", h, marker)
		}
	}
}

// TestTemplateInCodeIsRefusedAtRunTime: without validation (runtime.Run
// directly) the step fails before Python starts, with the rewrite, and no
// hostile value runs.
func TestTemplateInCodeIsRefusedAtRunTime(t *testing.T) {
	needPython(t)
	w := parse(t, greet)
	for _, h := range hostileCode {
		marker := filepath.Join(t.TempDir(), "PWNED")
		title := strings.ReplaceAll(h, "PWNED", marker)
		res := runtime.Run(context.Background(), w, map[string]any{"title": title, "count": int64(1)}, runtime.Options{Catalog: sinkCatalog, Env: runtime.EnvLookup{Process: os.LookupEnv}})
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("value %q ran code: %s exists", h, marker)
		}
		if res.Success() || res.Failure == nil || res.Failure.NodeID != "use" {
			t.Fatalf("value %q: run did not fail in step 'use': %#v", h, res.Failure)
		}
		msg := res.Failure.Message
		for _, want := range []string{
			"Parameter 'code': template ${title} is inside the Python code; its value would be pasted into the source and could run as code.\n",
			"  - inputs: {count: \"${count}\", name: \"${title}\", stdout: \"${emit.stdout}\"}\n",
			fmt.Sprintf("Change line %d to:\n  name: str\n", lineNo(t, greet, `name = "${title}"`)),
			"Parameter 'code': template ${emit.stdout} is inside the Python code",
			"Add at the top of the code:\n  stdout: dict\n", // the run knows the value: a dict parsed from JSON text
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("failure lacks %q:\n%s", want, msg)
			}
		}
		if _, ran := res.Shared["use"].(map[string]any)["result"]; ran {
			t.Errorf("step 'use' produced a result")
		}
	}
}

// TestUnsafeSpliceKeepsPasting: unsafe_splice: true pastes values into the
// source as before, and validation warns about it.
func TestUnsafeSpliceKeepsPasting(t *testing.T) {
	needPython(t)
	src := "# Splice\nPastes an expression.\n\n## Inputs\n\n### expr\nAn expression.\n- type: string\n\n" +
		"## Steps\n\n### calc\nEvaluate it.\n- type: code\n- unsafe_splice: true\n\n```python code\nresult: int = ${expr} * 2\n```\n"
	w := parse(t, src)
	errs, warns := validate.Validate(context.Background(), w, validate.Options{Catalog: sinkCatalog})
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if len(warns) != 1 || warns[0].Param != "unsafe_splice" || !strings.Contains(warns[0].Message, "Step 'calc' (code) sets unsafe_splice: true, so template values are pasted into 'code' as code") {
		t.Fatalf("warnings = %v, want the unsafe_splice warning", warns)
	}
	res := runtime.Run(context.Background(), w, map[string]any{"expr": "3 + 1"}, runtime.Options{Catalog: sinkCatalog, Env: runtime.EnvLookup{Process: os.LookupEnv}})
	if !res.Success() {
		t.Fatalf("run failed: %v", res.Failure)
	}
	// Pasted as source: 3 + 1 * 2.
	if got := res.Shared["calc"].(map[string]any)["result"]; got != int64(5) {
		t.Errorf("result = %#v, want 5 (the text pasted into the source)", got)
	}
}

// TestEscapedTemplateReachesPythonLiterally: "$${" is a literal "${" in the
// code, syntax-checked and run as such.
func TestEscapedTemplateReachesPythonLiterally(t *testing.T) {
	needPython(t)
	src := "# Escape\nKeeps a literal template.\n\n## Steps\n\n### lit\nReturn the text.\n- type: code\n\n```python code\nresult: str = '$${HOME} ' + \"$${x.y}\"\n```\n"
	w := parse(t, src)
	if errs, warns := validate.Validate(context.Background(), w, validate.Options{Catalog: sinkCatalog}); len(errs)+len(warns) > 0 {
		t.Fatalf("findings: %v %v", errs, warns)
	}
	res := runtime.Run(context.Background(), w, nil, runtime.Options{Catalog: sinkCatalog, Env: runtime.EnvLookup{Process: os.LookupEnv}})
	if !res.Success() {
		t.Fatalf("run failed: %v", res.Failure)
	}
	if got := res.Shared["lit"].(map[string]any)["result"]; got != "${HOME} ${x.y}" {
		t.Errorf("result = %#v", got)
	}
	// A syntax error next to an escape is still found statically.
	bad := strings.Replace(src, "result: str =", "result: str = (", 1)
	errs, _ := validate.Validate(context.Background(), parse(t, bad), validate.Options{Catalog: sinkCatalog})
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "Python syntax error in code block") {
		t.Errorf("errors = %v, want the syntax error", errs)
	}
}

// TestTemplateInCodeIsTheOnlyDiagnostic: a template that breaks the Python
// syntax gives the sink error alone, not also a syntax error.
func TestTemplateInCodeIsTheOnlyDiagnostic(t *testing.T) {
	needPython(t)
	src := "# One\nOne message.\n\n## Inputs\n\n### n\nA number.\n- type: integer\n\n## Steps\n\n### calc\nDouble it.\n- type: code\n\n```python code\nresult: int = ${n} * 2\n```\n"
	errs, warns := validate.Validate(context.Background(), parse(t, src), validate.Options{Catalog: sinkCatalog})
	if len(errs) != 1 || len(warns) != 0 {
		t.Fatalf("want exactly the sink error, got %v %v", errs, warns)
	}
	want := fmt.Sprintf("Line %d: Step 'calc' (code), param 'code': template ${n} is inside the Python code; its value would be pasted into the source and could run as code\n"+
		"Pass it in through the step's inputs: inputs arrive as Python values and never run as code.\n"+
		"Set the step's inputs to:\n  - inputs: {n: \"${n}\"}\nAdd at the top of the code:\n  n: int\nChange line %d to:\n  result: int = n * 2",
		lineNo(t, src, "result: int"), lineNo(t, src, "result: int"))
	if got := errs[0].String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
