package library

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/pflow-go/pflow/internal/pferr"
)

// History gathers the run history of saved workflows in a long-lived
// process (pflow mcp serve) and writes it a while after the runs: a saved
// workflow's metadata lives in its file, and rewriting the file (atomic and
// flushed to the disk) cost a run through the hub more than its own work,
// and made the next run parse the workflow again. Runs of one workflow
// within Delay of the first make one write; a reader of the history in the
// same process calls Flush first, and the process calls it before it ends.
// A crash loses the history of the runs not yet written (their run records,
// under runs/, are kept).
type History struct {
	lib   *Library
	delay time.Duration
	log   io.Writer

	flushing sync.Mutex // one flush at a time: a workflow's runs are written in order
	mu       sync.Mutex
	pending  map[string][]RunStat
	timer    *time.Timer
}

// NewHistory returns a History writing to lib, delay after the first run
// it holds; warnings go to log.
func NewHistory(lib *Library, delay time.Duration, log io.Writer) *History {
	if log == nil {
		log = io.Discard
	}
	return &History{lib: lib, delay: delay, log: log, pending: map[string][]RunStat{}}
}

// Add holds a successful run of saved workflow name (params sanitized, see
// SanitizeParams) until the next Flush.
func (h *History) Add(name string, r RunStat) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pending[name] = append(h.pending[name], r)
	if h.timer == nil {
		h.timer = time.AfterFunc(h.delay, h.Flush)
	}
}

// Flush writes every run held so far. It is safe on a nil History.
func (h *History) Flush() {
	if h == nil {
		return
	}
	h.flushing.Lock()
	defer h.flushing.Unlock()
	h.mu.Lock()
	pending := h.pending
	h.pending = map[string][]RunStat{}
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	h.mu.Unlock()
	for name, runs := range pending {
		err := h.lib.RecordRuns(context.Background(), name, runs)
		var pe *pferr.Error
		if err != nil && !(errors.As(err, &pe) && pe.Kind == pferr.NotFound) { // deleted since: nothing to keep
			fmt.Fprintf(h.log, "Warning: could not update the run history of '%s': %v\n", name, err)
		}
	}
}
