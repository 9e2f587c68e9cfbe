//go:build linux

package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
	"github.com/pflow-go/pflow/internal/trace"
)

// escapeWorkflow's step starts two descendants that leave its process
// group and ignore SIGTERM — one through setsid (as a daemon or Node's
// detached: true does), one through a double fork — waits until both have
// escaped, then ends as the ending input says. %d is the step's timeout.
const escapeWorkflow = "# Escapes\nA step whose descendants leave its process group.\n\n" +
	"## Inputs\n\n### dir\nWhere the marks go.\n- type: string\n\n### ending\nok, fail or hang.\n- type: string\n\n" +
	"## Steps\n\n### spawn\nStart escaping descendants, then end as asked.\n- type: shell\n- timeout: %d\n\n" +
	"```shell command\n" +
	"setsid sh -c 'trap \"\" TERM; touch \"$0\"; exec sleep 300' \"${dir}/up1\" </dev/null >/dev/null 2>&1 &\n" +
	"setsid sh -c '(trap \"\" TERM; touch \"$0\"; exec sleep 300) & exit 0' \"${dir}/up2\" </dev/null >/dev/null 2>&1 &\n" +
	"while [ ! -f \"${dir}/up1\" ] || [ ! -f \"${dir}/up2\" ]; do sleep 0.01; done\n" +
	"touch \"${dir}/started\"\n" +
	"case \"${ending}\" in fail) exit 3;; hang) sleep 300;; esac\n" +
	"echo spawned\n```\n\n" +
	"### after\nA second step.\n- type: shell\n- command: echo after\n\n" +
	"## Outputs\n\n### out\nThe second step's output.\n- source: ${after.stdout}\n"

// mcpWorkflow calls a tool of the fake server "fake".
const mcpWorkflow = "# Server\nCalls a server whose descendants escape.\n\n## Steps\n\n" +
	"### call\nCall the tool.\n- type: mcp-fake-%s\n%s\n## Outputs\n\n### out\nThe result.\n- source: ${call.result}\n"

// TestNothingOutlivesTheRun: shell steps and MCP servers whose descendants
// leave the process group (setsid, double fork) and ignore SIGTERM leave no
// process behind after a run that succeeds, fails, times out or is
// interrupted with Ctrl-C, nor after `pflow mcp sync`. Every process pflow
// starts here carries PFLOW_FAKE_ID=id (pflow's own environment, or the fake
// server's config), so fakemcp.Leftovers finds any survivor.
func TestNothingOutlivesTheRun(t *testing.T) {
	bin := pflowBin(t)
	type tc struct {
		name      string
		ending    string // shell cases: ok, fail, hang
		timeout   int
		tool      string // MCP cases: the fake server's tool
		interrupt int    // how many SIGINTs to send, back to back
		wantCode  int
	}
	cases := []tc{
		{name: "shell/success", ending: "ok", timeout: 600, wantCode: 0},
		{name: "shell/failure", ending: "fail", timeout: 600, wantCode: 1},
		{name: "shell/timeout", ending: "hang", timeout: 1, wantCode: 1},
		{name: "shell/ctrl-c", ending: "hang", timeout: 600, interrupt: 1, wantCode: 130},
		// Two signals at once, as terminals and `timeout -s INT` send:
		// the cleanup still finishes (trace written, nothing left).
		{name: "shell/double ctrl-c", ending: "hang", timeout: 600, interrupt: 2, wantCode: 130},
		{name: "mcp/success", tool: "echo", wantCode: 0},
		{name: "mcp/failure", tool: "fail", wantCode: 1},
		{name: "mcp/timeout", tool: "hang", timeout: 1, wantCode: 1},
		{name: "mcp/ctrl-c", tool: "hang", interrupt: 1, wantCode: 130},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home, dir := t.TempDir(), t.TempDir()
			id := fakemcp.NewID()
			t.Cleanup(func() {
				for _, pid := range fakemcp.Leftovers(id) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			var wf, started string
			args := []string{"run"}
			if c.tool == "" {
				wf = writeFile(t, filepath.Join(dir, "escapes.pflow.md"), fmt.Sprintf(escapeWorkflow, c.timeout))
				args = append(args, wf, "dir="+dir, "ending="+c.ending)
				started = filepath.Join(dir, "started")
			} else {
				// The server starts both kinds of escaping grandchild
				// before it answers initialize.
				cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
					"fake": fakemcp.Entry(id, "", "spawn-escaped", "spawn-double-fork", "ignore-term"),
				}})
				mustPflow(t, home, nil, "mcp", "add", string(cfg))
				mustPflow(t, home, nil, "mcp", "sync", "fake")
				if left := fakemcp.Leftovers(id); len(left) > 0 {
					t.Fatalf("processes left after `pflow mcp sync`: %v", left)
				}
				params := "- message: hi\n"
				if c.tool == "hang" {
					params = ""
					if c.timeout > 0 {
						params = fmt.Sprintf("- timeout: %d\n", c.timeout)
					}
				}
				wf = writeFile(t, filepath.Join(dir, "server.pflow.md"), fmt.Sprintf(mcpWorkflow, c.tool, params))
				args = append(args, wf)
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = env(home, fakemcp.IDVar+"="+id)
			cmd.Dir = dir
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if c.interrupt > 0 {
				if started != "" {
					waitFor(t, started, cmd, &stderr)
				} else {
					// The hang tool is called once the server (and so its
					// escaped grandchildren) is up: wait for those.
					waitForLeftovers(t, id, 3, cmd, &stderr)
				}
				for range c.interrupt {
					cmd.Process.Signal(os.Interrupt)
				}
			}
			err := cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.wantCode, stdout.String(), stderr.String())
			}
			if started != "" {
				if _, err := os.Stat(filepath.Join(dir, "up2")); err != nil {
					t.Fatal("the double-forked descendant never started: the test proves nothing")
				}
			}
			if left := fakemcp.Leftovers(id); len(left) > 0 {
				t.Fatalf("processes outlived the run: %v\n%s", left, describe(left))
			}
			if c.interrupt > 0 {
				traces, _ := filepath.Glob(filepath.Join(home, "debug", trace.FilePattern))
				if len(traces) != 1 {
					t.Fatalf("an interrupted run wrote %d traces, want 1\nstderr: %s", len(traces), stderr.String())
				}
			}
		})
	}
}

// waitForLeftovers waits until n live processes carry id, failing the test
// after a generous bound that only a hung process reaches.
func waitForLeftovers(t *testing.T, id string, n int, cmd *exec.Cmd, stderr *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for len(fakemcp.Leftovers(id)) < n {
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			t.Fatalf("the server and its grandchildren never came up; pflow stderr:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// describe lists the command lines of pids, for a failure message.
func describe(pids []int) string {
	var b strings.Builder
	for _, pid := range pids {
		cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		fmt.Fprintf(&b, "  %d: %s\n", pid, strings.ReplaceAll(string(cl), "\x00", " "))
	}
	return b.String()
}
