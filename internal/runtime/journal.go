package runtime

import (
	"context"
	"github.com/pflow-go/pflow/internal/stepkeys"
	"sync"
	"time"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/workflow"
)

// Journal is the step boundary (see docs/decisions.md, "Recorded, resumable
// runs and the step cache"): it sees every node execution
// just before and after it runs, and may supply an earlier outcome instead of
// running the node — a recorded step of the run being resumed, or a step
// cache hit. The runtime knows nothing about where records go; the run record
// (internal/runs) implements Journal, and a distributed engine would turn each
// Begin/End pair into an activity and its history.
//
// Calls may come from several goroutines (parallel batch items).
type Journal interface {
	// Begin is called before a node runs (a step, or one batch item), with
	// what the node will receive. It returns an earlier completed outcome to
	// use instead of running the node, or nil to run it. An error fails the
	// step without running the node.
	Begin(ctx context.Context, rec *StepRecord) (*StepRecord, error)
	// End is called once the node (or a whole batch or nested workflow step)
	// is done, with its outcome; rec.Source says whether it ran or was
	// re-used. It is also called for steps that failed before their node
	// could run (a template error), without a Begin.
	End(rec *StepRecord)
}

// ReuseJournal is a Journal that tells whether its Begin may supply an
// earlier outcome whose choice depends on StepRecord.Deps and UpstreamRan
// (a resume's does). When Reuses returns false the runtime leaves those two
// unset and does not work out which steps depend on which.
type ReuseJournal interface {
	Journal
	Reuses() bool
}

// OmittingJournal is a Journal that keeps nothing of some batch items (the
// run record keeps nothing of a completed item of a replayed node): when
// Omits reports true for an item's node effects and cache setting, the
// runtime calls neither Begin nor End for the item when it completes, and
// counts it in the batch step's record instead (StepRecord.Omitted). A
// failed item is still ended.
type OmittingJournal interface {
	Journal
	Omits(effects node.Effects, cache CacheSetting) bool
}

// Kinds of StepRecord.
const (
	KindNode     = "node"     // one node execution: a step, or one batch item
	KindBatch    = "batch"    // a batch step as a whole (after its items)
	KindWorkflow = "workflow" // a nested workflow step as a whole (after its steps)
)

// Sources of an outcome (StepRecord.Source and Step.Source).
const (
	SourceRan     = ""        // the node ran in this run
	SourceResumed = "resumed" // re-used from the run being resumed
	SourceCache   = "cache"   // served from the step cache
)

// StepRecord is one execution at the step boundary, independent of any
// engine: where the step is, what it needs (its effective params), whether
// it is safe to repeat, and what it produced.
type StepRecord struct {
	// Path locates the step in the run: its id, after the ids of the nested
	// workflow steps it runs in ("build/compile"; a nested step run as batch
	// item 3: "build[3]/compile").
	Path     string
	NodeID   string
	NodeType string
	// Kind is KindNode, KindBatch or KindWorkflow.
	Kind string
	// Occurrence is 1 for the step's first execution in its workflow, 2 for
	// its second (action loops), ...
	Occurrence int
	// Item is the batch item index, -1 for a step that is not an item.
	Item int
	// Deps are the ids of the steps of the same workflow whose outputs this
	// step reads (its ${...} references, batch items and input mappings).
	// Unset for a ReuseJournal that does not re-use.
	Deps []string
	// UpstreamRan is set when a step this one depends on ran in this run
	// (was not re-used), or the nested workflow step it runs in did: an
	// earlier result of this step must not be re-used by a resume. Unset
	// for a ReuseJournal that does not re-use.
	UpstreamRan bool
	// Node is the step as written; Mapping its proxy mappings (may be nil).
	Node    *workflow.Node
	Mapping *workflow.Mapping

	// Params are the effective params: the node request, with templates
	// resolved, values coerced and engine controls removed. TemplateEnv are
	// the template values bound to environment variables (shell commands);
	// WorkflowDir is where relative paths resolve. Read-only.
	Params      map[string]any
	TemplateEnv map[string]string
	WorkflowDir string
	// Fingerprint describes data the node reads besides its params (see
	// node.Spec.Fingerprint); "" when it declares none.
	Fingerprint string
	// Effects are the node type's declared effects.
	Effects node.Effects
	// Cache is the step's cache setting (the `cache` control).
	Cache CacheSetting

	// Digests, set by the Journal (keyed; see internal/stephash):
	// DefinitionHash of the step as written, ParamsHash of Params,
	// TemplateEnv and WorkflowDir, InputHash of Fingerprint.
	DefinitionHash string
	ParamsHash     string
	InputHash      string

	// The outcome, set before End.
	Status   string // StatusCompleted or StatusFailed
	Action   string
	Outputs  map[string]any
	Error    string
	Attempts int
	Started  time.Time
	Duration time.Duration
	Batch    *BatchSummary
	// Source says how the outcome was obtained (SourceRan, SourceResumed,
	// SourceCache); SourceRun names the run it was re-used from.
	Source    string
	SourceRun string
	// Omitted counts, in a batch step's record, the items that completed
	// without a record of their own (see OmittingJournal).
	Omitted int
}

// SafeToRepeat reports whether running the node again cannot do harm (see
// node.Effects.SafeToRepeat).
func (r *StepRecord) SafeToRepeat() bool { return r.Effects.SafeToRepeat() }

// CacheSetting is a step's `cache` control (see package stepkeys).
type CacheSetting = stepkeys.CacheSetting

// depsCache holds each workflow's step dependencies, computed once per run.
type depsCache struct {
	mu sync.Mutex
	m  map[*workflow.Workflow]map[string][]string
}

// deps returns the ids of the steps of w that n reads.
func (d *depsCache) deps(w *workflow.Workflow, n *workflow.Node) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[*workflow.Workflow]map[string][]string{}
	}
	byNode, ok := d.m[w]
	if !ok {
		byNode = w.StepDeps()
		d.m[w] = byNode
	}
	return byNode[n.ID]
}

// records recycles StepRecords a Journal is done with (ReleaseRecord): a
// run makes one per step and batch item.
var records = sync.Pool{New: func() any { return new(StepRecord) }}

// ReleaseRecord gives rec back for reuse, once its Journal no longer needs
// it (End was called for it and nothing of it is kept). Optional: a record
// that is never released is garbage like any other. The runtime does not
// touch a record after End.
func ReleaseRecord(rec *StepRecord) {
	*rec = StepRecord{}
	records.Put(rec)
}

// newRecord starts the record of one execution of n in frame f.
func (e *executor) newRecord(f *frame, n *workflow.Node, kind string, item int) *StepRecord {
	rec := records.Get().(*StepRecord)
	*rec = StepRecord{
		Path: f.prefix + n.ID, NodeID: n.ID, NodeType: n.Type, Kind: kind,
		Occurrence: f.occurrence(n.ID), Item: item,
		Node: n, Mapping: f.w.Mappings[n.ID], WorkflowDir: f.dir,
	}
	if !e.reuses {
		return rec
	}
	rec.Deps = e.deps.deps(f.w, n)
	rec.UpstreamRan = f.forced
	for _, d := range rec.Deps {
		if f.hasRun(d) {
			rec.UpstreamRan = true
			break
		}
	}
	return rec
}

// finishRecord copies a step's outcome into its record and hands it to the
// journal.
func (e *executor) finishRecord(rec *StepRecord, s *Step, fail *Failure) {
	if rec == nil {
		return
	}
	rec.Status = StatusCompleted
	rec.Action = s.Action
	if fail != nil {
		rec.Status = StatusFailed
		rec.Error = fail.Message
		if rec.Action == "" || !isErrorAction(rec.Action) {
			rec.Action = "error"
		}
	} else if rec.Action == "" {
		rec.Action = "default"
	}
	if isWaiting(fail) {
		rec.Status, rec.Action, rec.Error = StatusWaiting, ActionWaiting, ""
	}
	if rec.Outputs == nil {
		rec.Outputs = s.Outputs
	}
	rec.Attempts = s.Attempts
	rec.Started = s.Started
	rec.Duration = time.Since(s.Started)
	if s.Duration > 0 {
		rec.Duration = s.Duration
	}
	rec.Batch = s.Batch
	rec.Source = s.Source
	e.opts.Journal.End(rec)
}
