package app

import (
	"errors"
	"fmt"
	"github.com/pflow-go/pflow/internal/fsutil"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/value"
)

// ListTraceFiles returns the trace files in the debug directory, newest first.
func (a *App) ListTraceFiles() ([]string, error) {
	a.settle()
	ents, err := os.ReadDir(a.Paths.Debug)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, pferr.Newf(pferr.Execution, "cannot list traces: %v", err).WithWhere(a.Paths.Debug)
	}
	type tf struct {
		name string
		mod  int64
	}
	var fs []tf
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasPrefix(n, "workflow-trace-") || !strings.HasSuffix(n, ".json") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		fs = append(fs, tf{n, info.ModTime().UnixNano()})
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].mod != fs[j].mod {
			return fs[i].mod > fs[j].mod
		}
		return fs[i].name > fs[j].name
	})
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return out, nil
}

// ReadTraceFile reads a trace written by a run. ref is "latest" (or empty), a
// trace file name, or a path; whatever it is, the file must be a regular
// .json file inside the debug directory — anything else is a security error.
func (a *App) ReadTraceFile(ref string) (string, map[string]any, error) {
	a.settle()
	dir := a.Paths.Debug
	ref = strings.TrimSpace(ref)
	if ref == "" || ref == "latest" {
		names, err := a.ListTraceFiles()
		if err != nil {
			return "", nil, err
		}
		if len(names) == 0 {
			return "", nil, pferr.New(pferr.NotFound, "no traces yet").WithWhere(dir).
				WithHint("Every workflow_execute run writes a trace; run a workflow first.")
		}
		ref = names[0]
	}
	if strings.ContainsRune(ref, 0) {
		return "", nil, pferr.New(pferr.Security, "trace path contains a NUL byte")
	}
	path := ref
	if !filepath.IsAbs(path) && !strings.ContainsAny(path, `/\`) {
		path = filepath.Join(dir, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, pferr.Newf(pferr.Security, "cannot resolve trace path %q: %v", ref, err)
	}
	root, _ := filepath.Abs(dir)
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	real := abs
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		real = r
	} else if r, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		real = filepath.Join(r, filepath.Base(abs))
	}
	if !fsutil.Within(root, real) || real == root {
		return "", nil, &pferr.Error{Kind: pferr.Security,
			Message: fmt.Sprintf("trace path %q is outside the trace directory", ref),
			Hint:    "Pass 'latest' or a trace file name from the trace directory (the trace_path a workflow_execute result gives)."}
	}
	if !strings.HasSuffix(real, ".json") {
		return "", nil, &pferr.Error{Kind: pferr.Security, Message: fmt.Sprintf("%q is not a trace file (traces are .json files)", ref),
			Hint: "Pass 'latest' or a trace file name from the trace directory (the trace_path a workflow_execute result gives)."}
	}
	st, err := os.Lstat(real)
	if err != nil || !st.Mode().IsRegular() {
		e := pferr.Newf(pferr.NotFound, "trace %q not found", ref).WithWhere(dir)
		if names, _ := a.ListTraceFiles(); len(names) > 0 {
			if len(names) > 5 {
				names = names[:5]
			}
			e.Details = map[string]any{"recent_traces": names}
			e.Suggestions = []string{"Recent traces: " + strings.Join(names, ", ")}
		}
		return "", nil, e
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return "", nil, pferr.Newf(pferr.Execution, "cannot read trace: %v", err).WithWhere(real)
	}
	v, err := value.DecodeJSON(data)
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		return "", nil, pferr.Newf(pferr.Validation, "trace file is not a JSON object").WithWhere(real)
	}
	return real, m, nil
}
