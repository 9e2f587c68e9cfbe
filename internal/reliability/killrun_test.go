package reliability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/home"
)

// waitFor waits until path exists (the event a step signals), failing the
// test after a generous bound that only a hung process reaches.
func waitFor(t *testing.T, path string, cmd *exec.Cmd, stderr *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			t.Fatalf("%s never appeared; pflow stderr:\n%s", path, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// killRunWorkflow: s1 and s2 leave a mark; s3 leaves a mark, signals that
// it started and waits for the release file; s4 and s5 leave a mark.
const killRunWorkflow = "# Killed mid-run\nA run killed while its third step runs.\n\n## Inputs\n\n### dir\nWhere the marks go.\n- type: string\n\n## Steps\n" +
	"\n### s1\nMark.\n- type: shell\n- command: echo s1 >> \"${dir}/counter\"; echo one\n" +
	"\n### s2\nMark.\n- type: shell\n- command: echo s2 >> \"${dir}/counter\"; echo \"${s1.stdout}-two\"\n" +
	"\n### s3\nMark, signal, wait.\n- type: shell\n- timeout: 600\n\n```shell command\necho s3 >> \"${dir}/counter\"\necho $$ >> \"${dir}/s3.pids\"\ntouch \"${dir}/started\"\n" +
	"i=0; while [ ! -f \"${dir}/release\" ] && [ $i -lt 12000 ]; do sleep 0.05; i=$((i+1)); done\necho \"${s2.stdout}-three\"\n```\n" +
	"\n### s4\nMark.\n- type: shell\n- command: echo s4 >> \"${dir}/counter\"; echo \"${s3.stdout}-four\"\n" +
	"\n### s5\nMark.\n- type: shell\n- command: echo s5 >> \"${dir}/counter\"; echo \"${s4.stdout}-five\"\n" +
	"\n## Outputs\n\n### out\nAll five.\n- source: ${s5.stdout}\n"

// endOrphans ends what the killed run left running: its s3, which pflow,
// killed with SIGKILL, could not stop (it polls for the release file, which
// it may not see before the test's directory is removed). Each s3 wrote its
// shell's pid; one still running that command is killed.
func endOrphans(t *testing.T, dir string) {
	t.Helper()
	os.WriteFile(filepath.Join(dir, "release"), nil, 0o644)
	data, _ := os.ReadFile(filepath.Join(dir, "s3.pids"))
	for _, f := range strings.Fields(string(data)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err != nil || pid <= 1 {
			continue
		}
		if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(string(cmdline), "echo s3") {
			syscall.Kill(-pid, syscall.SIGKILL) // the step's process group: the shell and its sleep
		}
	}
}

// TestKillRunThenResume kills a real pflow process (SIGKILL to its group)
// while a step with side effects runs, then resumes it: the record says
// which step was running; a plain resume refuses to repeat that step; with
// --rerun-unsafe the run completes and no step that had completed runs twice.
func TestKillRunThenResume(t *testing.T) {
	bin := pflowBin(t)
	root := t.TempDir()
	dir := filepath.Join(root, "work")
	os.MkdirAll(dir, 0o755)
	wf := writeFile(t, filepath.Join(root, "killed.pflow.md"), killRunWorkflow)
	t.Cleanup(func() { endOrphans(t, dir) })

	cmd := exec.Command(bin, wf, "dir="+dir)
	cmd.Env = env(root)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, filepath.Join(dir, "started"), cmd, &stderr)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()

	// The record: the run died at s3; every line of it is whole JSON.
	r := mustPflow(t, root, nil, "runs", "--json")
	var list struct {
		Runs []struct{ ID, Status, Failed_step string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil || len(list.Runs) != 1 {
		t.Fatalf("runs --json: %v\n%s", err, r.Stdout)
	}
	run := list.Runs[0]
	if run.Status != "died" || run.Failed_step != "s3" {
		t.Fatalf("killed run listed as %+v", run)
	}
	checkRecordLines(t, filepath.Join(home.Resolve(root).Runs, run.ID, "steps.jsonl"))

	// A plain resume will not repeat s3, which may have partly run.
	r = pflow(t, root, nil, "", "--resume", "last")
	if r.Code != 1 || !strings.Contains(r.Stderr, "'s3'") || !strings.Contains(r.Stderr, "may have partly run") || !strings.Contains(r.Stderr, "--rerun-unsafe") {
		t.Fatalf("plain resume: exit %d\n%s", r.Code, r.Stderr)
	}
	if c := markCounts(t, dir); c["s3"] != 1 {
		t.Fatalf("the refused resume ran something: %v", c)
	}

	// With --rerun-unsafe it completes; s1 and s2 are re-used.
	os.WriteFile(filepath.Join(dir, "release"), nil, 0o644)
	r = mustPflow(t, root, nil, "--resume", "last", "--rerun-unsafe")
	if !strings.Contains(r.Stdout, "one-two-three-four-five") || !strings.Contains(r.Stderr, "2 steps re-used, 3 steps run") {
		t.Fatalf("resume: stdout %q\nstderr %s", r.Stdout, r.Stderr)
	}
	c := markCounts(t, dir)
	if c["s1"] != 1 || c["s2"] != 1 || c["s3"] != 2 || c["s4"] != 1 || c["s5"] != 1 {
		t.Fatalf("marks after the resume: %v (s1, s2, s4, s5 once; s3 twice: killed, then run again)", c)
	}
}

// TestKillRunRecordStaysReadable SIGKILLs runs of a long chain of quick
// steps at random points: the record is always readable (at most a torn
// last line, which readers skip), and a resume then completes without
// running again any step the record shows as completed.
func TestKillRunRecordStaysReadable(t *testing.T) {
	bin := pflowBin(t)
	root := t.TempDir()
	dir := filepath.Join(root, "work")
	os.MkdirAll(dir, 0o755)
	var b strings.Builder
	b.WriteString("# Chain\nForty marks.\n\n## Inputs\n\n### dir\nWhere.\n- type: string\n\n## Steps\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "\n### s%d\nMark.\n- type: shell\n- command: echo s%d >> \"${dir}/counter\"\n", i, i)
	}
	wf := writeFile(t, filepath.Join(root, "chain.pflow.md"), b.String())
	start := time.Now()
	mustPflow(t, root, nil, wf, "dir="+dir)
	life := time.Since(start)
	runsDir := home.Resolve(root).Runs
	for k := 0; k < 5; k++ {
		os.Remove(filepath.Join(dir, "counter"))
		cmd := exec.Command(bin, wf, "dir="+dir)
		cmd.Env = env(root)
		cmd.Dir = root
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(life))))
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		r := mustPflow(t, root, nil, "runs", "show", "last", "--json")
		var d struct {
			Run struct {
				ID     string
				Status string
			}
			Steps []struct {
				Path   string
				Status string
			}
		}
		if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
			t.Fatalf("runs show: %v\n%s", err, r.Stdout)
		}
		checkRecordLines(t, filepath.Join(runsDir, d.Run.ID, "steps.jsonl"))
		if d.Run.Status == "success" {
			continue // the kill came after the end
		}
		completed := map[string]bool{}
		for _, s := range d.Steps {
			if s.Status == "completed" {
				completed[s.Path] = true
			}
		}
		res := pflow(t, root, nil, "", "--resume", d.Run.ID, "--rerun-unsafe")
		if res.Code != 0 {
			t.Fatalf("resume of %s: exit %d\n%s", d.Run.ID, res.Code, res.Stderr)
		}
		c := markCounts(t, dir)
		for i := 1; i <= 40; i++ {
			id := fmt.Sprintf("s%d", i)
			if completed[id] && c[id] != 1 {
				t.Fatalf("kill %d: step %s completed before the kill but ran %d times", k, id, c[id])
			}
			if c[id] < 1 {
				t.Fatalf("kill %d: step %s never ran", k, id)
			}
		}
	}
}

// checkRecordLines fails unless every line of a steps.jsonl but a torn last
// one is a JSON object.
func checkRecordLines(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<26)
	n := 0
	for sc.Scan() {
		n++
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			last := !bytes.HasSuffix(data, []byte("\n")) && bytes.HasSuffix(data, sc.Bytes())
			if !last {
				t.Fatalf("%s line %d is broken: %v\n%s", path, n, err, sc.Text())
			}
		}
	}
}

func markCounts(t *testing.T, dir string) map[string]int {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, "counter"))
	out := map[string]int{}
	for _, l := range strings.Fields(string(b)) {
		out[l]++
	}
	return out
}
