package node

import (
	"context"
	"errors"
	"fmt"
	"github.com/pflow-go/pflow/internal/fsutil"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/value"
)

// ParamError is returned for a param a node cannot use; its message names the
// param and says what is expected.
type ParamError struct {
	Param   string
	Message string
}

func (e *ParamError) Error() string { return fmt.Sprintf("parameter '%s': %s", e.Param, e.Message) }

// ParamFailure is the step's outcome when err says a param cannot be used
// (a *ParamError: a value of the wrong type, an invalid value): a failed
// result marked Permanent, because no retry changes the params. The step
// fails at once, never retried (not even with retries set), and an
// on_error edge may still handle it. ok is false for any other error.
func ParamFailure(err error) (res *Result, ok bool) {
	var pe *ParamError
	if !errors.As(err, &pe) {
		return nil, false
	}
	res = Fail(pe.Error(), nil)
	res.Permanent = true
	return res, true
}

// FailParamsOnce is n with every *ParamError it returns turned into a
// permanent failure (ParamFailure): for nodes whose Go errors are retried
// (Spec.Attempts > 1), so that a param of the wrong type fails the step
// once instead of once per attempt.
func FailParamsOnce(n Node) Node {
	return Func(func(ctx context.Context, req *Request) (*Result, error) {
		res, err := n.Run(ctx, req)
		if err != nil {
			if pr, ok := ParamFailure(err); ok {
				return pr, nil
			}
		}
		return res, err
	})
}

// Literal returns the params whose value holds no template anywhere: the
// values a static check (Spec.Check) reads as the run will. A templated
// value is known only when the step runs.
func Literal(params map[string]any) map[string]any {
	out := make(map[string]any, len(params))
	for k, v := range params {
		if !holdsTemplate(v) {
			out[k] = v
		}
	}
	return out
}

func holdsTemplate(v any) bool {
	switch x := v.(type) {
	case string:
		return template.HasTemplate(x)
	case map[string]any:
		for _, e := range x {
			if holdsTemplate(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holdsTemplate(e) {
				return true
			}
		}
	}
	return false
}

// String returns params[k] as a string. Missing or nil gives def.
// Non-string scalars are stringified; containers become JSON.
func String(params map[string]any, k, def string) string {
	v, ok := params[k]
	if !ok || v == nil {
		return def
	}
	return value.Stringify(v)
}

// RequireString returns params[k] as a non-empty string or a ParamError.
func RequireString(params map[string]any, k string) (string, error) {
	v, ok := params[k]
	if !ok || v == nil {
		return "", &ParamError{k, "is required but missing. Add '- " + k + ": ...' to the step"}
	}
	s := value.Stringify(v)
	if s == "" {
		return "", &ParamError{k, "is required but empty"}
	}
	return s, nil
}

// Bool returns params[k] as a bool, accepting true/false/yes/no/1/0 strings.
func Bool(params map[string]any, k string, def bool) (bool, error) {
	v, ok := params[k]
	if !ok || v == nil {
		return def, nil
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case int64:
		return x != 0, nil
	case float64:
		return x != 0, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "1", "on":
			return true, nil
		case "false", "no", "0", "off", "":
			return false, nil
		}
	}
	return def, &ParamError{k, fmt.Sprintf("expects a boolean (true/false), got %s %q", value.TypeName(v), value.Stringify(v))}
}

// Float returns params[k] as a float64.
func Float(params map[string]any, k string, def float64) (float64, error) {
	v, ok := params[k]
	if !ok || v == nil {
		return def, nil
	}
	switch x := v.(type) {
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err == nil {
			return f, nil
		}
	}
	return def, &ParamError{k, fmt.Sprintf("expects a number, got %s %q", value.TypeName(v), value.Stringify(v))}
}

// Int returns params[k] as an int.
func Int(params map[string]any, k string, def int) (int, error) {
	f, err := Float(params, k, float64(def))
	if err != nil {
		return def, err
	}
	if f != math.Trunc(f) {
		return def, &ParamError{k, fmt.Sprintf("expects a whole number, got %v", f)}
	}
	return int(f), nil
}

// Duration reads a timeout-like param: a number of seconds (30, 0.5) or a Go
// duration string ("1m30s", "500ms").
func Duration(params map[string]any, k string, def time.Duration) (time.Duration, error) {
	v, ok := params[k]
	if !ok || v == nil {
		return def, nil
	}
	if s, isStr := v.(string); isStr {
		s = strings.TrimSpace(s)
		if d, err := time.ParseDuration(s); err == nil {
			return d, nil
		}
	}
	f, err := Float(params, k, 0)
	if err != nil {
		return def, &ParamError{k, fmt.Sprintf("expects seconds (e.g. 30) or a duration (e.g. 1m30s), got %q", value.Stringify(v))}
	}
	if f < 0 {
		return def, &ParamError{k, "must not be negative"}
	}
	return time.Duration(f * float64(time.Second)), nil
}

// Map returns params[k] as a map (JSON strings holding objects are parsed).
func Map(params map[string]any, k string) (map[string]any, error) {
	v, ok := params[k]
	if !ok || v == nil {
		return nil, nil
	}
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case string:
		if p, ok := value.TryParseContainer(x); ok {
			if m, ok := p.(map[string]any); ok {
				return m, nil
			}
		}
	}
	return nil, &ParamError{k, fmt.Sprintf("expects a mapping of names to values, got %s; write it as '- %s: {name: value}' or as an indented block of 'name: value' lines under '- %s:'", value.TypeName(v), k, k)}
}

// ResolvePath expands ~ and makes p absolute and clean, relative to base when
// base is set and to the process's working directory otherwise.
func ResolvePath(p, base string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand '~' in %q: %v", p, err)
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) && base != "" {
		p = filepath.Join(base, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("cannot resolve path %q: %v", p, err)
	}
	return abs, nil
}

// GuardPaths checks every file path param of a step (each param of sink
// SinkPath, made absolute against dir) with guard, which says why a path is
// refused. The engine runs it before a step runs; so does a Temporal worker
// before the step's activity runs, where the files are.
func GuardPaths(params map[string]any, spec *Spec, dir string, guard func(abs string) error) error {
	if guard == nil {
		return nil
	}
	for _, fld := range spec.Interface.Params {
		if fld.Sink != SinkPath {
			continue
		}
		raw, ok := params[fld.Key].(string)
		if !ok || raw == "" {
			continue
		}
		abs, err := ResolvePath(raw, dir)
		if err != nil {
			continue // the node reports it
		}
		if err := guard(abs); err != nil {
			return fmt.Errorf("Parameter '%s': %w", fld.Key, err)
		}
	}
	return nil
}

// DirGuard is the path guard of `pflow mcp serve --http --allow-dir`: a
// file a step reads or writes must lie under one of dirs once symlinks are
// resolved (none: every file is refused). Its error says how to allow one.
func DirGuard(dirs []string) func(abs string) error {
	return func(abs string) error {
		if _, ok := fsutil.WithinDirs(dirs, abs); ok {
			return nil
		}
		if len(dirs) == 0 {
			return fmt.Errorf("%s is refused: this server (pflow mcp serve --http) lets steps read and write files only under its --allow-dir directories, and it has none. Restart it with --allow-dir naming the directory that holds the file", abs)
		}
		return fmt.Errorf("%s is outside the directories this server lets steps read and write (--allow-dir %s). Use a path under one of them, or restart pflow mcp serve with --allow-dir naming the directory that holds the file", abs, strings.Join(dirs, ", "))
	}
}
