package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// HTTPOptions configure the streamable HTTP transport.
type HTTPOptions struct {
	// Token, when set, is required as "Authorization: Bearer <token>".
	Token string
}

// Handler returns the streamable HTTP handler: MCP at /mcp, with go-sdk's
// DNS-rebinding protection on and the bearer token checked when set.
func (s *Server) Handler(o HTTPOptions) http.Handler {
	// Idle sessions are closed after an hour so a long-lived server does not
	// accumulate abandoned clients.
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour})
	mux := http.NewServeMux()
	var mh http.Handler = h
	if o.Token != "" {
		mh = bearer(o.Token, h)
	}
	mh = sameOrigin(jsonrpcHTTP(mh))
	mux.Handle("/mcp", mh)
	mux.Handle("/mcp/", mh)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "pflow MCP server: the endpoint is /mcp", http.StatusNotFound)
	})
	return mux
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
// without regard to case (RFC 9110), the token exactly.
func bearer(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		if !strings.EqualFold(scheme, "bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pflow"`)
			http.Error(w, "unauthorized: send 'Authorization: Bearer <token>' (the --token / PFLOW_MCP_TOKEN of this server)", http.StatusUnauthorized)
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

// CheckHTTPSecurity refuses to serve off loopback without a token (D12).
func CheckHTTPSecurity(addr, token string) error {
	if token == "" && !IsLoopback(addr) {
		return &pferr.Error{Kind: pferr.Security,
			Message: fmt.Sprintf("refusing to serve MCP on %s without a token: anyone who can reach it could run commands as you", addr),
			Hint:    "Set a bearer token with --token or PFLOW_MCP_TOKEN, or bind to 127.0.0.1."}
	}
	return nil
}

// ServeHTTP serves streamable HTTP on ln until ctx is cancelled; then it
// stops accepting, cancels running tool calls (killing their processes) and
// returns. ready, when not nil, is called with the listening URL.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, o HTTPOptions, ready func(url string)) error {
	hs := &http.Server{Handler: s.Handler(o), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return s.base }}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	url := "http://" + ln.Addr().String() + "/mcp"
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
