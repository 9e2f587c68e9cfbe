package durable_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
	"github.com/pflow-go/pflow/internal/testutil/pflowbin"
	"github.com/pflow-go/pflow/internal/testutil/temporaldev"
)

// These tests run the real pflow binaries against a real Temporal dev
// server on 127.0.0.1 (internal/testutil/temporaldev): workers are `pflow
// worker` processes, runs are submitted with `pflow --temporal`, which
// hands them to pflow-temporal beside it.

const passphrase = "durable-e2e-test-key"

type cluster struct {
	srv  *temporaldev.Server
	bin  string
	home string
	dir  string
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	srv := temporaldev.Start(t)
	return &cluster{srv: srv, bin: pflowbin.Path(t), home: t.TempDir(), dir: t.TempDir()}
}

func (c *cluster) env(extra ...string) []string {
	env := []string{"PFLOW_HOME=" + c.home, "HOME=" + c.home, "PATH=" + os.Getenv("PATH"), "LANG=C", "PFLOW_TEMPORAL_KEY=" + passphrase}
	return append(env, extra...)
}

// worker starts `pflow worker` and returns once it polls its task queue.
func (c *cluster) worker(t testing.TB, extraEnv ...string) *exec.Cmd {
	t.Helper()
	return c.workerOn(t, c.srv.HostPort, extraEnv...)
}

// workerOn starts `pflow worker` for the service at addr.
func (c *cluster) workerOn(t testing.TB, addr string, extraEnv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(c.bin, "worker", "--temporal", addr)
	cmd.Env = c.env(extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	ready := make(chan struct{})
	var log bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "pflow worker ready") {
				close(ready)
			}
			log.WriteString(sc.Text() + "\n")
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait()
		close(exited)
	}()
	select {
	case <-ready:
	case <-exited:
		t.Fatalf("pflow worker exited before it was ready:\n%s", log.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("pflow worker did not say it was ready within 2 minutes:\n%s", log.String())
	}
	return cmd
}

type result struct {
	stdout, stderr string
	code           int
}

func (c *cluster) pflow(t testing.TB, args ...string) result {
	t.Helper()
	return c.pflowEnv(t, nil, args...)
}

// pflowEnv runs pflow with extra environment variables.
func (c *cluster) pflowEnv(t testing.TB, extraEnv []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env(extraEnv...)
	cmd.Dir = c.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

func repoPath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// envelope is the part of a run's JSON that must not depend on where it ran.
func envelope(t *testing.T, r result) map[string]any {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatalf("not JSON (%v):\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	keep := map[string]any{"exit": r.code}
	for _, k := range []string{"success", "status", "result", "error"} {
		keep[k] = env[k]
	}
	var steps []string
	if ex, ok := env["execution"].(map[string]any); ok {
		for _, s := range ex["steps"].([]any) {
			m := s.(map[string]any)
			steps = append(steps, fmt.Sprintf("%s:%s:%v:%v", m["node_id"], m["status"], m["action"], m["batch_success"]))
		}
	}
	keep["steps"] = steps
	if e, ok := keep["error"].(map[string]any); ok {
		delete(e, "details")     // holds the trace path and run id
		delete(e, "suggestions") // how to resume (local) or see the history (Temporal)
	}
	return keep
}

// TestExamplesRunTheSameOnTemporal runs every example that needs no
// network locally and on Temporal: the outcomes are the same.
func TestExamplesRunTheSameOnTemporal(t *testing.T) {
	c := newCluster(t)
	c.worker(t)
	cases := [][]string{
		{"examples/hello.pflow.md", "name=World"},
		{"examples/batch-parallel.pflow.md"},
		{"examples/code-stats.pflow.md", "text=the cat and the hat"},
		{"examples/error-handling.pflow.md"},
		{"examples/files.pflow.md", "dir=" + filepath.Join(c.dir, "files")},
		{"examples/mappings.pflow.md"},
		{"examples/nested/publish.pflow.md", "title=Hello World"},
		{"examples/branch-on-data.pflow.md", "count=0"},
		{"examples/branch-on-data.pflow.md", "count=7"},
		{"examples/branch-on-data.pflow.md", "count=10"},
		{"examples/fan-out.pflow.md", "delay=0.2"},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc[0])+strings.Join(tc[1:], ","), func(t *testing.T) {
			args := append([]string{"--output-format", "json", repoPath(t, tc[0])}, tc[1:]...)
			local := envelope(t, c.pflow(t, args...))
			remote := envelope(t, c.pflow(t, append([]string{"--temporal", c.srv.HostPort}, args...)...))
			lj, _ := json.MarshalIndent(local, "", "  ")
			rj, _ := json.MarshalIndent(remote, "", "  ")
			if string(lj) != string(rj) {
				t.Errorf("on Temporal:\n%s\nlocally:\n%s", rj, lj)
			}
			if local["result"] == nil {
				t.Errorf("the example produced no result: %s", lj)
			}
		})
	}
	// A failing step fails the Temporal run the same way: same message,
	// same exit code.
	fail := filepath.Join(c.dir, "fail.pflow.md")
	writeFile(t, fail, "# Fails\n\n## Steps\n\n### boom\nFails.\n- type: shell\n- command: echo broken >&2; exit 3\n")
	local := envelope(t, c.pflow(t, "--output-format", "json", fail))
	r := c.pflow(t, "--temporal", c.srv.HostPort, "--output-format", "json", fail)
	remote := envelope(t, r)
	if fmt.Sprint(local) != fmt.Sprint(remote) || local["exit"] != 1 {
		t.Errorf("failing run differs:\non Temporal: %v\nlocally:     %v", remote, local)
	}
	if !strings.Contains(r.stdout, "temporal workflow show --workflow-id pflow-fail-") {
		t.Errorf("a failed Temporal run does not say where its history is:\n%s", r.stdout)
	}

	// pflow runs --temporal lists them with pflow's status (the server's
	// list is eventually consistent: wait until it has them all).
	type listed struct {
		Runs []struct {
			ID, Status, Workflow string
			FailedStep           string `json:"failed_step"`
		}
	}
	var l listed
	waitFor(t, "pflow runs --temporal to list every run", time.Minute, func() bool {
		r := c.pflow(t, "runs", "--temporal", c.srv.HostPort, "--json")
		l = listed{}
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &l) == nil && len(l.Runs) == len(cases)+1
	})
	byName := map[string]string{}
	for _, r := range l.Runs {
		byName[r.Workflow] = r.Status + "/" + r.FailedStep
	}
	if byName["hello"] != "success/" || byName["error-handling"] != "degraded/" || byName["fail"] != "failed/boom" {
		t.Errorf("pflow runs --temporal: %+v", l.Runs)
	}
	if r := c.pflow(t, "runs", "--temporal", c.srv.HostPort); r.code != 0 || !strings.Contains(r.stdout, "TEMPORAL RUN") || !strings.Contains(r.stdout, "(failed at 'boom')") {
		t.Errorf("pflow runs --temporal (text): %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds (the events here are files other
// processes write); the deadline only stops a broken test from hanging.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func lines(path string) []string {
	b, _ := os.ReadFile(path)
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestTwoWorkersShareABatchAndOneIsKilled: two worker processes share a
// 600-item batch; one is killed with SIGKILL mid-batch; the run still
// completes, every item ran, and no item that completed ran again (only
// those the killed worker was running may have run twice).
func TestTwoWorkersShareABatchAndOneIsKilled(t *testing.T) {
	c := newCluster(t)
	counter := filepath.Join(c.dir, "counter.log")
	wf := filepath.Join(c.dir, "batch.pflow.md")
	writeFile(t, wf, "# Shared batch\n\n## Steps\n\n### items\nSix hundred numbers.\n- type: shell\n- command: seq -s, 0 599 | sed 's/.*/[&]/'\n\n"+
		"### mark\nEach item leaves a mark: its number and the worker that ran it.\n- type: shell\n- command: echo \"${n} $WORKER_NAME\" >> "+counter+"\n\n"+
		"```yaml batch\nitems: ${items.stdout}\nas: n\nparallel: true\nmax_concurrent: 50\n```\n\n## Outputs\n\n### done\nHow many items succeeded.\n- source: ${mark.success_count}\n")
	a := c.worker(t, "WORKER_NAME=a")
	c.worker(t, "WORKER_NAME=b")

	run := exec.Command(c.bin, "--temporal", c.srv.HostPort, "--output-format", "json", wf)
	run.Env = c.env()
	var out, errb bytes.Buffer
	run.Stdout, run.Stderr = &out, &errb
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "worker a to run 100 items", 5*time.Minute, func() bool {
		n := 0
		for _, l := range lines(counter) {
			if strings.HasSuffix(l, " a") {
				n++
			}
		}
		return n >= 100
	})
	if err := syscall.Kill(a.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	atKill := len(lines(counter))
	if err := run.Wait(); err != nil {
		t.Fatalf("run failed (%v):\n%s\n%s", err, out.String(), errb.String())
	}
	var env map[string]any
	if err := json.Unmarshal(out.Bytes(), &env); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if res, _ := env["result"].(map[string]any); res == nil || fmt.Sprint(res["done"]) != "600" {
		t.Fatalf("run result = %v, want done=600\n%s", env["result"], errb.String())
	}
	seen := map[int]int{}
	byWorker := map[string]int{}
	for _, l := range lines(counter) {
		num, w, _ := strings.Cut(l, " ")
		i, err := strconv.Atoi(num)
		if err != nil {
			t.Fatalf("bad mark %q", l)
		}
		seen[i]++
		byWorker[w]++
	}
	twice := 0
	for i := range 600 {
		switch n := seen[i]; {
		case n == 0:
			t.Errorf("item %d never ran", i)
		case n > 2:
			t.Errorf("item %d ran %d times", i, n)
		case n == 2:
			twice++
		}
	}
	// Only executions running on the killed worker may be repeated: at most
	// the batch's concurrency.
	if twice > 50 {
		t.Errorf("%d items ran twice; only those in flight on the killed worker (at most 50) may", twice)
	}
	if byWorker["a"] < 100 || byWorker["b"] == 0 {
		t.Errorf("the workers did not share the batch: %v", byWorker)
	}
	if len(lines(counter)) <= atKill {
		t.Errorf("nothing ran after worker a was killed")
	}
	t.Logf("marks: %v, repeated items: %d", byWorker, twice)
}

// TestCancellingARunStopsItsStepOnTheWorker: Ctrl-C on the submitting
// pflow cancels the run on Temporal; the step's process, running on the
// worker, is stopped; pflow exits 130.
func TestCancellingARunStopsItsStepOnTheWorker(t *testing.T) {
	c := newCluster(t)
	c.worker(t)
	pidFile := filepath.Join(c.dir, "step.pid")
	wf := filepath.Join(c.dir, "slow.pflow.md")
	writeFile(t, wf, "# Slow\n\n## Steps\n\n### wait\nWaits a long time.\n- type: shell\n- timeout: 600\n- command: echo $$ > "+pidFile+"; exec sleep 600\n")
	run := exec.Command(c.bin, "--temporal", c.srv.HostPort, wf)
	run.Env = c.env()
	var out, errb bytes.Buffer
	run.Stdout, run.Stderr = &out, &errb
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	waitFor(t, "the step to start on the worker", 2*time.Minute, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	if err := run.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := run.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("pflow exited with %v, want 130\n%s\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String()+errb.String(), "interrupted") {
		t.Errorf("no word of the interruption:\n%s\n%s", out.String(), errb.String())
	}
	waitFor(t, "the step's process to be stopped", 2*time.Minute, func() bool {
		return syscall.Kill(pid, 0) != nil
	})
}

// TestHistoryHoldsNoValueInClear: a secret that the worker reads from its
// environment, the params and the outputs of a run are sealed in Temporal's
// history: the server sees none of them.
func TestHistoryHoldsNoValueInClear(t *testing.T) {
	c := newCluster(t)
	const secret = "sk-live-4f9a0c2e77b1"
	c.worker(t, "PAYMENT_API_TOKEN="+secret)
	wf := filepath.Join(c.dir, "secret.pflow.md")
	writeFile(t, wf, "# Secret\n\n## Inputs\n\n### token\nThe API token.\n- type: string\n- env: PAYMENT_API_TOKEN\n\n### note\nA note.\n- type: string\n\n"+
		"## Steps\n\n### use\nUses the token.\n- type: shell\n- command: printf 'token-length=%s note=%s' \"$(printf %s '${token}' | wc -c | tr -d ' ')\" '${note}'\n\n"+
		"## Outputs\n\n### said\nWhat the step said.\n- source: ${use.stdout}\n\n### leaked\nThe token itself (must be masked).\n- source: ${token}\n")
	r := c.pflow(t, "--temporal", c.srv.HostPort, "--output-format", "json", "--detach", wf, "note=plainly-visible-marker")
	if r.code != 0 {
		t.Fatalf("submit failed: %s %s", r.stdout, r.stderr)
	}
	var sub map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &sub); err != nil {
		t.Fatal(err)
	}
	id, _ := sub["temporal_run_id"].(string)
	if sub["status"] != "submitted" || !strings.HasPrefix(id, "pflow-secret-") {
		t.Fatalf("detached submit said %v", sub)
	}
	tbin := temporaldev.Binary(t)
	var hist []byte
	waitFor(t, "the run to complete", 2*time.Minute, func() bool {
		out, err := exec.Command(tbin, "workflow", "describe", "--workflow-id", id, "--address", c.srv.HostPort, "--output", "json",
			"--disable-config-file", "--disable-config-env").Output()
		return err == nil && strings.Contains(string(out), "WORKFLOW_EXECUTION_STATUS_COMPLETED")
	})
	hist, err := exec.Command(tbin, "workflow", "show", "--workflow-id", id, "--address", c.srv.HostPort, "--output", "json",
		"--disable-config-file", "--disable-config-env").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hist), "ActivityTaskCompleted") && !strings.Contains(string(hist), "ACTIVITY_TASK_COMPLETED") {
		t.Fatalf("history has no completed activity:\n%s", hist)
	}
	for _, clear := range []string{secret, "plainly-visible-marker", "token-length", "printf"} {
		if strings.Contains(string(hist), clear) {
			t.Errorf("Temporal history holds %q in clear", clear)
		}
	}
	// A submitter with another key: the worker cannot open the run, the
	// run fails, and the submitter says the keys differ.
	r = c.pflowEnv(t, []string{"PFLOW_TEMPORAL_KEY=another-key"}, "--temporal", c.srv.HostPort, wf, "note=x")
	if r.code == 0 || !strings.Contains(r.stderr, "payload key differs") || !strings.Contains(r.stderr, "PFLOW_TEMPORAL_KEY") {
		t.Errorf("mismatched keys: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The submitter never had the secret, and does not show it: the worker
	// masks the values it took from its environment in what it reports.
	r = c.pflow(t, "--temporal", c.srv.HostPort, "--output-format", "json", wf, "note=x")
	if r.code != 0 || strings.Contains(r.stdout+r.stderr, secret) || !strings.Contains(r.stdout, "token-length=20") {
		t.Errorf("followed run: exit %d, secret shown or step output missing:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestTemporalCommandsWithoutTheEngineOrTheServer: pflow hands Temporal
// commands to pflow-temporal beside it; without it, and without a server,
// the user is told what to do.
func TestTemporalCommandsWithoutTheEngineOrTheServer(t *testing.T) {
	bin := pflowbin.Path(t)
	home := t.TempDir()
	hello := repoPath(t, "examples/hello.pflow.md")
	run := func(bin string, args ...string) result {
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PFLOW_HOME=" + home, "HOME=" + home, "PATH=/usr/bin:/bin", "LANG=C"}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return result{out.String(), errb.String(), code}
	}
	alone := filepath.Join(t.TempDir(), "pflow")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--temporal", "127.0.0.1:1", hello, "name=x"}, {"worker", "--temporal", "127.0.0.1:1"}} {
		r := run(alone, args...)
		if r.code == 0 || !strings.Contains(r.stderr, "needs pflow-temporal") || !strings.Contains(r.stderr, "go install github.com/pflow-go/pflow/cmd/pflow-temporal") {
			t.Errorf("pflow %v without pflow-temporal: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	// Still a plain local run without --temporal.
	if r := run(alone, hello, "name=x"); r.code != 0 || !strings.Contains(r.stdout, "HELLO X") {
		t.Errorf("local run: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// No worker on the queue: said, and the detached run waits for one.
	c := newCluster(t)
	r0 := c.pflow(t, "--temporal", c.srv.HostPort, "--task-queue", "nobody", "--detach", hello, "name=x")
	if r0.code != 0 || !strings.Contains(r0.stderr, "no pflow worker is polling task queue 'nobody'") {
		t.Errorf("no worker: exit %d\n%s%s", r0.code, r0.stdout, r0.stderr)
	}
	// No server there: said, with how to start one.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := run(bin, "--temporal", addr, hello, "name=x")
	if r.code == 0 || !strings.Contains(r.stderr, "cannot reach Temporal at "+addr) || !strings.Contains(r.stderr, "temporal server start-dev") {
		t.Errorf("no server: exit %d\n%s", r.code, r.stderr)
	}
	r = run(bin, "--detach", hello, "name=x")
	if r.code != 2 || !strings.Contains(r.stderr, "only apply with --temporal") {
		t.Errorf("--detach without --temporal: exit %d\n%s", r.code, r.stderr)
	}
}

// TestResumeAFailedTemporalRun: a run that failed at its last step is
// resumed from Temporal's history: its completed steps (and batch items)
// are not run again, its inputs are the ones it ran with, and the fixed
// step runs.
func TestResumeAFailedTemporalRun(t *testing.T) {
	c := newCluster(t)
	c.worker(t)
	counter := filepath.Join(c.dir, "ran.log")
	flag := filepath.Join(c.dir, "fixed")
	wf := filepath.Join(c.dir, "release.pflow.md")
	writeFile(t, wf, "# Release\n\n## Inputs\n\n### version\nThe version.\n- type: string\n\n## Steps\n\n"+
		"### build\nBuilds each part (a side effect per item).\n- type: shell\n- command: echo \"build ${part} ${version}\" >> "+counter+"; echo built-${part}\n\n"+
		"```yaml batch\nitems: [\"api\", \"web\", \"cli\"]\nas: part\n```\n\n"+
		"### publish\nPublishes once the fix is in.\n- type: shell\n- command: test -f "+flag+" && echo \"publish ${version}\" >> "+counter+" && echo published-${version}\n\n"+
		"## Outputs\n\n### said\nWhat publish said.\n- source: ${publish.stdout}\n")
	r := c.pflow(t, "--temporal", c.srv.HostPort, "--output-format", "json", wf, "version=1.2")
	if r.code != 1 {
		t.Fatalf("first run: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	var first struct {
		ID         string `json:"temporal_run_id"`
		Checkpoint struct {
			Resumable bool   `json:"resumable"`
			Command   string `json:"resume_command"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &first); err != nil || !strings.HasPrefix(first.ID, "pflow-release-") ||
		!first.Checkpoint.Resumable || first.Checkpoint.Command != "pflow --temporal "+c.srv.HostPort+" --resume "+first.ID {
		t.Fatalf("the failed run does not say how to resume it (%v):\n%s", err, r.stdout)
	}
	writeFile(t, flag, "")
	// "last" is the newest run the server lists (its list is eventually
	// consistent: wait until it has the run).
	waitFor(t, "the run to be listed", time.Minute, func() bool {
		return strings.Contains(c.pflow(t, "runs", "--temporal", c.srv.HostPort).stdout, first.ID)
	})
	// No workflow and no inputs: both come from the run being resumed.
	r = c.pflow(t, "--temporal", c.srv.HostPort, "--output-format", "json", "--resume", "last")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatal(err)
	}
	if res, _ := env["result"].(map[string]any); res["said"] != "published-1.2" {
		t.Errorf("result = %v", env["result"])
	}
	got := lines(counter)
	want := []string{"build api 1.2", "build web 1.2", "build cli 1.2", "publish 1.2"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("side effects = %q, want each once: %q", got, want)
	}
	if env["resumed_from"] != first.ID {
		t.Errorf("resumed_from = %v, want %s", env["resumed_from"], first.ID)
	}
	second, _ := env["temporal_run_id"].(string)
	// Resuming that run re-uses everything: nothing runs.
	r = c.pflow(t, "--temporal", c.srv.HostPort, "--resume", second, wf)
	if r.code != 0 || len(lines(counter)) != 4 {
		t.Errorf("second resume: exit %d, marks %q\n%s%s", r.code, lines(counter), r.stdout, r.stderr)
	}
	// A changed input runs the steps that read it again.
	r = c.pflow(t, "--temporal", c.srv.HostPort, "--resume", second, wf, "version=1.3")
	if r.code != 0 || len(lines(counter)) != 8 {
		t.Errorf("resume with a new input: exit %d, marks %q\n%s%s", r.code, lines(counter), r.stdout, r.stderr)
	}
}

// TestMCPExamplesRunTheSameOnTemporal: MCP steps run on the worker, from its
// own MCP servers (here the npm reference servers), with the same outcome
// as locally.
func TestMCPExamplesRunTheSameOnTemporal(t *testing.T) {
	c := newCluster(t)
	peers := fakemcp.PeersDir(t, []string{"node_modules/@modelcontextprotocol/server-everything/dist/index.js"}, "node")
	mods := filepath.Join(peers, "node_modules", "@modelcontextprotocol")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	servers := map[string]any{
		"everything": map[string]any{"command": "node", "args": []any{filepath.Join(mods, "server-everything/dist/index.js"), "stdio"}},
		"fs":         map[string]any{"command": "node", "args": []any{filepath.Join(mods, "server-filesystem/dist/index.js"), dir}},
		"memory":     map[string]any{"command": "node", "args": []any{filepath.Join(mods, "server-memory/dist/index.js")}, "env": map[string]any{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
	}
	cfg, _ := json.Marshal(servers)
	if r := c.pflow(t, "mcp", "add", string(cfg)); r.code != 0 {
		t.Fatalf("mcp add: %s%s", r.stdout, r.stderr)
	}
	if r := c.pflow(t, "mcp", "sync", "--all"); r.code != 0 {
		t.Fatalf("mcp sync: %s%s", r.stdout, r.stderr)
	}
	c.worker(t) // after the sync: the worker's catalog has the servers' tools
	for _, tc := range [][]string{
		{"examples/mcp/everything.pflow.md"},
		{"examples/mcp/filesystem.pflow.md", "dir=" + dir},
	} {
		t.Run(filepath.Base(tc[0]), func(t *testing.T) {
			args := append([]string{"--output-format", "json", repoPath(t, tc[0])}, tc[1:]...)
			local := envelope(t, c.pflow(t, args...))
			remote := envelope(t, c.pflow(t, append([]string{"--temporal", c.srv.HostPort}, args...)...))
			lj, _ := json.MarshalIndent(local, "", "  ")
			rj, _ := json.MarshalIndent(remote, "", "  ")
			if string(lj) != string(rj) || local["exit"] != 0 {
				t.Errorf("on Temporal:\n%s\nlocally:\n%s", rj, lj)
			}
		})
	}
	r := c.pflow(t, "--temporal", c.srv.HostPort, repoPath(t, "examples/mcp/memory.pflow.md"))
	if r.code != 0 || !strings.Contains(r.stdout, "turns processes into workflows") {
		t.Errorf("memory example on Temporal: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestMCPServeRunsOnTemporal: `pflow mcp serve --temporal` makes every
// agent's workflow_execute a run on the shared Temporal service; a failed
// one is resumed by the tool call its checkpoint gives.
func TestMCPServeRunsOnTemporal(t *testing.T) {
	c := newCluster(t)
	c.worker(t)
	serve := exec.Command(c.bin, "mcp", "serve", "--temporal", c.srv.HostPort)
	serve.Env = c.env()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: serve}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	got := call(map[string]any{"workflow": repoPath(t, "examples/hello.pflow.md"), "parameters": map[string]any{"name": "agent"}})
	data, _ := got["data"].(map[string]any)
	outputs, _ := data["outputs"].(map[string]any)
	if got["success"] != true || outputs["message"] != "HELLO AGENT" || !strings.HasPrefix(fmt.Sprint(data["temporal_run_id"]), "pflow-hello-") {
		t.Fatalf("workflow_execute on Temporal: %v", got)
	}
	// A branch on data: the same verdict as locally and through mcp serve.
	for count, want := range map[int]string{0: "none", 3: "some", 12: "many"} {
		got = call(map[string]any{"workflow": repoPath(t, "examples/branch-on-data.pflow.md"), "parameters": map[string]any{"count": count}})
		data, _ = got["data"].(map[string]any)
		outputs, _ = data["outputs"].(map[string]any)
		if got["success"] != true || outputs["verdict"] != want {
			t.Fatalf("branch-on-data count=%d on Temporal: %v", count, got)
		}
	}

	flag := filepath.Join(c.dir, "ready")
	wf := filepath.Join(c.dir, "gate.pflow.md")
	writeFile(t, wf, "# Gate\n\n## Steps\n\n### first\nCounts its runs.\n- type: shell\n- command: echo ran >> "+filepath.Join(c.dir, "first.log")+"\n\n"+
		"### gate\nPasses once the flag exists.\n- type: shell\n- command: test -f "+flag+" && echo open\n\n## Outputs\n\n### said\nWhat the gate said.\n- source: ${gate.stdout}\n")
	got = call(map[string]any{"workflow": wf})
	cp, _ := got["checkpoint"].(map[string]any)
	with, _ := cp["resume_with"].(map[string]any)
	id, _ := with["resume"].(string)
	if got["success"] != false || !strings.HasPrefix(id, "pflow-gate-") {
		t.Fatalf("failed run's checkpoint: %v", got)
	}
	writeFile(t, flag, "")
	got = call(map[string]any{"workflow": wf, "resume": id})
	data, _ = got["data"].(map[string]any)
	if got["success"] != true || fmt.Sprint(data["outputs"]) != "map[said:open]" || data["resumed_from"] != id {
		t.Fatalf("resumed run: %v", got)
	}
	if n := len(lines(filepath.Join(c.dir, "first.log"))); n != 1 {
		t.Errorf("the completed step ran %d times, want once", n)
	}
}

// TestRoutedFailureOnTemporal: a step whose failure the workflow routes to
// on_error fails with the same message on Temporal as locally, one that
// suggests no ignore_errors (the worker's node learns the step is routed).
func TestRoutedFailureOnTemporal(t *testing.T) {
	c := newCluster(t)
	c.worker(t)
	wf := filepath.Join(c.dir, "routed.pflow.md")
	writeFile(t, wf, "# Routed\n\n## Steps\n\n### boom\nFails.\n- type: shell\n- command: echo broken >&2; exit 3\n- on_error: report\n\n"+
		"### report\nReports the failure.\n- type: shell\n- stdin: ${boom.error}\n- command: cat\n\n"+
		"## Outputs\n\n### said\nThe failure.\n- source: ${report.stdout}\n")
	local := envelope(t, c.pflow(t, "--output-format", "json", wf))
	remote := envelope(t, c.pflow(t, "--temporal", c.srv.HostPort, "--output-format", "json", wf))
	lj, _ := json.MarshalIndent(local, "", "  ")
	rj, _ := json.MarshalIndent(remote, "", "  ")
	if string(lj) != string(rj) {
		t.Errorf("on Temporal:\n%s\nlocally:\n%s", rj, lj)
	}
	said := fmt.Sprint(remote["result"])
	if !strings.Contains(said, "exit code 3") || strings.Contains(said, "ignore_errors") {
		t.Errorf("a routed failure on Temporal says %q: want the exit code and no ignore_errors advice", said)
	}
}

// TestAskStepWaitsForASignalOnTemporal runs examples/approval.pflow.md on
// Temporal: the run waits in its workflow (pflow runs --temporal says
// waiting, with the question) until `pflow runs answer --temporal` sends
// the answer, then finishes with the output the answer chose.
func TestAskStepWaitsForASignalOnTemporal(t *testing.T) {
	c := newCluster(t)
	c.worker(t)
	for _, tc := range []struct{ choice, want string }{{"approve", "deployed web"}, {"deny", "cancelled"}} {
		t.Run(tc.choice, func(t *testing.T) {
			cmd := exec.Command(c.bin, "--temporal", c.srv.HostPort, "--output-format", "json", repoPath(t, "examples/approval.pflow.md"), "what=web")
			cmd.Env, cmd.Dir = c.env(), c.dir
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var id string
			waitFor(t, "the run to wait for an answer", 2*time.Minute, func() bool {
				r := c.pflow(t, "runs", "--temporal", c.srv.HostPort, "--json")
				var l struct {
					Runs []struct {
						ID, Status string
						Question   *struct{ Message string }
					}
				}
				if json.Unmarshal([]byte(r.stdout), &l) != nil {
					return false
				}
				for _, run := range l.Runs {
					if run.Status == "waiting" && run.Question != nil && run.Question.Message == "Deploy web?" {
						id = run.ID
						return true
					}
				}
				return false
			})
			if r := c.pflow(t, "runs", "--temporal", c.srv.HostPort); !strings.Contains(r.stdout, "runs answer --temporal "+c.srv.HostPort+" "+id) {
				t.Errorf("pflow runs --temporal does not say how to answer:\n%s", r.stdout)
			}
			if r := c.pflow(t, "runs", "answer", "--temporal", c.srv.HostPort, id, tc.choice); r.code != 0 {
				t.Fatalf("runs answer: %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				t.Fatal("the run did not finish after its answer")
			}
			env := envelope(t, result{stdout: out.String()})
			res, _ := env["result"].(map[string]any)
			if res["result"] != tc.want {
				t.Fatalf("result after %s: %v\n%s%s", tc.choice, env, out.String(), errb.String())
			}
		})
	}
	// A wrong id is named.
	if r := c.pflow(t, "runs", "answer", "--temporal", c.srv.HostPort, "pflow-nothing-here", "approve"); r.code == 0 || !strings.Contains(r.stderr+r.stdout, "pflow-nothing-here") {
		t.Errorf("answering an unknown run: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// bearer adds the server's token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestAllowDirBoundsTemporalRuns: pflow mcp serve --http --allow-dir with
// --temporal sends its directories with the run; the worker refuses a file
// step outside them before it runs, and lets one inside write.
func TestAllowDirBoundsTemporalRuns(t *testing.T) {
	c := newCluster(t)
	c.worker(t)
	allowed, outside := filepath.Join(c.dir, "allowed"), filepath.Join(c.dir, "outside")
	os.MkdirAll(allowed, 0o755)
	os.MkdirAll(outside, 0o755)
	serve := exec.Command(c.bin, "mcp", "serve", "--http", "127.0.0.1:0", "--temporal", c.srv.HostPort, "--allow-dir", allowed)
	serve.Env = c.env()
	stderr, _ := serve.StderrPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-urlc:
	case <-time.After(time.Minute):
		t.Fatal("pflow mcp serve --http did not start")
	}
	token, err := os.ReadFile(filepath.Join(c.home, "mcp-serve.token"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearer{strings.TrimSpace(string(token)), http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	write := func(target string) map[string]any {
		t.Helper()
		wf := filepath.Join(allowed, "write.pflow.md")
		writeFile(t, wf, "# Write\nWrites a file.\n\n## Steps\n\n### w\nWrite it.\n- type: write-file\n- file_path: "+target+"\n- content: hello\n")
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": wf}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	got := write(filepath.Join(outside, "x.txt"))
	if got["success"] != false || !strings.Contains(fmt.Sprint(got), "--allow-dir "+allowed) {
		t.Fatalf("a write outside --allow-dir on Temporal: %v", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Fatal("the file outside --allow-dir was written")
	}
	got = write(filepath.Join(allowed, "y.txt"))
	if got["success"] != true {
		t.Fatalf("a write inside --allow-dir on Temporal: %v", got)
	}
	if b, err := os.ReadFile(filepath.Join(allowed, "y.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("the file inside: %q %v", b, err)
	}
}
