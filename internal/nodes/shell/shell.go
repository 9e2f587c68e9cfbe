// Package shell implements the `shell` node: one `/bin/sh -c` command per
// step, run in its own process group so that a timeout, a Ctrl-C or the end
// of the step stops it together with everything it started.
//
// There is deliberately no "dangerous command" blocklist: substring matching
// refuses legitimate commands (`rm -rf /tmp/build`) while stopping nothing a
// determined script could not spell differently. Workflows are code the user
// chose to run.
package shell

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/proc"
	"github.com/pflow-go/pflow/internal/sink"
	"github.com/pflow-go/pflow/internal/value"
)

const (
	// DefaultTimeout is the timeout when the step sets none.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxOutput caps each of stdout and stderr.
	DefaultMaxOutput = 10 << 20
	// grace is the pause between SIGTERM and SIGKILL to the command's group.
	grace = 2 * time.Second
	// errorTail is how much of stderr a failure message quotes.
	errorTail = 500
)

// Spec returns the shell node type.
func Spec() *node.Spec {
	return &node.Spec{
		Type:      "shell",
		Group:     "shell",
		Interface: iface,
		Attempts:  1,
		Node:      shellNode{},
		// Piped data is the command's standard input; what it prints is
		// what a chain passes on.
		StdinParam: "stdin",
		MainOutput: "stdout",
	}
}

var iface = node.Interface{
	Description: "Run a shell command with /bin/sh -c and capture its output. " +
		"The command runs in its own process group: on timeout, Ctrl-C or when it exits, " +
		"every process it started (including background jobs) is stopped; a process that left " +
		"the group (setsid, a daemon) lives until the end of the run, never past it. A non-zero exit code fails the step " +
		"(action 'error') unless ignore_errors is set, with one exception: when the last command " +
		"of the script is grep, egrep, fgrep, zgrep or rg and the exit code is 1 (\"no match\"), " +
		"the step succeeds with exit_code 1 and empty output. Exit code 2 from those tools is an " +
		"error as usual. The decision uses only the command and its exit code, never stderr text.",
	Params: []node.Field{
		{Key: "command", Type: "str", Required: true, Sink: node.SinkShell, Also: []string{"cmd", "run", "script", "bash", "sh", "shell"}, Description: "Shell command or script to run with /bin/sh -c (pipes, redirects and multiple lines allowed). " +
			"Template values are never pasted into the command: each ${...} is passed as an environment variable and referenced where it stands, " +
			"so \"${x}\" and '${x}' yield the value as one word and an unquoted ${x} behaves like an unquoted shell variable; nothing a value contains is run as shell."},
		{Key: node.UnsafeSpliceParam, Type: "bool", Default: false, Description: "Paste template values into the command as shell code instead of binding them as variables. " +
			"Only for values you wrote yourself: a value from data (a web page, an issue title, an LLM answer) can then run any command. --validate-only warns about it."},
		{Key: "stdin", Type: "any", Description: "Data written to the command's standard input: a string as-is, a dict or list as JSON, a bool as true/false, a number as text. Omit for no input."},
		{Key: "cwd", Type: "str", Also: []string{"workdir", "working_dir", "working_directory", "dir", "directory", "cd"}, Description: "Working directory; ~ is expanded and a relative path resolves against the workflow file's directory (the current directory when there is none). Must exist."},
		{Key: "env", Type: "dict", Description: "Environment variables set for the command, merged over pflow's own environment."},
		{Key: "timeout", Type: "float", Default: int64(30), Description: "Seconds (e.g. 30 or 0.5) before the command and every process it started are stopped (SIGTERM, then SIGKILL after 2 s) and the step fails."},
		{Key: "ignore_errors", Type: "bool", Default: false, Description: "Continue (action 'default') even when the command exits with a non-zero code. A timeout still fails."},
		{Key: "strip_newline", Type: "bool", Default: true, Description: "Remove trailing newlines from stdout (stderr is never changed)."},
		{Key: "max_output", Type: "int", Default: int64(DefaultMaxOutput), Description: "Most bytes kept of each of stdout and stderr (default 10 MiB); the rest is read and dropped, and stdout_truncated / stderr_truncated are set."},
	},
	Outputs: []node.Field{
		{Key: "stdout", Type: "str", Description: "Standard output (trailing newlines stripped unless strip_newline is false); base64 when it is not valid UTF-8 (see stdout_is_binary)."},
		{Key: "stderr", Type: "str", Description: "Standard error, unchanged; base64 when it is not valid UTF-8 (see stderr_is_binary)."},
		{Key: "exit_code", Type: "int", Description: "Exit code of the command: 0 on success, 1 for grep/rg with no match, 128+N when killed by signal N, -1 on timeout."},
		{Key: "stdout_truncated", Type: "bool", Description: "True when stdout exceeded max_output and was cut."},
		{Key: "stderr_truncated", Type: "bool", Description: "True when stderr exceeded max_output and was cut."},
		{Key: "stdout_is_binary", Type: "bool", Description: "True when stdout was not valid UTF-8 and is base64-encoded."},
		{Key: "stderr_is_binary", Type: "bool", Description: "True when stderr was not valid UTF-8 and is base64-encoded."},
		{Key: "command", Type: "str", Description: "The command that was run: template values appear as references to the variables that carried them (\"${_pflow_1}\")."},
		{Key: "error", Type: "str", Description: "Why the step failed (non-zero exit with the end of stderr, timeout). Set on failure; with ignore_errors always set (empty when the exit code was 0)."},
	},
	Actions: []string{"default", "error"},
}

type shellNode struct{}

func (shellNode) Run(ctx context.Context, req *node.Request) (*node.Result, error) {
	p := req.Params
	command, err := node.RequireString(p, "command")
	if err != nil {
		return nil, err
	}
	timeout, err := node.Duration(p, "timeout", DefaultTimeout)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		return nil, &node.ParamError{Param: "timeout", Message: "must be greater than 0 seconds"}
	}
	ignoreErrors, err := node.Bool(p, "ignore_errors", false)
	if err != nil {
		return nil, err
	}
	strip, err := node.Bool(p, "strip_newline", true)
	if err != nil {
		return nil, err
	}
	maxOutput, err := node.Int(p, "max_output", DefaultMaxOutput)
	if err != nil {
		return nil, err
	}
	if maxOutput <= 0 {
		return nil, &node.ParamError{Param: "max_output", Message: "must be a positive number of bytes"}
	}
	env, err := node.Map(p, "env")
	if err != nil {
		return nil, err
	}
	cwd, err := workDir(p, req.WorkflowDir)
	if err != nil {
		return nil, err
	}

	bound, prologue, cleanup, err := bindLarge(req.TemplateEnv)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	cmd := exec.Command("/bin/sh", "-c", prologue+command)
	cmd.Dir = cwd
	if len(env) > 0 || len(bound) > 0 {
		environ := os.Environ()
		for _, k := range value.SortedKeys(bound) {
			environ = append(environ, k+"="+bound[k])
		}
		for _, k := range value.SortedKeys(env) {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return nil, &node.ParamError{Param: "env", Message: fmt.Sprintf("invalid variable name %q (names must not be empty or contain '=')", k)}
			}
			environ = append(environ, k+"="+value.Stringify(env[k]))
		}
		cmd.Env = environ
	}
	if in, ok := stdinText(p["stdin"]); ok {
		cmd.Stdin = strings.NewReader(in)
	}
	stdout := proc.NewCappedBuffer(maxOutput)
	stderr := proc.NewCappedBuffer(maxOutput)
	cmd.Stdout, cmd.Stderr = stdout, stderr

	runErr := proc.Run(ctx, cmd, proc.Options{Timeout: timeout, Grace: grace})

	var startErr *proc.StartError
	switch {
	case errors.As(runErr, &startErr):
		return nil, fmt.Errorf("Failed to execute command: %v. Check that /bin/sh exists and the working directory is accessible", startErr.Err)
	case proc.IsCanceled(runErr):
		return nil, fmt.Errorf("command %q was interrupted; it and every process it started were stopped: %w", value.Truncate(strings.Join(strings.Fields(command), " "), 80, "…"), runErr)
	}

	out := make(map[string]any, 9)
	outText, outBinary := text(stdout)
	if strip && !outBinary {
		outText = strings.TrimRight(outText, "\r\n")
	}
	errText, errBinary := text(stderr)
	out["stdout"] = outText
	out["stderr"] = errText
	out["stdout_truncated"] = stdout.Truncated()
	out["stderr_truncated"] = stderr.Truncated()
	out["stdout_is_binary"] = outBinary
	out["stderr_is_binary"] = errBinary
	out["command"] = command

	if proc.IsTimeout(runErr) {
		out["exit_code"] = int64(-1)
		return node.Fail(fmt.Sprintf("Command timed out after %s seconds; it and every process it started were stopped. "+
			"If it needs longer, raise '- timeout: ...' on the step.", value.FormatFloat(timeout.Seconds())), out), nil
	}
	code := proc.ExitCode(cmd)
	out["exit_code"] = int64(code)
	if ignoreErrors {
		// The step continues either way; error says what went wrong (or is
		// empty), so ${step.error} always resolves after such a step.
		out["error"] = ""
		if code != 0 {
			out["error"] = failureMessage(cmd, code, errText, errBinary, outText, outBinary, false)
		}
		return node.Ok(out), nil
	}
	if code == 0 || code == 1 && isNoMatchCommand(command) {
		return node.Ok(out), nil
	}
	return node.Fail(failureMessage(cmd, code, errText, errBinary, outText, outBinary, !req.Routed), out), nil
}

// maxEnvVar is the most a template value's variable may hold in the
// environment: Linux refuses to start a program with one string of its
// environment longer than 128 KiB (MAX_ARG_STRLEN: "argument list too
// long"). envBudget bounds all of them together, well under the limit on
// the whole environment and argument list (a quarter of the stack limit,
// 2 MiB by default), which the rest of the environment shares.
const (
	maxEnvVar = 128<<10 - 1
	envBudget = 512 << 10
)

// bindLarge keeps in the environment the template values that fit there
// and moves the others, largest first, to files: each is written to a
// file (0600) in a fresh directory only this user can enter (0700), the
// environment carries the file's path (_pflow_file_N) and a prologue
// before the command reads it into the variable the command references
// (_pflow_N). The value is data all along — the file's bytes are assigned
// to a variable, never parsed as shell — and arrives byte for byte, trailing
// newlines included. cleanup removes the files.
func bindLarge(tenv map[string]string) (env map[string]string, prologue string, cleanup func(), err error) {
	cleanup = func() {}
	total := 0
	var big []string
	for k, v := range tenv {
		total += len(k) + len(v) + 2
		if len(k)+len(v)+1 > maxEnvVar {
			big = append(big, k)
		}
	}
	if len(big) == 0 && total <= envBudget {
		return tenv, "", cleanup, nil
	}
	if total > envBudget { // the largest go first until the rest fits
		rest := make([]string, 0, len(tenv))
		for k := range tenv {
			if !slices.Contains(big, k) {
				rest = append(rest, k)
			}
		}
		sort.Slice(rest, func(i, j int) bool { return len(tenv[rest[i]]) > len(tenv[rest[j]]) })
		for _, k := range big {
			total -= len(k) + len(tenv[k]) + 2
		}
		for _, k := range rest {
			if total <= envBudget {
				break
			}
			big = append(big, k)
			total -= len(k) + len(tenv[k]) + 2
		}
	}
	sort.Strings(big)
	dir, err := os.MkdirTemp("", "pflow-values-")
	if err != nil {
		return nil, "", cleanup, fmt.Errorf("cannot write a large template value to a temporary file: %v. Set TMPDIR to a writable directory, or pass the value on the step's stdin", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	env = make(map[string]string, len(tenv))
	for k, v := range tenv {
		env[k] = v
	}
	var b strings.Builder
	for i, k := range big {
		path := filepath.Join(dir, strconv.Itoa(i))
		if err := os.WriteFile(path, []byte(tenv[k]), 0o600); err != nil {
			cleanup()
			return nil, "", func() {}, fmt.Errorf("cannot write a large template value to %s: %v. Free some space, or pass the value on the step's stdin", path, err)
		}
		fileVar := strings.Replace(k, sink.VarPrefix, sink.VarPrefix+"file_", 1)
		delete(env, k)
		env[fileVar] = path
		// cat's output with an x after it keeps the value's trailing
		// newlines, which $(...) would strip; the x is then removed.
		fmt.Fprintf(&b, "%s=$(cat -- \"${%s}\" && printf x) || exit 126; %s=${%s%%x}; unset %s; ", k, fileVar, k, k, fileVar)
	}
	return env, b.String(), cleanup, nil
}

// failureMessage says why the command failed, quoting the end of its output.
// suggestIgnore adds the hint about ignore_errors (pointless when it is set).
func failureMessage(cmd *exec.Cmd, code int, errText string, errBinary bool, outText string, outBinary bool, suggestIgnore bool) string {
	if sig, ok := proc.Signal(cmd); ok {
		return fmt.Sprintf("Command was killed by signal %d (%s)%s", sig, syscall.Signal(sig), tailSuffix(errText, errBinary, outText, outBinary))
	}
	hint := ""
	if suggestIgnore {
		hint = "\nIf a non-zero exit is expected here, add '- ignore_errors: true' to the step."
	}
	switch code {
	case 127:
		hint = "\nExit code 127 means the shell could not find a command: check that it is installed and on PATH (or use its full path)."
	case 126:
		hint = "\nExit code 126 means a command was found but could not be run: check that it is executable (chmod +x)."
	}
	return fmt.Sprintf("Command failed with exit code %d%s%s", code, tailSuffix(errText, errBinary, outText, outBinary), hint)
}

// tailSuffix quotes the end of stderr (or, when stderr is empty, of stdout)
// for a failure message.
func tailSuffix(errText string, errBinary bool, outText string, outBinary bool) string {
	if s := strings.TrimSpace(errText); s != "" && !errBinary {
		return ": " + tail(s, errorTail)
	}
	if s := strings.TrimSpace(outText); s != "" && !outBinary {
		return " (stderr was empty; end of stdout: " + tail(s, errorTail) + ")"
	}
	return " (no output)"
}

// workDir resolves the cwd param: ~ expanded, relative to the workflow's
// directory, and checked to be an existing directory.
func workDir(p map[string]any, workflowDir string) (string, error) {
	raw := node.String(p, "cwd", "")
	if raw == "" {
		return "", nil
	}
	dir, err := node.ResolvePath(raw, workflowDir)
	if err != nil {
		return "", &node.ParamError{Param: "cwd", Message: err.Error()}
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", &node.ParamError{Param: "cwd", Message: fmt.Sprintf("working directory '%s' does not exist. Create it first or fix the path; relative paths resolve against the workflow's directory", dir)}
	case err != nil:
		return "", &node.ParamError{Param: "cwd", Message: fmt.Sprintf("cannot use working directory '%s': %v", dir, err)}
	case !st.IsDir():
		return "", &node.ParamError{Param: "cwd", Message: fmt.Sprintf("'%s' is a file, not a directory", dir)}
	}
	return dir, nil
}

// stdinText converts the stdin param to the text written to the command.
func stdinText(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, true
	default:
		// bool → true/false, numbers in shortest form, containers as
		// compact JSON without ASCII escaping.
		return value.Stringify(x), true
	}
}

// text returns the captured bytes as a string, or base64 when they are not
// valid UTF-8. A rune cut in half by the output cap does not make the
// output binary.
func text(b *proc.CappedBuffer) (string, bool) {
	data := b.Bytes()
	if b.Truncated() {
		data = trimPartialRune(data)
	}
	if utf8.Valid(data) {
		return string(data), false
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), true
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// tail returns the last n bytes of s (on a rune boundary), marked with "…"
// when cut.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return "…" + s
}

// noMatchTools exit 1 for "no match" and 2 for errors.
var noMatchTools = map[string]bool{"grep": true, "egrep": true, "fgrep": true, "zgrep": true, "rg": true}

// isNoMatchCommand reports whether the exit status of script is that of a
// grep-like tool: its last simple command (after the last top-level |, ;, &,
// && or || outside quotes) starts with grep, egrep, fgrep, zgrep or rg.
// Anything it cannot read with confidence (negation with !, compound
// commands) answers false, so the exit code keeps its usual meaning.
func isNoMatchCommand(script string) bool {
	last := lastSimpleCommand(script)
	words := strings.Fields(last)
	for len(words) > 0 {
		w := words[0]
		switch {
		case w == "command" || w == "exec" || w == "time" || w == "nice":
			words = words[1:]
			continue
		case isAssignment(w):
			words = words[1:]
			continue
		}
		break
	}
	if len(words) == 0 {
		return false
	}
	name := words[0]
	name = strings.Trim(name, `"'`)
	return noMatchTools[filepath.Base(name)]
}

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return false
	}
	for j, c := range w[:i] {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// lastSimpleCommand returns the text of the last non-empty command segment of
// script, or "" when the script ends in a construct whose status is not a
// single command's (negation, subshell, braces, keywords).
func lastSimpleCommand(script string) string {
	var (
		inSingle, inDouble, escaped bool
		segStart                    int
		lastNonEmpty                string
		atWordStart                 = true
	)
	flush := func(end int) {
		seg := strings.TrimSpace(script[segStart:end])
		if seg != "" {
			lastNonEmpty = seg
		}
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case escaped:
			escaped = false
			atWordStart = false
			continue
		case inSingle:
			if c == '\'' {
				inSingle = false
			}
			continue
		case inDouble:
			if c == '\\' {
				escaped = true
			} else if c == '"' {
				inDouble = false
			}
			continue
		}
		switch c {
		case '\\':
			escaped = true
		case '\'':
			inSingle = true
		case '"':
			inDouble = true
		case '#':
			if atWordStart {
				// Comment to end of line.
				flush(i)
				for i < len(script) && script[i] != '\n' {
					i++
				}
				segStart = i
				atWordStart = true
				continue
			}
		case '|', ';', '&', '\n':
			flush(i)
			segStart = i + 1
			atWordStart = true
			continue
		case '(', ')', '{', '}':
			// Compound commands: don't guess.
			flush(i)
			segStart = i + 1
			lastNonEmpty = "("
			atWordStart = true
			continue
		}
		atWordStart = c == ' ' || c == '\t'
	}
	flush(len(script))
	if inSingle || inDouble {
		return ""
	}
	first := strings.Fields(lastNonEmpty)
	if len(first) == 0 {
		return ""
	}
	switch first[0] {
	case "!", "(", "if", "then", "else", "fi", "do", "done", "while", "until", "for", "case", "esac":
		return ""
	}
	return lastNonEmpty
}
