package runs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
)

// Standby is a reservation made ahead for a long-lived process's next run
// (pflow mcp serve makes it after answering, off any run's path): the
// directory, its lock and its files, open and empty, under a hidden name
// (.standby-…) until a run takes it with one rename to its id. A run that
// reserves with Store.Reserve starts that work when it starts, on another
// goroutine, and its first step with side effects waits for it; a run that
// takes a standby has it at once.
//
// A standby holds its lock, so no other process removes it; one left by a
// killed process (its lock free) is removed by retention once it is older
// than staleSpare, as a spare being made is.
type Standby struct {
	mu  sync.Mutex
	res *Reservation
}

// standbyPrefix names a standby directory.
const standbyPrefix = ".standby-"

// Take returns the standby for a run of s starting now, renamed to the
// run's new id, or nil when there is none (or it cannot be moved: it is
// then given back as a spare, or removed). The next one is made by Refill.
func (sb *Standby) Take(s *Store) *Reservation {
	if sb == nil {
		return nil
	}
	sb.mu.Lock()
	res := sb.res
	sb.res = nil
	sb.mu.Unlock()
	if res == nil {
		return nil
	}
	if res.store.Dir != s.Dir {
		res.Release()
		return nil
	}
	now := s.now()
	id := NewID(now)
	dir := s.dir(id)
	if err := os.Rename(res.dir, dir); err != nil {
		res.Release()
		return nil
	}
	res.ID, res.Started, res.dir = id, now, dir
	return res
}

// Refill makes the standby for s's next run when there is none: in a spare
// when there is one (see spare.go), else new. It reports whether one is
// ready.
func (sb *Standby) Refill(s *Store) bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.res != nil {
		return true
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return false
	}
	var b [4]byte
	rand.Read(b[:])
	res := s.reservation("", time.Time{})
	res.dir = filepath.Join(s.Dir, standbyPrefix+hex.EncodeToString(b[:]))
	res.err = res.make()
	close(res.done)
	if res.err != nil {
		return false
	}
	sb.res = res
	return true
}

// Close gives back the standby (a spare, or removed), when the process
// ends.
func (sb *Standby) Close() {
	if sb == nil {
		return
	}
	sb.mu.Lock()
	res := sb.res
	sb.res = nil
	sb.mu.Unlock()
	if res != nil {
		res.Release()
	}
}

// staleStandby reports whether e is a standby a killed process left: older
// than staleSpare, its lock free (a live process holds its standby's).
func (s *Store) staleStandby(e fs.DirEntry) bool {
	if !strings.HasPrefix(e.Name(), standbyPrefix) {
		return false
	}
	info, err := e.Info()
	if err != nil || time.Since(info.ModTime()) <= staleSpare {
		return false
	}
	lk, ok, err := fsutil.TryLockFile(filepath.Join(s.Dir, e.Name(), lockBase))
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	if !ok {
		return false
	}
	lk.Unlock()
	return true
}
