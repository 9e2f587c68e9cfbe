package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pflow-go/pflow/internal/durable/wire"
	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/proc"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/runs"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/settings"
	"github.com/pflow-go/pflow/internal/stephash"
	"github.com/pflow-go/pflow/internal/suggest"
	"github.com/pflow-go/pflow/internal/template"
	"github.com/pflow-go/pflow/internal/trace"
	"github.com/pflow-go/pflow/internal/validate"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// Target is a workflow to run, with where it came from.
type Target struct {
	Workflow *workflow.Workflow
	// Name is the saved name, or the file argument as typed.
	Name string
	// Saved is true when the workflow came from the library.
	Saved bool
	// Path is the file the workflow was read from ("" for inline).
	Path string
}

// Library returns the workflow library under PFLOW_HOME.
func (a *App) Library() *library.Library {
	return &library.Library{Dir: a.Paths.Workflows, DraftsDir: a.Paths.Drafts, Log: a.Log}
}

func parseError(arg string, err error) error {
	if pe, ok := err.(*workflow.ParseError); ok {
		return &pferr.Error{Kind: pferr.Validation, Message: "invalid workflow syntax in " + arg + "\n" + pe.Headline(), Err: err,
			Fixes: pe.Fixes, Details: map[string]any{"line": pe.Line, "path": pe.Path}}
	}
	return &pferr.Error{Kind: pferr.Validation, Message: err.Error(), Err: err}
}

// RunRequest asks for one workflow run.
type RunRequest struct {
	Target *Target
	// Policy bounds the files the run's steps may name (their file paths,
	// a nested workflow's workflow_ref): an agent's run over HTTP (the
	// zero value: any).
	Policy PathPolicy
	// Params are the caller's inputs: raw strings from the CLI (read by the
	// declared input type) or typed values from MCP.
	Params map[string]any
	// ValidateOnly stops after static validation.
	ValidateOnly bool
	// CheckLive, with ValidateOnly, also checks the MCP tools the steps
	// call against their servers now (it starts them): drift since sync is
	// a warning (pflow --validate-only).
	CheckLive bool
	// NoTrace disables the trace file.
	NoTrace  bool
	Observer runtime.Observer
	// Resume names a recorded run ("last" for the newest) to continue: its
	// completed steps that are unchanged, and whose upstream steps were
	// re-used, are not run again (see docs/decisions.md, "Recorded, resumable
	// runs and the step cache").
	Resume string
	// RerunUnsafe lets a resume run again steps that may have side effects
	// and may have partly run (in flight when the run stopped).
	RerunUnsafe bool
	// NoCache neither reads nor writes the step cache.
	NoCache bool
	// NoRecord keeps no run record: the run cannot be resumed.
	NoRecord bool
	// TrustReadOnly acts on every MCP server's tool annotations, as if each
	// were marked "trust_readonly": read-only tools are cached.
	TrustReadOnly bool
	// Origin names the face that asked ("cli", "mcp"), for the run record.
	Origin string
	// Temporal, when set, runs the workflow on a Temporal service instead
	// of in this process (see docs/decisions.md, "Scale-out on Temporal").
	Temporal *TemporalRequest
	// Asker is how the run's ask steps reach a person (a terminal, the MCP
	// client, a stored answer); nil: an ask step pauses the run (status
	// waiting) until `pflow runs answer`.
	Asker node.Asker
	// OnStart, when set, is called once the run starts, with its run id
	// ("" when it is not recorded): a background run answers with it.
	OnStart func(runID string)
}

// RunOutcome is what a run produced. A failure is explained by InputErrors
// and/or ValidationErrors (both are reported at once; Result is then nil) or
// by Result.
type RunOutcome struct {
	InputErrors      []runtime.InputError
	ValidationErrors []validate.Diagnostic
	Warnings         []validate.Diagnostic
	Result           *runtime.Result
	TracePath        string
	// Redactor removes this run's secret values from what renderers show.
	Redactor *redact.Redactor
	// RunID is the run's record under $PFLOW_HOME/runs ("" when the run did
	// not start, or could not be recorded); ResumedFrom the run it resumed.
	RunID       string
	ResumedFrom string
	// TemporalID is the Temporal workflow ID of a run submitted to Temporal;
	// Detached is set when the run was submitted and not followed (Result
	// is then nil).
	TemporalID string
	Detached   bool
	// TemporalAddr is the Temporal service the run ran on.
	TemporalAddr string
}

// Failed reports whether the outcome is a failure.
func (o *RunOutcome) Failed() bool {
	return len(o.InputErrors) > 0 || len(o.ValidationErrors) > 0 || (o.Result != nil && !o.Result.Success())
}

// Run validates and executes a workflow: inputs are prepared (params, env,
// settings, defaults), every static check runs, then the engine runs it, a
// trace is written and, for a saved workflow that succeeded, its metadata is
// updated. Its phases read top to bottom: prepare, check, execute (here or
// on Temporal), finish.
func (a *App) Run(ctx context.Context, req RunRequest) (*RunOutcome, error) {
	// Every process the run starts (steps, MCP servers, an automatic sync)
	// and all their descendants carry the run's token; whatever is left of
	// them when the run ends, even one that left its process group, is
	// stopped here (nothing outlives the run).
	ctx, tracker := proc.Track(ctx)
	defer tracker.Close()
	r := &runState{req: req, w: req.Target.Workflow}
	defer r.release()
	if err := a.prepareRun(ctx, r); err != nil {
		return nil, err
	}
	if !a.checkRun(ctx, r) {
		return r.out, nil
	}
	opts, err := a.runOptions(r)
	if err != nil {
		return nil, err
	}
	if r.req.Asker != nil {
		ctx = node.WithAsker(ctx, r.req.Asker)
	}
	if r.req.OnStart != nil {
		r.req.OnStart(r.out.RunID)
	}
	var res *runtime.Result
	if r.req.Temporal != nil {
		if res, err = a.runOnTemporal(ctx, r.req, r.given, r.prior, opts, r.out); err != nil || res == nil {
			return r.out, err
		}
	} else {
		res = runtime.Run(ctx, r.w, r.req.Params, opts)
	}
	tracker.Close()
	r.out.Result = res
	a.finishRun(ctx, r, res)
	return r.out, nil
}

// runState is one call of Run in progress: what its phases share.
type runState struct {
	req RunRequest // its Params become the prepared inputs
	w   *workflow.Workflow
	cat *registry.Catalog
	st  *settings.Settings
	red *redact.Redactor
	env runtime.EnvLookup
	out *RunOutcome
	// given are the inputs as the caller gave them, before defaults and
	// env; provided the prepared inputs (nil when some are missing or
	// malformed, or only the Temporal worker can supply them).
	given, provided map[string]any
	prepared        *runtime.Prepared
	prior           *wire.PriorRun // the Temporal run being resumed
	resume          *resumeState   // the recorded run being resumed
	// reserved is the record directory being made beside the checks; record
	// the run's record once the inputs are good (started with the run).
	reserved      *runs.Reservation
	record        *runs.Run
	recordErr     error
	recordStarted bool
}

// release undoes what a run that did not go through left behind: a record
// never started, the resumed run's lock, an unused reservation.
func (r *runState) release() {
	if r.record != nil && !r.recordStarted {
		r.record.Abort()
	}
	r.resume.unlock()
	r.reserved.Release() // a no-op once a run took it
}

// prepareRun reserves the run's record directory, loads the catalog and
// settings, and prepares the inputs: those of the run being resumed, then
// the caller's, defaults, env and settings. Malformed or missing inputs are
// recorded in r.out, not returned: the checks still run so every problem is
// reported at once.
func (a *App) prepareRun(ctx context.Context, r *runState) error {
	req := &r.req
	// The run's record directory is made from here on, beside the checks
	// below: a first step with side effects waits for it (runs.Reservation).
	if !req.ValidateOnly && (!req.NoRecord || req.Resume != "") && req.Temporal == nil {
		if r.reserved = a.RunStandby.Take(a.RunStore()); r.reserved == nil {
			r.reserved = a.RunStore().Reserve()
		}
	}
	if err := a.ensureMCP(ctx, req.Target, req.Origin == "mcp"); err != nil {
		fmt.Fprintf(a.Log, "Warning: %v\n", err)
	}
	var err error
	if r.cat, r.st, err = a.Catalog(ctx); err != nil {
		return err
	}
	r.red = a.Redactor(r.st)
	r.out = &RunOutcome{Redactor: r.red}
	r.env = runtime.EnvLookup{Process: a.LookupProcessEnv, Settings: r.st.LookupEnv}
	// Secret-named inputs (and URL credentials in any input) are secrets
	// from here on, even in the messages that reject them.
	r.red.AddSecretsIn(req.Params)
	if req.Temporal != nil && req.Resume != "" && !req.ValidateOnly {
		if r.prior, err = a.TemporalPrior(ctx, *req.Temporal, req.Resume); err != nil {
			return err
		}
		// The inputs it ran with, overridden by those given now.
		params := maps.Clone(wire.MapOf(r.prior.Input.Params))
		if params == nil {
			params = map[string]any{}
		}
		maps.Copy(params, req.Params)
		req.Params = params
		r.red.AddSecretsIn(req.Params)
	}
	if req.Resume != "" && !req.ValidateOnly && req.Temporal == nil {
		if r.resume, err = a.openResume(ctx, *req); err != nil {
			return err
		}
		req.Params = r.resume.params(req.Params)
		r.red.AddSecretsIn(req.Params)
	}
	r.given = req.Params
	if req.ValidateOnly {
		if len(req.Params) > 0 {
			// Validating with inputs checks the values given as the run
			// would (types, undeclared names); an input not given is not
			// an error here.
			_, ierrs := runtime.PrepareInputs(r.w, req.Params, r.env)
			ierrs = slices.DeleteFunc(ierrs, func(e runtime.InputError) bool { return e.Missing })
			r.out.InputErrors = append(ierrs, unknownInputs(r.w, req.Params)...)
		}
		return nil
	}
	var ierrs []runtime.InputError
	r.prepared, ierrs = runtime.PrepareInputs(r.w, req.Params, r.env)
	workerInputs := false // some inputs can only come from the Temporal worker
	if req.Temporal != nil {
		// A required input missing here may come from the worker's
		// environment or settings (that is where secrets live): the
		// worker prepares the inputs again and says what is missing.
		n := len(ierrs)
		ierrs = slices.DeleteFunc(ierrs, func(e runtime.InputError) bool { return e.Missing })
		workerInputs = len(ierrs) < n
	}
	ierrs = append(ierrs, unknownInputs(r.w, req.Params)...)
	r.out.InputErrors = ierrs
	if len(ierrs) == 0 && !workerInputs {
		r.provided = r.prepared.Values
		req.Params = r.prepared.Values
		r.red.AddSecretsIn(r.prepared.Values) // defaults and values from env or settings
	}
	return nil
}

// checkRun makes the run's record (it is a run only once started) while
// every static check runs, and reports whether the run may start: false
// for a refused run or a validation alone, whose outcome r.out holds.
func (a *App) checkRun(ctx context.Context, r *runState) bool {
	req := r.req
	if !req.ValidateOnly && len(r.out.InputErrors) == 0 && (!req.NoRecord || r.resume != nil) && req.Temporal == nil {
		r.record, r.recordErr = a.prepareRecord(req, r.w, r.prepared, r.red, r.resume, r.reserved)
	}
	errs, warns := validate.Validate(ctx, r.w, validate.Options{Catalog: r.cat, Provided: r.provided, LoadWorkflow: a.loadNested(req.Target)})
	if req.ValidateOnly && req.CheckLive && len(errs) == 0 {
		warns = append(warns, a.liveDrift(ctx, r.w, r.st)...)
	}
	r.out.ValidationErrors, r.out.Warnings = errs, warns
	return len(errs) == 0 && len(r.out.InputErrors) == 0 && !req.ValidateOnly
}

// runOptions decides how the engine runs the workflow (template mode,
// trusted tools, the steps a resume re-uses, the network and path bounds)
// and starts the record.
func (a *App) runOptions(r *runState) (runtime.Options, error) {
	req, w := r.req, r.w
	mode := r.st.Runtime.TemplateResolutionMode
	if v, ok := a.LookupProcessEnv("PFLOW_TEMPLATE_RESOLUTION_MODE"); ok && v != "" {
		mode = v
	}
	if w.TemplateResolutionMode != "" {
		mode = w.TemplateResolutionMode
	}
	a.applyTrust(r.cat, req.TrustReadOnly)
	if r.resume != nil {
		key, kerr := a.RunStore().Key()
		if kerr != nil {
			return runtime.Options{}, pferr.Newf(pferr.Config, "cannot read the run records' key: %v", kerr).WithWhere(a.Paths.Runs)
		}
		if err := r.resume.check(stephash.New(key), r.prepared.Values, r.cat, req.RerunUnsafe); err != nil {
			return runtime.Options{}, err
		}
		r.out.ResumedFrom = r.resume.id
	}
	red := r.red
	opts := runtime.Options{
		Catalog:      r.cat,
		Env:          r.env,
		Log:          a.Log,
		Permissive:   mode == "permissive",
		LoadWorkflow: func(name string) (*workflow.Workflow, error) { return a.loadSaved(name) },
		PathGuard:    req.Policy.Guard(),
		Network:      a.netPolicy(r.st, req.Origin == "mcp"),
		Observer:     req.Observer,
		// Every step's secret params are masked before the step can print them.
		OnParams: func(params map[string]any) { red.AddSecretsIn(params) },
		Redact:   red.String,
	}
	if r.recordErr != nil {
		fmt.Fprintf(a.Log, "Warning: this run is not recorded (%v); it cannot be resumed\n", r.recordErr)
	}
	if r.record != nil {
		r.record.Start()
		r.recordStarted = true
		opts.Journal = r.record
		r.out.RunID = r.record.ID
	}
	return opts, nil
}

// finishRun does what follows the run: its trace, the end of its record,
// retention and the saved workflow's history. A long-lived process does
// most of it after answering (Afterwards); the CLI before it returns, the
// trace first (the record names it, when it was written).
func (a *App) finishRun(ctx context.Context, r *runState, res *runtime.Result) {
	req, w, st, red, out := r.req, r.w, r.st, r.red, r.out
	var writeTrace func()
	if !req.NoTrace {
		name := traceName(req.Target)
		path := filepath.Join(a.Paths.Debug, trace.FileName(name, res.Started))
		out.TracePath = path
		params := req.Params
		writeTrace = func() {
			if err := trace.WriteFile(path, name, w, params, res, red); err != nil {
				fmt.Fprintf(a.Log, "Warning: could not write the trace: %v%s\n", err, hintLine(err))
				if a.Afterwards == nil {
					out.TracePath = "" // said when it failed
				}
				return
			}
			a.pruneTraces(st)
		}
		if a.Afterwards == nil {
			writeTrace()
		}
	}
	if record := r.record; record != nil {
		id, tracePath := record.ID, out.TracePath
		closeRecord := func() error {
			err := record.Close(res, tracePath)
			if err != nil && !errors.Is(err, runs.ErrNotRecorded) {
				fmt.Fprintf(a.Log, "Warning: could not finish the record of run %s: %v\n", id, err)
			}
			return err
		}
		after := func() {
			a.pruneRunsLater(st, id)
			if a.RunStandby != nil {
				// A long-lived process makes its next run's directory now
				// (in the spare retention just made, when it made one).
				a.RunStandby.Refill(a.RunStore())
			}
		}
		// A waiting run's record is finished before answering: the process
		// may be gone when its question is answered.
		if a.Afterwards != nil && record.Made() && res.Status != runtime.RunWaiting {
			// Every step's events are written already: the rest of the
			// record (status.json) follows the answer. A crash meanwhile
			// leaves a run that died after its steps, which a resume
			// re-uses.
			a.later(func() { closeRecord(); after() })
		} else {
			if errors.Is(closeRecord(), runs.ErrNotRecorded) {
				out.RunID = "" // said when it failed
			}
			a.later(after)
		}
		r.resume.unlock()
	}
	if writeTrace != nil && a.Afterwards != nil {
		a.later(writeTrace)
	}
	if req.Target.Saved && res.Success() && res.Status != runtime.RunWaiting {
		// Values known to be secret (from env or settings, even when typed on
		// the command line) never reach the saved run history.
		params, _ := red.Value(req.Params).(map[string]any)
		if a.RunHistory != nil {
			a.RunHistory.Add(req.Target.Name, library.RunStat{At: time.Now(), Duration: res.Duration, Params: library.SanitizeParams(params, red.SecretNames())})
		} else if err := a.Library().RecordRun(ctx, req.Target.Name, true, res.Duration, params, red.SecretNames()); err != nil {
			fmt.Fprintf(a.Log, "Warning: could not update the run history of '%s': %v\n", req.Target.Name, err)
		}
	}
}

func traceName(t *Target) string {
	if t.Saved {
		return t.Name
	}
	base := filepath.Base(t.Name)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	return strings.TrimSuffix(base, ".pflow")
}

func (a *App) loadSaved(name string) (*workflow.Workflow, error) {
	s, err := a.Library().Load(name)
	if err != nil {
		return nil, err
	}
	return s.Workflow, nil
}

// loadNested lets validation see nested workflows' declared outputs.
func (a *App) loadNested(t *Target) func(name, ref string) (*workflow.Workflow, error) {
	return func(name, ref string) (*workflow.Workflow, error) {
		if name != "" {
			return a.loadSaved(name)
		}
		p := ref
		if !filepath.IsAbs(p) && t.Path != "" {
			p = filepath.Join(filepath.Dir(t.Path), p)
		}
		return workflow.ParseFile(p)
	}
}

// ensureMCP re-syncs MCP servers whose config changed when the workflow, or
// a workflow nested in it, uses MCP nodes.
func (a *App) ensureMCP(ctx context.Context, t *Target, agent bool) error {
	seen := map[string]bool{}
	visited := map[*workflow.Workflow]bool{}
	load := a.loadNested(t)
	var collect func(w *workflow.Workflow, depth int)
	collect = func(w *workflow.Workflow, depth int) {
		if w == nil || visited[w] || depth > 10 {
			return
		}
		visited[w] = true
		for _, n := range w.Nodes {
			if strings.HasPrefix(n.Type, "mcp-") {
				seen[n.Type] = true
			}
			if !n.Nested() {
				continue
			}
			name, _ := n.Params["workflow_name"].(string)
			ref, _ := n.Params["workflow_ref"].(string)
			if name == "" && ref == "" {
				continue
			}
			if child, err := load(name, ref); err == nil {
				collect(child, depth+1)
			}
		}
	}
	collect(t.Workflow, 0)
	if len(seen) == 0 {
		return nil
	}
	return a.ensureMCPSynced(ctx, value.SortedKeys(seen), agent)
}

// Redactor returns the secret filter for this process (a.Secrets, or a
// new one when it is nil) after registering with it what is secret in the
// environment: every settings.json env value (the place for API keys;
// a value stored there is masked wherever it shows up), the values of
// secret-looking process variables (GITHUB_TOKEN, OPENAI_API_KEY, ...) and
// every MCP server's credentials (mcpclient.AddConfigSecrets). st may be nil
// (settings unreadable). A run adds its secret inputs and params as it goes.
func (a *App) Redactor(st *settings.Settings) *redact.Redactor {
	r := a.Secrets
	if r == nil {
		r = redact.NewRedactor()
	}
	r.Merge(a.baseSecrets(st))
	return r
}

// baseSecrets are the secrets of settings st's env, of the process
// environment and of the MCP servers' configs, in a redactor of their own:
// made once while st and mcp-servers.json are unchanged (a long-lived
// process gets the same values for them, see settings.LoadShared and
// mcpclient.LoadFileShared), made for each call otherwise.
func (a *App) baseSecrets(st *settings.Settings) *redact.Redactor {
	f, ferr := mcpclient.LoadFileShared(a.Paths.MCPServers)
	if ferr != nil {
		f = nil
	}
	if a.memo != nil {
		a.memo.mu.Lock()
		b := a.memo.secrets
		a.memo.mu.Unlock()
		if b != nil && b.st == st && b.mcp == f {
			return b.r
		}
	}
	r := redact.NewRedactor()
	if st != nil {
		for k, v := range st.Env {
			r.AddSecret(k, v)
		}
	}
	for _, kv := range a.environ() {
		k, v, _ := strings.Cut(kv, "=")
		if redact.IsSecretKey(k) && !notSecretEnv[k] {
			r.AddSecret(k, v)
		}
	}
	if f != nil {
		lookup := a.LookupProcessEnv
		if st != nil {
			lookup = a.EnvLookup(st)
		}
		for name, raw := range f.Servers {
			mcpclient.AddConfigSecrets(r, name, raw, lookup)
		}
	}
	if a.memo != nil && st != nil {
		a.memo.mu.Lock()
		a.memo.secrets = &memoSecrets{st: st, mcp: f, r: r}
		a.memo.mu.Unlock()
	}
	return r
}

// LoadSecrets registers the environment's secrets (see Redactor) with
// a.Secrets without reporting anything: an unreadable settings file is
// reported by the command that needs it.
func (a *App) LoadSecrets() {
	st, err := settings.Load(a.Paths.Settings, io.Discard)
	if err != nil {
		st = nil
	}
	a.Redactor(st)
}

// notSecretEnv are shell variables whose names look secret but are not
// (PWD is the working directory, not a password; SSH_AUTH_SOCK a socket path).
var notSecretEnv = map[string]bool{"PWD": true, "OLDPWD": true, "SSH_AUTH_SOCK": true}

func (a *App) environ() []string {
	if a.Environ != nil {
		return a.Environ
	}
	return os.Environ()
}

// unknownInputs reports the given params that the workflow neither declares
// nor reads (usr=bob when the input is user): they would be ignored
// silently. A param a template reads without a declaration (${x} with
// x=1) is still accepted, as validation accepts it.
func unknownInputs(w *workflow.Workflow, params map[string]any) []runtime.InputError {
	var declared []string
	for _, in := range w.Inputs {
		if in != nil {
			declared = append(declared, in.Name)
		}
	}
	var read map[string]bool
	var errs []runtime.InputError
	for _, k := range value.SortedKeys(params) {
		if w.Inputs.Get(k) != nil {
			continue
		}
		if read == nil {
			read = templateHeads(w)
		}
		if read[k] {
			continue
		}
		msg := fmt.Sprintf("Unknown input '%s': the workflow does not declare it", k)
		switch near := suggest.Near(k, declared, 1, 2); {
		case len(near) > 0:
			msg += fmt.Sprintf(" — did you mean '%s'?", near[0])
		case len(declared) == 0:
			msg += " (it takes no inputs)"
		}
		if len(declared) > 0 {
			msg += " Declared inputs: " + strings.Join(declared, ", ")
		}
		errs = append(errs, runtime.InputError{Input: k, Path: "inputs." + k, Message: msg})
	}
	return errs
}

// templateHeads lists the first path segment of every template the
// workflow reads: in its steps (params and batch items, not a nested
// step's own workflow) and its output sources.
func templateHeads(w *workflow.Workflow) map[string]bool {
	heads := map[string]bool{}
	add := func(r template.Ref) { heads[r.Head] = true }
	for _, n := range w.Nodes {
		if n != nil {
			n.EachRef(add)
		}
	}
	for _, o := range w.Outputs {
		if o != nil {
			for _, r := range template.Refs(o.SourceTemplate()) {
				add(r)
			}
		}
	}
	return heads
}

// CheckOutputKey refuses, before anything runs, an --output-key that the
// workflow cannot produce: not a declared output, not an input, not a step,
// or a key a step's node type never outputs (when its outputs are known).
// The error names the closest valid key.
func (a *App) CheckOutputKey(ctx context.Context, w *workflow.Workflow, key string) error {
	if key == "" || w.Outputs.Get(key) != nil || w.Inputs.Get(key) != nil {
		return nil
	}
	head, rest, _ := strings.Cut(key, ".")
	head, _, _ = strings.Cut(head, "[")
	var candidates []string
	for _, o := range w.Outputs {
		if o != nil {
			candidates = append(candidates, o.Name)
		}
	}
	cat, _, err := a.Catalog(ctx)
	if err != nil {
		return nil // the run reports the catalog problem itself
	}
	for _, n := range w.Nodes {
		if n == nil {
			continue
		}
		spec, ok := cat.Lookup(n.Type)
		known := ok && len(spec.Interface.Outputs) > 0 && !n.Nested()
		if n.ID == head {
			if rest == "" || !known {
				return nil
			}
			field, _, _ := strings.Cut(rest, ".")
			field, _, _ = strings.Cut(field, "[")
			var keys []string
			for _, f := range spec.Interface.Outputs {
				if f.Key == field {
					return nil
				}
				keys = append(keys, n.ID+"."+f.Key)
			}
			if field == "error" {
				return nil
			}
			candidates = keys
			break
		}
		if known {
			for _, f := range spec.Interface.Outputs {
				candidates = append(candidates, n.ID+"."+f.Key)
			}
		} else {
			candidates = append(candidates, n.ID)
		}
	}
	msg := fmt.Sprintf("Output key '%s' names nothing this workflow produces", key)
	if near := suggest.Near(key, candidates, 1, 2); len(near) > 0 {
		msg += fmt.Sprintf(" — did you mean '%s'?", near[0])
	}
	return pferr.New(pferr.Usage, msg).WithHint("Use a declared output or a step's output (step.key), e.g. -o " + firstOr(candidates, "step.stdout") + ". Valid keys: " + strings.Join(candidates, ", "))
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}
