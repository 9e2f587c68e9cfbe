package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/llmtest"
)

// planEcho is a correct plan: one shell step that echoes a greeting.
const planEcho = "Here is the workflow:\n\n````markdown\n# Greet\nPrints a greeting.\n\n## Inputs\n\n### name\nWho to greet.\n- type: string\n- required: false\n- default: World\n\n" +
	"## Steps\n\n### greet\nEcho the greeting.\n- type: shell\n```shell command\necho \"planned hello ${name}\"\n```\n\n" +
	"## Outputs\n\n### greeting\nThe greeting.\n- source: ${greet.stdout}\n````\n"

// planBroken reads the output of a step that does not exist.
const planBroken = "```markdown\n# Greet\nPrints a greeting.\n\n## Steps\n\n### greet\nEcho the greeting.\n- type: shell\n- command: echo hi\n\n" +
	"### show\nShow it.\n- type: shell\n- command: echo ${nowhere.stdout}\n```\n"

type planRig struct {
	home string
	env  []string
	fake *llmtest.Fake
}

func newPlanRig(t *testing.T, fake *llmtest.Fake) *planRig {
	r := &planRig{home: t.TempDir(), fake: fake}
	r.env = []string{"PFLOW_HOME=" + r.home, "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	if fake != nil {
		r.env = append(r.env, fake.EnvList()...)
	}
	return r
}

// run runs pflow with args; tty makes stdin a terminal answering in.
func (r *planRig) run(t *testing.T, tty bool, in string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	ios := &IOStreams{In: strings.NewReader(in), Out: &out, ErrOut: &errb, InTTY: tty}
	code = Main(context.Background(), args, ios, r.env)
	return code, out.String(), errb.String()
}

// promptOf is the text pflow sent in a request (system and messages).
func promptOf(t *testing.T, req llmtest.Request) string {
	t.Helper()
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteString("\n")
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, k := range []string{"system", "messages", "content", "text"} {
				walk(x[k])
			}
		}
	}
	walk(req.Body)
	return b.String()
}

func TestPlanFromWordsRunsWithYes(t *testing.T) {
	for _, c := range []struct {
		name string
		fake func(testing.TB) *llmtest.Fake
	}{{"anthropic", llmtest.NewAnthropic}, {"openai", llmtest.NewOpenAI}} {
		t.Run(c.name, func(t *testing.T) {
			fake := c.fake(t)
			fake.Enqueue(llmtest.Text(planEcho))
			r := newPlanRig(t, fake)
			code, out, errs := r.run(t, false, "", "--yes", "say hello to someone", "name=Ada")
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
			}
			if !strings.Contains(out, "planned hello Ada") {
				t.Errorf("the planned workflow must run with the given input: stdout %q", out)
			}
			for _, want := range []string{"Planned workflow: Greet", "1. greet (shell)", "name (string, optional)"} {
				if !strings.Contains(errs, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errs)
				}
			}
			reqs := fake.Requests()
			if len(reqs) != 1 {
				t.Fatalf("want 1 request, got %d", len(reqs))
			}
			p := promptOf(t, reqs[0])
			for _, want := range []string{"say hello to someone", "The `.pflow.md` format", "### shell", "param command"} {
				if !strings.Contains(p, want) {
					t.Errorf("the prompt lacks %q", want)
				}
			}
			drafts, _ := filepath.Glob(filepath.Join(r.home, "drafts", "*.pflow.md"))
			if len(drafts) != 1 {
				t.Errorf("want the plan written to one draft, got %v", drafts)
			}
		})
	}
}

func TestPlanRepairedFromValidationMessage(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	fake.Enqueue(llmtest.Text(planBroken), llmtest.Text(planEcho))
	r := newPlanRig(t, fake)
	code, out, errs := r.run(t, false, "", "--yes", "say hello to someone")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if !strings.Contains(out, "planned hello World") {
		t.Errorf("the repaired workflow must run: stdout %q", out)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("want 2 requests (plan, repair), got %d", len(reqs))
	}
	second := promptOf(t, reqs[1])
	for _, want := range []string{"It failed validation", "nowhere", "echo ${nowhere.stdout}"} {
		if !strings.Contains(second, want) {
			t.Errorf("the repair request lacks %q:\n%s", want, second)
		}
	}
	if !strings.Contains(errs, "repaired 1 time(s)") {
		t.Errorf("stderr should say the plan was repaired:\n%s", errs)
	}
}

func TestPlanStillInvalidEndsWithLastValidationMessage(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	fake.SetDefault(llmtest.Text(planBroken))
	r := newPlanRig(t, fake)
	code, out, errs := r.run(t, false, "", "--yes", "say hello to someone")
	if code == 0 {
		t.Fatalf("an invalid plan must fail\nstdout: %s\nstderr: %s", out, errs)
	}
	if n := len(fake.Requests()); n != 3 {
		t.Errorf("want 3 requests (plan and 2 repairs), got %d", n)
	}
	draft := filepath.Join(r.home, "drafts", "planned-say-hello-to-someone.pflow.md")
	for _, want := range []string{`planned for "say hello to someone" is still invalid after 2 repairs`, "nowhere", draft} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(out, "planned hello") {
		t.Error("nothing must run")
	}
	if _, err := os.Stat(draft); err != nil {
		t.Errorf("the last draft must be kept: %v", err)
	}
}

func TestPlanWithoutLLMSaysHowToConfigureOne(t *testing.T) {
	r := newPlanRig(t, nil)
	code, _, errs := r.run(t, false, "", "find python files")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, want := range []string{"is not a saved workflow, a file or a node type, and planning a workflow from words needs an LLM, but none is configured", "pflow settings llm set-default", "ANTHROPIC_API_KEY", `pflow workflow discover "find python files"`} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

func TestPlanWithoutTerminalPrintsAndDoesNotRun(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	fake.Enqueue(llmtest.Text(planEcho))
	r := newPlanRig(t, fake)
	code, out, errs := r.run(t, false, "", "--save", "greet", "say hello to someone")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if !strings.HasPrefix(out, "# Greet\n") || strings.Contains(out, "planned hello World\n") {
		t.Errorf("stdout must be the workflow, not its run:\n%s", out)
	}
	if !strings.Contains(errs, "Not run") || !strings.Contains(errs, "pflow greet") {
		t.Errorf("stderr must say how to run it:\n%s", errs)
	}
	if _, err := os.Stat(filepath.Join(r.home, "workflows", "greet.pflow.md")); err != nil {
		t.Errorf("--save must keep it in the library: %v", err)
	}
}

func TestPlanJSONWithoutTerminal(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	fake.Enqueue(llmtest.Text(planEcho))
	r := newPlanRig(t, fake)
	code, out, errs := r.run(t, false, "", "--output-format", "json", "say hello to someone")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc["status"] != "planned" || !strings.HasPrefix(doc["workflow"].(string), "# Greet") {
		t.Errorf("doc = %v", doc)
	}
}

func TestPlanOnTerminalAsksBeforeRunning(t *testing.T) {
	fake := llmtest.NewAnthropic(t)
	fake.SetDefault(llmtest.Text(planEcho))
	r := newPlanRig(t, fake)
	code, out, errs := r.run(t, true, "n\n", "say hello to someone")
	if code != 0 || strings.Contains(out, "planned hello") {
		t.Fatalf("declined: must not run (exit %d)\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if !strings.Contains(errs, "Run it? [y/N]") || !strings.Contains(errs, "Not run.") {
		t.Errorf("stderr:\n%s", errs)
	}
	code, out, errs = r.run(t, true, "y\n", "--save", "greet", "say hello to someone")
	if code != 0 || !strings.Contains(out, "planned hello World") {
		t.Fatalf("accepted: must run (exit %d)\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if !strings.Contains(errs, "Saved as 'greet'") {
		t.Errorf("stderr:\n%s", errs)
	}
}
