package app

import (
	"errors"
	"fmt"
	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/node"
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
// AllowDirs once symlinks are resolved, and returns it resolved.
func (p PathPolicy) allows(abs string) (string, bool) { return fsutil.WithinDirs(p.AllowDirs, abs) }

// Guard is the runtime's PathGuard under p (nil when p does not restrict):
// a file path a step reads or writes, or a nested workflow's workflow_ref,
// must lie under AllowDirs.
func (p PathPolicy) Guard() func(string) error {
	if !p.Restrict {
		return nil
	}
	return node.DirGuard(p.AllowDirs)
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
