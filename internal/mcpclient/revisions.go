package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol revisions (see docs/decisions.md, "Both protocol revisions").
// pflow offers ModernVersion first: go-sdk probes the server with
// server/discover and, when the server does not speak it, falls back to
// the initialize handshake at LegacyVersion, where the server may
// negotiate any older version of AcceptedVersions.
const (
	ModernVersion = "2026-07-28"
	LegacyVersion = "2025-11-25"
)

// maxProbeWait bounds how long a stdio or Unix-socket server may leave the
// server/discover probe unanswered before pflow answers it for the server
// and initializes (half the start-up timeout when that is shorter). A
// 2026-07-28 server that was merely slow to start refuses initialize and
// is probed again without the bound.
const maxProbeWait = 10 * time.Second

// legacyVerdicts remembers, for this process, the servers (by legacyKey)
// that ignored or died on the server/discover probe: their next connects
// go straight to initialize instead of paying for the probe again.
var legacyVerdicts sync.Map

// legacyKey identifies a server's config for legacyVerdicts and the tool
// list cache.
func legacyKey(srv *Server) string {
	hdr := make([]string, 0, len(srv.Headers))
	for k, v := range srv.Headers {
		hdr = append(hdr, k+"="+v)
	}
	slices.Sort(hdr)
	return strings.Join([]string{srv.Name, srv.Transport, srv.Command, strings.Join(srv.Args, "\x01"), srv.URL, srv.SocketPath, strings.Join(hdr, "\x01"), policyKey(srv.Network)}, "\x00")
}

// clientConn is the connection pflow's client reads and writes through:
//   - a server's roots/list is answered "method not found" at once: pflow
//     does not advertise roots, so it offers none (go-sdk's client would
//     answer with an empty list);
//   - on stdio and Unix sockets (guard > 0), the server/discover probe of
//     a 2026-07-28 connect is answered for the server when it stays silent
//     for guard (some 2025 servers never answer a request they do not
//     know before initialize): go-sdk then falls back to initialize on the
//     same connection, and the server's late answer is dropped.
type clientConn struct {
	mcp.Connection
	guard time.Duration

	mu       sync.Mutex
	probe    jsonrpc.ID // the server/discover request awaiting its answer
	probing  bool
	timer    *time.Timer
	timedOut bool // the guard answered the probe
	answered bool // the server answered the probe
	found    bool // ... with a result (it speaks 2026-07-28)
	ended    bool // the connection ended while the probe waited

	pumpOnce  sync.Once
	msgs      chan readResult
	injected  chan jsonrpc.Message
	done      chan struct{}
	closeOnce sync.Once
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

func newClientConn(c mcp.Connection, guard time.Duration) *clientConn {
	return &clientConn{Connection: c, guard: guard, msgs: make(chan readResult), injected: make(chan jsonrpc.Message, 1), done: make(chan struct{})}
}

func (c *clientConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Request); ok && r.Method == "server/discover" && r.ID.IsValid() {
		c.mu.Lock()
		c.probe, c.probing = r.ID, true
		if c.guard <= 0 {
			c.mu.Unlock()
			return c.Connection.Write(ctx, m)
		}
		id := r.ID
		c.timer = time.AfterFunc(c.guard, func() {
			c.mu.Lock()
			fire := c.probing && !c.answered
			if fire {
				c.timedOut, c.probing = true, false
			}
			c.mu.Unlock()
			if fire {
				c.injected <- &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
					Message: "server/discover was not answered in time (pflow falls back to initialize)"}}
			}
		})
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, m)
}

func (c *clientConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.guard <= 0 {
		for {
			m, err := c.Connection.Read(ctx)
			if err != nil {
				return m, err
			}
			if resp, ok := m.(*jsonrpc.Response); ok {
				c.mu.Lock()
				if c.probing && resp.ID == c.probe {
					c.answered, c.probing, c.found = true, false, resp.Error == nil
				}
				c.mu.Unlock()
			}
			if c.refused(ctx, m) {
				continue
			}
			return m, nil
		}
	}
	c.pumpOnce.Do(func() { go c.pump(ctx) })
	for {
		select {
		case m := <-c.injected:
			return m, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
			return nil, mcp.ErrConnectionClosed
		case r := <-c.msgs:
			if r.err != nil {
				c.mu.Lock()
				if c.probing && !c.answered {
					c.ended = true
				}
				c.mu.Unlock()
				return r.msg, r.err
			}
			if resp, ok := r.msg.(*jsonrpc.Response); ok {
				c.mu.Lock()
				late := c.timedOut && resp.ID == c.probe
				if c.probing && resp.ID == c.probe {
					c.answered, c.probing, c.found = true, false, resp.Error == nil
					c.timer.Stop()
				}
				c.mu.Unlock()
				if late {
					continue // answered for the server already
				}
			}
			if c.refused(ctx, r.msg) {
				continue
			}
			return r.msg, nil
		}
	}
}

// pump reads the connection so that Read can also wait for the guard.
func (c *clientConn) pump(ctx context.Context) {
	for {
		m, err := c.Connection.Read(ctx)
		select {
		case c.msgs <- readResult{m, err}:
		case <-c.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// refused answers a roots/list request; it reports whether m was one.
func (c *clientConn) refused(ctx context.Context, m jsonrpc.Message) bool {
	r, ok := m.(*jsonrpc.Request)
	if !ok || r.Method != "roots/list" || !r.ID.IsValid() {
		return false
	}
	resp := &jsonrpc.Response{ID: r.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "roots/list: pflow does not offer roots (it does not advertise the roots capability)"}}
	_ = c.Connection.Write(ctx, resp)
	return true
}

func (c *clientConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.done)
		c.mu.Lock()
		if c.timer != nil {
			c.timer.Stop()
		}
		c.mu.Unlock()
	})
	return c.Connection.Close()
}

// probeOutcome says what became of the server/discover probe: timedOut
// when the guard answered it, ended when the connection ended while it
// waited (a server that exits on a request it does not know).
func (c *clientConn) probeOutcome() (timedOut, ended bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timedOut, c.ended
}

// discovered reports whether the server answered server/discover with a
// result: only then may a session speak 2026-07-28 (that revision is
// never negotiated through initialize).
func (c *clientConn) discovered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.found
}

// modernOnly reports whether err is the refusal of a server that speaks
// only 2026-07-28 or later to the initialize handshake (-32022 with its
// supported versions).
func modernOnly(err error) bool {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeUnsupportedProtocolVersion {
		return false
	}
	var data mcp.UnsupportedProtocolVersionData
	if json.Unmarshal(je.Data, &data) != nil {
		return false
	}
	return slices.ContainsFunc(data.Supported, func(v string) bool { return v >= ModernVersion })
}

// listCache keeps a server's tool list for the time the server said it
// stays fresh (2026-07-28 results carry ttlMs): Discover answers from it
// instead of starting the server again (pflow mcp sync, drift checks).
var listCache sync.Map // legacyKey -> *cachedList

type cachedList struct {
	tools    []*mcp.Tool
	protocol string
	until    time.Time
}

// cachedTools returns the still-fresh tool list of srv, if any.
func cachedTools(srv *Server) (*cachedList, bool) {
	v, ok := listCache.Load(legacyKey(srv))
	if !ok {
		return nil, false
	}
	c := v.(*cachedList)
	if !time.Now().Before(c.until) {
		listCache.Delete(legacyKey(srv))
		return nil, false
	}
	return c, true
}
