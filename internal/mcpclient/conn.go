package mcpclient

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/pflow-go/pflow/internal/netpolicy"
	"github.com/pflow-go/pflow/internal/pferr"
)

// Conn is the per-run handle on one server (see docs/decisions.md, "One MCP
// session per server per run"): it opens the session
// lazily on first use, shares it between every node and batch item of the
// run, reconnects if the server died (e.g. stopped after a timeout), and
// closes it when the run ends. It implements io.Closer for node.Scope.
type Conn struct {
	ConfigPath string
	Name       string
	Lookup     func(string) (string, bool)
	Log        io.Writer
	// Pool, when set, supplies the session from a long-lived process's pool
	// (servers with "keep_alive": false still get their own per run).
	Pool *Pool
	// Sample answers sampling requests of a server configured with
	// "sampling": true.
	Sample Sampler
	// Network is the run's network policy (node.Request.Network): where a
	// remote server's connections may go (Server.Network).
	Network *netpolicy.Policy

	mu      sync.Mutex
	sess    *Session
	release func() // gives a pooled session back (nil: the session is the Conn's own)
	closed  bool
}

// NewConn returns an unopened connection handle.
func NewConn(configPath, name string, lookup func(string) (string, bool), log io.Writer) *Conn {
	return &Conn{ConfigPath: configPath, Name: name, Lookup: lookup, Log: log}
}

// Session returns the live session, connecting if needed.
func (c *Conn) Session(ctx context.Context) (*Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, pferr.Newf(pferr.Execution, "MCP connection to server %s is closed (the run has ended)", c.Name)
	}
	if c.sess != nil && !c.sess.Dead() {
		return c.sess, nil
	}
	c.drop()
	srv, err := LoadServer(c.ConfigPath, c.Name, c.Lookup, c.Log)
	if err != nil {
		return nil, err
	}
	srv.Sample, srv.Network = c.Sample, c.Network
	if c.Pool != nil && srv.KeepAlive {
		s, release, err := c.Pool.Acquire(ctx, srv)
		if err != nil {
			return nil, err
		}
		c.sess, c.release = s, release
		return s, nil
	}
	s, err := Connect(ctx, srv, c.Log)
	if err != nil {
		return nil, err
	}
	c.sess = s
	return s, nil
}

// Close ends the session (the staged shutdown of docs/decisions.md, "One MCP
// session per server per run"). Safe to call more than once.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.drop()
	return nil
}

// drop lets go of the session: a pooled one goes back to the pool, the
// Conn's own is closed.
func (c *Conn) drop() {
	switch {
	case c.release != nil:
		c.release()
	case c.sess != nil:
		c.sess.Close()
	}
	c.sess, c.release = nil, nil
}

// ErrorText renders an error for ${node.error}: the message (the fixed
// text first), where it happened, and how to fix it.
func ErrorText(err error) string {
	pe := pferr.As(err)
	var b strings.Builder
	b.WriteString(pe.Message)
	if pe.Where != "" {
		fmt.Fprintf(&b, " (%s)", pe.Where)
	}
	if h := pe.Advice(pferr.Person); h != "" {
		b.WriteString("\n")
		b.WriteString(h)
	}
	return b.String()
}
