package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/runs"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/stephash"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// counterWorkflow is an n-step chain of shell steps; every step appends its
// id to the counter file (its side effect) and echoes the previous step's
// output with its own id appended. fail names a step whose command fails
// after appending.
func counterWorkflow(n int, fail string, edits map[string]string) string {
	var b strings.Builder
	b.WriteString("# Counter chain\nEvery step leaves a mark.\n\n## Inputs\n\n### counter\nThe counter file.\n- type: string\n\n## Steps\n")
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("s%d", i)
		prev := `start`
		if i > 1 {
			prev = fmt.Sprintf("${s%d.stdout}", i-1)
		}
		cmd := fmt.Sprintf(`echo %s >> "${counter}"; echo "%s-%s"`, id, prev, id)
		if id == fail {
			cmd = fmt.Sprintf(`echo %s >> "${counter}"; echo "step %s is broken" >&2; exit 3`, id, id)
		}
		if e, ok := edits[id]; ok {
			cmd = fmt.Sprintf(`echo %s >> "${counter}"; echo "%s-%s"`, id, prev, e)
		}
		fmt.Fprintf(&b, "\n### %s\nStep %d.\n- type: shell\n\n```shell command\n%s\n```\n", id, i, cmd)
	}
	fmt.Fprintf(&b, "\n## Outputs\n\n### last\nThe last output.\n- source: ${s%d.stdout}\n", n)
	return b.String()
}

// counts reads the counter file: how many times each step ran.
func counts(t *testing.T, path string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, l := range strings.Fields(string(b)) {
		out[l]++
	}
	return out
}

func runFile(t *testing.T, a *App, path string, params map[string]any, mod func(*RunRequest)) *RunOutcome {
	t.Helper()
	tg, err := a.ResolveTarget(path)
	if err != nil {
		t.Fatal(err)
	}
	req := RunRequest{Target: tg, Params: params, NoTrace: true}
	if mod != nil {
		mod(&req)
	}
	out, err := a.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(out.InputErrors)+len(out.ValidationErrors) > 0 {
		t.Fatalf("run: %+v %+v", out.InputErrors, out.ValidationErrors)
	}
	return out
}

func stepSources(r *runtime.Result) map[string]string {
	m := map[string]string{}
	for _, s := range r.Steps {
		src := s.Source
		if s.Status == runtime.StatusNotExecuted {
			src = "not-executed"
		} else if src == "" {
			src = "ran"
		}
		m[s.NodeID] = src
	}
	return m
}

// A 10-step workflow failing at step 9 is fixed and resumed: steps 1–8 are
// not executed again (the counter proves it), the run succeeds, and its
// outputs equal a clean run's.
func TestResumeAfterFixReusesCompletedSteps(t *testing.T) {
	a, _ := testApp(t)
	dir := t.TempDir()
	wf := filepath.Join(dir, "chain.pflow.md")
	counter := filepath.Join(dir, "counter")
	os.WriteFile(wf, []byte(counterWorkflow(10, "s9", nil)), 0o644)

	first := runFile(t, a, wf, map[string]any{"counter": counter}, nil)
	if first.Result.Success() || first.Result.Failure.NodeID != "s9" || first.RunID == "" {
		t.Fatalf("first run: %+v %q", first.Result.Failure, first.RunID)
	}
	// The fix: step 9 works now.
	os.WriteFile(wf, []byte(counterWorkflow(10, "", nil)), 0o644)
	resumed := runFile(t, a, wf, map[string]any{}, func(r *RunRequest) { r.Resume = first.RunID })
	if !resumed.Result.Success() {
		t.Fatalf("resume failed: %+v", resumed.Result.Failure)
	}
	if resumed.ResumedFrom != first.RunID || resumed.RunID == first.RunID {
		t.Fatalf("ids: resumed %q from %q (first %q)", resumed.RunID, resumed.ResumedFrom, first.RunID)
	}
	c := counts(t, counter)
	for i := 1; i <= 8; i++ {
		if n := c[fmt.Sprintf("s%d", i)]; n != 1 {
			t.Errorf("step s%d ran %d times, want 1: %v", i, n, c)
		}
	}
	if c["s9"] != 2 || c["s10"] != 1 {
		t.Errorf("s9 ran %d times (want 2: failed, then fixed), s10 %d (want 1)", c["s9"], c["s10"])
	}
	src := stepSources(resumed.Result)
	for i := 1; i <= 8; i++ {
		if src[fmt.Sprintf("s%d", i)] != runtime.SourceResumed {
			t.Errorf("step s%d: source %q, want resumed", i, src[fmt.Sprintf("s%d", i)])
		}
	}
	if src["s9"] != "ran" || src["s10"] != "ran" {
		t.Errorf("sources %v", src)
	}

	// A clean run of the fixed workflow gives the same outputs.
	b, _ := testApp(t)
	clean := runFile(t, b, wf, map[string]any{"counter": filepath.Join(dir, "clean-counter")}, nil)
	if !clean.Result.Success() || !reflect.DeepEqual(clean.Result.Outputs, resumed.Result.Outputs) {
		t.Fatalf("clean outputs %v, resumed %v", clean.Result.Outputs, resumed.Result.Outputs)
	}
	if want := "start-s1-s2-s3-s4-s5-s6-s7-s8-s9-s10"; resumed.Result.Outputs["last"] != want {
		t.Fatalf("last = %v, want %s", resumed.Result.Outputs["last"], want)
	}

	// The records say so.
	list, err := a.ListRuns(0)
	if err != nil || len(list) != 2 {
		t.Fatalf("runs: %v %v", list, err)
	}
	if list[0].ID != resumed.RunID || list[0].Status != runtime.RunSuccess || list[0].ResumedFrom != first.RunID || list[0].Resumed != 8 || list[0].Ran != 2 {
		t.Errorf("newest run: %+v", list[0])
	}
	if list[1].Status != runtime.RunFailed || list[1].FailedStep != "s9" {
		t.Errorf("first run: %+v", list[1])
	}
}

// A step edited before the resume runs again with the steps that read it;
// steps that do not depend on it are re-used.
func TestResumeRerunsEditedStepAndItsDependants(t *testing.T) {
	a, _ := testApp(t)
	dir := t.TempDir()
	wf := filepath.Join(dir, "dag.pflow.md")
	counter := filepath.Join(dir, "counter")
	// a → b → d; c reads only a; e fails and reads c and d.
	src := func(bText, eCmd string) string {
		return "# DAG\nA small graph.\n\n## Inputs\n\n### counter\nThe counter file.\n- type: string\n\n## Steps\n" +
			"\n### a\nRoot.\n- type: shell\n- command: echo a >> \"${counter}\"; echo A\n" +
			"\n### b\nReads a.\n- type: shell\n- command: echo b >> \"${counter}\"; echo \"${a.stdout}-" + bText + "\"\n" +
			"\n### c\nReads a only.\n- type: shell\n- command: echo c >> \"${counter}\"; echo \"${a.stdout}-C\"\n" +
			"\n### d\nReads b.\n- type: shell\n- command: echo d >> \"${counter}\"; echo \"${b.stdout}-D\"\n" +
			"\n### e\nReads c and d.\n- type: shell\n- command: echo e >> \"${counter}\"; " + eCmd + "\n" +
			"\n## Outputs\n\n### out\nAll of it.\n- source: ${e.stdout}\n"
	}
	os.WriteFile(wf, []byte(src("B", "exit 1")), 0o644)
	first := runFile(t, a, wf, map[string]any{"counter": counter}, nil)
	if first.Result.Success() {
		t.Fatal("first run should fail at e")
	}
	os.WriteFile(wf, []byte(src("B2", `echo "${c.stdout}+${d.stdout}"`)), 0o644)
	res := runFile(t, a, wf, nil, func(r *RunRequest) { r.Resume = "last" })
	if !res.Result.Success() {
		t.Fatalf("resume: %+v", res.Result.Failure)
	}
	got := stepSources(res.Result)
	want := map[string]string{"a": "resumed", "b": "ran", "c": "resumed", "d": "ran", "e": "ran"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sources %v, want %v", got, want)
	}
	c := counts(t, counter)
	if c["a"] != 1 || c["c"] != 1 || c["b"] != 2 || c["d"] != 2 || c["e"] != 2 {
		t.Fatalf("counter %v", c)
	}
	if res.Result.Outputs["out"] != "A-C+A-B2-D" {
		t.Fatalf("out = %v", res.Result.Outputs["out"])
	}
}

// A resume with another workflow is refused with the reason; a secret input
// must be given again and be the same.
func TestResumeRefusals(t *testing.T) {
	a, _ := testApp(t)
	dir := t.TempDir()
	wf := filepath.Join(dir, "one.pflow.md")
	other := filepath.Join(dir, "other.pflow.md")
	body := "# One\nOne step.\n\n## Inputs\n\n### api_token\nA secret.\n- type: string\n\n## Steps\n\n### s\nFails.\n- type: shell\n- command: test -n \"${api_token}\" && exit 1\n"
	os.WriteFile(wf, []byte(body), 0o644)
	os.WriteFile(other, []byte(body), 0o644)
	first := runFile(t, a, wf, map[string]any{"api_token": "tok-123456"}, nil)
	if first.Result.Success() {
		t.Fatal("want a failure")
	}
	meta, _ := a.RunStore().Meta(first.RunID)
	raw, _ := os.ReadFile(filepath.Join(a.Paths.Runs, first.RunID, "run.json"))
	if strings.Contains(string(raw), "tok-123456") || meta.SecretInputs["api_token"] == "" {
		t.Fatalf("the secret input must be stored as a digest only: %s", raw)
	}

	resume := func(path string, params map[string]any) error {
		tg, _ := a.ResolveTarget(path)
		out, err := a.Run(context.Background(), RunRequest{Target: tg, Params: params, NoTrace: true, Resume: first.RunID})
		if err == nil && len(out.InputErrors) > 0 {
			return fmt.Errorf("%s", out.InputErrors[0].Message)
		}
		return err
	}
	err := resume(other, map[string]any{"api_token": "tok-123456"})
	if err == nil || !strings.Contains(err.Error(), "cannot resume run '"+first.RunID+"' with this workflow") || !strings.Contains(err.Error(), wf) {
		t.Fatalf("other workflow: %v", err)
	}
	if err := resume(wf, nil); err == nil || !strings.Contains(err.Error(), "input 'api_token'") {
		t.Fatalf("missing secret: %v", err)
	}
	if err := resume(wf, map[string]any{"api_token": "tok-999999"}); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Fatalf("other secret: %v", err)
	}
	if err := resume(wf, map[string]any{"api_token": "tok-123456"}); err != nil {
		t.Fatalf("same secret: %v", err)
	}
	if _, err := a.ResumeTarget("no-such-run"); pferr.KindOf(err) != pferr.NotFound {
		t.Fatalf("unknown run: %v", err)
	}
}

// batchWorkflow is a 100-item batch whose item 60 fails until the flag file
// exists; every item appends its index to the counter.
func batchWorkflow(parallel bool) string {
	par := ""
	if parallel {
		par = "parallel: true\nmax_concurrent: 8\n"
	}
	return "# Batch\nOne hundred items.\n\n## Inputs\n\n### counter\nThe counter file.\n- type: string\n\n### flag\nItem 60 needs it.\n- type: string\n\n## Steps\n" +
		"\n### list\nThe items.\n- type: shell\n- command: seq 0 99 | paste -sd, | sed 's/^/[/; s/$/]/'\n" +
		"\n### each\nOne per item.\n- type: shell\n" +
		"\n```shell command\necho \"i${item}\" >> \"${counter}\"\ntest \"${item}\" != 60 || test -f \"${flag}\" || exit 1\necho \"done ${item}\"\n```\n" +
		"\n```yaml batch\nitems: ${list.stdout}\n" + par + "```\n" +
		"\n### total\nCount them.\n- type: shell\n- command: echo ${each.count}\n" +
		"\n## Outputs\n\n### total\nHow many.\n- source: ${total.stdout}\n"
}

// A batch of 100 items failing at item 60 resumes at the unfinished items:
// no finished item runs again.
func TestResumeBatchItemByItem(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", parallel), func(t *testing.T) {
			a, _ := testApp(t)
			dir := t.TempDir()
			wf := filepath.Join(dir, "batch.pflow.md")
			counter, flag := filepath.Join(dir, "counter"), filepath.Join(dir, "flag")
			os.WriteFile(wf, []byte(batchWorkflow(parallel)), 0o644)
			params := map[string]any{"counter": counter, "flag": flag}
			first := runFile(t, a, wf, params, nil)
			if first.Result.Success() || first.Result.Failure.NodeID != "each" {
				t.Fatalf("first run: %s %+v %+v", first.Result.Status, first.Result.Failure, stepSources(first.Result))
			}
			before := counts(t, counter)
			if before["i60"] != 1 || (!parallel && len(before) != 61) {
				t.Fatalf("first run ran %d items: %v", len(before), before)
			}
			os.WriteFile(flag, nil, 0o644) // the fix
			res := runFile(t, a, wf, nil, func(r *RunRequest) { r.Resume = first.RunID })
			if !res.Result.Success() || res.Result.Outputs["total"] != "100" {
				t.Fatalf("resume: %+v %v", res.Result.Failure, res.Result.Outputs)
			}
			// Items that completed in the first run never run again; every
			// other item runs once more (an item cut short when item 60
			// failed counts as failed).
			detail, err := a.ShowRun(first.RunID)
			if err != nil {
				t.Fatal(err)
			}
			completed := map[int]bool{}
			for _, st := range detail.Steps {
				if st.Path == "each" && st.Item != nil && st.Status == runtime.StatusCompleted {
					completed[*st.Item] = true
				}
			}
			if completed[60] || (!parallel && len(completed) != 60) || len(completed) == 0 {
				t.Fatalf("first run completed %d items (60 among them: %v)", len(completed), completed[60])
			}
			after := counts(t, counter)
			for i := 0; i < 100; i++ {
				k := fmt.Sprintf("i%d", i)
				want := before[k] + 1
				if completed[i] {
					want = 1
				}
				if after[k] != want {
					t.Errorf("item %d ran %d times, want %d (completed in the first run: %v)", i, after[k], want, completed[i])
				}
			}
			sum, _ := a.ListRuns(1)
			if sum[0].Resumed != len(completed)+1 || sum[0].Ran != 100-len(completed)+1 { // + list re-used; + total run
				t.Errorf("resumed %d, ran %d (first run completed %d items)", sum[0].Resumed, sum[0].Ran, len(completed))
			}
		})
	}
}

// The record is made while the workflow is checked; a run that the checks
// refuse (here an unknown node type, and a resume whose secret differs)
// leaves no run directory behind, and no warning.
func TestRefusedRunLeavesNoRecord(t *testing.T) {
	a, log := testApp(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pflow.md")
	os.WriteFile(bad, []byte("# Bad\nUnknown type.\n\n## Steps\n\n### s\nNo such node.\n- type: no-such-node-type\n"), 0o644)
	out := runFile2(t, a, bad, nil)
	if len(out.ValidationErrors) == 0 || out.RunID != "" {
		t.Fatalf("want a validation failure without a run id: %+v", out)
	}
	wf := filepath.Join(dir, "one.pflow.md")
	os.WriteFile(wf, []byte("# One\nOne step.\n\n## Inputs\n\n### api_token\nA secret.\n- type: string\n\n## Steps\n\n### s\nFails.\n- type: shell\n- command: test -n \"${api_token}\" && exit 1\n"), 0o644)
	first := runFile(t, a, wf, map[string]any{"api_token": "tok-123456"}, nil)
	tg, _ := a.ResolveTarget(wf)
	if _, err := a.Run(context.Background(), RunRequest{Target: tg, Params: map[string]any{"api_token": "tok-999999"}, NoTrace: true, Resume: first.RunID}); err == nil {
		t.Fatal("a resume with another secret must be refused")
	}
	ents, err := os.ReadDir(a.Paths.Runs)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) != 1 || dirs[0] != first.RunID {
		t.Fatalf("run directories %v, want only %s", dirs, first.RunID)
	}
	if strings.Contains(log.String(), "not recorded") {
		t.Fatalf("warned about a record of a run that did not happen: %s", log.String())
	}
	// The refused resume released the run it would have resumed.
	if _, err := a.Run(context.Background(), RunRequest{Target: tg, Params: map[string]any{"api_token": "tok-123456"}, NoTrace: true, Resume: first.RunID}); err != nil {
		t.Fatalf("resume after a refused one: %v", err)
	}
}

// runFile2 is runFile for a run that may be refused (validation errors are
// returned, not fatal).
func runFile2(t *testing.T, a *App, path string, params map[string]any) *RunOutcome {
	t.Helper()
	tg, err := a.ResolveTarget(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Run(context.Background(), RunRequest{Target: tg, Params: params, NoTrace: true})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out
}

// A run recorded by an earlier build keeps its secret inputs as HMAC-SHA256
// digests: a resume checks the secret given now against a digest of that
// kind.
func TestResumeCheckOfEarlierBuildsSecret(t *testing.T) {
	h := stephash.New([]byte("0123456789abcdef0123456789abcdef"))
	rs := &resumeState{id: "r", meta: &runs.Meta{SecretInputs: map[string]string{"api_token": h.Legacy().Value("tok-123456")}}, log: &runs.Log{}}
	if err := rs.check(h, map[string]any{"api_token": "tok-123456"}, nil, false); err != nil {
		t.Fatalf("same secret: %v", err)
	}
	if err := rs.check(h, map[string]any{"api_token": "tok-999999"}, nil, false); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Fatalf("other secret: %v", err)
	}
}

// The record's workflow copy is the IR as value.MarshalJSON writes it.
func TestMarshalIR(t *testing.T) {
	src := thousandSteps()
	w, err := workflow.ParseMarkdown(src, "big.pflow.md")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := value.MarshalJSON(w)
	for _, hint := range []int{0, 10, len(src)} {
		if got := marshalIR(w, hint); !bytes.Equal(got, want) {
			t.Fatalf("hint %d: marshalIR differs from value.MarshalJSON", hint)
		}
	}
}

// Pure steps (echo, switch, a batch of echo) are not recorded: a resume runs
// them again from the recorded outputs of the steps before them, and since
// they give what they gave before, the steps with side effects after them
// are still re-used. Only the broken step and what follows it run again.
func TestResumeReplaysPureSteps(t *testing.T) {
	a, _ := testApp(t)
	dir := t.TempDir()
	wf := filepath.Join(dir, "replay.pflow.md")
	counter := filepath.Join(dir, "counter")
	src := func(last string) string {
		return "# Replay\nPure steps between side effects.\n\n## Inputs\n\n### counter\nThe counter file.\n- type: string\n\n## Steps\n" +
			"\n### a\nA side effect.\n- type: shell\n- command: echo a >> \"${counter}\"; echo A\n" +
			"\n### p\nPure, reads a.\n- type: echo\n- message: ${a.stdout}-P\n" +
			"\n### each\nA pure batch over a list.\n- type: echo\n- message: ${item}!\n\n```yaml batch\nitems: [\"x\", \"y\"]\n```\n" +
			"\n### pick\nA pure branch.\n- type: switch\n- cases:\n    - yes: ${p.echo} contains \"P\"\n- default: no\n\n```yaml on\nyes: b\nno: b\n```\n" +
			"\n### b\nA side effect that reads the pure steps.\n- type: shell\n- command: echo b >> \"${counter}\"; echo \"${p.echo}+${each.results[1].echo}\"\n\n```yaml on\ndefault: c\n```\n" +
			"\n### c\nBroken until fixed.\n- type: shell\n- command: echo c >> \"${counter}\"; " + last + "\n" +
			"\n## Outputs\n\n### out\nAll of it.\n- source: ${c.stdout}\n"
	}
	os.WriteFile(wf, []byte(src(`echo broken >&2; exit 3`)), 0o644)
	first := runFile(t, a, wf, map[string]any{"counter": counter}, nil)
	if first.Result.Success() || first.Result.Failure.NodeID != "c" {
		t.Fatalf("first run: %s %+v %+v", first.Result.Status, first.Result.Failure, stepSources(first.Result))
	}
	// The record holds the steps with side effects, not the pure ones.
	detail, err := a.ShowRun(first.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var recorded []string
	for _, s := range detail.Steps {
		recorded = append(recorded, s.Path)
	}
	if got := strings.Join(recorded, " "); got != "a b c" {
		t.Errorf("recorded steps %q, want \"a b c\"", got)
	}
	if detail.Status == nil || detail.Status.Derived != 4 {
		t.Errorf("status %+v: want 4 derived executions (p, 2 items, pick)", detail.Status)
	}

	os.WriteFile(wf, []byte(src(`echo "${b.stdout}"`)), 0o644)
	res := runFile(t, a, wf, nil, func(r *RunRequest) { r.Resume = first.RunID })
	if !res.Result.Success() {
		t.Fatalf("resume: %+v", res.Result.Failure)
	}
	got := stepSources(res.Result)
	want := map[string]string{"a": "resumed", "p": "ran", "each": "ran", "pick": "ran", "b": "resumed", "c": "ran"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sources %v, want %v", got, want)
	}
	if c := counts(t, counter); c["a"] != 1 || c["b"] != 1 || c["c"] != 2 {
		t.Fatalf("counter %v: a and b must not run again", c)
	}
	if res.Result.Outputs["out"] != "A-P+y!" {
		t.Fatalf("out = %v", res.Result.Outputs["out"])
	}

	// An edit upstream of a pure step: the pure step gives something else,
	// so the step after it runs again.
	os.WriteFile(wf, []byte(strings.Replace(src(`echo broken >&2; exit 3`), "echo A\n", "echo A2\n", 1)), 0o644)
	second := runFile(t, a, wf, map[string]any{"counter": counter}, nil)
	os.WriteFile(wf, []byte(strings.Replace(src(`echo "${b.stdout}"`), "echo A\n", "echo A3\n", 1)), 0o644)
	res = runFile(t, a, wf, nil, func(r *RunRequest) { r.Resume = second.RunID })
	if got := stepSources(res.Result); got["a"] != "ran" || got["b"] != "ran" || res.Result.Outputs["out"] != "A3-P+y!" {
		t.Fatalf("after an edit upstream: sources %v, out %v", got, res.Result.Outputs["out"])
	}
}
