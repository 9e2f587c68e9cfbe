// Package code implements the `code` node: inline Python run by the system
// python3 with the original pflow's contract.
//
// Contract (as in the Python pflow):
//   - `inputs` (dict var → value) arrive as native Python values (str, int,
//     float, bool, list, dict, None; a list becomes a tuple or set, a string
//     bytes, when the annotation asks for it);
//   - every input needs a module-level annotated assignment (`data: list`);
//   - `result: <type>` must be declared and set; its outer type is checked;
//   - syntax and runtime errors are reported with the `.pflow.md` line
//     (Request.SourceLines["code"], the file line of the block's first line).
//
// The code runs in a fresh `python3 -u -X utf8 -c <driver>` process (driver.py,
// embedded) in its own process group: the timeout (default 30 s) and the run's
// cancellation kill the whole group. The request goes in on stdin; the reply
// comes back on file descriptor 3, so the user's prints on stdout and stderr
// are captured separately and never corrupt it. PFLOW_PYTHON overrides the
// interpreter.
package code

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/proc"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

//go:embed driver.py
var driver string

// DefaultTimeout is the code node's default timeout.
const DefaultTimeout = 30 * time.Second

// OutputLimit caps captured stdout and stderr each.
const OutputLimit = 4 << 20

// PythonNotFound is the failure when no interpreter can be found.
const PythonNotFound = "python3 not found on PATH: the code node runs inline Python with the system python3. Install Python 3 (e.g. apt-get install python3) or use a shell step."

// Spec returns the `code` node type.
func Spec() *node.Spec {
	return &node.Spec{
		Type:  "code",
		Group: "code",
		Interface: node.Interface{
			Description: "Run inline Python (system python3). Declare every input with a type annotation (data: list) and the result (result: dict = ...); inputs arrive as native Python values.",
			Params: []node.Field{
				{Key: "code", Type: "str", Required: true, Sink: node.SinkCode, Also: []string{"script", "source", "python", "py"}, Description: "Python source, normally a ```python code block. Must declare `result: <type>` and set result. " +
					"Never put ${...} in the code: pass values through inputs (validation refuses a template in the code and shows the rewrite). Write $${ for a literal ${ in the code."},
				{Key: "inputs", Type: "dict", Description: "Variables passed to the code as native values (name → value, e.g. data: ${fetch.response}). Each needs an annotation in the code (data: dict)."},
				{Key: node.UnsafeSpliceParam, Type: "bool", Default: false, Description: "Paste template values into the code as Python source instead of refusing them. " +
					"Only for values you wrote yourself: a value from data (a web page, an issue title, an LLM answer) can then run any code. --validate-only warns about it."},
				{Key: "timeout", Type: "int", Default: int64(30), Description: "Seconds before the Python process is killed."},
				{Key: "requires", Type: "list", Description: "Python packages the code imports (documentation only; install them for python3)."},
			},
			Outputs: []node.Field{
				{Key: "result", Type: "any", Description: "The value of `result`, type-checked against its annotation."},
				{Key: "stdout", Type: "str", Description: "What the code printed."},
				{Key: "stderr", Type: "str", Description: "What the code wrote to stderr."},
				{Key: "error", Type: "str", Description: "Error message when the code failed."},
			},
			Actions: []string{"default", "error"},
		},
		Attempts:   1,
		Node:       node.Func(run),
		Check:      check,
		MainOutput: "result",
	}
}

// check is the static syntax check run before every workflow run: a Python
// syntax error is reported with its file line before anything executes.
// When python3 is missing, the run itself reports it.
func check(ctx context.Context, params map[string]any) []node.Problem {
	src, ok := params["code"].(string)
	if !ok {
		return nil
	}
	if strings.Contains(src, "${") {
		// A template in the code is the sink check's one diagnostic (its
		// text is not Python); escaped "$${" reaches Python as "${".
		var b strings.Builder
		for _, p := range template.Parts(src) {
			if p.Ref != nil {
				return nil
			}
			b.WriteString(p.Text)
		}
		src = b.String()
	}
	var se *SyntaxError
	if err := CheckSyntax(ctx, src, os.LookupEnv); errors.As(err, &se) {
		msg := "Python syntax error in code block: " + se.Message
		if se.Source != "" {
			msg += "\n    " + se.Source
		}
		return []node.Problem{{Param: "code", Line: se.Line, Message: msg, Hint: "Fix the Python syntax; the line number points into the ```python code block."}}
	}
	return nil
}

type reply struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Phase   string `json:"phase"`
		Type    string `json:"type"`
		Message string `json:"message"`
		Line    int    `json:"line"`
		Hint    string `json:"hint"`
	} `json:"error"`
}

func run(ctx context.Context, req *node.Request) (*node.Result, error) {
	code, err := node.RequireString(req.Params, "code")
	if err != nil {
		return node.Fail(err.Error(), nil), nil
	}
	inputs, err := node.Map(req.Params, "inputs")
	if err != nil {
		return node.Fail(err.Error()+". Example: inputs: {data: ${fetch.response}}", nil), nil
	}
	if inputs == nil {
		inputs = map[string]any{}
	}
	for name := range inputs {
		if !isIdentifier(name) {
			return node.Fail(fmt.Sprintf("parameter 'inputs': %q is not a valid Python variable name (use letters, digits and _, not starting with a digit)", name), nil), nil
		}
	}
	timeout, err := node.Duration(req.Params, "timeout", DefaultTimeout)
	if err != nil {
		return node.Fail(err.Error(), nil), nil
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	loc := locator{code: code}
	loc.firstLine = req.SourceLines["code"]
	if req.WorkflowFile != "" {
		loc.file = filepath.Base(req.WorkflowFile)
	}

	python, problem := findPython(req.Env)
	if problem != "" {
		return node.Fail(problem, nil), nil
	}

	body, err := encodeRequest(code, inputs)
	if err != nil {
		return node.Fail("code node: cannot pass inputs to Python: "+err.Error(), nil), nil
	}

	ex, err := execute(ctx, python, body, timeout)
	if err != nil {
		return nil, err
	}
	stdout, stderr, cmd, runErr, replyBuf := ex.stdout, ex.stderr, ex.cmd, ex.runErr, ex.reply

	outputs := map[string]any{
		"stdout": capped(stdout),
		"stderr": capped(stderr),
	}
	switch {
	case proc.IsTimeout(runErr):
		outputs["result"] = nil
		return node.Fail(fmt.Sprintf("Python code execution timed out after %s\n\nSuggestions:\n  - Increase the step's 'timeout' param (seconds)\n  - Make the code faster, or process less data per step (e.g. with batch)", seconds(timeout)), outputs), nil
	case proc.IsCanceled(runErr):
		return nil, fmt.Errorf("code node stopped: %w", context.Cause(ctx))
	}
	var se *proc.StartError
	if errors.As(runErr, &se) {
		return node.Fail(fmt.Sprintf("could not start %s: %v. Check that it is a working Python 3 interpreter (or set PFLOW_PYTHON).", python, se.Err), outputs), nil
	}

	var rep reply
	if err := json.Unmarshal(replyBuf, &rep); err != nil || (!rep.OK && rep.Error == nil) {
		msg := fmt.Sprintf("Python process exited without a result (exit code %d)", proc.ExitCode(cmd))
		if sig, ok := proc.Signal(cmd); ok {
			msg = fmt.Sprintf("Python process was killed by signal %d", sig)
		}
		if tail := lastLines(stderr.String(), 10); tail != "" {
			msg += ":\n" + tail
		} else {
			msg += ". Did the code call os._exit() or exhaust memory?"
		}
		return node.Fail(msg, outputs), nil
	}
	if !rep.OK {
		outputs["result"] = nil
		return node.Fail(loc.format(rep.Error.Phase, rep.Error.Type, rep.Error.Message, rep.Error.Line, rep.Error.Hint), outputs), nil
	}
	result, err := value.DecodeJSON(rep.Result)
	if err != nil {
		return node.Fail("code node: cannot read the result from Python: "+err.Error(), outputs), nil
	}
	outputs["result"] = result
	return node.Ok(outputs), nil
}

// execution is one run of the driver.
type execution struct {
	stdout, stderr *proc.CappedBuffer
	cmd            *exec.Cmd
	runErr         error
	reply          []byte
}

// execute runs the driver with body on stdin in its own process group and
// collects stdout, stderr and the reply written on fd 3.
func execute(ctx context.Context, python string, body []byte, timeout time.Duration) (*execution, error) {
	replyR, replyW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("code node: cannot create a pipe for python3: %w", err)
	}
	defer replyR.Close()
	var replyBuf bytes.Buffer
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_, _ = io.Copy(&replyBuf, io.LimitReader(replyR, 256<<20))
		_, _ = io.Copy(io.Discard, replyR)
	}()

	ex := &execution{stdout: proc.NewCappedBuffer(OutputLimit), stderr: proc.NewCappedBuffer(OutputLimit)}
	ex.cmd = exec.Command(python, "-u", "-X", "utf8", "-c", driver)
	ex.cmd.Stdin = bytes.NewReader(body)
	ex.cmd.Stdout = ex.stdout
	ex.cmd.Stderr = ex.stderr
	ex.cmd.ExtraFiles = []*os.File{replyW}
	ex.cmd.Env = append(os.Environ(), "PFLOW_CODE_REPLY_FD=3", "PYTHONDONTWRITEBYTECODE=1")
	ex.runErr = proc.Run(ctx, ex.cmd, proc.Options{Timeout: timeout, Grace: 500 * time.Millisecond})
	// Our copy of the write end goes only now: the reader sees EOF once the
	// child (and anything that inherited the fd) is gone.
	replyW.Close()
	<-readDone
	ex.reply = replyBuf.Bytes()
	return ex, nil
}

// SyntaxError is a Python syntax error found by CheckSyntax. Line is 1-based
// within the code block.
type SyntaxError struct {
	Line    int
	Message string
	// Source is the offending line of code (trimmed), "" when unknown.
	Source string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d of the code block: Python syntax error: %s", e.Line, e.Message)
}

// CheckSyntax parses code with python3 without running it, for static
// validation ("Line N: Python syntax error in code block: <msg>" with
// N = the block's first file line + e.Line - 1). It returns nil when the code
// parses, a *SyntaxError when it does not, and another error when python3
// cannot be run (not installed: the message is PythonNotFound). env is the
// configuration lookup (PFLOW_PYTHON, PATH); nil means the process env.
func CheckSyntax(ctx context.Context, code string, env func(string) (string, bool)) error {
	python, problem := findPython(env)
	if problem != "" {
		return errors.New(problem)
	}
	var b bytes.Buffer
	b.WriteString(`{"check_only":true,"code":`)
	if err := writeJSON(&b, code); err != nil {
		return err
	}
	b.WriteString("}")
	ex, err := execute(ctx, python, b.Bytes(), DefaultTimeout)
	if err != nil {
		return err
	}
	if ex.runErr != nil && (proc.IsCanceled(ex.runErr) || proc.IsTimeout(ex.runErr)) {
		return fmt.Errorf("python3 syntax check stopped: %w", ex.runErr)
	}
	var rep reply
	if err := json.Unmarshal(ex.reply, &rep); err != nil {
		return fmt.Errorf("python3 syntax check failed (exit code %d): %s", proc.ExitCode(ex.cmd), lastLines(ex.stderr.String(), 5))
	}
	if rep.OK {
		return nil
	}
	if rep.Error == nil || rep.Error.Phase != "syntax" {
		return fmt.Errorf("python3 syntax check failed: unexpected reply")
	}
	return &SyntaxError{Line: rep.Error.Line, Message: rep.Error.Message, Source: locator{code: code}.sourceLine(rep.Error.Line)}
}

// locator maps code-block lines to the workflow file.
type locator struct {
	code      string
	firstLine int
	file      string
}

func (l locator) format(phase, typ, msg string, line int, hint string) string {
	if phase != "syntax" && phase != "runtime" {
		// Contract, input and result messages are the Python pflow's texts.
		return msg
	}
	var b strings.Builder
	if line > 0 {
		b.WriteString(l.where(line))
		b.WriteString(": ")
	}
	b.WriteString(typ + ": " + msg)
	if line > 0 {
		if src := l.sourceLine(line); src != "" {
			b.WriteString("\n  Source: ")
			b.WriteString(src)
		}
	}
	if hint != "" {
		b.WriteString("\n  Fix: ")
		b.WriteString(hint)
	}
	return b.String()
}

func (l locator) where(line int) string {
	if l.firstLine <= 0 {
		return fmt.Sprintf("Line %d of the code block", line)
	}
	file := l.file
	if file == "" {
		file = "the workflow file"
	}
	return fmt.Sprintf("Line %d in %s (line %d of the code block)", l.firstLine+line-1, file, line)
}

func (l locator) sourceLine(line int) string {
	lines := strings.Split(l.code, "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[line-1])
}

// findPython looks the interpreter up: PFLOW_PYTHON, else python3 on PATH
// (both read through env first, so tests and settings can set them). The
// message says what to fix when none is found.
func findPython(env func(string) (string, bool)) (path, problem string) {
	// A lookup that does not know the variable falls back to the process
	// environment.
	get := func(k string) string {
		if env != nil {
			if v, ok := env(k); ok {
				return v
			}
		}
		return os.Getenv(k)
	}
	if p := strings.TrimSpace(get("PFLOW_PYTHON")); p != "" {
		if strings.ContainsRune(p, os.PathSeparator) && isExecutable(p) {
			return p, ""
		}
		if !strings.ContainsRune(p, os.PathSeparator) {
			if found, ok := lookPath(p, get("PATH")); ok {
				return found, ""
			}
		}
		return "", fmt.Sprintf("PFLOW_PYTHON is set to %q, which is not an executable Python interpreter. Point it at python3 (e.g. /usr/bin/python3) or unset it.", p)
	}
	if found, ok := lookPath("python3", get("PATH")); ok {
		return found, ""
	}
	return "", PythonNotFound
}

func lookPath(name, path string) (string, bool) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if isExecutable(p) {
			if !filepath.IsAbs(p) {
				if abs, err := filepath.Abs(p); err == nil {
					p = abs
				}
			}
			return p, true
		}
	}
	return "", false
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// encodeRequest writes the driver's request, {"code": ..., "inputs": {...}},
// which the driver reads on stdin. Floats always carry a decimal point (or
// NaN/Infinity, which Python's json accepts) so that 3.0 arrives as a Python
// float, not an int.
func encodeRequest(code string, inputs map[string]any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"code":`)
	if err := writeJSON(&b, code); err != nil {
		return nil, err
	}
	b.WriteString(`,"inputs":`)
	if err := writeJSON(&b, inputs); err != nil {
		return nil, err
	}
	b.WriteString("}")
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case float64:
		switch {
		case math.IsNaN(x):
			b.WriteString("NaN")
		case math.IsInf(x, 1):
			b.WriteString("Infinity")
		case math.IsInf(x, -1):
			b.WriteString("-Infinity")
		default:
			s := strconv.FormatFloat(x, 'g', -1, 64)
			if !strings.ContainsAny(s, ".eE") {
				s += ".0"
			}
			b.WriteString(s)
		}
	case string:
		enc, err := value.MarshalJSON(x)
		if err != nil {
			return err
		}
		b.Write(enc)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := value.SortedKeys(x)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, k); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := writeJSON(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		n := value.Normalize(v)
		if fmt.Sprintf("%T", n) == fmt.Sprintf("%T", v) {
			return fmt.Errorf("unsupported value of type %T", v)
		}
		return writeJSON(b, n)
	}
	return nil
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

func capped(b *proc.CappedBuffer) string {
	s := b.String()
	if b.Truncated() {
		s += fmt.Sprintf("\n[output truncated: %d of %d bytes shown]", len(b.Bytes()), b.Total())
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%d seconds", int(d/time.Second))
	}
	return fmt.Sprintf("%g seconds", d.Seconds())
}
