package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/settings"
	"github.com/pflow-go/pflow/internal/workflow"
)

// errNoTemporal is returned by a build without the Temporal engine (pflow
// hands Temporal commands to pflow-temporal before they get here).
var errNoTemporal = &pferr.Error{Kind: pferr.Config, Message: "this pflow binary runs workflows locally only: Temporal support is in pflow-temporal",
	Hint: "Install it next to pflow: go install github.com/pflow-go/pflow/cmd/pflow-temporal@latest (or make install)"}

// TemporalRequest says where a run goes when it runs on Temporal.
type TemporalRequest struct {
	HostPort  string
	Namespace string
	TaskQueue string
	// Detach submits the run and returns without following it.
	Detach bool
}

// temporalConn is the connection a request names, with this machine's
// payload key.
func (a *App) temporalConn(t *TemporalRequest) (wire.Conn, error) {
	if a.Temporal == nil {
		return wire.Conn{}, errNoTemporal
	}
	key, err := wire.LoadKey(a.LookupProcessEnv, wire.DefaultKeyFile(a.Paths.Root))
	if err != nil {
		return wire.Conn{}, pferr.Newf(pferr.Config, "%v", err).WithHint("Set " + wire.KeyEnv + " to the passphrase every worker uses")
	}
	tlsCfg, err := wire.TLSFromEnv(a.LookupProcessEnv)
	if err != nil {
		return wire.Conn{}, pferr.Newf(pferr.Config, "%v", err).WithHint("See docs/scale-out.md, \"Connect to a cluster\"")
	}
	return wire.Conn{HostPort: t.HostPort, Namespace: t.Namespace, TaskQueue: t.TaskQueue, Key: key, TLS: tlsCfg, Log: a.Log}, nil
}

// runOnTemporal submits a checked workflow to Temporal and follows it; the
// outcome is the engine's Result, so both faces render it as a local run.
// It returns a nil Result when the run was detached or the worker refused
// its inputs (out says which).
func (a *App) runOnTemporal(ctx context.Context, req RunRequest, given map[string]any, prior *wire.PriorRun, opts runtime.Options, out *RunOutcome) (*runtime.Result, error) {
	conn, err := a.temporalConn(req.Temporal)
	if err != nil {
		return nil, err
	}
	bundle, err := a.bundle(req.Target, req.Policy.Guard())
	if err != nil {
		return nil, err
	}
	name := req.Target.Name
	if !req.Target.Saved {
		name = traceName(req.Target)
	}
	in := wire.RunInput{Bundle: bundle, Params: wire.Value{V: given}, Permissive: opts.Permissive, Name: name, Network: opts.Network}
	if req.Policy.Restrict {
		in.Paths = &wire.PathLimit{AllowDirs: req.Policy.AllowDirs}
	}
	if prior != nil {
		in.ResumedFrom = prior.ID
		if prior.Report != nil {
			in.Resume = prior.Report.Records
		}
		out.ResumedFrom = prior.ID
	}
	o, err := a.Temporal.Submit(ctx, wire.Submission{Conn: conn, Detach: req.Temporal.Detach, Observer: req.Observer, Input: in})
	if err != nil {
		return nil, temporalError(err)
	}
	out.TemporalID, out.TemporalAddr = o.ID, req.Temporal.HostPort
	if req.Temporal.Detach {
		out.Detached = true
		return nil, nil
	}
	if len(o.Report.InputErrors) > 0 {
		out.InputErrors = o.Report.InputErrors
		for i := range out.InputErrors {
			if i < len(o.Report.Missing) {
				out.InputErrors[i].Missing = o.Report.Missing[i]
			}
			out.InputErrors[i].Message += " (on the Temporal worker)"
		}
		return nil, nil
	}
	res := o.Report.Result()
	if out.Redactor != nil {
		out.Redactor.AddSecretsIn(res.Outputs)
	}
	return res, nil
}

func temporalError(err error) error {
	var de *wire.Error
	if errors.As(err, &de) {
		return &pferr.Error{Kind: pferr.Execution, Message: de.Message, Hint: de.Hint, Err: err}
	}
	return err
}

// bundle collects the workflow and the nested workflows it names literally,
// so every worker runs the definitions this machine has now. guard, when
// set (mcp serve --http --allow-dir), must accept each workflow_ref it reads:
// on Temporal the bundle is where those files are read.
func (a *App) bundle(t *Target, guard func(string) error) (wire.Bundle, error) {
	root, err := wire.DocOf(t.Workflow)
	if err != nil {
		return wire.Bundle{}, err
	}
	b := wire.Bundle{Root: root, Saved: map[string]wire.Doc{}, Files: map[string]wire.Doc{}}
	var refused error
	var collect func(w *workflow.Workflow, dir string, depth int)
	collect = func(w *workflow.Workflow, dir string, depth int) {
		if depth > 10 {
			return
		}
		for _, n := range w.Nodes {
			if !n.Nested() {
				continue
			}
			name, _ := n.Params["workflow_name"].(string)
			ref, _ := n.Params["workflow_ref"].(string)
			var child *workflow.Workflow
			switch {
			case name != "" && !strings.Contains(name, "${"):
				if _, done := b.Saved[name]; done {
					continue
				}
				c, err := a.loadSaved(name)
				if err != nil {
					continue // the run reports it where the step runs
				}
				d, err := wire.DocOf(c)
				if err != nil {
					continue
				}
				b.Saved[name], child = d, c
			case ref != "" && !strings.Contains(ref, "${"):
				p := ref
				if !filepath.IsAbs(p) {
					p = filepath.Join(dir, p)
				}
				p = filepath.Clean(p)
				if _, done := b.Files[p]; done {
					continue
				}
				if guard != nil {
					if err := guard(p); err != nil {
						if refused == nil {
							refused = &pferr.Error{Kind: pferr.Security, Message: fmt.Sprintf("step '%s': workflow_ref %s", n.ID, err.Error())}
						}
						continue
					}
				}
				c, err := workflow.ParseFile(p)
				if err != nil {
					continue
				}
				d, err := wire.DocOf(c)
				if err != nil {
					continue
				}
				b.Files[p], child = d, c
			}
			if child != nil {
				cdir := dir
				if child.Source != nil && child.Source.Path != "" {
					cdir = filepath.Dir(child.Source.Path)
				}
				collect(child, cdir, depth+1)
			}
		}
	}
	dir := ""
	if t.Workflow.Source != nil && t.Workflow.Source.Path != "" {
		dir = filepath.Dir(t.Workflow.Source.Path)
	}
	collect(t.Workflow, dir, 0)
	if refused != nil {
		return wire.Bundle{}, refused
	}
	return b, nil
}

// WorkerRequest starts a Temporal worker.
type WorkerRequest struct {
	Temporal TemporalRequest
	// MaxConcurrent bounds the node executions run at once (0: Temporal's
	// default).
	MaxConcurrent int
	// Ready is called once the worker polls its task queue.
	Ready func()
}

// Worker runs pflow workflows for a Temporal task queue until ctx ends:
// the worker's registry, MCP servers (kept warm across executions),
// settings and environment serve every node execution it is given.
func (a *App) Worker(ctx context.Context, req WorkerRequest) error {
	conn, err := a.temporalConn(&req.Temporal)
	if err != nil {
		return err
	}
	cat, st, err := a.Catalog(ctx)
	if err != nil {
		return err
	}
	red := a.Redactor(st)
	scope := runtime.NewScope()
	defer scope.Close()
	err = a.Temporal.Serve(ctx, wire.WorkerConfig{
		Conn:          conn,
		Catalog:       cat,
		Env:           runtime.EnvLookup{Process: a.LookupProcessEnv, Settings: settingsLookup(st)},
		Log:           a.Log,
		Scope:         scope,
		OnParams:      func(p map[string]any) { red.AddSecretsIn(p) },
		Redact:        red.String,
		MaxConcurrent: req.MaxConcurrent,
		Ready:         req.Ready,
	})
	if err != nil {
		return temporalError(err)
	}
	return nil
}

func settingsLookup(st *settings.Settings) func(string) (string, bool) {
	if st == nil {
		return nil
	}
	return st.LookupEnv
}

// Detail for error messages about a Temporal target.
func (t *TemporalRequest) String() string {
	return fmt.Sprintf("%s (namespace %s, task queue %s)", t.HostPort, or(t.Namespace, wire.DefaultNamespace), or(t.TaskQueue, wire.DefaultTaskQueue))
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TemporalPrior reads a finished Temporal run back ("last": the newest).
func (a *App) TemporalPrior(ctx context.Context, t TemporalRequest, id string) (*wire.PriorRun, error) {
	conn, err := a.temporalConn(&t)
	if err != nil {
		return nil, err
	}
	p, err := a.Temporal.Prior(ctx, conn, id)
	if err != nil {
		return nil, temporalError(err)
	}
	return p, nil
}

// TemporalResumeTarget is the workflow a Temporal run ran, for a resume
// that does not name one: its file as it is now when it still exists (so a
// fix is picked up), else the text the run was sent with.
func (a *App) TemporalResumeTarget(ctx context.Context, t TemporalRequest, id string) (*Target, error) {
	p, err := a.TemporalPrior(ctx, t, id)
	if err != nil {
		return nil, err
	}
	root := p.Input.Bundle.Root
	if root.Path != "" {
		if _, err := os.Stat(root.Path); err == nil {
			return a.ResolveTarget(root.Path)
		}
	}
	w, err := root.Parse()
	if err != nil {
		return nil, parseError(p.Input.Name, err)
	}
	return &Target{Workflow: w, Name: p.Input.Name, Path: root.Path}, nil
}

// TemporalRuns lists the newest pflow runs on a Temporal service, with
// pflow's status of each finished one.
func (a *App) TemporalRuns(ctx context.Context, t TemporalRequest, limit int) ([]wire.RunInfo, error) {
	conn, err := a.temporalConn(&t)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 1000
	}
	list, err := a.Temporal.List(ctx, conn, limit)
	if err != nil {
		return nil, temporalError(err)
	}
	return list, nil
}

// TemporalAnswer sends a person's answer to a Temporal run waiting at an
// ask step; the ask step checks it against its question.
func (a *App) TemporalAnswer(ctx context.Context, t TemporalRequest, id, choice string, input map[string]any) error {
	conn, err := a.temporalConn(&t)
	if err != nil {
		return err
	}
	if err := a.Temporal.Answer(ctx, conn, id, wire.Answer{Choice: choice, Input: input}); err != nil {
		return temporalError(err)
	}
	return nil
}
