package app

import "sync"

// Afterwards runs the work a long-lived process (pflow mcp serve) does
// after a run has its answer — writing its trace and the end of its record
// (every step's end is written before), applying the retention settings to
// traces and run records — on one goroutine, in order, so the agent gets
// the result without waiting for it (see docs/decisions.md, "Warm sessions in
// long-lived processes"). Readers of what that work
// writes (trace_read, the run listings, a resume) call Settle first, so in
// this process they always see it done. (A saved workflow's run history
// is gathered a second longer, see library.History.) The one-shot CLI has
// none: the work is done before the run returns.
type Afterwards struct {
	mu           sync.Mutex
	queue        []func()
	busy         bool
	queued, done uint64 // jobs queued and finished so far
	settled      *sync.Cond
	// tracesUnpruned counts traces written since the last prune (see
	// App.pruneTraces; only the jobs touch it, one at a time).
	tracesUnpruned int
	// runsUnpruned counts run records made since the last prune of the
	// run store (see App.pruneRunsLater).
	runsUnpruned int
}

// NewAfterwards returns an empty queue.
func NewAfterwards() *Afterwards {
	w := &Afterwards{}
	w.settled = sync.NewCond(&w.mu)
	return w
}

// Do queues f.
func (w *Afterwards) Do(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = append(w.queue, f)
	w.queued++
	if !w.busy {
		w.busy = true
		go w.drain()
	}
}

func (w *Afterwards) drain() {
	w.mu.Lock()
	for len(w.queue) > 0 {
		f := w.queue[0]
		w.queue = w.queue[1:]
		w.mu.Unlock()
		f()
		w.mu.Lock()
		w.done++
		w.settled.Broadcast()
	}
	w.busy = false
	w.mu.Unlock()
}

// Settle waits until everything queued so far is done (not what is queued
// while it waits: a busy server does not keep a reader waiting).
func (w *Afterwards) Settle() {
	w.mu.Lock()
	for target := w.queued; w.done < target; {
		w.settled.Wait()
	}
	w.mu.Unlock()
}

// later runs f after the run has answered in a long-lived process, now
// otherwise.
func (a *App) later(f func()) {
	if a.Afterwards == nil {
		f()
		return
	}
	a.Afterwards.Do(f)
}

// settle waits for the work queued by later.
func (a *App) settle() {
	if a.Afterwards != nil {
		a.Afterwards.Settle()
	}
}
