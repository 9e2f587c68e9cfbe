package code

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/proc"
)

// TestMain resolves python3 once to the real interpreter (PATH entries such
// as pyenv shims are scripts that cost a second per start on a busy machine)
// and hands it to the node through PFLOW_PYTHON.
func TestMain(m *testing.M) {
	if os.Getenv("PFLOW_PYTHON") == "" {
		if out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output(); err == nil {
			os.Setenv("PFLOW_PYTHON", strings.TrimSpace(string(out)))
		}
	}
	os.Exit(m.Run())
}

func requirePython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 is required on CI for the code node tests: %v", err)
		}
		t.Skip("SKIPPING: python3 not on PATH; the code node tests need it")
	}
}

func runCode(t *testing.T, ctx context.Context, params map[string]any, env map[string]string) *node.Result {
	t.Helper()
	return runCodeAt(t, ctx, params, env, 0, "")
}

// runCodeAt runs the code node as a step whose code block starts at line
// of file.
func runCodeAt(t *testing.T, ctx context.Context, params map[string]any, env map[string]string, line int, file string) *node.Result {
	t.Helper()
	req := &node.Request{NodeID: "transform", Type: "code", Params: params, Attempt: 1, WorkflowFile: file}
	if line > 0 {
		req.SourceLines = map[string]int{"code": line}
	}
	if env != nil {
		req.Env = func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		}
	}
	res, err := Spec().Node.Run(ctx, req)
	if err != nil {
		t.Fatalf("Run returned a Go error: %v", err)
	}
	return res
}

func wantError(t *testing.T, res *node.Result, parts ...string) {
	t.Helper()
	if res.Action != "error" {
		t.Fatalf("action = %q, want error; outputs = %#v", res.Action, res.Outputs)
	}
	msg, _ := res.Outputs["error"].(string)
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error message does not contain %q:\n%s", p, msg)
		}
	}
}

func TestSpec(t *testing.T) {
	s := Spec()
	if s.Type != "code" || s.Attempts != 1 {
		t.Fatalf("spec = %s attempts %d, want code with 1 attempt (docs/decisions.md: retries per node type)", s.Type, s.Attempts)
	}
	if f, ok := s.Interface.Param("code"); !ok || !f.Required {
		t.Errorf("param code must be declared required")
	}
	for _, k := range []string{"result", "stdout", "stderr", "error"} {
		if _, ok := s.Interface.Output(k); !ok {
			t.Errorf("output %q not declared", k)
		}
	}
}

func TestInputsOfEveryTypeRoundTrip(t *testing.T) {
	requirePython(t)
	code := `s: str
i: int
f: float
whole: float
b: bool
l: list
d: dict
n: None
t: tuple
u: set
raw: bytes
result: dict = {name: [type(v).__name__, v] for name, v in
    [("s", s), ("i", i), ("f", f), ("whole", whole), ("b", b), ("l", l), ("d", d), ("n", n)]}
result["t"] = [type(t).__name__, list(t)]
result["u"] = [type(u).__name__, sorted(u)]
result["raw"] = [type(raw).__name__, raw.decode()]
print("computed", len(result))`
	res := runCode(t, context.Background(), map[string]any{
		"code": code,
		"inputs": map[string]any{
			"s": "héllo \"quoted\"\nline", "i": int64(1) << 40, "f": 2.5, "whole": 3.0, "b": true,
			"l": []any{int64(1), "two", nil}, "d": map[string]any{"k": []any{1.5, false}},
			"n": nil, "t": []any{int64(1), int64(2)}, "u": []any{int64(3), int64(1), int64(3)}, "raw": "bytes!",
		},
	}, nil)
	if res.Action == "error" {
		t.Fatalf("unexpected failure: %v", res.Outputs["error"])
	}
	want := map[string]any{
		"s":     []any{"str", "héllo \"quoted\"\nline"},
		"i":     []any{"int", int64(1) << 40},
		"f":     []any{"float", 2.5},
		"whole": []any{"float", 3.0},
		"b":     []any{"bool", true},
		"l":     []any{"list", []any{int64(1), "two", nil}},
		"d":     []any{"dict", map[string]any{"k": []any{1.5, false}}},
		"n":     []any{"NoneType", nil},
		"t":     []any{"tuple", []any{int64(1), int64(2)}},
		"u":     []any{"set", []any{int64(1), int64(3)}},
		"raw":   []any{"bytes", "bytes!"},
	}
	if got := res.Outputs["result"]; !reflect.DeepEqual(got, want) {
		t.Errorf("result =\n%#v\nwant\n%#v", got, want)
	}
	if got := res.Outputs["stdout"]; got != "computed 11\n" {
		t.Errorf("stdout = %q", got)
	}
}

func TestResultTypes(t *testing.T) {
	requirePython(t)
	tests := []struct {
		name string
		code string
		want any
	}{
		{"int", "result: int = 6 * 7", int64(42)},
		{"float", "result: float = 1 / 4", 0.25},
		{"float accepts int", "result: float = 2", int64(2)},
		{"str", "result: str = 'ok'", "ok"},
		{"list of dicts", "result: list[dict] = [{'a': 1}]", []any{map[string]any{"a": int64(1)}}},
		{"optional none", "from typing import Optional\nresult: Optional[int] = None", nil},
		{"union pipe", "result: int | str = 'x'", "x"},
		{"tuple to list", "result: tuple = (1, 'a')", []any{int64(1), "a"}},
		{"any unchecked", "from typing import Any\nresult: Any = {'k': (1, 2)}", map[string]any{"k": []any{int64(1), int64(2)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runCode(t, context.Background(), map[string]any{"code": tt.code}, nil)
			if res.Action == "error" {
				t.Fatalf("unexpected failure: %v", res.Outputs["error"])
			}
			if !reflect.DeepEqual(res.Outputs["result"], tt.want) {
				t.Errorf("result = %#v, want %#v", res.Outputs["result"], tt.want)
			}
		})
	}
}

func TestContractFailures(t *testing.T) {
	requirePython(t)
	tests := []struct {
		name   string
		params map[string]any
		want   []string
	}{
		{"result type mismatch",
			map[string]any{"code": "result: dict = [1, 2]"},
			[]string{"Result declared as dict but code returned list", "result: list"}},
		{"input missing annotation",
			map[string]any{"code": "result: int = x + y", "inputs": map[string]any{"x": int64(1), "y": int64(2)}},
			[]string{"Input(s) missing type annotation in code: x, y", "Add annotations:\n  x: <type>\n  y: <type>"}},
		{"result annotation missing",
			map[string]any{"code": "result = 1"},
			[]string{"Code must declare result type annotation: result: <type> = ..."}},
		{"result never set",
			map[string]any{"code": "result: int\nif False:\n    result = 1"},
			[]string{"Code must set 'result' variable. Add: result = <your_value>"}},
		{"input type mismatch",
			map[string]any{"code": "data: list\nresult: int = len(data)", "inputs": map[string]any{"data": "abc"}},
			[]string{"Input 'data' expects list but received str", "Change the type annotation to: data: str", "Or convert the input value to list"}},
		{"bool is not an int",
			map[string]any{"code": "n: int\nresult: int = n", "inputs": map[string]any{"n": true}},
			[]string{"Input 'n' expects int but received bool"}},
		{"result not JSON",
			map[string]any{"code": "import datetime\nresult: object = datetime.date(2024, 1, 2)"},
			[]string{"result is a date, which cannot be passed on as JSON"}},
		{"bad input name",
			map[string]any{"code": "result: int = 1", "inputs": map[string]any{"my-var": int64(1)}},
			[]string{`"my-var" is not a valid Python variable name`}},
		{"missing code",
			map[string]any{},
			[]string{"parameter 'code': is required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantError(t, runCode(t, context.Background(), tt.params, nil), tt.want...)
		})
	}
}

func TestSyntaxErrorMappedToWorkflowLine(t *testing.T) {
	requirePython(t)
	// The block's first content line is line 21 of the file, so the error on
	// line 3 of the block is line 23 of the file.
	code := "data: list\nresult: int = 0\nfor x in data\n    result += x"
	res := runCodeAt(t, context.Background(), map[string]any{
		"code": code, "inputs": map[string]any{"data": []any{int64(1)}},
	}, nil, 21, "/home/me/flows/sum.pflow.md")
	wantError(t, res, "Line 23 in sum.pflow.md (line 3 of the code block): SyntaxError: ", "Source: for x in data")
}

func TestRuntimeErrorMappedToWorkflowLine(t *testing.T) {
	requirePython(t)
	code := "result: int = 0\nprint('before')\nresult = undefined_name + 1"
	res := runCodeAt(t, context.Background(), map[string]any{"code": code}, nil, 10, "flow.pflow.md")
	wantError(t, res,
		"Line 12 in flow.pflow.md (line 3 of the code block): NameError: name 'undefined_name' is not defined",
		"Source: result = undefined_name + 1", "inputs")
	if res.Outputs["stdout"] != "before\n" {
		t.Errorf("stdout before the error was lost: %q", res.Outputs["stdout"])
	}

	// Errors raised inside a function point at the line in the block, not the driver.
	code = "def f(d):\n    return d['missing']\n\nresult: int = f({})"
	res = runCodeAt(t, context.Background(), map[string]any{"code": code}, nil, 5, "")
	wantError(t, res, "Line 6 in the workflow file (line 2 of the code block): KeyError: 'missing'", "Source: return d['missing']")

	// Without a source line the block line is still given.
	res = runCode(t, context.Background(), map[string]any{"code": "import no_such_module_pflow\nresult: int = 1"}, nil)
	wantError(t, res, "Line 1 of the code block: ModuleNotFoundError: No module named 'no_such_module_pflow'", "-m pip install no_such_module_pflow")
}

func TestPrintsDoNotCorruptResult(t *testing.T) {
	requirePython(t)
	code := `import sys, os
print('{"ok": false, "error": "fake"}')
sys.stderr.write("warning: on stderr\n")
os.system("echo from a child")
result: str = "real"`
	res := runCode(t, context.Background(), map[string]any{"code": code}, nil)
	if res.Action == "error" {
		t.Fatalf("unexpected failure: %v", res.Outputs["error"])
	}
	if res.Outputs["result"] != "real" {
		t.Errorf("result = %#v", res.Outputs["result"])
	}
	if out := res.Outputs["stdout"].(string); !strings.Contains(out, `{"ok": false, "error": "fake"}`) || !strings.Contains(out, "from a child") {
		t.Errorf("stdout = %q", out)
	}
	if res.Outputs["stderr"] != "warning: on stderr\n" {
		t.Errorf("stderr = %q", res.Outputs["stderr"])
	}
}

func TestExitWithoutResult(t *testing.T) {
	requirePython(t)
	res := runCode(t, context.Background(), map[string]any{"code": "import os, sys\nsys.stderr.write('dying\\n')\nresult: int = 1\nos._exit(3)"}, nil)
	wantError(t, res, "Python process exited without a result (exit code 3)", "dying")
}

// pidsFromFile waits for the code to have written "pid child_pid".
func pidsFromFile(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("code did not record its pids: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("bad pid file %q", b)
		}
		pids = append(pids, n)
	}
	if len(pids) != 2 {
		t.Fatalf("pid file = %q, want two pids", b)
	}
	return pids
}

func waitDead(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for proc.Alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still alive after the code node returned", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

const sleeper = `import os, subprocess, time
child = subprocess.Popen(["sleep", "60"])
with open(pidfile, "w") as f:
    f.write("%d %d" % (os.getpid(), child.pid))
time.sleep(60)
result: int = 1`

func TestTimeoutKillsProcessGroup(t *testing.T) {
	requirePython(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	res := runCode(t, context.Background(), map[string]any{
		"code": "pidfile: str\n" + sleeper, "inputs": map[string]any{"pidfile": pidfile}, "timeout": int64(3),
	}, nil)
	wantError(t, res, "Python code execution timed out after 3 seconds", "'timeout'")
	waitDead(t, pidsFromFile(t, pidfile))
}

func TestCancellationKillsProcessGroup(t *testing.T) {
	requirePython(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if b, err := os.ReadFile(pidfile); err == nil && len(strings.Fields(string(b))) == 2 {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	defer cancel()
	req := &node.Request{Params: map[string]any{"code": "pidfile: str\n" + sleeper, "inputs": map[string]any{"pidfile": pidfile}}}
	done := make(chan error, 1)
	go func() {
		_, err := Spec().Node.Run(ctx, req)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "code node stopped") {
			t.Fatalf("err = %v, want a cancellation error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("code node did not return after cancellation")
	}
	waitDead(t, pidsFromFile(t, pidfile))
}

func TestPython3Missing(t *testing.T) {
	res := runCode(t, context.Background(), map[string]any{"code": "result: int = 1"}, map[string]string{"PATH": t.TempDir(), "PFLOW_PYTHON": ""})
	wantError(t, res, PythonNotFound)
	if res.Outputs["error"] != PythonNotFound {
		t.Errorf("error = %q", res.Outputs["error"])
	}
}

func TestPFLOWPythonOverride(t *testing.T) {
	requirePython(t)
	py, _ := exec.LookPath("python3")
	res := runCode(t, context.Background(), map[string]any{"code": "import sys\nresult: str = sys.executable"},
		map[string]string{"PATH": t.TempDir(), "PFLOW_PYTHON": py})
	if res.Action == "error" {
		t.Fatalf("unexpected failure: %v", res.Outputs["error"])
	}
	res = runCode(t, context.Background(), map[string]any{"code": "result: int = 1"},
		map[string]string{"PFLOW_PYTHON": filepath.Join(t.TempDir(), "nope")})
	wantError(t, res, "PFLOW_PYTHON is set to", "not an executable Python interpreter")
}

func TestEncodeRequestKeepsFloats(t *testing.T) {
	b, err := encodeRequest("x", map[string]any{"a": 3.0, "b": 1e21, "c": int64(3), "d": []any{0.5, "s"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"code":"x","inputs":{"a":3.0,"b":1e+21,"c":3,"d":[0.5,"s"]}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestCheckSyntax(t *testing.T) {
	requirePython(t)
	if err := CheckSyntax(context.Background(), "x: int\nresult: int = x + 1", nil); err != nil {
		t.Fatalf("valid code: %v", err)
	}
	// Checking never runs the code.
	if err := CheckSyntax(context.Background(), "raise SystemExit(3)", nil); err != nil {
		t.Fatalf("valid code that would fail at run time: %v", err)
	}
	err := CheckSyntax(context.Background(), "a = 1\nif a == 1\n    pass", nil)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || se.Source != "if a == 1" || se.Message == "" {
		t.Fatalf("err = %#v", err)
	}
	err = CheckSyntax(context.Background(), "x = 1", func(k string) (string, bool) {
		return map[string]string{"PATH": t.TempDir(), "PFLOW_PYTHON": ""}[k], true
	})
	if err == nil || err.Error() != PythonNotFound {
		t.Errorf("err = %v, want the python3-missing message", err)
	}
}

// Parallel batch items call one Spec concurrently; each gets its own process.
func TestConcurrentRuns(t *testing.T) {
	requirePython(t)
	spec := Spec()
	type out struct {
		i   int64
		res *node.Result
		err error
	}
	ch := make(chan out, 8)
	for i := int64(0); i < 8; i++ {
		go func() {
			res, err := spec.Node.Run(context.Background(), &node.Request{Params: map[string]any{
				"code": "n: int\nprint(n)\nresult: int = n * n", "inputs": map[string]any{"n": i},
			}})
			ch <- out{i, res, err}
		}()
	}
	for k := 0; k < 8; k++ {
		o := <-ch
		if o.err != nil || o.res.Action == "error" {
			t.Fatalf("run %d: %v %#v", o.i, o.err, o.res)
		}
		if o.res.Outputs["result"] != o.i*o.i || o.res.Outputs["stdout"] != strconv.FormatInt(o.i, 10)+"\n" {
			t.Errorf("run %d: outputs %#v", o.i, o.res.Outputs)
		}
	}
}
