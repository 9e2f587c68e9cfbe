package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/home"
	"github.com/pflow-go/pflow/internal/pferr"
)

// ServeStdio serves one client over in/out (nothing but protocol is written
// to out) until in ends or ctx is cancelled. Running tool calls are
// cancelled and awaited before it returns.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	defer s.Shutdown()
	// A cancelled ctx (SIGINT/SIGTERM) cancels running calls at once, so the
	// session can close without waiting for long workflows.
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()
	w := &lockedWriter{w: out}
	t := &mcp.IOTransport{Reader: io.NopCloser(filterInput(in, w, s.logf)), Writer: nopWriteCloser{w}, MaxLineLength: maxLine + 1}
	s.logf("serving on stdio")
	err := s.mcp.Run(ctx, t)
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// HTTPOptions configure the streamable HTTP transport. Zero limits pick
// the defaults below.
type HTTPOptions struct {
	// Token, when set, is required as "Authorization: Bearer <token>" on
	// every request, checked before any byte of the body is read.
	Token string
	// ReadHeaderTimeout bounds the reading of a request's headers, and
	// ReadTimeout that of its headers and body: a client that stalls is
	// disconnected. Once the body is read, net/http lifts the deadline: the
	// call may run, and its answer stream, as long as it needs.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	// IdleTimeout closes a kept-alive connection left unused this long.
	IdleTimeout time.Duration
	// MaxConns bounds the open connections; more wait to be accepted.
	MaxConns int
	// MaxSessions bounds the open MCP sessions; an initialize beyond it
	// is answered 503.
	MaxSessions int
}

// Defaults of HTTPOptions.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxConns          = 128
	DefaultMaxSessions       = 64
	// sessionTimeout closes a session that made no request for this long,
	// so a long-lived server does not accumulate abandoned clients.
	sessionTimeout = time.Hour
)

func (o HTTPOptions) withDefaults() HTTPOptions {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&o.ReadTimeout, DefaultReadTimeout)
	def(&o.IdleTimeout, DefaultIdleTimeout)
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	return o
}

// Handler returns the streamable HTTP handler: MCP at /mcp, with go-sdk's
// DNS-rebinding protection on. With a token, every request is
// authenticated first: one without the token gets 401 before its body is
// read, so an unauthenticated client never holds the server's memory.
//
// Both protocol revisions are served at /mcp (see docs/decisions.md, "Both
// protocol revisions"): a 2026-07-28 request (MCP-Protocol-Version
// 2026-07-28 or later) goes to a stateless handler, where every request stands alone and a dropped
// request cancels its call; everything else to the stateful handler of
// the 2025 revisions, with its Mcp-Session-Id sessions.
func (s *Server) Handler(o HTTPOptions) http.Handler {
	o = o.withDefaults()
	get := func(*http.Request) *mcp.Server { return s.mcp }
	h := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{SessionTimeout: sessionTimeout})
	modern := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	mux := http.NewServeMux()
	mh := sameOrigin(s.jsonrpcHTTP(h, modern, o.MaxSessions))
	mux.Handle("/mcp", mh)
	mux.Handle("/mcp/", mh)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "pflow MCP server: the endpoint is /mcp", http.StatusNotFound)
	})
	if o.Token != "" {
		return bearer(o.Token, markActive(mux))
	}
	return markActive(mux)
}

// connKey is the request context's key of the connection a request came on.
type connKey struct{}

// markActive marks the connection a request came on as in use by a client
// that got past authentication: when every connection slot is taken, the
// oldest connection without such a request is closed to admit a new one
// (limitedListener), never this one.
func markActive(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(*limitedConn); ok {
			c.activate()
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin answers 403 to a request whose Origin header names another
// site than the one it was sent to (MCP 2025-11-25: a browser page must not
// drive a local server). Clients that are not browsers send no Origin.
// localhost and 127.0.0.1 on the same port are the same site.
func sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !originMatches(o, r.Host) {
			http.Error(w, "forbidden: the Origin "+strconv.Quote(o)+" is not this server's; pflow's MCP server does not accept requests from web pages of other sites", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func originMatches(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	oh, op, err1 := net.SplitHostPort(u.Host)
	hh, hp, err2 := net.SplitHostPort(host)
	if err1 != nil || err2 != nil || op != hp {
		return false
	}
	loop := func(h string) bool {
		if strings.EqualFold(h, "localhost") {
			return true
		}
		ip := net.ParseIP(strings.Trim(h, "[]"))
		return ip != nil && ip.IsLoopback()
	}
	return loop(oh) && loop(hh)
}

// bearer requires "Authorization: Bearer <token>"; the scheme is matched
// without regard to case (RFC 9110), the token exactly and in constant
// time. A refused request's body is never read: the answer closes the
// connection instead (net/http would otherwise read what is left of a
// small body before answering).
func bearer(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		if !strings.EqualFold(scheme, "bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pflow"`)
			w.Header().Set("Connection", "close")
			http.Error(w, "unauthorized: send 'Authorization: Bearer <token>' with this server's token (the one pflow mcp serve printed when it started, kept in $PFLOW_HOME/"+home.MCPServeTokenFile+", or its --token / PFLOW_MCP_TOKEN)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ListenAddr normalizes --http ADDR: a bare port or ":port" binds 127.0.0.1.
func ListenAddr(addr string) string {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return "127.0.0.1:0"
	}
	if !strings.Contains(addr, ":") {
		return "127.0.0.1:" + addr
	}
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}

// IsLoopback reports whether a listen address only accepts local connections.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckNoAuth refuses --no-auth off loopback: without a token, anyone who
// can reach the address could run commands as the user who started the
// server.
func CheckNoAuth(addr string) error {
	if IsLoopback(addr) {
		return nil
	}
	return pferr.Newf(pferr.Usage, "refusing to serve MCP on %s with --no-auth: anyone who can reach that address could run commands as you", addr).
		WithHint("Drop --no-auth (a token is then generated, stored in $PFLOW_HOME/" + home.MCPServeTokenFile + " and printed), pass --token, or bind a loopback address (--http 127.0.0.1:8765).")
}

// ServeHTTP serves streamable HTTP on ln until ctx is cancelled; then it
// stops accepting, cancels running tool calls (killing their processes) and
// returns. ready, when not nil, is called with the listening URL. At most
// o.MaxConns connections are open at once, and a client that stalls while
// sending a request is disconnected (o's timeouts).
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, o HTTPOptions, ready func(url string)) error {
	o = o.withDefaults()
	hs := &http.Server{Handler: s.Handler(o),
		ReadHeaderTimeout: o.ReadHeaderTimeout, ReadTimeout: o.ReadTimeout, IdleTimeout: o.IdleTimeout,
		// Headers beyond 64 KiB are refused (431) instead of buffered.
		MaxHeaderBytes: 64 << 10,
		BaseContext:    func(net.Listener) context.Context { return s.base },
		ConnContext:    func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }}
	errc := make(chan error, 1)
	url := "http://" + ln.Addr().String() + "/mcp"
	go func() { errc <- hs.Serve(limitListener(ln, o.MaxConns)) }()
	s.logf("serving streamable HTTP on %s", url)
	if ready != nil {
		ready(url)
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		s.Shutdown()
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
	s.cancel()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	_ = hs.Close()
	s.inflight.Wait()
	return nil
}

// limitListener serves at most n connections at once. When all n are
// taken, the oldest connection that has not yet made an authenticated
// request is closed to admit the new one (a client that connects and sends
// nothing, or stalls in its headers, cannot hold the slots other users
// need); when every open connection has made one, the new connection waits
// for a slot. A closed listener's waiting Accept returns at once.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limitedListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	mu        sync.Mutex
	pending   []*limitedConn // holding a slot, no authenticated request yet; oldest first
}

func (l *limitedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &limitedConn{Conn: c, l: l}
	for {
		select {
		case l.sem <- struct{}{}:
			return l.admit(lc), nil
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		default:
		}
		if l.evictPending() {
			continue // its Close gave back its slot
		}
		select {
		case l.sem <- struct{}{}:
			return l.admit(lc), nil
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// admit gives lc its slot, pending until it makes an authenticated request.
func (l *limitedListener) admit(lc *limitedConn) net.Conn {
	lc.release = sync.OnceFunc(func() {
		l.drop(lc)
		<-l.sem
	})
	l.mu.Lock()
	l.pending = append(l.pending, lc)
	l.mu.Unlock()
	return lc
}

// evictPending closes the oldest pending connection, if there is one.
func (l *limitedListener) evictPending() bool {
	l.mu.Lock()
	if len(l.pending) == 0 {
		l.mu.Unlock()
		return false
	}
	oldest := l.pending[0]
	l.mu.Unlock()
	oldest.Close()
	return true
}

// drop removes lc from the pending connections.
func (l *limitedListener) drop(lc *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.Index(l.pending, lc); i >= 0 {
		l.pending = slices.Delete(l.pending, i, i+1)
	}
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitedConn struct {
	net.Conn
	l       *limitedListener
	release func()
	active  atomic.Bool
}

// activate marks the connection as one an authenticated client uses.
func (c *limitedConn) activate() {
	if !c.active.Swap(true) {
		c.l.drop(c)
	}
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
