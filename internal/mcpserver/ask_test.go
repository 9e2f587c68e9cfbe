package mcpserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// approvalExample is examples/approval.pflow.md.
func approvalExample(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../examples/approval.pflow.md")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// connectEliciting connects a second client to f's server whose person
// answers every elicitation with answer (nil: blocks until the request is
// cancelled, a person who never answers).
func connectEliciting(t *testing.T, f *fixture, version string, answer func(*mcp.ElicitParams) *mcp.ElicitResult) (*mcp.ClientSession, chan *mcp.ElicitParams) {
	t.Helper()
	asked := make(chan *mcp.ElicitParams, 4)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := f.srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "eliciting-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- req.Params
			if answer == nil {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return answer(req.Params), nil
		},
	})
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ProtocolVersion; version != "" && got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return cs, asked
}

func callOn(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return decodeResult(t, name, res)
}

// An ask step run through workflow_execute asks the calling client: a
// 2025-11-25 client by elicitation/create while the run waits, a
// 2026-07-28 client by an input-required result whose retry continues the
// paused run; the answer routes the run.
func TestAskElicitsTheCallingClient(t *testing.T) {
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) { testAskElicits(t, v) })
	}
}

func testAskElicits(t *testing.T, version string) {
	f := newFixture(t, nil)
	for _, tc := range []struct {
		name   string
		answer *mcp.ElicitResult
		want   string
	}{
		{"approved", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"choice": "approve"}}, "deployed x"},
		{"denied", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"choice": "deny"}}, "cancelled"},
		{"declined", &mcp.ElicitResult{Action: "decline"}, "cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, asked := connectEliciting(t, f, version, func(*mcp.ElicitParams) *mcp.ElicitResult { return tc.answer })
			r := callOn(t, cs, "workflow_execute", map[string]any{"workflow": approvalExample(t), "parameters": map[string]any{"what": "x"}})
			d := r.mustOK(t).data()
			if out, _ := d["outputs"].(map[string]any); out["result"] != tc.want {
				t.Fatalf("outputs %v, want result %q; %v", d["outputs"], tc.want, r.Env)
			}
			q := <-asked
			if q.Message != "Deploy x?" {
				t.Errorf("asked %q", q.Message)
			}
			props := q.RequestedSchema.(map[string]any)["properties"].(map[string]any)
			if enum := props["choice"].(map[string]any)["enum"]; len(enum.([]any)) != 2 {
				t.Errorf("choice enum %v", enum)
			}
		})
	}
}

// A person who does not answer within the step's timeout: the step takes
// its default, or the timeout action when it has none.
func TestAskTimesOut(t *testing.T) {
	f := newFixture(t, nil)
	wf := func(extra string) string {
		return `# T
Asks with a short timeout.

## Steps

### gate
Ask.
- type: ask
- message: Go?
- timeout: 300ms
` + extra + `- on: {approved: yes, denied: no, timeout: late}

### yes
Approved.
- type: shell
- command: printf yes
- output_mappings: {stdout: result}

### no
Denied.
- type: shell
- command: printf no
- output_mappings: {stdout: result}

### late
Nobody answered.
- type: shell
- command: printf late
- output_mappings: {stdout: result}

## Outputs

### result
What happened.
`
	}
	cs, asked := connectEliciting(t, f, "2025-11-25", nil)
	for _, tc := range []struct{ extra, want string }{{"", "late"}, {"- default: deny\n", "no"}} {
		r := callOn(t, cs, "workflow_execute", map[string]any{"workflow": wf(tc.extra)})
		d := r.mustOK(t).data()
		if out, _ := d["outputs"].(map[string]any); out["result"] != tc.want {
			t.Fatalf("default %q: outputs %v, want %q", tc.extra, d["outputs"], tc.want)
		}
		<-asked
	}
}

// A client without elicitation: the run waits (status waiting, its
// question in the result); workflow_execute with resume and answer
// continues it without the workflow, re-using the finished steps.
func TestAskWaitsThenAnsweredByTheAgent(t *testing.T) {
	f := newFixture(t, nil)
	r := f.call("workflow_execute", map[string]any{"workflow": approvalExample(t), "parameters": map[string]any{"what": "x"}})
	d := r.mustOK(t).data()
	if d["status"] != "waiting" {
		t.Fatalf("status %v: %v", d["status"], r.Env)
	}
	w := d["waiting"].(map[string]any)
	id, _ := d["run_id"].(string)
	if q := w["question"].(map[string]any); q["message"] != "Deploy x?" || w["tool"] != "workflow_execute" || id == "" {
		t.Fatalf("waiting %v", w)
	}
	st := f.call("run_status", map[string]any{"run_id": id}).mustOK(t).data()
	if st["status"] != "waiting" || st["waiting"] == nil {
		t.Fatalf("run_status %v", st)
	}
	bad := f.call("workflow_execute", map[string]any{"resume": id, "answer": "maybe"})
	bad.mustErr(t, "validation")
	contains(t, bad.errMsg(), "not a choice")
	r = f.call("workflow_execute", map[string]any{"resume": id, "answer": "approve"})
	d = r.mustOK(t).data()
	if out, _ := d["outputs"].(map[string]any); out["result"] != "deployed x" || d["resumed_from"] != id {
		t.Fatalf("answered: %v", d)
	}
	st = f.call("run_status", map[string]any{"run_id": id}).mustOK(t).data()
	if st["status"] != "answered" {
		t.Fatalf("run_status after the answer %v", st)
	}
	f.call("workflow_execute", map[string]any{"resume": id, "answer": "approve"}).mustErr(t, "validation")
}

// background: true answers at once with the run id; run_status shows the
// run going, then its outputs; run_cancel stops a running one.
func TestBackgroundRunStatusAndCancel(t *testing.T) {
	f := newFixture(t, nil)
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	wf := `# Slow
Waits for a file, then answers.

## Steps

### wait
Waits until the test makes the file.
- type: shell
- command: while [ ! -e '` + gate + `' ]; do sleep 0.05; done; printf done

## Outputs

### result
Done.
- source: ${wait.stdout}
`
	started := func() string {
		r := f.call("workflow_execute", map[string]any{"workflow": wf, "background": true})
		d := r.mustOK(t).data()
		id, _ := d["run_id"].(string)
		if d["status"] != "running" || d["background"] != true || id == "" {
			t.Fatalf("background answer %v", r.Env)
		}
		return id
	}
	status := func(id string) map[string]any {
		return f.call("run_status", map[string]any{"run_id": id}).mustOK(t).data()
	}
	// Its step is running (the answer came before the run ended).
	id := started()
	waitFor(t, func() bool {
		p, _ := status(id)["progress"].(map[string]any)
		return p["current_step"] == "wait"
	})
	if st := status(id); st["status"] != "running" {
		t.Fatalf("status %v", st)
	}
	// Finished: status success with the outputs.
	os.WriteFile(gate, nil, 0o600)
	waitFor(t, func() bool { return status(id)["status"] != "running" })
	st := status(id)
	if out, _ := st["outputs"].(map[string]any); st["status"] != "success" || out["result"] != "done" {
		t.Fatalf("finished: %v", st)
	}
	// Cancelled.
	os.Remove(gate)
	id = started()
	waitFor(t, func() bool {
		p, _ := status(id)["progress"].(map[string]any)
		return p["current_step"] == "wait"
	})
	st = f.call("run_cancel", map[string]any{"run_id": id}).mustOK(t).data()
	if st["status"] != "interrupted" {
		t.Fatalf("cancelled: %v", st)
	}
	f.call("run_cancel", map[string]any{"run_id": "no-such-run"}).mustErr(t, "not_found")
	// A background run that waits at an ask step shows its question.
	r := f.call("workflow_execute", map[string]any{"workflow": approvalExample(t), "parameters": map[string]any{"what": "y"}, "background": true})
	id, _ = r.mustOK(t).data()["run_id"].(string)
	waitFor(t, func() bool { return status(id)["status"] != "running" })
	if st := status(id); st["status"] != "waiting" || st["waiting"] == nil {
		t.Fatalf("waiting background run: %v", st)
	}
}

// waitFor polls cond until it holds (a hang detector bounds it, not a
// speed target).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A run paused under `pflow mcp serve` survives the server: the server
// is killed, a new process answers with `pflow runs answer`, and the step
// that ran before the question does not run again.
func TestAskAnsweredAfterServerKilled(t *testing.T) {
	bin := buildPflow(t)
	home := t.TempDir()
	dir := t.TempDir()
	log := filepath.Join(dir, "log.txt")
	wfPath := writeFile(t, filepath.Join(dir, "deploy.pflow.md"), `# Deploy
Prepares, asks, deploys.

## Inputs

### what
What to deploy.
- type: string

## Steps

### prepare
Appends a line each time it runs.
- type: shell
- command: echo "prepared ${what}" >> '`+log+`'

### gate
Ask.
- type: ask
- message: "Deploy ${what}?"
- on: {approved: deploy, denied: cancel}

### deploy
Deploy.
- type: shell
- command: printf '%s' "deployed ${what}"
- output_mappings: {stdout: result}

### cancel
Cancel.
- type: shell
- command: printf cancelled
- output_mappings: {stdout: result}

## Outputs

### result
What happened.
`)
	cmd := exec.Command(bin, "mcp", "serve")
	cmd.Env = testEnv(home)
	stderr := &fakemcp.Buffer{}
	cmd.Stderr = stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "no-elicitation", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": wfPath, "parameters": map[string]any{"what": "v2"}}})
	if err != nil {
		t.Fatal(err)
	}
	d := decodeResult(t, "workflow_execute", res).mustOK(t).data()
	if d["status"] != "waiting" {
		t.Fatalf("status %v", d)
	}
	// The server goes away without any goodbye.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cs.Close() // waits for the killed process

	answer := exec.Command(bin, "runs", "answer", d["run_id"].(string), "approve")
	answer.Env = testEnv(home)
	out, err := answer.CombinedOutput()
	cmdOut := string(out)
	if err != nil || !strings.Contains(cmdOut, "deployed v2") {
		t.Fatalf("runs answer: %v\n%s\nserver: %s", err, cmdOut, stderr.String())
	}
	data, _ := os.ReadFile(log)
	if n := strings.Count(string(data), "\n"); n != 1 {
		t.Fatalf("prepare ran %d times:\n%s", n, data)
	}
}
