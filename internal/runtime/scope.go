package runtime

import (
	"errors"
	"io"
	"sync"

	"github.com/pflow-go/pflow/internal/node"
)

// scope holds resources shared by every node of one run (one MCP
// session per server per run; see docs/decisions.md, "One MCP session per
// server per run"). It implements node.Scope.
type scope struct {
	mu     sync.Mutex
	res    map[string]*scopeEntry
	order  []string
	closed bool
}

type scopeEntry struct {
	once sync.Once
	c    io.Closer
	err  error
}

func newScope() *scope { return &scope{res: map[string]*scopeEntry{}} }

// Resource returns the resource for key, opening it once.
func (s *scope) Resource(key string, open func() (io.Closer, error)) (io.Closer, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("the run has ended; its resources are closed")
	}
	e, ok := s.res[key]
	if !ok {
		e = &scopeEntry{}
		s.res[key] = e
		s.order = append(s.order, key)
	}
	s.mu.Unlock()
	e.once.Do(func() { e.c, e.err = open() })
	if e.err != nil {
		// Let a later node try again (e.g. a server that was briefly down).
		s.mu.Lock()
		if s.res[key] == e {
			delete(s.res, key)
		}
		s.mu.Unlock()
	}
	return e.c, e.err
}

// Close closes every opened resource concurrently (each may take seconds to
// shut a server down) and waits for all of them.
func (s *scope) Close() error {
	s.mu.Lock()
	s.closed = true
	var entries []*scopeEntry
	for _, k := range s.order {
		if e, ok := s.res[k]; ok {
			entries = append(entries, e)
		}
	}
	s.res = map[string]*scopeEntry{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(entries))
	for i, e := range entries {
		if e.c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.c.Close()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// NewScope returns a Scope that outlives single runs (a Temporal worker's:
// its MCP sessions serve every node execution it is given); its owner
// closes it.
func NewScope() interface {
	node.Scope
	Close() error
} {
	return newScope()
}
