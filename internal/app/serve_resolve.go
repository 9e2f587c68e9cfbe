package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/workflow"
)

// PathPolicy says which workflow files a caller that is not a local shell
// user (an MCP client) may name. The zero value allows any existing
// .pflow.md file, which is right for a local stdio server.
type PathPolicy struct {
	// Restrict refuses every file path outside AllowDirs (HTTP mode; see
	// docs/decisions.md, "Security of the MCP server").
	Restrict bool
	// AllowDirs are the roots file paths may live under when Restrict is set.
	AllowDirs []string
}

// Check returns the absolute, symlink-resolved form of path when the policy
// allows it. A refused path is a security error that says how to allow it.
func (p PathPolicy) Check(path string) (string, error) {
	if strings.ContainsRune(path, 0) {
		return "", &pferr.Error{Kind: pferr.Security, Message: "file path contains a NUL byte"}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", &pferr.Error{Kind: pferr.Security, Message: fmt.Sprintf("cannot resolve file path %q: %v", path, err)}
	}
	if !p.Restrict {
		return abs, nil
	}
	if real, ok := p.allows(abs); ok {
		return real, nil
	}
	e := &pferr.Error{Kind: pferr.Security,
		Message: fmt.Sprintf("file path %q is outside the directories this server may read", path),
		Hint:    "Send the workflow itself (markdown text or JSON IR) instead of a path, or restart the server with --allow-dir naming the directory that holds it."}
	if len(p.AllowDirs) > 0 {
		e.Details = map[string]any{"allowed_dirs": p.AllowDirs}
	}
	return "", e
}

// allows reports whether the absolute path abs lies under one of
// AllowDirs once symlinks are resolved, and returns it resolved. For a path
// that does not exist yet (a file a step will write) the symlinks of its
// deepest existing parent are resolved.
func (p PathPolicy) allows(abs string) (string, bool) {
	real := resolveExisting(abs)
	for _, d := range p.AllowDirs {
		root, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
		if pathWithin(root, real) {
			return real, true
		}
	}
	return real, false
}

// resolveExisting resolves the symlinks of abs, or of its deepest existing
// parent with the rest joined back on.
func resolveExisting(abs string) string {
	rest := ""
	for dir := abs; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// Guard is the runtime's PathGuard under p (nil when p does not restrict):
// a file path a step reads or writes, or a nested workflow's workflow_ref,
// must lie under AllowDirs.
func (p PathPolicy) Guard() func(string) error {
	if !p.Restrict {
		return nil
	}
	return func(abs string) error {
		if _, ok := p.allows(abs); ok {
			return nil
		}
		if len(p.AllowDirs) == 0 {
			return fmt.Errorf("%s is refused: this server (pflow mcp serve --http) lets steps read and write files only under its --allow-dir directories, and it has none. Restart it with --allow-dir naming the directory that holds the file", abs)
		}
		return fmt.Errorf("%s is outside the directories this server lets steps read and write (--allow-dir %s). Use a path under one of them, or restart pflow mcp serve with --allow-dir naming the directory that holds the file", abs, strings.Join(p.AllowDirs, ", "))
	}
}

// within reports whether path is root or inside it.
func pathWithin(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// isWorkflowPath reports whether s names a .pflow.md file.
func isPflowMDPath(s string) bool {
	return strings.HasSuffix(strings.ToLower(s), library.Ext)
}

// loadSavedOrDraft loads a saved workflow, else a draft of that name, else
// (when arg is a file name that exists) the file.
func (a *App) agentLoadSavedOrDraft(name, arg string, pol PathPolicy) (*Target, error) {
	lib := a.Library()
	s, err := lib.Load(name)
	if err == nil {
		return &Target{Workflow: s.Workflow, Name: s.Name, Saved: true, Path: s.Path}, nil
	}
	if pferr.KindOf(err) != pferr.NotFound {
		return nil, err
	}
	if t, derr := a.LoadDraftTarget(name); derr == nil {
		return t, nil
	} else if pferr.KindOf(derr) != pferr.NotFound {
		return nil, derr
	}
	if isPflowMDPath(arg) {
		if _, serr := os.Stat(arg); serr == nil {
			return a.agentLoadFile(arg, pol)
		}
	}
	pe := *pferr.As(err)
	pe.Message = fmt.Sprintf("Workflow '%s' not found in the library or the drafts", name)
	pe.Hint = "Pass the workflow itself (markdown text or JSON IR), or the name of a saved workflow."
	pe.Fixes = []pferr.Fix{{Text: "{do} to see the saved workflows.", Do: pferr.ListWorkflows()}}
	return nil, &pe
}

// LoadDraftTarget reads the draft $PFLOW_HOME/drafts/<name>.pflow.md.
func (a *App) LoadDraftTarget(name string) (*Target, error) {
	if err := library.ValidateName(name); err != nil {
		return nil, err
	}
	path := a.Library().DraftPath(name)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, pferr.Newf(pferr.NotFound, "draft '%s' not found", name).WithWhere(path)
	}
	w, err := workflow.ParseFile(path)
	if err != nil {
		return nil, parseError(path, err)
	}
	return &Target{Workflow: w, Name: name, Path: path}, nil
}

// agentLoadFile reads an explicit .pflow.md path allowed by pol.
func (a *App) agentLoadFile(path string, pol PathPolicy) (*Target, error) {
	if !isPflowMDPath(path) {
		return nil, &pferr.Error{Kind: pferr.Security,
			Message: fmt.Sprintf("%q is neither a workflow name nor a .pflow.md file path", path),
			Hint:    "Names use lowercase letters, numbers and hyphens; file paths must end in .pflow.md."}
	}
	abs, err := pol.Check(path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() {
		return nil, pferr.Newf(pferr.NotFound, "workflow file not found: %s", path).
			WithHint("Check the path (relative paths are relative to the server's working directory), or pass the markdown text itself.")
	}
	w, err := workflow.ParseFileShared(abs) // a run does not modify its workflow
	if err != nil {
		return nil, parseError(path, err)
	}
	return &Target{Workflow: w, Name: path, Path: abs}, nil
}
