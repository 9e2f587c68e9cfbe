package mutate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pflow-go/pflow/internal/cli"
)

// CLIExec validates and runs workflows with pflow's command line, in this
// process: `pflow --validate-only --output-format json <file>` and `pflow
// --output-format json --no-trace <file> params...`, each with a new
// PFLOW_HOME. A run changes the process's working directory to its own
// directory while it runs, so CLIExec must not be used by two goroutines.
type CLIExec struct {
	// Dir holds the homes (a temporary directory).
	Dir string
	// Env is added to every call's environment (the fakes' addresses and
	// keys); Vars are the $NAMEs a Case may use besides $WORK.
	Env  []string
	Vars map[string]string
	// Timeout bounds each call.
	Timeout time.Duration
	// Observe, when set, returns what the fakes saw since it was last
	// called (requests made to a fake API or LLM); a run's signature
	// includes it.
	Observe func() string
	n       int
}

func (e *CLIExec) home() (string, error) {
	e.n++
	d := filepath.Join(e.Dir, fmt.Sprintf("home%05d", e.n))
	return d, os.MkdirAll(d, 0o755)
}

func (e *CLIExec) main(ctx context.Context, home, stdin string, args ...string) (stdout string, code int, timedOut bool) {
	timeout := e.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	env := append([]string{"PFLOW_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}, e.Env...)
	var out, errb bytes.Buffer
	ios := &cli.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errb, StdinPiped: stdin != ""}
	code = cli.Main(ctx, args, ios, env)
	return out.String(), code, errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// Validate runs `pflow --validate-only --output-format json file`, and,
// when the file passes, again with the inputs of each case (params and
// stdin): a mutant that only the run's inputs show wrong (an input's type)
// is refused there, as validation with inputs refuses it.
func (e *CLIExec) Validate(ctx context.Context, file string, cases []Case) (Validation, error) {
	v, err := e.validate(ctx, file, Case{})
	if err != nil || v.Refused {
		return v, err
	}
	for _, c := range cases {
		if len(c.Params) == 0 && c.Stdin == "" {
			continue
		}
		vc, err := e.validate(ctx, file, c)
		if err != nil || vc.Refused {
			return vc, err
		}
	}
	return v, nil
}

func (e *CLIExec) validate(ctx context.Context, file string, c Case) (Validation, error) {
	home, err := e.home()
	if err != nil {
		return Validation{}, err
	}
	defer os.RemoveAll(home)
	args := []string{"--validate-only", "--output-format", "json", file}
	vars := e.expander(home)
	for _, p := range c.Params {
		args = append(args, vars(p))
	}
	out, code, timedOut := e.main(ctx, home, vars(c.Stdin), args...)
	if timedOut {
		return Validation{}, fmt.Errorf("validation of %s timed out", file)
	}
	var doc struct {
		Success  bool             `json:"success"`
		Warnings []map[string]any `json:"warnings"`
		Error    *struct {
			Message string `json:"message"`
			Details struct {
				Line        int              `json:"line"`
				Diagnostics []map[string]any `json:"diagnostics"`
				Warnings    []map[string]any `json:"warnings"`
				InputErrors []map[string]any `json:"input_errors"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return Validation{}, fmt.Errorf("validate %s: exit %d, output is not JSON: %v\n%s", file, code, err, out)
	}
	v := Validation{Refused: !doc.Success || code != 0}
	diag := func(m map[string]any, sev string) Diag {
		d := Diag{Severity: sev}
		if s, ok := m["severity"].(string); ok {
			d.Severity = s
		}
		if f, ok := m["line"].(float64); ok {
			d.Line = int(f)
		}
		d.Step, _ = m["node_id"].(string)
		d.Message, _ = m["message"].(string)
		return d
	}
	for _, w := range doc.Warnings {
		v.Diags = append(v.Diags, diag(w, "warning"))
	}
	if doc.Error != nil {
		for _, m := range doc.Error.Details.Diagnostics {
			v.Diags = append(v.Diags, diag(m, "error"))
		}
		for _, m := range doc.Error.Details.InputErrors {
			v.Diags = append(v.Diags, diag(m, "error"))
		}
		for _, m := range doc.Error.Details.Warnings {
			v.Diags = append(v.Diags, diag(m, "warning"))
		}
		if len(doc.Error.Details.Diagnostics) == 0 && len(doc.Error.Details.InputErrors) == 0 {
			// a syntax error (with its line) or another refusal
			v.Diags = append(v.Diags, Diag{Severity: "error", Line: doc.Error.Details.Line, Message: doc.Error.Message})
		}
	}
	return v, nil
}

// expander expands a case's $WORK (to dir) and e's Vars.
func (e *CLIExec) expander(dir string) func(string) string {
	return func(s string) string {
		return os.Expand(s, func(k string) string {
			if k == "WORK" {
				return dir
			}
			if v, ok := e.Vars[k]; ok {
				return v
			}
			return "$" + k
		})
	}
}

// Run runs file with c's inputs in dir and returns its signature: the
// run's success, status, result, error, the steps it ran with their status
// and action, what the fakes saw, and the files it left in dir.
func (e *CLIExec) Run(ctx context.Context, file string, c Case, dir string) (string, error) {
	home, err := e.home()
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	vars := e.expander(dir)
	args := []string{"--output-format", "json", "--no-trace", file}
	for _, p := range c.Params {
		args = append(args, vars(p))
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if err := os.Chdir(dir); err != nil {
		return "", err
	}
	if e.Observe != nil {
		e.Observe()
	}
	out, code, timedOut := e.main(ctx, home, vars(c.Stdin), args...)
	seen := ""
	if e.Observe != nil {
		seen = e.Observe()
	}
	if err := os.Chdir(wd); err != nil {
		return "", err
	}
	sig := map[string]any{"exit": code}
	if timedOut {
		sig["timed_out"] = true
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		sig["stdout"] = out
	} else {
		for _, k := range []string{"success", "status", "result"} {
			if v, ok := doc[k]; ok {
				sig[k] = v
			}
		}
		if em, ok := doc["error"].(map[string]any); ok {
			sig["error"] = map[string]any{"type": em["type"], "message": em["message"]}
		}
		if ex, ok := doc["execution"].(map[string]any); ok {
			var steps []string
			if list, ok := ex["steps"].([]any); ok {
				for _, s := range list {
					if m, ok := s.(map[string]any); ok {
						step := fmt.Sprintf("%v %v", m["node_id"], m["status"])
						if a, ok := m["action"].(string); ok {
							step += " " + a
						}
						steps = append(steps, step)
					}
				}
			}
			sig["steps"] = steps
		}
	}
	if seen != "" {
		sig["fakes_saw"] = seen
	}
	sig["files"] = listFiles(dir)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sig); err != nil {
		return "", err
	}
	s := b.String()
	for _, r := range []struct{ from, to string }{{dir, "$WORK"}, {home, "$HOME"}, {filepath.Dir(file), "$FLOW"}} {
		s = strings.ReplaceAll(s, r.from, r.to)
	}
	return s, nil
}

// listFiles names every file under dir with its size and digest.
func listFiles(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		b, _ := os.ReadFile(p)
		out = append(out, fmt.Sprintf("%s %d %x", filepath.ToSlash(rel), len(b), sha256.Sum256(b)))
		return nil
	})
	sort.Strings(out)
	return out
}
