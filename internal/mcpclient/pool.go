package mcpclient

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/proc"
)

// DefaultIdleTimeout is how long a pooled session may stay unused before
// its server is stopped.
const DefaultIdleTimeout = 5 * time.Minute

// pingAfter is how long a pooled session may sit unused before it is
// pinged, instead of trusted, on its next use.
const pingAfter = 30 * time.Second

// Pool keeps MCP sessions open across the runs of a long-lived pflow
// process (pflow mcp serve; see docs/decisions.md, "Warm sessions in long-lived
// processes"), so a workflow's MCP calls do not pay
// for starting their servers on every run and stateful servers (a browser,
// a database connection) keep their state. Sessions are keyed by server
// name and expanded config: a changed config (or a changed variable it
// reads) replaces the session. Concurrent runs share one session (see
// docs/decisions.md, "One MCP session per server per run"). A
// session that died (its server crashed or was stopped after a timeout) is
// replaced on its next use; one unused for IdleTimeout is closed, as is one
// whose server exited. Close stops every server the pool started and every
// process they started (they carry the pool's run token, not a run's: a
// run's end does not stop them). A server whose config says
// "keep_alive": false is never pooled.
type Pool struct {
	idle time.Duration
	log  io.Writer

	base    context.Context // carries the pool's process tracker
	tracker *proc.Tracker

	mu      sync.Mutex
	entries map[string]*poolEntry
	closed  bool
}

type poolEntry struct {
	name     string
	hash     string
	sess     *Session
	refs     int
	lastUsed time.Time
	retired  bool          // replaced or dropped: closed when its last user releases it
	ready    chan struct{} // closed when the connect in progress ended
	idle     *time.Timer
}

// NewPool returns an empty pool; idle <= 0 means DefaultIdleTimeout.
func NewPool(idle time.Duration, log io.Writer) *Pool {
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	if log == nil {
		log = io.Discard
	}
	base, tracker := proc.Track(context.Background())
	return &Pool{idle: idle, log: log, base: base, tracker: tracker, entries: map[string]*poolEntry{}}
}

// Acquire returns a live session to srv's server, starting it when the pool
// has none (or only a dead or outdated one), and a release func to call
// once the caller is done with it (the session stays open for the next
// caller). ctx bounds the start-up only.
func (p *Pool) Acquire(ctx context.Context, srv *Server) (*Session, func(), error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, nil, pferr.Newf(pferr.Execution, "MCP session with server %s is closed (pflow is shutting down)", srv.Name)
		}
		e := p.entries[srv.Name]
		if e != nil && e.ready != nil {
			ready := e.ready
			p.mu.Unlock()
			select {
			case <-ready:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			continue
		}
		if e != nil && (e.hash != srv.poolHash() || e.sess.Dead()) {
			p.retireLocked(e)
			e = nil
		}
		if e != nil {
			if e.refs == 0 && time.Since(e.lastUsed) > pingAfter {
				// Unused for a while: make sure the server still answers.
				e.refs++ // keep the idle timer off it while we ask
				p.mu.Unlock()
				pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				err := e.sess.cs.Ping(pctx, &mcp.PingParams{})
				cancel()
				p.mu.Lock()
				e.refs--
				if err != nil {
					e.sess.setDead(pferr.Newf(pferr.Execution, "MCP server %s did not answer a ping after %s unused", srv.Name, time.Since(e.lastUsed).Round(time.Second)))
					p.retireLocked(e)
					p.mu.Unlock()
					continue
				}
				if e.retired {
					// Replaced while we pinged (its config changed): close it
					// if nobody else holds it, and take the new one.
					if e.refs == 0 && e.sess != nil {
						go e.sess.Close()
					}
					p.mu.Unlock()
					continue
				}
			}
			e.refs++
			if e.idle != nil {
				e.idle.Stop()
			}
			p.mu.Unlock()
			return e.sess, p.releaser(e), nil
		}
		// Start it; concurrent acquirers wait for this connect.
		e = &poolEntry{name: srv.Name, hash: srv.poolHash(), ready: make(chan struct{})}
		p.entries[srv.Name] = e
		p.mu.Unlock()

		cctx, cancel := context.WithCancel(p.base)
		stop := context.AfterFunc(ctx, cancel)
		sess, err := Connect(cctx, srv, p.log)
		stop()
		cancel()

		p.mu.Lock()
		close(e.ready)
		e.ready = nil
		if err != nil {
			if p.entries[srv.Name] == e {
				delete(p.entries, srv.Name)
			}
			p.mu.Unlock()
			return nil, nil, err
		}
		e.sess = sess
		e.refs = 1
		if p.closed {
			p.mu.Unlock()
			sess.Close()
			return nil, nil, pferr.Newf(pferr.Execution, "MCP session with server %s is closed (pflow is shutting down)", srv.Name)
		}
		p.mu.Unlock()
		if sess.proc != nil {
			go p.watchExit(e, sess.proc.done)
		}
		return sess, p.releaser(e), nil
	}
}

// releaser returns the release func of one Acquire (idempotent).
func (p *Pool) releaser(e *poolEntry) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			e.refs--
			e.lastUsed = time.Now()
			if e.refs > 0 {
				return
			}
			if e.retired || p.closed {
				go e.sess.Close()
				return
			}
			if e.idle != nil {
				e.idle.Stop()
			}
			e.idle = time.AfterFunc(p.idle, func() { p.expire(e) })
		})
	}
}

// expire closes e when it is still unused after the idle timeout.
func (p *Pool) expire(e *poolEntry) {
	p.mu.Lock()
	if e.refs > 0 || e.retired || time.Since(e.lastUsed) < p.idle {
		p.mu.Unlock()
		return
	}
	p.retireLocked(e)
	p.mu.Unlock()
}

// watchExit drops e as soon as its server process exits on its own, so a
// crashed server leaves nothing behind while no run uses it.
func (p *Pool) watchExit(e *poolEntry, done <-chan struct{}) {
	<-done
	p.mu.Lock()
	if !e.retired {
		p.retireLocked(e)
	}
	p.mu.Unlock()
}

// retireLocked removes e from the pool; its session is closed now when
// unused, else when its last user releases it.
func (p *Pool) retireLocked(e *poolEntry) {
	e.retired = true
	if p.entries[e.name] == e {
		delete(p.entries, e.name)
	}
	if e.idle != nil {
		e.idle.Stop()
	}
	if e.refs == 0 && e.sess != nil {
		go e.sess.Close()
	}
}

// Close stops every pooled server (the staged shutdown of stop) and then every
// process
// still carrying the pool's token. Sessions in use are closed as their
// users release them; Close waits for the unused ones.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	var unused []*Session
	for _, e := range p.entries {
		e.retired = true
		if e.idle != nil {
			e.idle.Stop()
		}
		if e.refs == 0 && e.sess != nil {
			unused = append(unused, e.sess)
		}
	}
	p.entries = map[string]*poolEntry{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range unused {
		wg.Add(1)
		go func() { defer wg.Done(); s.Close() }()
	}
	wg.Wait()
	p.tracker.Close()
}

// Servers names the servers with a session in the pool (for tests and
// diagnostics).
func (p *Pool) Servers() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for name, e := range p.entries {
		if e.sess != nil {
			out = append(out, name)
		}
	}
	return out
}
