package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/runs"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/settings"
	"github.com/pflow-go/pflow/internal/stepcache"
	"github.com/pflow-go/pflow/internal/stephash"
	"github.com/pflow-go/pflow/internal/value"
	"github.com/pflow-go/pflow/internal/workflow"
)

// RunStore returns the run records under PFLOW_HOME (see docs/decisions.md,
// "Recorded, resumable runs and the step cache").
func (a *App) RunStore() *runs.Store {
	return &runs.Store{Dir: a.Paths.Runs, Now: a.Now}
}

// StepCache returns the step cache under PFLOW_HOME.
func (a *App) StepCache() *stepcache.Store {
	return &stepcache.Store{Dir: filepath.Join(a.Paths.Cache, "steps"), Now: a.Now}
}

// applyTrust sets the effects of MCP node types from their tools'
// annotations, for servers marked trusted (or every server with all). An
// untrusted server's annotations are ignored: its tools may have side
// effects, are never cached and never repeated without the user's say-so.
func (a *App) applyTrust(cat *registry.Catalog, all bool) {
	var trusted map[string]bool
	for _, t := range cat.Types() {
		if !strings.HasPrefix(t, "mcp-") {
			continue
		}
		spec, _ := cat.Lookup(t)
		h := registry.MCPHintsOf(spec)
		if h == nil {
			continue
		}
		if !all && trusted == nil {
			trusted = map[string]bool{}
			if f, err := mcpclient.LoadFileShared(a.Paths.MCPServers); err == nil {
				// "trust_readonly": true makes pflow act on a server's tool
				// annotations: its read-only tools are cached and, like its
				// idempotent ones, may run again after a crash.
				for name, cfg := range f.Servers {
					if mcpclient.DecodeConfig(cfg).TrustReadOnly {
						trusted[name] = true
					}
				}
			}
		}
		if !all && !trusted[registry.MCPServerOf(spec)] {
			continue
		}
		c := *spec // the catalog's specs are shared (App.Catalog)
		c.Effects = node.Effects{ReadOnly: h.ReadOnly, Idempotent: h.Idempotent || h.ReadOnly, Pure: h.ReadOnly, Cache: h.ReadOnly}
		cat.Replace(&c)
	}
}

func hashHex(b []byte) string {
	if b == nil {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// buildVersion names this pflow build (cached results of another build are
// not served).
var buildVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			v += "+" + s.Value
		}
	}
	return v
})

// workflowRef identifies t for the run record.
func workflowRef(t *Target, ir []byte) runs.Workflow {
	ref := runs.Workflow{Name: t.Name, Path: t.Path, Hash: hashHex(ir)}
	switch {
	case t.Saved:
		ref.Kind = runs.KindSaved
	case t.Path != "":
		ref.Kind = runs.KindFile
	default:
		ref.Kind = runs.KindInline
	}
	return ref
}

func describeRef(w runs.Workflow) string {
	switch w.Kind {
	case runs.KindSaved:
		return fmt.Sprintf("the saved workflow '%s'", w.Name)
	case runs.KindFile:
		return fmt.Sprintf("the workflow file %s", w.Path)
	}
	return fmt.Sprintf("an inline workflow ('%s')", w.Name)
}

// resumeState is a run being resumed: its record, locked for this resume.
type resumeState struct {
	id   string
	meta *runs.Meta
	log  *runs.Log
	lock *fsutil.Lock
}

func (rs *resumeState) unlock() {
	if rs != nil && rs.lock != nil {
		rs.lock.Unlock()
		rs.lock = nil
	}
}

// ResumeTarget finds the workflow a recorded run ran (ref is a run id or
// "last"), as it is now: the saved workflow or the file, re-read.
func (a *App) ResumeTarget(ref string) (*Target, error) {
	a.settle()
	st := a.RunStore()
	id, err := st.Resolve(ref)
	if err != nil {
		return nil, err
	}
	m, err := st.Meta(id)
	if err != nil {
		return nil, err
	}
	switch m.Workflow.Kind {
	case runs.KindSaved:
		return a.ResolveTarget(m.Workflow.Name)
	case runs.KindFile:
		t, err := a.ResolveTarget(m.Workflow.Path)
		if err != nil {
			return nil, pferr.Newf(pferr.NotFound, "run '%s' ran %s, which cannot be read now: %s", id, m.Workflow.Path, pferr.As(err).Message).
				WithHint("Restore the file, or name the workflow to resume with: pflow --resume " + id + " <workflow.pflow.md>")
		}
		t.Name = m.Workflow.Name // as first given, for traces and listings
		return t, nil
	}
	return nil, pferr.Newf(pferr.Validation, "run '%s' ran an inline workflow, which pflow does not keep to run again", id).
		WithHint("Pass the (fixed) workflow with the resume: over MCP, workflow_execute with workflow and resume; on the command line, pflow --resume " + id + " <workflow.pflow.md>.")
}

// openResume loads and locks the run req.Resume names and checks that t is
// the workflow it ran.
func (a *App) openResume(ctx context.Context, req RunRequest) (*resumeState, error) {
	a.settle()
	st := a.RunStore()
	id, err := st.Resolve(req.Resume)
	if err != nil {
		return nil, err
	}
	m, err := st.Meta(id)
	if err != nil {
		return nil, err
	}
	if reason := sameWorkflow(m.Workflow, req.Target); reason != "" {
		return nil, pferr.Newf(pferr.Validation, "cannot resume run '%s' with this workflow: %s", id, reason).
			WithHint(fmt.Sprintf("A resume re-uses the steps of the workflow the run ran. Resume with that workflow (pflow --resume %s re-reads it), or run this one without --resume.", id))
	}
	lk, err := st.Lock(ctx, id)
	if err != nil {
		return nil, err
	}
	log, err := st.Events(id)
	if err != nil {
		lk.Unlock()
		return nil, err
	}
	return &resumeState{id: id, meta: m, log: log, lock: lk}, nil
}

// sameWorkflow says why t is not the workflow ref ran ("" when it is).
func sameWorkflow(ref runs.Workflow, t *Target) string {
	cur := workflowRef(t, nil)
	switch {
	case ref.Kind != cur.Kind:
		return fmt.Sprintf("it ran %s, and this is %s", describeRef(ref), describeRef(cur))
	case ref.Kind == runs.KindSaved && ref.Name != cur.Name:
		return fmt.Sprintf("it ran the saved workflow '%s', not '%s'", ref.Name, cur.Name)
	case ref.Kind == runs.KindFile && filepath.Clean(ref.Path) != filepath.Clean(cur.Path):
		return fmt.Sprintf("it ran %s, not %s", ref.Path, cur.Path)
	}
	return ""
}

// resumeParams are the recorded inputs the caller gave the resumed run
// (public ones; secret ones must be given again), under the params given now.
func (rs *resumeState) params(given map[string]any) map[string]any {
	out := make(map[string]any, len(rs.meta.Inputs)+len(given))
	for k, v := range rs.meta.Inputs {
		if src, ok := rs.meta.InputSources[k]; ok && src != string(runtime.FromParams) {
			continue // env, settings and defaults are looked up again
		}
		out[k] = v
	}
	for k, v := range given {
		out[k] = v
	}
	return out
}

// check refuses a resume that would mix secrets or repeat a step that may
// have side effects: secret inputs must digest to the recorded values; a step
// that was running when the run stopped, or that completed but whose
// outputs could not be recorded, must run again — allowed for steps safe to
// repeat, or with rerunUnsafe.
func (rs *resumeState) check(h *stephash.Hasher, values map[string]any, cat *registry.Catalog, rerunUnsafe bool) error {
	for _, name := range value.SortedKeys(rs.meta.SecretInputs) {
		v, given := values[name]
		if !given || v == nil {
			return pferr.Newf(pferr.Validation, "run '%s' had the secret input '%s', which is never recorded: give it again to resume", rs.id, name).
				WithFix(pferr.Fix{Text: "{do} again.", Do: &pferr.Action{Flag: name + "=<value>", Args: map[string]any{"parameters": map[string]any{name: "<value>"}}}}).
				WithFix(pferr.Fix{Text: "Or set it in the settings or the environment, as for the first run: {do}.",
					Do: pferr.Run("settings set-env "+name+"=<value>", "settings_set", map[string]any{"key": name, "value": "<value>"})})
		}
		if recorded := rs.meta.SecretInputs[name]; h.For(recorded).Value(v) != recorded {
			return pferr.Newf(pferr.Validation, "the secret input '%s' differs from the one run '%s' used", name, rs.id).
				WithHint("A resume must use the same secrets as the run it continues (its finished steps used them). Pass the same value, or start a fresh run without --resume.")
		}
	}
	if rerunUnsafe {
		return nil
	}
	unsafe := func(typ string) bool {
		spec, ok := cat.Lookup(typ)
		return !ok || !spec.Effects.SafeToRepeat()
	}
	var lines []string
	for _, ev := range rs.log.InFlight() {
		if unsafe(ev.Type) {
			lines = append(lines, fmt.Sprintf("step %s (%s) was running when the run stopped (started %s) and may have partly run",
				ev.Label(), ev.Type, ev.Started().Local().Format("2006-01-02 15:04:05")))
		}
	}
	for _, ev := range rs.log.NotReusable() {
		if unsafe(ev.Type) {
			lines = append(lines, fmt.Sprintf("step %s (%s) completed, but %s, so it would run again", ev.Label(), ev.Type, ev.Why))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	if len(lines) > 10 {
		lines = append(lines[:10], fmt.Sprintf("... and %d more", len(lines)-10))
	}
	return &pferr.Error{Kind: pferr.Validation,
		Message: fmt.Sprintf("resuming run '%s' would run again steps that may have side effects:\n  - %s", rs.id, strings.Join(lines, "\n  - ")),
		Fixes: []pferr.Fix{
			{Text: "To check what those steps did, {do}.", Do: pferr.Run("runs show "+rs.id, "trace_read", map[string]any{"trace_file": "latest"})},
			{Text: "When running them again is fine, resume and {do}.", Do: pferr.Pass("--rerun-unsafe", "rerun_unsafe", true)},
			{Text: "Steps that are read-only or idempotent (MCP tools with those annotations on a trusted server) run again without it."},
		},
		Details: map[string]any{"run_id": rs.id}}
}

// recordOptions are the flags of a run that are kept in its record.
func recordOptions(req RunRequest) map[string]bool {
	o := map[string]bool{}
	if req.NoCache {
		o["no_cache"] = true
	}
	if req.TrustReadOnly {
		o["trust_readonly"] = true
	}
	if req.RerunUnsafe {
		o["rerun_unsafe"] = true
	}
	if len(o) == 0 {
		return nil
	}
	return o
}

// prepareRecord prepares the run's record (runs.Store.Prepare: its files
// are made meanwhile; Start makes it a run, Abort removes it). A record that
// cannot be prepared is an error to warn about if the run goes on: it then
// runs unrecorded.
func (a *App) prepareRecord(req RunRequest, w *workflow.Workflow, prepared *runtime.Prepared, red *redact.Redactor, rs *resumeState, reserved *runs.Reservation) (*runs.Run, error) {
	st := a.RunStore()
	var src []byte
	if w.Source != nil && w.Source.Raw != "" {
		src = []byte(w.Source.Raw)
	}
	key, err := st.Key()
	if err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", a.Paths.Runs, err)
	}
	public, secret := runs.SplitInputs(prepared.Values, red, key)
	sources := map[string]string{}
	for k, v := range prepared.Sources {
		sources[k] = string(v)
	}
	// The IR and its hash are made by the record's own goroutine, beside
	// the checks and the run (neither changes the workflow).
	m := runs.Meta{Workflow: workflowRef(req.Target, nil), Inputs: public, SecretInputs: secret, InputSources: sources,
		Origin: req.Origin, Options: recordOptions(req), Started: a.now()}
	o := runs.Options{Meta: m, Source: src, Redactor: red, Version: buildVersion(), Log: a.Log, Key: key,
		MakeIR: func() []byte { return irOf(w, len(src)) }, Reserved: reserved}
	if rs != nil {
		o.Meta.ResumedFrom = rs.id
		o.Resume = rs.log
	}
	if !req.NoCache {
		o.Cache = a.StepCache()
	}
	return st.Prepare(o)
}

// lastIR is the IR of the workflow recorded last. A parsed workflow is not
// modified (a long-lived process shares it between the runs of an
// unchanged file, workflow.ParseFileShared), so running the same workflow
// again marshals it once.
var lastIR struct {
	mu sync.Mutex
	w  *workflow.Workflow
	ir []byte
}

// irOf returns w's IR (see marshalIR), from lastIR when w ran last.
func irOf(w *workflow.Workflow, sizeHint int) []byte {
	lastIR.mu.Lock()
	if lastIR.w == w {
		ir := lastIR.ir
		lastIR.mu.Unlock()
		return ir
	}
	lastIR.mu.Unlock()
	ir := marshalIR(w, sizeHint)
	if ir != nil {
		lastIR.mu.Lock()
		lastIR.w, lastIR.ir = w, ir
		lastIR.mu.Unlock()
	}
	return ir
}

// marshalIR is value.MarshalJSON(w) into a buffer sized for it from the
// workflow's text (sizeHint bytes), not grown from nothing: a 1,000-step
// workflow's IR is over 100 KB.
func marshalIR(w *workflow.Workflow, sizeHint int) []byte {
	var buf bytes.Buffer
	buf.Grow(2*sizeHint + 512)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func (a *App) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// pruneRunsLater is pruneRuns after a run (id, which it keeps). A
// long-lived process prunes after every runSlack(n)-th run, as it does its
// traces (listing the runs costs more than recording one), so up to that
// many more runs than kept may be there meanwhile; the directories of the
// runs it removes then feed as many runs (runs.SpareSlots).
func (a *App) pruneRunsLater(st *settings.Settings, id string) {
	if w := a.Afterwards; w != nil { // on w's goroutine: one at a time
		if w.runsUnpruned++; w.runsUnpruned < runSlack(st.Retention.MaxCount) {
			return
		}
		w.runsUnpruned = 0
	}
	a.pruneRuns(st, id)
}

// runSlack is how many runs a long-lived process records between two
// prunes when maxCount are kept.
func runSlack(maxCount int) int { return min(traceSlack(maxCount), runs.SpareSlots) }

// pruneRuns applies the retention settings to the run records, keeping keep.
func (a *App) pruneRuns(st *settings.Settings, keep ...string) {
	p := runs.Retention{Keep: st.Retention.MaxCount, MaxAge: time.Duration(st.Retention.MaxAgeDays) * 24 * time.Hour}
	if _, err := a.RunStore().Prune(p, keep...); err != nil {
		fmt.Fprintf(a.Log, "Warning: could not remove old run records: %v\n", err)
	}
}

// PruneRuns removes run records beyond the retention settings (or the given
// limits, when keep or maxAgeDays is not negative). It returns how many it
// removed.
func (a *App) PruneRuns(keep, maxAgeDays int) (int, error) {
	a.settle()
	st, err := a.Settings()
	if err != nil {
		return 0, err
	}
	p := runs.Retention{Keep: st.Retention.MaxCount, MaxAge: time.Duration(st.Retention.MaxAgeDays) * 24 * time.Hour}
	if keep >= 0 {
		p.Keep = keep
	}
	if maxAgeDays >= 0 {
		p.MaxAge = time.Duration(maxAgeDays) * 24 * time.Hour
	}
	return a.RunStore().Prune(p)
}

// ListRuns lists recorded runs, newest first (limit 0: all).
func (a *App) ListRuns(limit int) ([]runs.Summary, error) {
	a.settle()
	return a.RunStore().List(limit)
}

// ListRunsWhere is ListRuns of the runs whose record keep accepts.
func (a *App) ListRunsWhere(limit int, keep func(*runs.Meta) bool) ([]runs.Summary, error) {
	a.settle()
	return a.RunStore().ListWhere(limit, keep)
}

// RunDetail is a recorded run as 'pflow runs show' presents it.
type RunDetail struct {
	Summary runs.Summary `json:"run"`
	Meta    *runs.Meta   `json:"record"`
	Status  *runs.Status `json:"status,omitempty"`
	Steps   []StepLine   `json:"steps"`
	// InFlight names the steps that were running when the run stopped.
	InFlight []string `json:"in_flight,omitempty"`
	// Skipped counts record lines that could not be read (a torn last line).
	Skipped int `json:"skipped_lines,omitempty"`
}

// StepLine is one entry of a run's timeline.
type StepLine struct {
	Path       string         `json:"path"`
	Item       *int           `json:"item,omitempty"`
	Occurrence int            `json:"occurrence,omitempty"`
	Type       string         `json:"node_type"`
	Kind       string         `json:"kind,omitempty"`
	Status     string         `json:"status"` // completed, failed, running (started, never ended)
	Action     string         `json:"action,omitempty"`
	Source     string         `json:"source,omitempty"`
	From       string         `json:"from_run,omitempty"`
	Started    time.Time      `json:"started"`
	OffsetMS   float64        `json:"offset_ms"`
	DurationMS float64        `json:"duration_ms"`
	Attempts   int            `json:"attempts,omitempty"`
	Error      string         `json:"error,omitempty"`
	Outputs    map[string]any `json:"outputs,omitempty"`
	Reusable   bool           `json:"reusable"`
	NotReused  string         `json:"not_reusable,omitempty"`
	Batch      any            `json:"batch,omitempty"`
}

// ShowRun returns a run's record as a timeline: every step (and batch item)
// that ended, and those that started and never ended, in order.
func (a *App) ShowRun(ref string) (*RunDetail, error) {
	a.settle()
	st := a.RunStore()
	id, err := st.Resolve(ref)
	if err != nil {
		return nil, err
	}
	m, err := st.Meta(id)
	if err != nil {
		return nil, err
	}
	log, err := st.Events(id)
	if err != nil {
		return nil, err
	}
	list, _ := st.List(0)
	d := &RunDetail{Meta: m, Status: st.Status(id), Skipped: log.Skipped, Steps: []StepLine{}}
	for _, s := range list {
		if s.ID == id {
			d.Summary = s
		}
	}
	inflight := map[*runs.Event]bool{}
	for _, ev := range log.InFlight() {
		inflight[ev] = true
		d.InFlight = append(d.InFlight, ev.Label())
	}
	for _, ev := range log.Events {
		if ev.Ev == "start" && !inflight[ev] {
			continue
		}
		line := StepLine{Path: ev.Path, Type: ev.Type, Kind: ev.Kind, Status: ev.Status, Action: ev.Action, Source: ev.Source, From: ev.From,
			Started: ev.Started(), DurationMS: float64(ev.US) / 1000, Attempts: ev.Attempts, Error: ev.Error, Outputs: ev.Outputs(),
			Reusable: ev.Full, NotReused: ev.Why}
		if ev.Occ > 1 {
			line.Occurrence = ev.Occ
		}
		if ev.Item >= 0 {
			i := ev.Item
			line.Item = &i
		}
		if inflight[ev] {
			line.Status = runs.StateRunning
		}
		if len(ev.Batch) > 0 {
			line.Batch, _ = value.DecodeJSON(ev.Batch)
		}
		line.OffsetMS = float64(ev.Started().Sub(m.Started).Microseconds()) / 1000
		d.Steps = append(d.Steps, line)
	}
	sort.SliceStable(d.Steps, func(i, j int) bool { return d.Steps[i].Started.Before(d.Steps[j].Started) })
	return d, nil
}

// CacheList lists the step cache's entries, newest first.
func (a *App) CacheList() ([]stepcache.Info, error) { return a.StepCache().List() }

// CacheClear removes step cache entries (only expired ones with expiredOnly).
func (a *App) CacheClear(expiredOnly bool) (int, error) { return a.StepCache().Clear(expiredOnly) }
