package runs

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/stephash"
	"github.com/pflow-go/pflow/internal/trace"
	"github.com/pflow-go/pflow/internal/workflow"
)

// Limits of what one event keeps.
const (
	// MaxOutputBytes is the largest encoded outputs an event keeps in full;
	// larger ones are kept as a bounded preview, and the step cannot be
	// re-used by a resume.
	MaxOutputBytes = 4 << 20
	// previewString bounds strings in a preview, as traces do.
	previewString = 10000
	// maxPending bounds events waiting for the writer (memory stays flat
	// when steps finish faster than they are written).
	maxPending = 8192
	// linger is how long the writer collects events of steps that are safe
	// to repeat before writing them (one write instead of one per event);
	// a crash can lose at most that much, and those steps run again on
	// resume. wakeAt waiting events wake it sooner.
	linger = 20 * time.Millisecond
	wakeAt = 512
	// writeChunk is the size of one write to steps.jsonl.
	writeChunk = 256 << 10
	// batchErrorsKept bounds the failed items listed in a batch step's event.
	batchErrorsKept = 20
)

// Cache is the step cache as the journal sees it (internal/stepcache).
type Cache interface {
	// Get returns a live entry's encoded outputs and action.
	Get(key string) (outputs []byte, action string, ok bool)
	// Put stores encoded outputs for ttl; info describes the entry for
	// listings (node type, step, workflow).
	Put(key string, outputs []byte, action string, ttl time.Duration, info map[string]string) error
}

// Options configure a recorded run.
type Options struct {
	// Meta describes the run; ID, FormatVersion, PID and Started are set by
	// Create when empty.
	Meta Meta
	// IR is the workflow as it ran (JSON); Source its text (may be nil).
	IR, Source []byte
	// Redactor removes secret values from everything written.
	Redactor *trace.Redactor
	// Resume is the record of the run being resumed (nil for a fresh run).
	Resume *Log
	// Cache is the step cache (nil: no caching); CacheTTL the default TTL of
	// its entries.
	Cache    Cache
	CacheTTL time.Duration
	// Version names the pflow build; cached results of another build are
	// not served.
	Version string
	// Log receives warnings (nil: discarded).
	Log io.Writer
	// Lock, when set, is taken as the run's lock instead of a new one.
	Lock *fsutil.Lock
}

// DefaultCacheTTL is how long a step cache entry stays valid when the step
// does not say (`cache: true`, or a pure node type that caches by default).
const DefaultCacheTTL = time.Hour

// Run is a run being recorded. It implements runtime.Journal.
type Run struct {
	// redGen is the redactor's generation when the record was created: a
	// record re-masks its files at Close only when secrets were added since.
	redGen uint64

	ID    string
	Meta  *Meta
	store *Store
	dir   string
	lock  *fsutil.Lock
	opts  Options
	h     *stephash.Hasher
	log   io.Writer

	defMu   sync.Mutex
	defHash map[*workflow.Node]string

	ran, resumed, cached atomic.Int64

	// the writer
	mu       sync.Mutex
	wake     chan struct{} // wakes the writer (buffered, 1)
	done     *sync.Cond    // producers wait for their event to be written
	queue    []pending
	spare    []pending
	seq      uint64
	written  uint64
	closing  bool
	failed   error
	finished chan struct{}
	f        *os.File
}

// pending is an event waiting for the writer.
type pending struct {
	ev  string
	rec *runtime.StepRecord
	seq uint64
	put bool // store the outputs in the step cache
}

// Create starts the record of a run: it creates the run's directory, takes
// its lock, writes run.json and the workflow, and starts the writer.
func (s *Store) Create(o Options) (*Run, error) {
	redGen := o.Redactor.Generation() // before anything is written
	m := o.Meta
	if m.Started.IsZero() {
		m.Started = s.now()
	}
	if m.ID == "" {
		m.ID = NewID(m.Started)
	}
	m.FormatVersion = FormatVersion
	if m.PID == 0 {
		m.PID = os.Getpid()
	}
	key, err := s.Key()
	if err != nil {
		return nil, err
	}
	dir := s.dir(m.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	lk := o.Lock
	if lk == nil {
		if lk, err = fsutil.LockFile(context.Background(), filepath.Join(dir, lockBase), time.Second); err != nil {
			return nil, err
		}
	}
	r := &Run{ID: m.ID, Meta: &m, store: s, dir: dir, lock: lk, opts: o, h: stephash.New(key), log: o.Log,
		defHash: map[*workflow.Node]string{}, finished: make(chan struct{}), redGen: redGen}
	if r.log == nil {
		r.log = io.Discard
	}
	r.wake = make(chan struct{}, 1)
	r.done = sync.NewCond(&r.mu)
	fail := func(err error) (*Run, error) {
		lk.Unlock()
		os.RemoveAll(dir)
		return nil, err
	}
	if len(o.IR) > 0 {
		if err := fsutil.ReplaceFile(filepath.Join(dir, irFile), []byte(o.Redactor.String(string(o.IR))), 0o600); err != nil {
			return fail(err)
		}
	}
	if len(o.Source) > 0 {
		if err := fsutil.ReplaceFile(filepath.Join(dir, sourceFile), []byte(o.Redactor.String(string(o.Source))), 0o600); err != nil {
			return fail(err)
		}
	}
	if r.f, err = os.OpenFile(filepath.Join(dir, stepsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		return fail(err)
	}
	// run.json last: a directory without it is not listed as a run.
	if err := writeJSON(filepath.Join(dir, metaFile), r.Meta); err != nil {
		r.f.Close()
		return fail(err)
	}
	go r.writer()
	return r, nil
}

// Hasher returns the keyed digests of this store (for inputs).
func (r *Run) Hasher() *stephash.Hasher { return r.h }

// SecretDigest returns the keyed digest of a secret input value.
func SecretDigest(h *stephash.Hasher, v any) string { return h.Value(v) }

// ---- the journal ----

// Begin implements runtime.Journal: it re-uses the resumed run's outcome of
// an unchanged step whose upstream was re-used, else serves a step cache
// hit, else records that the node starts (durably before returning when the
// node may have side effects).
func (r *Run) Begin(ctx context.Context, rec *runtime.StepRecord) (*runtime.StepRecord, error) {
	cacheable := r.cacheable(rec)
	if r.opts.Resume != nil || cacheable {
		// Needed now to decide; otherwise the writer computes it, off the
		// step's path.
		rec.DefinitionHash = r.definition(rec)
	}
	if prior := r.reuse(rec); prior != nil {
		return prior, nil
	}
	if cacheable {
		r.digest(rec)
		if out, action, ok := r.opts.Cache.Get(r.cacheKey(rec)); ok {
			if m := decodeOutputs(out); m != nil {
				return &runtime.StepRecord{Source: runtime.SourceCache, Outputs: m, Action: action}, nil
			}
		}
	}
	switch {
	case !rec.SafeToRepeat():
		r.enqueue(pending{ev: evStart, rec: rec}, true)
	case rec.Item < 0:
		r.enqueue(pending{ev: evStart, rec: rec}, false)
	}
	return nil, nil
}

// End implements runtime.Journal: it records the outcome; the end of a node
// that may have side effects is written before End returns.
func (r *Run) End(rec *runtime.StepRecord) {
	if rec.Kind == runtime.KindNode {
		switch rec.Source {
		case runtime.SourceResumed:
			r.resumed.Add(1)
		case runtime.SourceCache:
			r.cached.Add(1)
		default:
			r.ran.Add(1)
		}
	}
	p := pending{ev: evEnd, rec: rec}
	p.put = rec.Kind == runtime.KindNode && rec.Source == runtime.SourceRan && rec.Status == runtime.StatusCompleted && r.cacheable(rec)
	sync := rec.Kind == runtime.KindNode && rec.Source == runtime.SourceRan && !rec.SafeToRepeat()
	r.enqueue(p, sync)
}

// reuse returns the resumed run's outcome of rec when it may be re-used: it
// completed with complete outputs, the step is unchanged (definition,
// effective params, input fingerprint) and no step it reads ran in this run.
func (r *Run) reuse(rec *runtime.StepRecord) *runtime.StepRecord {
	prior := r.opts.Resume
	if prior == nil || rec.UpstreamRan {
		return nil
	}
	ev := prior.end(keyOf(rec))
	if ev == nil || ev.Status != runtime.StatusCompleted || !ev.Full || ev.Def != rec.DefinitionHash || ev.Type != rec.NodeType {
		return nil
	}
	r.digest(rec)
	if ev.Params != rec.ParamsHash || ev.Input != rec.InputHash {
		return nil
	}
	out := ev.Outputs()
	if out == nil {
		return nil
	}
	from := prior.RunID
	if ev.Source == runtime.SourceResumed && ev.From != "" {
		from = ev.From
	}
	return &runtime.StepRecord{Source: runtime.SourceResumed, SourceRun: from, Outputs: out, Action: ev.Action}
}

// cacheable reports whether the step cache may serve rec: the cache is on,
// and the step opts in (`cache: true`/a TTL) or its node type is pure and
// caches by default, and the step does not opt out (`cache: false`).
func (r *Run) cacheable(rec *runtime.StepRecord) bool {
	if r.opts.Cache == nil || rec.Kind != runtime.KindNode {
		return false
	}
	if rec.Cache.Set {
		return rec.Cache.On
	}
	return rec.Effects.Pure && rec.Effects.Cache
}

func (r *Run) cacheTTL(rec *runtime.StepRecord) time.Duration {
	if rec.Cache.TTL > 0 {
		return rec.Cache.TTL
	}
	if r.opts.CacheTTL > 0 {
		return r.opts.CacheTTL
	}
	return DefaultCacheTTL
}

// cacheKey is node type and version ⊕ effective params ⊕ input data.
func (r *Run) cacheKey(rec *runtime.StepRecord) string {
	return r.h.Strings("pflow-step-cache/"+FormatVersion, rec.NodeType, r.opts.Version, rec.ParamsHash, rec.InputHash)
}

// digest fills rec's params and input digests (once).
func (r *Run) digest(rec *runtime.StepRecord) {
	if rec.ParamsHash == "" && rec.Params != nil {
		rec.ParamsHash = r.h.Params(rec.Params, rec.TemplateEnv, rec.WorkflowDir)
	}
	if rec.InputHash == "" && rec.Fingerprint != "" {
		rec.InputHash = r.h.Strings(rec.Fingerprint)
	}
}

// definition digests the step as written: its type, params and input
// mappings (not its batch settings or output mappings, which do not change
// what one execution does).
func (r *Run) definition(rec *runtime.StepRecord) string {
	if rec.Node == nil {
		return ""
	}
	r.defMu.Lock()
	defer r.defMu.Unlock()
	if d, ok := r.defHash[rec.Node]; ok {
		return d
	}
	def := map[string]any{"type": rec.Node.Type, "params": rec.Node.Params}
	if rec.Mapping != nil && len(rec.Mapping.InputMappings) > 0 {
		im := map[string]any{}
		for k, v := range rec.Mapping.InputMappings {
			im[k] = v
		}
		def["input_mappings"] = im
	}
	d := r.h.Value(def)
	r.defHash[rec.Node] = d
	return d
}

// ---- the writer ----

// enqueue hands an event to the writer; with wait, it returns once the event
// is written (or writing has failed).
func (r *Run) enqueue(p pending, wait bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing || r.failed != nil {
		return
	}
	for len(r.queue) >= maxPending && r.failed == nil {
		r.done.Wait()
	}
	r.seq++
	p.seq = r.seq
	r.queue = append(r.queue, p)
	// The writer collects events for up to linger; one that a step waits
	// for (the start of a step with side effects) and a long queue wake it
	// at once.
	if wait || len(r.queue) >= wakeAt {
		r.signal()
	}
	for wait && r.written < p.seq && r.failed == nil {
		r.done.Wait()
	}
}

// signal wakes the writer.
func (r *Run) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Run) writer() {
	defer close(r.finished)
	enc := newEncoder(r.opts.Redactor)
	var buf []byte
	tick := time.NewTicker(linger)
	defer tick.Stop()
	for {
		r.mu.Lock()
		idle := !r.closing && len(r.queue) < wakeAt
		r.mu.Unlock()
		if idle {
			select {
			case <-r.wake:
			case <-tick.C:
			}
		}
		r.mu.Lock()
		batch := r.queue
		r.queue, r.spare = r.spare[:0], nil
		closing := r.closing
		r.mu.Unlock()
		if len(batch) > 0 {
			// Written in chunks of about writeChunk bytes: the buffer is
			// reused from one wake-up to the next instead of growing to
			// the size of a whole batch's events.
			buf = buf[:0]
			var err error
			for i := range batch {
				buf = r.appendEvent(buf, enc, &batch[i])
				if len(buf) >= writeChunk {
					if _, werr := r.f.Write(buf); werr != nil && err == nil {
						err = werr
					}
					buf = buf[:0]
				}
			}
			if len(buf) > 0 {
				if _, werr := r.f.Write(buf); werr != nil && err == nil {
					err = werr
				}
			}
			r.mu.Lock()
			if err != nil && r.failed == nil {
				r.failed = err
				fmt.Fprintf(r.log, "Warning: could not write the record of run %s (%v); the run goes on, but resuming it may run steps again\n", r.ID, err)
			}
			r.written = batch[len(batch)-1].seq
			clear(batch)
			r.spare = batch[:0]
			r.done.Broadcast()
			r.mu.Unlock()
			if cap(buf) > 4*writeChunk {
				buf = nil // one huge event: don't keep its buffer
			}
		}
		if closing && len(batch) == 0 {
			return
		}
	}
}

// appendEvent encodes one event as a line.
func (r *Run) appendEvent(b []byte, enc *encoder, p *pending) []byte {
	rec := p.rec
	b = append(b, `{"ev":`...)
	b = appendString(b, p.ev)
	b = append(b, `,"path":`...)
	b = appendString(b, rec.Path)
	b = append(b, `,"node":`...)
	b = appendString(b, rec.NodeID)
	b = append(b, `,"type":`...)
	b = appendString(b, rec.NodeType)
	if rec.Kind != runtime.KindNode && rec.Kind != "" {
		b = append(b, `,"kind":`...)
		b = appendString(b, rec.Kind)
	}
	b = append(b, `,"occ":`...)
	b = strconv.AppendInt(b, int64(rec.Occurrence), 10)
	b = append(b, `,"item":`...)
	b = strconv.AppendInt(b, int64(rec.Item), 10)
	if rec.SafeToRepeat() {
		b = append(b, `,"safe":true`...)
	}
	if p.ev == evStart {
		b = append(b, `,"t":`...)
		b = strconv.AppendInt(b, time.Now().UnixMicro(), 10)
		return append(b, "}\n"...)
	}
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, rec.Started.UnixMicro(), 10)
	b = append(b, `,"us":`...)
	b = strconv.AppendInt(b, rec.Duration.Microseconds(), 10)
	b = append(b, `,"status":`...)
	b = appendString(b, rec.Status)
	b = append(b, `,"action":`...)
	b = appendString(b, rec.Action)
	if rec.Error != "" {
		b = append(b, `,"error":`...)
		b = appendString(b, r.opts.Redactor.String(rec.Error))
	}
	if rec.Attempts > 0 {
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(rec.Attempts), 10)
	}
	if rec.Kind == runtime.KindNode {
		r.digest(rec)
		def := rec.DefinitionHash
		if def == "" {
			def = r.definition(rec)
		}
		b = append(b, `,"def":`...)
		b = appendString(b, def)
		if rec.ParamsHash != "" {
			b = append(b, `,"params":`...)
			b = appendString(b, rec.ParamsHash)
		}
		if rec.InputHash != "" {
			b = append(b, `,"input":`...)
			b = appendString(b, rec.InputHash)
		}
	}
	if rec.Source != "" {
		b = append(b, `,"source":`...)
		b = appendString(b, rec.Source)
		if rec.SourceRun != "" {
			b = append(b, `,"from":`...)
			b = appendString(b, rec.SourceRun)
		}
	}
	if rec.Batch != nil {
		b = append(b, `,"batch":`...)
		b = enc.value(b, batchValue(rec.Batch))
	}
	if rec.Outputs != nil {
		b = append(b, `,"out":`...)
		start := len(b)
		enc.changed = false
		b = enc.value(b, rec.Outputs)
		why := ""
		switch {
		case enc.changed:
			why = "its outputs hold a secret value, which is never written"
		case len(b)-start > MaxOutputBytes:
			why = fmt.Sprintf("its outputs are larger than %d MiB", MaxOutputBytes>>20)
			b = enc.value(b[:start], preview(rec.Outputs, previewString))
		}
		if why == "" && rec.Kind == runtime.KindNode {
			if p.put {
				r.cachePut(rec, b[start:])
			}
			b = append(b, `,"full":true`...)
		} else if why != "" {
			b = append(b, `,"why":`...)
			b = appendString(b, why)
		}
	}
	return append(b, "}\n"...)
}

func (r *Run) cachePut(rec *runtime.StepRecord, out []byte) {
	info := map[string]string{"node_type": rec.NodeType, "step": rec.Path, "workflow": r.Meta.Workflow.Name, "run": r.ID}
	if err := r.opts.Cache.Put(r.cacheKey(rec), out, rec.Action, r.cacheTTL(rec), info); err != nil {
		fmt.Fprintf(r.log, "Warning: could not store step '%s' in the step cache: %v\n", rec.Path, err)
	}
}

// batchValue is a batch summary as an event keeps it (the first failed items).
func batchValue(s *runtime.BatchSummary) map[string]any {
	m := map[string]any{"total": int64(s.Total), "success": int64(s.Success), "failed": int64(s.Failed), "parallel": s.Parallel}
	if len(s.Errors) > 0 {
		var errs []any
		for i, e := range s.Errors {
			if i == batchErrorsKept {
				break
			}
			errs = append(errs, map[string]any{"index": int64(e.Index), "error": e.Error})
		}
		m["errors"] = errs
	}
	return m
}

func decodeOutputs(b []byte) map[string]any {
	ev := Event{Out: b}
	return ev.Outputs()
}

// ---- the end ----

// Counts returns how many node executions ran, were re-used from the
// resumed run, and were served from the cache.
func (r *Run) Counts() (ran, resumed, cached int) {
	return int(r.ran.Load()), int(r.resumed.Load()), int(r.cached.Load())
}

// Close writes every pending event and the run's status, and releases its
// lock. res may be nil (the run did not start).
func (r *Run) Close(res *runtime.Result, tracePath string) error {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.signal()
	<-r.finished
	// Not flushed to the disk (see fsutil.ReplaceFile): a killed pflow
	// leaves every line it wrote; only a power loss can drop the newest.
	r.f.Close()
	st := &Status{Ended: r.store.now(), TracePath: tracePath}
	st.Ran, st.Resumed, st.Cached = r.Counts()
	if r.failed != nil {
		st.RecordIncomplete = r.failed.Error()
	}
	if res != nil {
		st.Status = res.Status
		if res.Interrupted {
			st.Status = "interrupted"
		}
		st.DurationMS = float64(res.Duration.Microseconds()) / 1000
		if fl := res.Failure; fl != nil && !res.Success() {
			st.FailedStep, st.Category = fl.NodeID, fl.Category
			st.Error = r.opts.Redactor.String(fl.Message)
		}
	} else {
		st.Status = runtime.RunFailed
	}
	// A value may have become known as a secret only during the run (a
	// nested workflow's secret-named input fed from a plain one): mask what
	// was written before that. Nothing to do when no secret was added.
	if r.opts.Redactor.Generation() != r.redGen {
		for _, name := range []string{metaFile, stepsFile, irFile, sourceFile} {
			rescrub(filepath.Join(r.dir, name), r.opts.Redactor)
		}
	}
	err := writeJSON(filepath.Join(r.dir, statusFile), st)
	r.lock.Unlock()
	return err
}

// rescrub rewrites path atomically with every secret the redactor now knows
// masked, when any appears in it.
func rescrub(path string, red *trace.Redactor) {
	if red == nil {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if clean := red.String(string(data)); clean != string(data) {
		_ = fsutil.ReplaceFile(path, []byte(clean), 0o600)
	}
}
