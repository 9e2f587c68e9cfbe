package runs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
)

// Reservation is a run's directory made ahead, before the run is known to
// happen: its directory (a spare's, or a new one), its lock and its files,
// opened and empty. A caller that will probably record a run reserves as
// soon as it starts, so that this work, a dozen file operations, overlaps
// the workflow's checks instead of delaying the start of its first step
// with side effects (which waits for the record to exist). A run made with
// Options.Reserved fills it; one that does not happen releases it.
type Reservation struct {
	ID      string
	Started time.Time
	store   *Store
	dir     string
	done    chan struct{}
	used    atomic.Bool

	// Set before done is closed.
	err                             error
	lock                            *fsutil.Lock
	steps, meta, status, ir, source *os.File
}

// Reserve starts making a run's directory (see Reservation) and returns at
// once.
func (s *Store) Reserve() *Reservation {
	now := s.now()
	res := s.reservation(NewID(now), now)
	go func() {
		defer close(res.done)
		res.err = res.make()
	}()
	return res
}

// reservation is a Reservation of run id, not yet made (see make).
func (s *Store) reservation(id string, started time.Time) *Reservation {
	return &Reservation{ID: id, Started: started, store: s, dir: s.dir(id), done: make(chan struct{})}
}

// make creates the directory (or claims a spare), takes the lock and opens
// the files — steps.jsonl, the workflow's copies, and the temp files of
// run.json and status.json, renamed into place when the run starts and
// ends (one that never does leaves them empty, in a directory that is not
// a run); on failure it leaves nothing behind.
func (res *Reservation) make() (err error) {
	s := res.store
	if !s.claimSpare(res.dir) {
		err = os.Mkdir(res.dir, 0o700)
		if errors.Is(err, fs.ErrNotExist) {
			// The runs directory is made by Key, unless removed since.
			if err = os.MkdirAll(filepath.Dir(res.dir), 0o700); err == nil {
				err = os.Mkdir(res.dir, 0o700)
			}
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", res.dir, err) // never another run's directory
		}
	}
	defer func() {
		if err != nil {
			res.close()
			os.RemoveAll(res.dir)
		}
	}()
	if res.lock, err = fsutil.LockFile(context.Background(), filepath.Join(res.dir, lockBase), time.Second); err != nil {
		return err
	}
	if res.steps, err = openNew(filepath.Join(res.dir, stepsFile), os.O_APPEND); err != nil {
		return err
	}
	if res.meta, err = openNew(filepath.Join(res.dir, metaTemp), 0); err != nil {
		return err
	}
	res.status, _ = openNew(filepath.Join(res.dir, statusTemp), 0)
	// Opened now, written (or removed, when the run has none) by setup.
	res.ir, _ = openNew(filepath.Join(res.dir, irFile), 0)
	res.source, _ = openNew(filepath.Join(res.dir, sourceFile), 0)
	return nil
}

// close closes the files and releases the lock.
func (res *Reservation) close() {
	for _, f := range []**os.File{&res.steps, &res.meta, &res.status, &res.ir, &res.source} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	if res.lock != nil {
		res.lock.Unlock()
		res.lock = nil
	}
}

// ready reports whether the reservation is made (successfully).
func (res *Reservation) ready() bool {
	if res == nil {
		return false
	}
	select {
	case <-res.done:
		return res.err == nil
	default:
		return false
	}
}

// take hands the reservation to a run (once): false when it was released
// or taken before.
func (res *Reservation) take() bool { return res != nil && res.used.CompareAndSwap(false, true) }

// Release gives back a reservation no run took: its directory, whose files
// are still empty, becomes a spare for the next run (or is removed when
// the spare slots are full). It is a no-op once a run took it, and safe to
// call more than once.
func (res *Reservation) Release() {
	if !res.take() {
		return
	}
	<-res.done
	if res.err != nil {
		return
	}
	res.close()
	if !res.store.place(res.dir) {
		os.RemoveAll(res.dir)
	}
}
