package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/runs"
	"github.com/pflow-go/pflow/internal/value"
)

// Resource URIs of the library and the run records.
const (
	WorkflowURIPrefix = "pflow://workflows/"
	RunURIPrefix      = "pflow://runs/"
	// recentRuns is how many run records are listed as resources.
	recentRuns = 20
)

// pollEvery is the library check of a watcher that cannot use inotify.
var pollEvery = 2 * time.Second

// watchLibrary keeps the published workflow tools and the resources in
// step with $PFLOW_HOME/workflows and runs/: a workflow saved or deleted
// from the CLI or over MCP, or a new run record, changes the lists and
// clients get notifications/tools/list_changed and resources/list_changed.
// It uses inotify (fsnotify) and falls back to polling when that fails.
func (s *Server) watchLibrary() {
	dirs := []string{s.opts.App.Paths.Workflows, s.opts.App.Paths.Runs}
	for _, d := range dirs {
		os.MkdirAll(d, 0o700) // a watch needs the directory
	}
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	w, err := fsnotify.NewWatcher()
	if err == nil {
		for _, d := range dirs {
			if aerr := w.Add(d); aerr != nil {
				err = aerr
			}
		}
	}
	if err != nil {
		s.logf("library watch: %v; polling every %s instead", err, pollEvery)
		if w != nil {
			w.Close()
		}
		go func() {
			last := s.librarySnapshot()
			t := time.NewTicker(pollEvery)
			defer t.Stop()
			for {
				select {
				case <-s.base.Done():
					return
				case <-t.C:
					if now := s.librarySnapshot(); now != last {
						last = now
						poke()
					}
				}
			}
		}()
	} else {
		go func() {
			defer w.Close()
			for {
				select {
				case <-s.base.Done():
					return
				case ev, ok := <-w.Events:
					if !ok {
						return
					}
					// Atomic writes create and rename temporary files: only
					// the real names matter.
					if base := filepath.Base(ev.Name); !strings.HasPrefix(base, ".") && !strings.HasSuffix(base, ".lock") {
						poke()
					}
				case err, ok := <-w.Errors:
					if !ok {
						return
					}
					s.logf("library watch: %v", err)
				}
			}
		}()
	}
	go func() {
		for {
			select {
			case <-s.base.Done():
				return
			case <-changed:
				// Let a burst of events (a save writes, renames, updates
				// metadata) settle into one update.
				select {
				case <-s.base.Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
				if s.opts.WorkflowTools || len(s.opts.Workflows) > 0 {
					s.syncWorkflowTools()
				}
				s.syncLibraryResources()
			}
		}
	}()
}

// librarySnapshot summarizes the watched directories for the poller.
func (s *Server) librarySnapshot() string {
	var b strings.Builder
	for _, d := range []string{s.opts.App.Paths.Workflows, s.opts.App.Paths.Runs} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if info, err := e.Info(); err == nil {
				v := fsutil.VersionOf(info) // ctime too: an edit can put the mtime back
				fmt.Fprintf(&b, "%s %d %d %d %d\n", e.Name(), v.Size, v.MTime, v.CTime, v.Ino)
			}
		}
	}
	return b.String()
}

// syncLibraryResources lists each saved workflow (markdown) and the newest
// run records (JSON) as resources; both are also readable through the
// templates pflow://workflows/{name} and pflow://runs/{id}.
func (s *Server) syncLibraryResources() {
	want := map[string]*mcp.Resource{}
	if saved, err := s.opts.App.Library().List(""); err == nil {
		for _, w := range saved {
			if !s.publishes(w.Name) {
				continue
			}
			uri := WorkflowURIPrefix + w.Name
			want[uri] = &mcp.Resource{URI: uri, Name: w.Name, Title: "Workflow " + w.Name, Description: w.Description, MIMEType: "text/markdown"}
		}
	}
	if runs, err := s.opts.App.ListRunsWhere(recentRuns, s.runVisible); err == nil {
		for _, r := range runs {
			uri := RunURIPrefix + r.ID
			want[uri] = &mcp.Resource{URI: uri, Name: "run " + r.ID, Title: fmt.Sprintf("Run of %s (%s)", r.Workflow, r.Status),
				Description: fmt.Sprintf("The record of a run of %s: its status, steps and outputs.", r.Workflow), MIMEType: "application/json"}
		}
	}
	s.resMu.Lock()
	defer s.resMu.Unlock()
	var gone []string
	for uri := range s.resources {
		if want[uri] == nil {
			gone = append(gone, uri)
			delete(s.resources, uri)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveResources(gone...)
	}
	for _, uri := range value.SortedKeys(want) {
		r := want[uri]
		sig := r.Title + "\x00" + r.Description
		if s.resources[uri] == sig {
			continue
		}
		s.resources[uri] = sig
		s.mcp.AddResource(r, s.readLibraryResource)
	}
}

// focused reports whether the server publishes only part of pflow: chosen
// workflows (--workflows), or no builder tools (--no-builder-tools).
func (s *Server) focused() bool { return len(s.opts.Workflows) > 0 || s.opts.NoBuilderTools }

// publishes reports whether the server exposes the saved workflow name:
// a full server every one; a focused server only those it publishes as
// tools (--workflows, or every one with --workflow-tools, or none).
func (s *Server) publishes(name string) bool {
	switch {
	case len(s.opts.Workflows) > 0:
		return slices.Contains(s.opts.Workflows, name)
	case s.opts.NoBuilderTools:
		return s.opts.WorkflowTools
	}
	return true
}

// runVisible reports whether the server exposes a run: a full server
// every one; a focused server only runs of the saved workflows it
// publishes (not inline workflows, files, or other saved workflows).
func (s *Server) runVisible(m *runs.Meta) bool {
	if !s.focused() {
		return true
	}
	return m.Workflow.Kind == runs.KindSaved && s.publishes(m.Workflow.Name)
}

// readLibraryResource reads pflow://workflows/<name> (the saved markdown)
// or pflow://runs/<id> (the run record as JSON; "last" is the newest run
// the server exposes). What the server does not expose is not found, as
// if it did not exist.
func (s *Server) readLibraryResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	a := s.opts.App.Scoped()
	switch {
	case strings.HasPrefix(uri, WorkflowURIPrefix):
		name := strings.TrimPrefix(uri, WorkflowURIPrefix)
		if !s.publishes(name) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		w, err := a.Library().Load(name)
		if err != nil || w.Workflow == nil || w.Workflow.Source == nil {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		// The workflow as written, without the library's frontmatter (run
		// counts and the last run's parameters are not the workflow).
		text := w.Workflow.Source.Raw
		if rest, ok := strings.CutPrefix(text, "---\n"); ok {
			if _, body, ok := strings.Cut(rest, "\n---\n"); ok {
				text = strings.TrimLeft(body, "\n")
			}
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}, nil
	case strings.HasPrefix(uri, RunURIPrefix):
		id := strings.TrimPrefix(uri, RunURIPrefix)
		if (id == "last" || id == "latest") && s.focused() {
			newest, err := a.ListRunsWhere(1, s.runVisible)
			if err != nil || len(newest) == 0 {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			id = newest[0].ID
		}
		d, err := a.ShowRun(id)
		if err != nil || d.Meta == nil || !s.runVisible(d.Meta) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		b, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return nil, err
		}
		st, _ := a.Settings()
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: a.Redactor(st).String(string(b))}}}, nil
	}
	return nil, mcp.ResourceNotFoundError(uri)
}
