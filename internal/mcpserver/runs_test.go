package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chainMD is an n-step chain of shell steps, each appending its id to the
// counter file; step fail (if any) fails after appending.
func chainMD(n int, fail, counter string) string {
	var b strings.Builder
	b.WriteString("# Counter chain\nEvery step leaves a mark.\n\n## Steps\n")
	for i := 1; i <= n; i++ {
		prev := "start"
		if i > 1 {
			prev = fmt.Sprintf("${s%d.stdout}", i-1)
		}
		cmd := fmt.Sprintf(`echo s%d >> %s; echo "%s-s%d"`, i, counter, prev, i)
		if fmt.Sprintf("s%d", i) == fail {
			cmd = fmt.Sprintf(`echo s%d >> %s; exit 3`, i, counter)
		}
		fmt.Fprintf(&b, "\n### s%d\nStep %d.\n- type: shell\n\n```shell command\n%s\n```\n", i, i, cmd)
	}
	fmt.Fprintf(&b, "\n## Outputs\n\n### last\nThe last output.\n- source: ${s%d.stdout}\n", n)
	return b.String()
}

// Over MCP: the failure result carries the run id and says how to resume;
// workflow_execute with the fixed workflow and resume re-uses steps 1–8.
func TestWorkflowExecuteResume(t *testing.T) {
	f := newFixture(t, nil)
	counter := filepath.Join(t.TempDir(), "counter")
	r := f.call("workflow_execute", map[string]any{"workflow": chainMD(10, "s9", counter)})
	if !r.IsError || r.Env["checkpoint"].(map[string]any)["failed_node"] != "s9" {
		t.Fatalf("first run: %s", r.Text)
	}
	id, _ := r.Env["run_id"].(string)
	cp, _ := r.Env["checkpoint"].(map[string]any)
	with, _ := cp["resume_with"].(map[string]any)
	if id == "" || cp["run_id"] != id || with["resume"] != id || cp["resumable"] != true {
		t.Fatalf("the checkpoint must name the run and how to resume it: %s", r.Text)
	}
	if sugg := fmt.Sprint(r.Env["error"].(map[string]any)["suggestions"]); !strings.Contains(sugg, "resume: \""+id+"\"") {
		t.Fatalf("suggestions must say how to resume: %s", sugg)
	}

	r = f.call("workflow_execute", map[string]any{"workflow": chainMD(10, "", counter), "resume": id}).mustOK(t)
	d := r.data()
	if d["resumed_from"] != id || d["run_id"] == "" || d["run_id"] == id {
		t.Fatalf("resumed run: %s", r.Text)
	}
	if out := d["outputs"].(map[string]any)["last"]; out != "start-s1-s2-s3-s4-s5-s6-s7-s8-s9-s10" {
		t.Fatalf("outputs %v", out)
	}
	b, _ := os.ReadFile(counter)
	if got := strings.Join(strings.Fields(string(b)), " "); got != "s1 s2 s3 s4 s5 s6 s7 s8 s9 s9 s10" {
		t.Fatalf("counter %q: steps 1-8 must not run again", got)
	}
	reused := 0
	for _, s := range d["steps"].([]any) {
		if s.(map[string]any)["source"] == "resumed" {
			reused++
		}
	}
	if reused != 8 {
		t.Fatalf("%d steps marked resumed, want 8: %s", reused, r.Text)
	}

	// rerun_unsafe without resume is refused; an unknown run is not found.
	r = f.call("workflow_execute", map[string]any{"workflow": chainMD(1, "", counter), "rerun_unsafe": true})
	if !r.IsError || !strings.Contains(r.errMsg(), "rerun_unsafe only applies with resume") {
		t.Fatalf("rerun_unsafe alone: %s", r.Text)
	}
	r = f.call("workflow_execute", map[string]any{"workflow": chainMD(1, "", counter), "resume": "20200101-000000-000000-abcd"})
	if !r.IsError || !strings.Contains(r.errMsg(), "not found") {
		t.Fatalf("unknown run: %s", r.Text)
	}
}
