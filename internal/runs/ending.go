package runs

import (
	"os"
	"path/filepath"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/runtime"
)

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
	r.mu.Lock()
	r.closed = true // every event is written: write holds mu until it is
	r.mu.Unlock()
	<-r.setupDone
	if r.setupErr != nil {
		return ErrNotRecorded
	}
	// Not flushed to the disk (see fsutil.ReplaceFile): a killed pflow
	// leaves every line it wrote; only a power loss can drop the newest.
	r.f.Close()
	st := &Status{Ended: r.store.now(), TracePath: tracePath}
	st.Ran, st.Resumed, st.Cached = r.Counts()
	st.Derived = int(r.derived.Load())
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
