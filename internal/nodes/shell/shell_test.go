//go:build unix

package shell

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/proc"
)

const bound = 10 * time.Second

func run(t *testing.T, ctx context.Context, req *node.Request) (*node.Result, error) {
	t.Helper()
	res, err := Spec().Node.Run(ctx, req)
	if res != nil {
		checkDeclared(t, res)
	}
	return res, err
}

// checkDeclared asserts every output the node writes is declared, so that
// ${step.key} validates for each of them.
func checkDeclared(t *testing.T, res *node.Result) {
	t.Helper()
	spec := Spec()
	for k := range res.Outputs {
		if _, ok := spec.Interface.Output(k); !ok {
			t.Errorf("output %q is written but not declared in the interface", k)
		}
	}
}

func TestShell(t *testing.T) {
	grepPath, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal("grep not found")
	}
	tmp := t.TempDir()
	build := filepath.Join(tmp, "build")
	if err := os.MkdirAll(filepath.Join(build, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	wfDir := t.TempDir()
	if err := os.Mkdir(filepath.Join(wfDir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	realWfDir, _ := filepath.EvalSymlinks(wfDir)

	tests := []struct {
		name     string
		params   map[string]any
		wfDir    string
		action   string // "" = default
		want     map[string]any
		errHas   []string
		checkFor func(t *testing.T, out map[string]any)
	}{
		{
			name:   "stdout with trailing newline stripped",
			params: map[string]any{"command": "echo hello; echo warn >&2"},
			want:   map[string]any{"stdout": "hello", "stderr": "warn\n", "exit_code": int64(0), "command": "echo hello; echo warn >&2", "stdout_truncated": false, "stdout_is_binary": false},
		},
		{
			name:   "strip_newline false keeps newlines",
			params: map[string]any{"command": "printf 'a\\n\\n'", "strip_newline": false},
			want:   map[string]any{"stdout": "a\n\n"},
		},
		{
			name:   "non-zero exit fails with stderr tail",
			params: map[string]any{"command": "echo partial; echo boom >&2; exit 3"},
			action: "error",
			want:   map[string]any{"stdout": "partial", "stderr": "boom\n", "exit_code": int64(3)},
			errHas: []string{"Command failed with exit code 3: boom", "ignore_errors: true"},
		},
		{
			name:   "non-zero exit with empty stderr quotes stdout",
			params: map[string]any{"command": "echo 'useful hint'; exit 4"},
			action: "error",
			errHas: []string{"Command failed with exit code 4", "end of stdout: useful hint"},
		},
		{
			name:   "ignore_errors continues and says what failed",
			params: map[string]any{"command": "echo boom >&2; exit 3", "ignore_errors": true},
			want:   map[string]any{"exit_code": int64(3), "stderr": "boom\n"},
			errHas: []string{"Command failed with exit code 3: boom"},
			checkFor: func(t *testing.T, out map[string]any) {
				if strings.Contains(out["error"].(string), "ignore_errors") {
					t.Error("suggests ignore_errors although it is set")
				}
			},
		},
		{
			name:   "ignore_errors with success has an empty error",
			params: map[string]any{"command": "true", "ignore_errors": true},
			want:   map[string]any{"exit_code": int64(0), "error": ""},
		},
		{
			name:   "plain success writes no error",
			params: map[string]any{"command": "true"},
			checkFor: func(t *testing.T, out map[string]any) {
				if _, ok := out["error"]; ok {
					t.Error("error output set on success")
				}
			},
		},
		{
			name:   "grep with no match succeeds with exit code 1",
			params: map[string]any{"command": "printf 'a\\nb\\n' | grep zzz"},
			want:   map[string]any{"exit_code": int64(1), "stdout": ""},
		},
		{
			name:   "grep by full path with env assignment",
			params: map[string]any{"command": "printf 'a\\n' | LC_ALL=C " + grepPath + " zzz"},
			want:   map[string]any{"exit_code": int64(1)},
		},
		{
			name:   "grep error exit 2 fails",
			params: map[string]any{"command": "grep x " + filepath.Join(tmp, "missing.txt")},
			action: "error",
			want:   map[string]any{"exit_code": int64(2)},
			errHas: []string{"exit code 2", "No such file"},
		},
		{
			name:   "grep not last in the pipeline is not special",
			params: map[string]any{"command": "grep zzz /dev/null; false"},
			action: "error",
			want:   map[string]any{"exit_code": int64(1)},
		},
		{
			name:   "command not found explains exit code 127",
			params: map[string]any{"command": "pflow-no-such-tool --x"},
			action: "error",
			want:   map[string]any{"exit_code": int64(127)},
			errHas: []string{"exit code 127", "pflow-no-such-tool", "installed and on PATH"},
		},
		{
			name:   "exit 1 of another command fails",
			params: map[string]any{"command": "false"},
			action: "error",
			errHas: []string{"exit code 1 (no output)"},
		},
		{
			name:   "no dangerous-pattern blocklist",
			params: map[string]any{"command": "rm -rf " + build + " && echo removed"},
			want:   map[string]any{"stdout": "removed"},
			checkFor: func(t *testing.T, out map[string]any) {
				if _, err := os.Stat(build); !errors.Is(err, os.ErrNotExist) {
					t.Error("rm -rf of an absolute path did not run")
				}
			},
		},
		{
			name:   "stdin string",
			params: map[string]any{"command": "tr a-z A-Z", "stdin": "hello"},
			want:   map[string]any{"stdout": "HELLO"},
		},
		{
			name:   "stdin dict as JSON without ASCII escaping",
			params: map[string]any{"command": "cat", "stdin": map[string]any{"name": "café", "n": int64(2)}},
			want:   map[string]any{"stdout": `{"n":2,"name":"café"}`},
		},
		{
			name:   "stdin list as JSON",
			params: map[string]any{"command": "cat", "stdin": []any{int64(1), "a"}},
			want:   map[string]any{"stdout": `[1,"a"]`},
		},
		{
			name:   "stdin bool lowercase",
			params: map[string]any{"command": "cat", "stdin": true},
			want:   map[string]any{"stdout": "true"},
		},
		{
			name:   "stdin number",
			params: map[string]any{"command": "cat", "stdin": 2.5},
			want:   map[string]any{"stdout": "2.5"},
		},
		{
			name:   "env merged over process env",
			params: map[string]any{"command": `echo "$PFLOW_TEST_VAR $PFLOW_TEST_NUM"; command -v sh >/dev/null && echo path-ok`, "env": map[string]any{"PFLOW_TEST_VAR": "x y", "PFLOW_TEST_NUM": int64(7)}},
			want:   map[string]any{"stdout": "x y 7\npath-ok"},
		},
		{
			name:   "relative cwd resolves against the workflow directory",
			params: map[string]any{"command": "pwd -P", "cwd": "data"},
			wfDir:  wfDir,
			want:   map[string]any{"stdout": filepath.Join(realWfDir, "data")},
		},
		{
			name:   "output capped with truncated flag",
			params: map[string]any{"command": "head -c 100000 /dev/zero | tr '\\0' a", "max_output": int64(10)},
			want:   map[string]any{"stdout": "aaaaaaaaaa", "stdout_truncated": true, "exit_code": int64(0)},
		},
		{
			name:   "cap inside a multi-byte rune is not binary",
			params: map[string]any{"command": "printf 'ééé'", "max_output": int64(3)},
			want:   map[string]any{"stdout": "é", "stdout_truncated": true, "stdout_is_binary": false},
		},
		{
			name:   "binary stdout is base64",
			params: map[string]any{"command": `printf '\377\376'`},
			want:   map[string]any{"stdout": "//4=", "stdout_is_binary": true},
		},
		{
			name:   "killed by signal",
			params: map[string]any{"command": "kill -9 $$"},
			action: "error",
			want:   map[string]any{"exit_code": int64(137)},
			errHas: []string{"killed by signal 9"},
		},
		{
			name:   "timeout fails with exit code -1",
			params: map[string]any{"command": "echo before; sleep 30", "timeout": 0.2},
			action: "error",
			want:   map[string]any{"exit_code": int64(-1), "stdout": "before"},
			errHas: []string{"Command timed out after 0.2 seconds"},
		},
		{
			name:   "timeout as duration string",
			params: map[string]any{"command": "sleep 30", "timeout": "300ms"},
			action: "error",
			errHas: []string{"Command timed out after 0.3 seconds"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, context.Background(), &node.Request{NodeID: "s", Params: tt.params, WorkflowDir: tt.wfDir})
			if err != nil {
				t.Fatalf("Go error: %v", err)
			}
			if res.Action != tt.action {
				t.Fatalf("action = %q, want %q (outputs %v)", res.Action, tt.action, res.Outputs)
			}
			for k, v := range tt.want {
				if res.Outputs[k] != v {
					t.Errorf("%s = %#v, want %#v", k, res.Outputs[k], v)
				}
			}
			msg, _ := res.Outputs["error"].(string)
			for _, s := range tt.errHas {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not contain %q", msg, s)
				}
			}
			if tt.action == "error" && msg == "" {
				t.Error("failed without an error message")
			}
			if tt.checkFor != nil {
				tt.checkFor(t, res.Outputs)
			}
		})
	}
}

func TestShellParamErrors(t *testing.T) {
	wf := t.TempDir()
	os.WriteFile(filepath.Join(wf, "file"), nil, 0o644)
	tests := []struct {
		name   string
		params map[string]any
		want   []string
	}{
		{"missing command", map[string]any{}, []string{"'command'", "required"}},
		{"missing cwd", map[string]any{"command": "true", "cwd": "nope"}, []string{"'cwd'", filepath.Join(wf, "nope"), "does not exist"}},
		{"cwd is a file", map[string]any{"command": "true", "cwd": "file"}, []string{"not a directory"}},
		{"bad timeout", map[string]any{"command": "true", "timeout": "soon"}, []string{"'timeout'"}},
		{"zero timeout", map[string]any{"command": "true", "timeout": int64(0)}, []string{"greater than 0"}},
		{"bad env", map[string]any{"command": "true", "env": "A=B"}, []string{"'env'", "mapping"}},
		{"bad ignore_errors", map[string]any{"command": "true", "ignore_errors": "maybe"}, []string{"'ignore_errors'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, context.Background(), &node.Request{Params: tt.params, WorkflowDir: wf})
			if err == nil {
				t.Fatalf("want a Go error, got result %+v", res)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		if !proc.Alive(pid) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("grandchild %d survived the step", pid)
}

func TestShellTimeoutKillsGrandchild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	done := make(chan *node.Result, 1)
	go func() {
		res, err := Spec().Node.Run(context.Background(), &node.Request{Params: map[string]any{
			"command": "sleep 300 & echo $! > " + pidFile + "; sleep 300",
			"timeout": 0.3,
		}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	grandchild := readPid(t, pidFile)
	select {
	case res := <-done:
		if res == nil || res.Action != "error" || res.Outputs["exit_code"] != int64(-1) {
			t.Fatalf("result = %+v", res)
		}
	case <-time.After(bound):
		t.Fatal("shell step did not return after its timeout")
	}
	waitGone(t, grandchild)
}

func TestShellCancelKillsGroupAndReturnsContextError(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res *node.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Spec().Node.Run(ctx, &node.Request{Params: map[string]any{
			"command": "sleep 300 & echo $! > " + pidFile + "; wait",
		}})
		done <- outcome{res, err}
	}()
	grandchild := readPid(t, pidFile)
	cancel()
	select {
	case o := <-done:
		if o.res != nil || !errors.Is(o.err, context.Canceled) {
			t.Fatalf("got %+v, %v; want a Go error wrapping context.Canceled", o.res, o.err)
		}
	case <-time.After(bound):
		t.Fatal("shell step did not return after cancel")
	}
	waitGone(t, grandchild)
}

func TestShellBackgroundJobDoesNotOutliveStep(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	res, err := run(t, context.Background(), &node.Request{Params: map[string]any{
		"command": "sleep 300 & echo $! > " + pidFile + "; echo done",
	}})
	if err != nil || res.Action != "" || res.Outputs["stdout"] != "done" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	waitGone(t, readPid(t, pidFile))
}

func TestShellConcurrentRuns(t *testing.T) {
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		go func(i int) {
			res, err := Spec().Node.Run(context.Background(), &node.Request{Params: map[string]any{"command": "echo $N", "env": map[string]any{"N": int64(i)}}})
			if err == nil && res.Outputs["stdout"] != strconv.Itoa(i) {
				err = errors.New("wrong output " + res.Outputs["stdout"].(string))
			}
			errs <- err
		}(i)
	}
	for i := 0; i < 20; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestShellSpec(t *testing.T) {
	s := Spec()
	if s.Type != "shell" || s.Group != "shell" || s.Attempts != 1 {
		t.Fatalf("spec = %+v", s)
	}
	for _, k := range []string{"stdout", "stderr", "exit_code", "stdout_truncated", "stderr_truncated", "stdout_is_binary", "command", "error"} {
		f, ok := s.Interface.Output(k)
		if !ok || f.Type == "" || f.Description == "" {
			t.Errorf("output %q not fully declared: %+v", k, f)
		}
	}
	for _, f := range s.Interface.Params {
		if f.Type == "" || f.Description == "" {
			t.Errorf("param %q not fully declared", f.Key)
		}
	}
	if p, _ := s.Interface.Param("command"); !p.Required {
		t.Error("command must be required")
	}
}

func TestIsNoMatchCommand(t *testing.T) {
	tests := []struct {
		script string
		want   bool
	}{
		{"grep foo file", true},
		{"cat x | grep foo", true},
		{"cat x | rg -n foo", true},
		{"cat x | egrep 'a|b'", true},
		{"cat x | /bin/grep foo", true},
		{"cat x |\n  grep foo\n", true},
		{"cat x | grep foo # find foo", true},
		{"LANG=C grep foo f", true},
		{"command grep foo f", true},
		{"grep foo f | wc -l", false},
		{"grep foo f; false", false},
		{"grep -q foo f && echo yes", false},
		{"! grep foo f", false},
		{"(cd x && grep foo f)", false},
		{"if grep foo f; then echo y; fi", false},
		{"echo 'a | grep b'", false},
		{`echo "x; grep"`, false},
		{"grepper foo", false},
		{"echo $(grep foo f)", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isNoMatchCommand(tt.script); got != tt.want {
			t.Errorf("isNoMatchCommand(%q) = %v, want %v", tt.script, got, tt.want)
		}
	}
}

func TestShellOutputFloodStaysCapped(t *testing.T) {
	res, err := run(t, context.Background(), &node.Request{Params: map[string]any{
		"command":    "head -c 30000000 /dev/zero; head -c 30000000 /dev/zero >&2",
		"max_output": int64(1024),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != "" || res.Outputs["stdout_truncated"] != true || res.Outputs["stderr_truncated"] != true {
		t.Fatalf("outputs %v", res.Outputs)
	}
	if n := len(res.Outputs["stderr"].(string)); n != 1024 {
		t.Fatalf("stderr kept %d bytes, want 1024", n)
	}
}

func FuzzIsNoMatchCommand(f *testing.F) {
	for _, s := range []string{"grep x", "a | rg y", "echo 'a|b' \\\n| grep c # x", `"grep" x`, "(grep", "x=1 grep"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		got := isNoMatchCommand(script)
		if got && !strings.Contains(script, "grep") && !strings.Contains(script, "rg") {
			t.Fatalf("%q classified as grep-like", script)
		}
	})
}
