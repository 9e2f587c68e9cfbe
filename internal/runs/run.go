package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/stephash"
)

// Limits of what one event keeps.
const (
	// MaxOutputBytes is the largest encoded outputs an event keeps in full;
	// larger ones are kept as a bounded preview, and the step cannot be
	// re-used by a resume.
	MaxOutputBytes = 4 << 20
	// previewString bounds strings in a preview, as traces do.
	previewString = 10000
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
	// MakeIR, when IR is nil, makes it on the setup goroutine, off the
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

// Run is a run being recorded. It implements runtime.Journal (journal.go):
// what it keeps of each step is written to steps.jsonl by the step's own
// goroutine before Begin or End returns (writer.go); Close writes the
// run's status (ending.go).
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

	ran, resumed, cached atomic.Int64
	// derived counts the completed executions of pure nodes left out of
	// the record (see derivable).
	derived atomic.Int64

	// The writer (writer.go): one event at a time, under mu.
	mu     sync.Mutex
	enc    *encoder
	buf    []byte
	f      *os.File // steps.jsonl
	closed bool
	failed error // the first write error: the run goes on unrecorded

	// The record's files, made by setup (beside the run, or in Prepare
	// when its directory was reserved ahead).
	status *os.File // status.json's temp file
	meta   *os.File // run.json's temp file, until the run starts
	// started is closed by Start, aborted by Abort (see Prepare).
	started, aborted chan struct{}
	startOnce        sync.Once
	syncSetup        bool
	// setupDone is closed once setup has ended; setupErr is then set when
	// the record could not be made (the run goes on unrecorded).
	setupDone chan struct{}
	setupErr  error
	// made is set once the record's files are known to be made (run.json
	// in place): Close cannot return ErrNotRecorded.
	made atomic.Bool
}

// Create starts the record of a run and returns at once: the run's id is
// chosen here, and its directory, lock, run.json and workflow copies are
// created by a goroutine beside the run (on a file system where creating a
// file costs a millisecond that matters). No event is written before them,
// so a step whose start is written (one with side effects) waits for the
// record to exist. When they cannot be created the run
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
		redGen:  redGen,
		started: make(chan struct{}), aborted: make(chan struct{})}
	if r.log == nil {
		r.log = io.Discard
	}
	r.enc = newEncoder(o.Redactor)
	r.setupDone = make(chan struct{})
	if o.Reserved.ready() {
		// Nothing to wait for: the files are written now, and run.json
		// takes its name in Start, on the run's goroutine.
		r.syncSetup = true
		if err := r.setupFiles(); err != nil {
			r.syncSetup = false
			r.setupEnded(err)
		}
	} else {
		go func() { r.setupEnded(r.setup()) }()
	}
	return r, nil
}

// setupEnded records setup's outcome and lets events be written (or
// dropped, when the record could not be made).
func (r *Run) setupEnded(err error) {
	if err != nil && err != errAborted {
		fmt.Fprintf(r.log, "Warning: this run is not recorded (%v); it cannot be resumed\n", err)
	}
	r.setupErr = err
	r.made.Store(err == nil)
	close(r.setupDone)
}

// Start makes a prepared run a run: run.json is written (beside the run,
// before any of its events).
func (r *Run) Start() {
	r.startOnce.Do(func() {
		close(r.started)
		if r.syncSetup {
			r.setupEnded(r.setupFinish())
		}
	})
}

// Abort removes a prepared run that did not start, once its files are
// made, and releases its lock. It returns when they are gone.
func (r *Run) Abort() {
	r.startOnce.Do(func() {
		close(r.aborted)
		if r.syncSetup {
			r.setupEnded(r.setupFailed(errAborted))
		}
	})
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	<-r.setupDone
}

// errAborted ends the setup of a run that was aborted.
var errAborted = errors.New("aborted")

// ErrNotRecorded is returned by Close when the run's record could not be
// created (its directory, lock or run.json): the run has no record.
var ErrNotRecorded = errors.New("the run is not recorded")

// setup creates the run's directory, takes its lock, writes the workflow
// and run.json (renamed into place last, once the run starts: a directory
// without it is not listed as a run) and opens steps.jsonl. It runs on its
// own goroutine beside the run; no event is written before it ends (see
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
	meta, err := encodeMeta(r.Meta)
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
