package runs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/runtime"
	"github.com/pflow-go/pflow/internal/stephash"
	"github.com/pflow-go/pflow/internal/value"
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
	// linger is how long an event of a step that is safe to repeat may wait
	// before it is written (many events in one write instead of one write
	// per event); a crash can lose at most that much, and those steps run
	// again on resume. The writer wakes every wakeAt events to encode them
	// (so that little is left to do when the run ends) and writes when it
	// holds writeChunk bytes, when linger has passed, or when a step waits.
	linger = 20 * time.Millisecond
	wakeAt = 128
	// writeChunk is the size of one write to steps.jsonl; maxHeld how much
	// the writer holds, encoded, while the record's files are being made.
	writeChunk = 64 << 10
	maxHeld    = 4 << 20
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
	Redactor *redact.Redactor
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
	// Key is the store's digest key (nil: Create reads it).
	Key []byte
	// MakeIR, when IR is nil, makes it on the writer goroutine, off the
	// run's path (the workflow must not change while it runs); an empty
	// Meta.Workflow.Hash is then set to its SHA-256.
	MakeIR func() []byte
	// Reserved, when set, is the run's directory made ahead (Store.Reserve):
	// the run takes its id, start time, lock and files.
	Reserved *Reservation
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

	defHash sync.Map // *workflow.Node → its definition digest

	ran, resumed, cached atomic.Int64

	// queued is how many events wait for the writer; encs are encoders
	// for End (see preEncode).
	queued atomic.Int64
	encs   sync.Pool
	// stack holds batch items' events pushed without the lock (see push);
	// pushed counts them; shut is set once the record closes.
	stack  atomic.Pointer[stacked]
	pushed atomic.Int64
	shut   atomic.Bool

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
	urgent   bool // a step waits for its event to be written
	waiters  int  // producers waiting on done
	// idle is set by the writer while it holds nothing unwritten and the
	// record's files are made: an event a step waits for is then written
	// by the step's goroutine itself (writeInline), under mu, instead of
	// waking the writer and waiting to be woken (two hand-offs that cost
	// more than the write on a busy machine).
	idle      bool
	inlineEnc *encoder
	inlineBuf []byte
	f         *os.File
	setupErr  error // the record could not be created (see setup)
	// started is closed by Start, aborted by Abort (see Prepare).
	started, aborted chan struct{}
	startOnce        sync.Once
	status           *os.File // status.json's temp file, made by setup
	meta             *os.File // run.json's temp file, until the run starts
	// setupDone receives setup's outcome (nil: the record exists); when
	// the reservation was made already, setup runs on the caller's
	// goroutine: its files in Prepare, its end in Start (or Abort).
	setupDone chan error
	syncSetup bool
	// made is set once the record's files are known to be made (run.json
	// in place): Close cannot return ErrNotRecorded.
	made atomic.Bool
}

// pending is an event waiting for the writer.
type pending struct {
	ev  string
	rec *runtime.StepRecord
	seq uint64
	put bool // store the outputs in the step cache
	// line is the event already encoded (by End, when the writer was
	// behind); rec is then nil.
	line []byte
}

// Create starts the record of a run and returns at once: the run's id is
// chosen here, and its directory, lock, run.json and workflow copies are
// created by a goroutine beside the run (on a file system where creating a
// file costs a millisecond that matters). No event is written before them,
// so a step that waits for its start to be written (one with side effects)
// also waits for the record to exist. When they cannot be created the run
// goes on unrecorded: a warning is logged, the events are dropped, and
// Close returns ErrNotRecorded.
func (s *Store) Create(o Options) (*Run, error) {
	r, err := s.Prepare(o)
	if err != nil {
		return nil, err
	}
	r.Start()
	return r, nil
}

// Prepare is Create for a run that may not happen: its files are made
// meanwhile (while the workflow is checked), but run.json, which makes it
// a run, only after Start. Abort removes them.
func (s *Store) Prepare(o Options) (*Run, error) {
	redGen := o.Redactor.Generation() // before anything is written
	m := o.Meta
	if o.Reserved.take() {
		m.ID, m.Started = o.Reserved.ID, o.Reserved.Started
	} else {
		o.Reserved = nil // released already: the run makes its own
	}
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
	key := o.Key
	if key == nil {
		var err error
		if key, err = s.Key(); err != nil {
			return nil, err
		}
	}
	r := &Run{ID: m.ID, Meta: &m, store: s, dir: s.dir(m.ID), opts: o, h: stephash.New(key), log: o.Log,
		finished: make(chan struct{}), redGen: redGen,
		started: make(chan struct{}), aborted: make(chan struct{})}
	if r.log == nil {
		r.log = io.Discard
	}
	r.wake = make(chan struct{}, 1)
	r.done = sync.NewCond(&r.mu)
	r.setupDone = make(chan error, 1)
	if o.Reserved.ready() {
		// Nothing to wait for: the files are written now, and run.json
		// takes its name in Start, on the run's goroutine (no hand-off
		// between goroutines before the first step's start is written).
		r.syncSetup = true
		if err := r.setupFiles(); err != nil {
			r.setupDone <- err
			r.syncSetup = false
		}
	} else {
		go func() { r.setupDone <- r.setup() }()
	}
	go r.writer()
	return r, nil
}

// Start makes a prepared run a run: run.json is written (beside the run,
// before any of its events).
func (r *Run) Start() {
	r.startOnce.Do(func() {
		close(r.started)
		if !r.syncSetup {
			return
		}
		err := r.setupFinish()
		r.made.Store(err == nil)
		if err == nil {
			// The writer holds nothing yet: the first event a step waits
			// for is written by the step itself (writeInline).
			r.mu.Lock()
			r.idle = true
			r.mu.Unlock()
		}
		r.setupDone <- err
	})
}

// Abort removes a prepared run that did not start, once its files are
// made, and releases its lock. It returns when they are gone.
func (r *Run) Abort() {
	r.startOnce.Do(func() {
		close(r.aborted)
		if r.syncSetup {
			r.setupDone <- r.setupFailed(errAborted)
		}
	})
	r.shut.Store(true)
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.signal()
	<-r.finished
}

// errAborted ends the setup of a run that was aborted.
var errAborted = errors.New("aborted")

// ErrNotRecorded is returned by Close when the run's record could not be
// created (its directory, lock or run.json): the run has no record.
var ErrNotRecorded = errors.New("the run is not recorded")

// setup creates the run's directory, takes its lock, writes the workflow
// and run.json (renamed into place last, once the run starts: a directory
// without it is not listed as a run) and opens steps.jsonl. It runs on its
// own goroutine beside the writer, before any event is written (see
// Prepare for a run whose directory is reserved already).
func (r *Run) setup() error {
	if err := r.setupFiles(); err != nil {
		return err
	}
	select {
	case <-r.started:
		return r.setupFinish()
	case <-r.aborted:
		return r.setupFailed(errAborted)
	}
}

// setupFiles is setup until the run starts: the directory, its lock and
// the files, with the workflow's copies and run.json's content written.
func (r *Run) setupFiles() error {
	o := &r.opts
	// The directory, its lock and the files, empty: reserved ahead, or made
	// now the same way (in a spare, when there is one; see spare.go).
	res := o.Reserved
	if res == nil {
		res = r.store.reservation(r.ID, r.Meta.Started)
		res.err = res.make()
		close(res.done)
	}
	<-res.done
	if res.err != nil {
		return res.err
	}
	r.f, r.status, r.lock, r.meta = res.steps, res.status, res.lock, res.meta
	ir := o.IR
	if ir == nil && o.MakeIR != nil {
		ir = o.MakeIR()
		if r.Meta.Workflow.Hash == "" && ir != nil {
			sum := sha256.Sum256(ir)
			r.Meta.Workflow.Hash = hex.EncodeToString(sum[:])
		}
	}
	// The directory is new and run.json is renamed into place last: these
	// files need no temp file and rename (a reader never sees them half
	// written in a listed run, and a kill leaves a directory that is not
	// one).
	mask := o.Redactor.Masker()
	for i, f := range []struct {
		name string
		data []byte
		file *os.File // opened by the reservation (nil: not opened)
	}{{irFile, ir, res.ir}, {sourceFile, o.Source, res.source}} {
		path := filepath.Join(r.dir, f.name)
		var err error
		switch {
		case len(f.data) > 0 && f.file != nil:
			err = writeClose(f.file, path, mask.Bytes(f.data))
		case len(f.data) > 0:
			err = createFile(path, mask.Bytes(f.data))
		case f.file != nil:
			f.file.Close()
			os.Remove(path) // as a record without it
		}
		if err != nil {
			if i == 0 && res.source != nil {
				res.source.Close()
			}
			return r.setupFailed(err)
		}
	}
	res.ir, res.source = nil, nil
	// The run's description is complete when it is prepared: written now,
	// renamed into place when the run starts.
	meta, err := encodeJSON(r.Meta)
	if err == nil {
		_, err = r.meta.Write(meta)
	}
	if err != nil {
		return r.setupFailed(fmt.Errorf("write %s: %w", filepath.Join(r.dir, metaFile), err))
	}
	return nil
}

// setupFinish makes the prepared record a run: run.json takes its name.
func (r *Run) setupFinish() error {
	mf := r.meta
	r.meta = nil
	err := mf.Close()
	if err == nil {
		err = os.Rename(filepath.Join(r.dir, metaTemp), filepath.Join(r.dir, metaFile))
	}
	if err != nil {
		return r.setupFailed(fmt.Errorf("write %s: %w", filepath.Join(r.dir, metaFile), err))
	}
	return nil
}

// setupFailed closes what setup opened, releases the lock and removes the
// directory; it returns err.
func (r *Run) setupFailed(err error) error {
	for _, f := range []**os.File{&r.f, &r.status, &r.meta} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	if r.lock != nil {
		r.lock.Unlock()
	}
	r.lock = nil
	os.RemoveAll(r.dir)
	return err
}

// statusTemp is status.json while the run is in progress (empty).
const statusTemp = "." + statusFile + ".tmp"

// createFile writes data to a file of the run's new directory (one write;
// a spare's empty file is re-used).
func createFile(path string, data []byte) error {
	f, err := openNew(path, 0)
	if err != nil {
		return err
	}
	return writeClose(f, path, data)
}

// writeClose writes data to f, a new file of the run's directory at path,
// and closes it; on failure the file is removed.
func writeClose(f *os.File, path string, data []byte) error {
	_, err := f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// openNew opens a file of the run's new directory for writing, made when
// missing (a spare's files are there, and empty). It does not truncate: on
// ext4, a file truncated (even when already empty) is flushed to the disk
// when closed after a write, which costs more than the write (spare.go
// leaves its files empty without that mark); a file that is not empty is
// emptied after it is opened.
func openNew(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|flag, 0o600)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || st.Size() > 0 {
		if err == nil {
			err = f.Truncate(0)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
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
	if rec.Kind == runtime.KindNode && rec.Status != runtime.StatusSkipped {
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
	if !p.put && rec.Item >= 0 && rec.SafeToRepeat() && rec.Kind == runtime.KindNode && r.push(&p) {
		return
	}
	if !p.put && r.queued.Load() >= behindAt {
		// The writer is behind (steps end faster than one goroutine
		// encodes them): this goroutine encodes its own event, while its
		// data is still in its cache.
		r.preEncode(&p)
	}
	r.enqueue(p, sync)
}

// push hands the end of a batch item to the writer without the queue's
// lock: parallel items end many at a time, and queueing each behind one
// lock made them wait for each other (a parked goroutine per event). The
// item goes on a lock-free stack the writer empties; when the writer is
// behind, this goroutine encodes the event itself. Only an item safe to
// repeat comes here: it has no start event its end must follow. It returns
// false when the event should be queued as usual (the stack is full, or
// the record is closing).
func (r *Run) push(p *pending) bool {
	if r.shut.Load() {
		return false
	}
	n := r.pushed.Load()
	if n >= maxPending {
		return false
	}
	if n >= behindAt {
		r.preEncode(p)
	}
	e := &stacked{line: p.line, rec: p.rec}
	for {
		top := r.stack.Load()
		e.next = top
		if r.stack.CompareAndSwap(top, e) {
			break
		}
	}
	if r.pushed.Add(1) == wakeAt {
		r.signal()
	}
	return true
}

// stacked is an item's end on the lock-free stack (see push): encoded
// (line) or to encode (rec).
type stacked struct {
	line []byte
	rec  *runtime.StepRecord
	next *stacked
}

// popStack takes every event pushed so far, oldest first.
func (r *Run) popStack() []*stacked {
	top := r.stack.Swap(nil)
	if top == nil {
		return nil
	}
	out := make([]*stacked, 0, r.pushed.Load()+8)
	for n := top; n != nil; n = n.next {
		out = append(out, n)
	}
	r.pushed.Add(-int64(len(out)))
	slices.Reverse(out)
	return out
}

// behindAt is the queue length at which End encodes its event itself.
const behindAt = 2 * wakeAt

// preEncode encodes p's event into p.line, with a pooled encoder whose
// lines are cut from a shared slab (no allocation per event).
func (r *Run) preEncode(p *pending) {
	enc, _ := r.encs.Get().(*encoder)
	if enc == nil {
		enc = newEncoder(r.opts.Redactor)
	}
	if cap(enc.slab)-len(enc.slab) < slabMin {
		enc.slab = make([]byte, 0, slabSize)
	}
	start := len(enc.slab)
	enc.slab = r.appendEvent(enc.slab, enc, p)
	p.line = enc.slab[start:len(enc.slab):len(enc.slab)]
	if p.rec.Item >= 0 && p.rec.SafeToRepeat() {
		runtime.ReleaseRecord(p.rec) // Begin queued no start event with it
	}
	p.rec = nil
	r.encs.Put(enc)
}

// Encoders' slabs: lines already encoded are cut from slabSize bytes; a
// slab with less than slabMin left is replaced (the lines cut from it keep
// it until they are written).
const (
	slabSize = 64 << 10
	slabMin  = 4 << 10
)

// Reuses implements runtime.ReuseJournal: only a resume re-uses outcomes
// that depend on which upstream steps ran (the step cache does not).
func (r *Run) Reuses() bool { return r.opts.Resume != nil }

// reuse returns the resumed run's outcome of rec when it may be re-used: it
// completed with complete outputs, the step is unchanged (definition,
// effective params, input fingerprint) and no step it reads ran in this run.
func (r *Run) reuse(rec *runtime.StepRecord) *runtime.StepRecord {
	prior := r.opts.Resume
	if prior == nil || rec.UpstreamRan {
		return nil
	}
	ev := prior.end(keyOf(rec))
	if ev == nil || ev.Status != runtime.StatusCompleted || !ev.Full || ev.Type != rec.NodeType {
		return nil
	}
	if h := r.h.For(ev.Def); h != r.h {
		// Recorded by an earlier build, with its digests: compared with
		// digests of that kind (this run's record keeps its own).
		if ev.Def != r.definitionWith(h, rec) || ev.Params != h.Params(rec.Params, rec.TemplateEnv, rec.WorkflowDir) ||
			ev.Input != inputDigest(h, rec.Fingerprint) {
			return nil
		}
	} else {
		if ev.Def != rec.DefinitionHash {
			return nil
		}
		r.digest(rec)
		if ev.Params != rec.ParamsHash || ev.Input != rec.InputHash {
			return nil
		}
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
	if rec.InputHash == "" {
		rec.InputHash = inputDigest(r.h, rec.Fingerprint)
	}
}

// inputDigest is the digest of a step's input fingerprint ("" for none).
func inputDigest(h *stephash.Hasher, fingerprint string) string {
	if fingerprint == "" {
		return ""
	}
	return h.Strings(fingerprint)
}

// definition digests the step as written: its type, params and input
// mappings (not its batch settings or output mappings, which do not change
// what one execution does).
func (r *Run) definition(rec *runtime.StepRecord) string {
	if rec.Node == nil {
		return ""
	}
	if d, ok := r.defHash.Load(rec.Node); ok {
		return d.(string) // read without a lock: batch items share their step's
	}
	d := r.definitionWith(r.h, rec)
	r.defHash.Store(rec.Node, d)
	return d
}

// definitionWith is definition's digest computed by h (not cached).
func (r *Run) definitionWith(h *stephash.Hasher, rec *runtime.StepRecord) string {
	if rec.Node == nil {
		return ""
	}
	var im map[string]string
	if rec.Mapping != nil {
		im = rec.Mapping.InputMappings
	}
	return h.Definition(rec.Node.Type, rec.Node.Params, im)
}

// ---- the writer ----

// enqueue hands an event to the writer; with wait, it returns once the event
// is written (or writing has failed).
func (r *Run) enqueue(p pending, wait bool) {
	r.mu.Lock()
	r.enqueueLocked(p, wait)
}

// enqueueLocked is enqueue with r.mu held; it releases it.
func (r *Run) enqueueLocked(p pending, wait bool) {
	if r.closing || r.failed != nil {
		r.mu.Unlock()
		return
	}
	for len(r.queue) >= maxPending && r.failed == nil {
		r.waiters++
		r.done.Wait()
		r.waiters--
	}
	if wait && r.idle && r.written == r.seq && len(r.queue) == 0 && r.pushed.Load() == 0 {
		r.writeInline(p)
		r.mu.Unlock()
		return
	}
	r.seq++
	p.seq = r.seq
	r.queue = append(r.queue, p)
	r.queued.Store(int64(len(r.queue)))
	// The writer collects events for up to linger; one that a step waits
	// for (the start of a step with side effects) and every wakeAt events
	// wake it at once.
	if wait {
		r.urgent = true
		r.signal()
		for r.written < p.seq && r.failed == nil {
			r.waiters++
			r.done.Wait()
			r.waiters--
		}
		r.mu.Unlock()
		return
	}
	wake := len(r.queue) == wakeAt
	r.mu.Unlock()
	if wake {
		r.signal() // after Unlock: the writer's first move is to take the lock
	}
}

// writeInline writes p's event at once, with r.mu held (see Run.idle).
func (r *Run) writeInline(p pending) {
	if r.inlineEnc == nil {
		r.inlineEnc = newEncoder(r.opts.Redactor)
	}
	if p.line != nil {
		r.inlineBuf = append(r.inlineBuf[:0], p.line...)
	} else {
		r.inlineBuf = r.appendEvent(r.inlineBuf[:0], r.inlineEnc, &p)
	}
	r.seq++
	if err := r.write(r.inlineBuf, nil); err != nil {
		r.writeFailed(err)
	} else {
		r.written = r.seq
	}
	if p.ev == evEnd && p.rec != nil {
		runtime.ReleaseRecord(p.rec)
	}
	if cap(r.inlineBuf) > 4*writeChunk {
		r.inlineBuf = nil
	}
}

// writeFailed records the first write error (r.mu held): the run goes on
// unrecorded from here.
func (r *Run) writeFailed(err error) {
	r.failed = err
	fmt.Fprintf(r.log, "Warning: could not write the record of run %s (%v); the run goes on, but resuming it may run steps again\n", r.ID, err)
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
	// The record's files are made by another goroutine meanwhile: events
	// are encoded as they come, and written once run.json is there.
	setupDone := r.setupDone
	ready := false
	setupEnded := func(err error) bool {
		if err == nil {
			ready = true
			r.made.Store(true)
			return true
		}
		if err != errAborted {
			fmt.Fprintf(r.log, "Warning: this run is not recorded (%v); it cannot be resumed\n", err)
		}
		r.mu.Lock()
		r.setupErr, r.failed = err, err
		r.queue = nil
		r.queued.Store(0)
		r.done.Broadcast()
		r.mu.Unlock()
		return false
	}
	// awaitSetup waits for the files; false when they could not be made.
	awaitSetup := func() bool { return ready || setupEnded(<-setupDone) }
	// setupOver is awaitSetup without waiting: false while not done.
	setupOver := func() (done, ok bool) {
		if ready {
			return true, true
		}
		select {
		case err := <-setupDone:
			return true, setupEnded(err)
		default:
			return false, true
		}
	}
	enc := newEncoder(r.opts.Redactor)
	bp := writeBufs.Get().(*[]byte)
	buf := (*bp)[:0] // encoded events not yet written
	defer func() {
		if cap(buf) <= 4*writeChunk {
			*bp = buf[:0]
			writeBufs.Put(bp)
		}
	}()
	var encoded uint64 // the seq of the last event in buf
	var werr error     // the first write error
	// held are full buffers kept while the record's files are being made
	// (a list, not one buffer grown and copied), heldBytes their size.
	var held [][]byte
	heldBytes := 0
	writeHeld := func() {
		for _, h := range held {
			werr = r.write(h, werr)
		}
		held, heldBytes = nil, 0
	}
	// spill empties a full buf: written once the files are there, held
	// until then (waiting for them when maxHeld bytes are held). False when
	// the files could not be made.
	spill := func() bool {
		done, ok := setupOver()
		if !ok {
			return false
		}
		if !done && heldBytes >= maxHeld {
			if !awaitSetup() {
				return false
			}
			done = true
		}
		if done {
			writeHeld()
			werr = r.write(buf, werr)
			buf = buf[:0]
			return true
		}
		held = append(held, buf)
		heldBytes += len(buf)
		buf = make([]byte, 0, writeChunk+16<<10)
		return true
	}
	tick := time.NewTicker(linger)
	defer tick.Stop()
	for {
		ticked := false
		r.mu.Lock()
		idle := !r.closing && !r.urgent && len(r.queue) < wakeAt && r.pushed.Load() < wakeAt
		r.mu.Unlock()
		if idle {
			select {
			case <-r.wake:
			case <-tick.C:
				ticked = true
			}
		}
		// The stack first: an item pushed before it was taken was pushed
		// before anything queued after, which this batch takes too.
		popped := r.popStack()
		r.mu.Lock()
		r.idle = false
		batch := r.queue
		r.queue, r.spare = r.spare[:0], nil
		r.queued.Store(0)
		closing, urgent := r.closing, r.urgent
		r.urgent = false
		r.mu.Unlock()
		for _, n := range popped {
			if n.line != nil {
				buf = append(buf, n.line...)
			} else {
				buf = r.appendEvent(buf, enc, &pending{ev: evEnd, rec: n.rec})
				runtime.ReleaseRecord(n.rec) // an item safe to repeat: no start event
			}
			if len(buf) >= writeChunk && !spill() {
				return
			}
		}
		for i := range batch {
			if p := &batch[i]; p.line != nil {
				buf = append(buf, p.line...)
			} else {
				buf = r.appendEvent(buf, enc, p)
				if p.ev == evEnd {
					runtime.ReleaseRecord(p.rec) // its start, if any, was before it
				}
			}
			if len(buf) >= writeChunk && !spill() {
				return
			}
		}
		if len(batch) > 0 {
			encoded = batch[len(batch)-1].seq
		}
		// Written now: everything at the end of a linger (so nothing waits
		// longer), when a step waits for its event, and at the end.
		// A tick that came while the writer was busy counts too.
		if !ticked {
			select {
			case <-tick.C:
				ticked = true
			default:
			}
		}
		flush := ticked || urgent || closing
		if flush && !awaitSetup() {
			return
		}
		if flush {
			writeHeld()
			if len(buf) > 0 {
				werr = r.write(buf, werr)
				buf = buf[:0]
			}
		}
		clear(batch) // outside the lock: producers wait for none of this
		r.mu.Lock()
		if werr != nil && r.failed == nil {
			r.writeFailed(werr)
		}
		if len(buf) == 0 && len(held) == 0 && encoded > r.written {
			r.written = encoded
		}
		r.idle = ready && len(buf) == 0 && len(held) == 0 && !closing && r.failed == nil
		if r.waiters > 0 {
			r.done.Broadcast() // their event is written, or there is room in the queue
		}
		r.spare = batch[:0]
		r.mu.Unlock()
		if len(buf) == 0 && cap(buf) > 4*writeChunk {
			// One huge event, or what was held while the files were being
			// made: back to a buffer of the usual size.
			buf = make([]byte, 0, writeChunk+16<<10)
		}
		if closing && len(batch) == 0 && len(popped) == 0 {
			return
		}
	}
}

// writeBufs are the writers' buffers, kept from one run to the next.
var writeBufs = sync.Pool{New: func() any { b := make([]byte, 0, writeChunk+16<<10); return &b }}

// write writes encoded events to steps.jsonl; it returns the first error
// (err, or this write's).
func (r *Run) write(b []byte, err error) error {
	if _, werr := r.f.Write(b); werr != nil && err == nil {
		return werr
	}
	return err
}

// appendEvent encodes one event as a line.
func (r *Run) appendEvent(b []byte, enc *encoder, p *pending) []byte {
	rec := p.rec
	enc.mask = r.opts.Redactor.Masker() // the secrets known now (one lock, not one per string)
	b = append(b, `{"ev":`...)
	b = value.AppendJSONString(b, p.ev)
	b = append(b, `,"path":`...)
	b = value.AppendJSONString(b, rec.Path)
	b = append(b, `,"node":`...)
	b = value.AppendJSONString(b, rec.NodeID)
	b = append(b, `,"type":`...)
	b = value.AppendJSONString(b, rec.NodeType)
	if rec.Kind != runtime.KindNode && rec.Kind != "" {
		b = append(b, `,"kind":`...)
		b = value.AppendJSONString(b, rec.Kind)
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
	b = value.AppendJSONString(b, rec.Status)
	b = append(b, `,"action":`...)
	b = value.AppendJSONString(b, rec.Action)
	if rec.Error != "" {
		b = append(b, `,"error":`...)
		b = value.AppendJSONString(b, enc.mask.String(rec.Error))
	}
	if rec.Attempts > 0 {
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(rec.Attempts), 10)
	}
	if rec.Kind == runtime.KindNode {
		if p.put {
			r.digest(rec) // the cache key needs them
		}
		def := rec.DefinitionHash
		if def == "" {
			def = r.definition(rec)
		}
		b = append(b, `,"def":"`...)
		b = append(b, def...) // hex: nothing to escape
		b = append(b, '"')
		switch {
		case rec.ParamsHash != "":
			b = append(b, `,"params":"`...)
			b = append(b, rec.ParamsHash...)
			b = append(b, '"')
		case rec.Params != nil:
			b = append(b, `,"params":"`...)
			b = r.h.AppendParams(b, rec.Params, rec.TemplateEnv, rec.WorkflowDir)
			b = append(b, '"')
		}
		if rec.InputHash == "" && rec.Fingerprint != "" {
			rec.InputHash = r.h.Strings(rec.Fingerprint)
		}
		if rec.InputHash != "" {
			b = append(b, `,"input":"`...)
			b = append(b, rec.InputHash...)
			b = append(b, '"')
		}
	}
	if rec.Source != "" {
		b = append(b, `,"source":`...)
		b = value.AppendJSONString(b, rec.Source)
		if rec.SourceRun != "" {
			b = append(b, `,"from":`...)
			b = value.AppendJSONString(b, rec.SourceRun)
		}
	}
	if rec.Batch != nil {
		b = append(b, `,"batch":`...)
		b = enc.value(b, rec.Batch.Value(batchErrorsKept, false)) // the first failed items
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
			b = enc.value(b[:start], bounded(rec.Outputs, previewString))
		}
		if why == "" && rec.Kind == runtime.KindNode {
			if p.put {
				r.cachePut(rec, b[start:])
			}
			b = append(b, `,"full":true`...)
		} else if why != "" {
			b = append(b, `,"why":`...)
			b = value.AppendJSONString(b, why)
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

func decodeOutputs(b []byte) map[string]any {
	ev := Event{Out: b}
	return ev.Outputs()
}

// ---- the end ----

// Made reports whether the record is known to exist (its run.json is in
// place): Close then cannot return ErrNotRecorded. It does not wait.
func (r *Run) Made() bool { return r.made.Load() }

// Counts returns how many node executions ran, were re-used from the
// resumed run, and were served from the cache.
func (r *Run) Counts() (ran, resumed, cached int) {
	return int(r.ran.Load()), int(r.resumed.Load()), int(r.cached.Load())
}

// Close writes every pending event and the run's status, and releases its
// lock. res may be nil (the run did not start).
func (r *Run) Close(res *runtime.Result, tracePath string) error {
	r.shut.Store(true)
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.signal()
	<-r.finished
	if r.setupErr != nil {
		return ErrNotRecorded
	}
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
		if wt := res.Waiting; wt != nil && res.Status == runtime.RunWaiting {
			q := wt.Question
			q.Message = r.opts.Redactor.String(q.Message)
			st.WaitingStep, st.Question = wt.NodeID, &q
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
	err := r.writeStatus(st)
	r.lock.Unlock()
	return err
}

// writeStatus writes status.json: into the temp file setup made, renamed
// into place (readers see no status or all of it).
func (r *Run) writeStatus(st *Status) error {
	path := filepath.Join(r.dir, statusFile)
	if r.status == nil {
		return writeJSON(path, st)
	}
	f := r.status
	r.status = nil
	data, err := encodeJSON(st)
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(filepath.Join(r.dir, statusTemp), path)
	}
	if err != nil {
		os.Remove(filepath.Join(r.dir, statusTemp))
		return writeJSON(path, st)
	}
	return nil
}

// rescrub rewrites path atomically with every secret the redactor now knows
// masked, when any appears in it.
func rescrub(path string, red *redact.Redactor) {
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
