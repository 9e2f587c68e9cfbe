package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
)

// ProtocolVersion is the version pflow offers first (see docs/decisions.md,
// "Both protocol revisions"): ModernVersion through server/discover, then
// LegacyVersion through initialize, where servers may negotiate any of
// AcceptedVersions.
const ProtocolVersion = ModernVersion

// AcceptedVersions are the protocol versions pflow's client speaks.
var AcceptedVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// ClientVersion is sent as clientInfo.version.
var ClientVersion = "0.1.0"

// Session is one connection to one server. It is safe for concurrent use:
// parallel batch items share it (see docs/decisions.md, "One MCP session per
// server per run").
type Session struct {
	Server *Server
	cs     *mcp.ClientSession
	proc   *process
	rt     *recordingTransport
	tr     *remoteTransport // a remote server's connections (nil: local)
	sock   net.Conn         // the uds transport's connection

	// progress maps the token of each call in flight to the func that
	// restarts its idle timeout; logs are the server's log messages not
	// yet handed to a step.
	progressMu  sync.Mutex
	progress    map[string]func()
	progressSeq atomic.Int64
	logs        []string
	log         io.Writer

	toolsMu sync.Mutex
	tools   map[string]*mcp.Tool
	schemas map[*mcp.Tool]*toolSchemas // compiled once per tool and session
	// listTTL is how long the last tool list stays fresh (the server's
	// ttlMs, 2026-07-28; 0: not at all).
	listTTL time.Duration

	// calls are the tools/call requests in flight, so that a server's
	// question reaches the asker of the step that made the call.
	callsMu   sync.Mutex
	calls     map[*inflight]struct{}
	questions atomic.Int64

	mu   sync.Mutex
	dead error

	closeOnce sync.Once
	cancel    context.CancelFunc
}

// sessionTransport connects its inner transport with a session-long
// context, through a clientConn (guard: see clientConn).
type sessionTransport struct {
	inner mcp.Transport
	ctx   context.Context
	guard time.Duration
	conn  **clientConn
}

func (t sessionTransport) Connect(context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(t.ctx)
	if err != nil {
		return nil, err
	}
	cc := newClientConn(c, t.guard)
	*t.conn = cc
	return cc, nil
}

// Connect starts (stdio) or reaches (http, sse) the server and opens the
// session, bounded by srv.StartupTimeout: 2026-07-28 when the server
// answers server/discover with it, else the initialize handshake (see
// docs/decisions.md, "Both protocol revisions"). A stdio server that dies
// on the probe is started again and initialized.
func Connect(ctx context.Context, srv *Server, log io.Writer) (*Session, error) {
	key := legacyKey(srv)
	version := ProtocolVersion
	if _, ok := legacyVerdicts.Load(key); ok || srv.Transport == "sse" {
		// The legacy SSE transport predates 2026-07-28.
		version = LegacyVersion
	}
	s, cc, err := connect(ctx, srv, log, version, true)
	if err != nil && version == LegacyVersion && srv.Transport != "sse" && ctx.Err() == nil && modernOnly(err) {
		// Remembered as a 2025 server, it now speaks only 2026-07-28: it
		// was upgraded while this process ran. The verdict goes.
		legacyVerdicts.Delete(key)
		s, _, err = connect(ctx, srv, log, ModernVersion, false)
		return s, err
	}
	if err == nil || version != ModernVersion || cc == nil || ctx.Err() != nil {
		if err == nil && cc != nil && version == ModernVersion {
			if timedOut, _ := cc.probeOutcome(); timedOut && s.ProtocolVersion() < ModernVersion {
				// A 2025 server that ignores the probe: skip it next time.
				legacyVerdicts.Store(key, true)
			}
		}
		return s, err
	}
	timedOut, ended := cc.probeOutcome()
	switch {
	case ended:
		// The server ended the connection on the probe: a 2025 server
		// that stops on a request it does not know.
		legacyVerdicts.Store(key, true)
		s, _, err = connect(ctx, srv, log, LegacyVersion, false)
	case timedOut && modernOnly(err):
		// Slow to start, not silent: a 2026-07-28 server; probe again
		// with all the time there is.
		s, _, err = connect(ctx, srv, log, ModernVersion, false)
	}
	return s, err
}

func connect(ctx context.Context, srv *Server, log io.Writer, version string, guarded bool) (*Session, *clientConn, error) {
	if log == nil {
		log = io.Discard
	}
	s := &Session{Server: srv, log: log}
	var guard time.Duration
	if guarded && (srv.Transport == "stdio" || srv.Transport == "uds") {
		guard = min(srv.StartupTimeout/2, maxProbeWait)
	}
	var transport mcp.Transport
	switch srv.Transport {
	case "stdio":
		p, err := startProcess(ctx, srv, log)
		if err != nil {
			return nil, nil, err
		}
		s.proc = p
		transport = &mcp.IOTransport{Reader: p.out, Writer: p.stdin, MaxLineLength: maxMessage(srv) + 1<<20}
	case "uds":
		conn, err := (&net.Dialer{Timeout: srv.StartupTimeout}).DialContext(ctx, "unix", srv.SocketPath)
		if err != nil {
			return nil, nil, classed(pferr.Newf(pferr.Execution, "Could not connect to MCP server %s at the Unix socket %s: %v", srv.Name, srv.SocketPath, errors.Unwrap(err)), node.ClassNetworkError).
				WithHint(fmt.Sprintf("Check that the server is running and listening on %s (\"path\" of server '%s' in mcp-servers.json).", srv.SocketPath, srv.Name))
		}
		s.sock = conn
		transport = &mcp.IOTransport{Reader: conn, Writer: conn, MaxLineLength: maxMessage(srv) + 1<<20}
	case "http", "sse":
		// Every connection of the session obeys the run's network policy
		// and the server's pins (see remoteTransport).
		s.tr = newRemoteTransport(srv)
		s.rt = &recordingTransport{base: s.tr, headers: srv.Headers, sse: srv.Transport == "sse", limit: int64(maxMessage(srv))}
		hc := &http.Client{Transport: s.rt}
		if srv.Transport == "http" {
			st := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, MaxRetries: 2}
			switch {
			case srv.oauth != nil:
				st.OAuthHandler = srv.oauth
			case srv.TokenFile != "" && srv.Headers["Authorization"] == "":
				// A stored sign-in is sent and refreshed; a server that asks
				// for one pflow does not have fails the connect at once.
				actx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, &http.Client{Transport: s.tr, Timeout: 30 * time.Second})
				st.OAuthHandler = &runAuth{srv: srv, path: srv.TokenFile, ctx: actx}
			}
			transport = st
		} else {
			transport = &mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: hc}
		}
	default:
		return nil, nil, pferr.Newf(pferr.Validation, "Unsupported transport type: %s. Supported: 'stdio' (default), 'http', 'sse', 'uds'", srv.Transport)
	}
	cctx, cancel := context.WithTimeout(ctx, srv.StartupTimeout)
	defer cancel()
	// The transport's own context lives as long as the session (an SSE
	// stream opened during Connect must outlive the handshake's deadline);
	// it is cancelled by Close, or here if the handshake does not finish in time.
	sctx, scancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = scancel
	var connected atomic.Bool
	stopTimer := time.AfterFunc(srv.StartupTimeout, func() {
		if !connected.Load() {
			scancel()
		}
	})
	defer stopTimer.Stop()
	var cc *clientConn
	transport = sessionTransport{inner: transport, ctx: sctx, guard: guard, conn: &cc}
	copts := &mcp.ClientOptions{
		// Advertise nothing we do not serve: a server that asks for roots and
		// gets no answer lingers after stdin closes (see docs/decisions.md,
		// "Protocol version and client capabilities"). Elicitation is
		// advertised (the handler below): a server's question goes to the
		// run's Asker.
		Capabilities: &mcp.ClientCapabilities{},
		ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return s.elicit(ctx, r.Params)
		},
		// The server's tool list changed: the next lookup lists it again,
		// so a tool added mid-run can be called.
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.forgetTools() },
		// Progress on a call is liveness: it restarts the call's idle timeout.
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			s.progressMu.Lock()
			alive := s.progress[fmt.Sprint(r.Params.ProgressToken)]
			s.progressMu.Unlock()
			if alive != nil {
				alive()
			}
		},
		// The server's log messages go with the step that was running
		// (its trace, and the step's lines with -v).
		//lint:ignore SA1019 pflow speaks the 2025 MCP revisions too, where logging is current (docs/decisions.md, "Both protocol revisions")
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) { s.addLog(r.Params) },
	}
	if srv.Sampling && srv.Sample != nil {
		// The config opted in: the server may use pflow's LLM; otherwise
		// sampling is neither advertised nor answered.
		//lint:ignore SA1019 pflow speaks the 2025 MCP revisions too, where sampling is current (docs/decisions.md, "Both protocol revisions")
		copts.Capabilities = &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}
		//lint:ignore SA1019 pflow speaks the 2025 MCP revisions too, where sampling is current (docs/decisions.md, "Both protocol revisions")
		copts.CreateMessageHandler = func(ctx context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return srv.Sample(ctx, r.Params)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "pflow", Version: ClientVersion}, copts)
	cs, err := client.Connect(cctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	connected.Store(err == nil)
	if err != nil {
		if modernOnly(err) && !guarded {
			err = fmt.Errorf("%w (the server speaks only protocol %s)", err, ModernVersion)
		}
		mapped := s.classify(ctx, cctx, err, "initialize", "", srv.StartupTimeout)
		s.shutdown()
		if modernOnly(err) {
			// Keep the refusal itself for Connect to recognise.
			return nil, cc, fmt.Errorf("%w: %w", mapped, err)
		}
		return nil, cc, mapped
	}
	s.cs = cs
	if s.rt != nil {
		// A 2025 server may have refused the server/discover probe with an
		// HTTP error: that is no failure of the session.
		s.rt.mu.Lock()
		s.rt.status, s.rt.dialErr, s.rt.retryAfter = 0, nil, 0
		s.rt.mu.Unlock()
	}
	//lint:ignore SA1019 pflow speaks the 2025 MCP revisions too, where logging is current (docs/decisions.md, "Both protocol revisions")
	if caps := cs.InitializeResult().Capabilities; caps != nil && caps.Logging != nil && cs.InitializeResult().ProtocolVersion < ModernVersion {
		// Ask for info and above: debug chatter stays with the server.
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		//lint:ignore SA1019 pflow speaks the 2025 MCP revisions too, where logging is current (docs/decisions.md, "Both protocol revisions")
		_ = cs.SetLoggingLevel(lctx, &mcp.SetLoggingLevelParams{Level: "info"})
		cancel()
	}
	if v := cs.InitializeResult().ProtocolVersion; !slices.Contains(AcceptedVersions, v) {
		s.Close()
		return nil, cc, s.fail("MCP protocol version not supported", "",
			fmt.Sprintf("The server answered with protocol version %q; pflow speaks %s.", v, strings.Join(AcceptedVersions, ", ")))
	} else if v >= ModernVersion && !cc.discovered() {
		s.Close()
		return nil, cc, s.fail("MCP protocol version not supported", "",
			fmt.Sprintf("The server answered initialize with protocol version %q, which is agreed through server/discover only; it does not follow the revision it names.", v))
	}
	return s, cc, nil
}

// ListTools returns every tool, following nextCursor through all pages.
func (s *Session) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	if err := s.alive(); err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, s.Server.StartupTimeout)
	defer cancel()
	var out []*mcp.Tool
	seen := map[string]bool{}
	cursor := ""
	ttl := time.Duration(-1)
	for page := 0; page < 1000; page++ {
		res, err := s.cs.ListTools(lctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, s.classify(ctx, lctx, err, "tools/list", "", s.Server.StartupTimeout)
		}
		// The list is as fresh as its stalest page (go-sdk serves pages
		// still fresh from its own cache).
		if d := time.Duration(res.TTLMs) * time.Millisecond; ttl < 0 || d < ttl {
			ttl = d
		}
		out = append(out, res.Tools...)
		if res.NextCursor == "" || seen[res.NextCursor] {
			break
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	s.toolsMu.Lock()
	s.tools = map[string]*mcp.Tool{}
	s.schemas = nil
	s.listTTL = max(ttl, 0)
	for _, t := range out {
		s.tools[t.Name] = t
	}
	s.toolsMu.Unlock()
	return out, nil
}

// Tool returns the named tool (listing tools once per session), or the fixed
// error "Tool {tool} not found on server {server}".
func (s *Session) Tool(ctx context.Context, name string) (*mcp.Tool, error) {
	s.toolsMu.Lock()
	loaded := s.tools != nil
	s.toolsMu.Unlock()
	if !loaded {
		if _, err := s.ListTools(ctx); err != nil {
			return nil, err
		}
	}
	find := func() *mcp.Tool {
		s.toolsMu.Lock()
		defer s.toolsMu.Unlock()
		if t := s.tools[name]; t != nil {
			return t
		}
		// Accept the sanitised form too (node ids use [a-z0-9-]).
		for n, cand := range s.tools {
			if SanitizeToolName(n) == name {
				return cand
			}
		}
		return nil
	}
	t := find()
	if t == nil && loaded {
		// The list this session holds may be older than the server's (a
		// server that adds tools without telling): ask once more.
		if _, err := s.ListTools(ctx); err != nil {
			return nil, err
		}
		t = find()
	}
	if t == nil {
		return nil, classed(pferr.Newf(pferr.NotFound, "Tool %s not found on server %s", name, s.Server.Name), node.ClassNotFound).
			WithHint("The server no longer offers this tool.").
			WithFix(pferr.Fix{Text: "{do} to re-read its tools.", Do: pferr.SyncServer(s.Server.Name)}).
			WithFix(pferr.Fix{Text: "To see what it has now, {do}.", Do: pferr.PersonOnly("mcp tools " + s.Server.Name)})
	}
	return t, nil
}

// timer is what CallTool needs of a time.Timer (tests drive it by hand).
type timer interface {
	Reset(time.Duration) bool
	Stop() bool
}

// afterFunc starts a call's idle timer.
var afterFunc = func(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }

// maxLogs bounds the log messages a session keeps for the next step.
const maxLogs = 200

// addLog keeps a server's log message (redacted, at most maxLogs) until the
// step's DrainLogs.
//
//lint:ignore SA1019 pflow speaks the 2025 MCP revisions too, where logging is current (docs/decisions.md, "Both protocol revisions")
func (s *Session) addLog(p *mcp.LoggingMessageParams) {
	line := string(p.Level)
	if p.Logger != "" {
		line += " " + p.Logger
	}
	data, ok := p.Data.(string)
	if !ok {
		b, _ := json.Marshal(p.Data)
		data = string(b)
	}
	line = s.Server.Redact(line + ": " + data)
	s.progressMu.Lock()
	if len(s.logs) < maxLogs {
		s.logs = append(s.logs, line)
	}
	s.progressMu.Unlock()
}

// DrainLogs returns the server's log messages since the last call and
// forgets them.
func (s *Session) DrainLogs() []string {
	s.progressMu.Lock()
	defer s.progressMu.Unlock()
	out := s.logs
	s.logs = nil
	return out
}

// forgetTools drops the session's tool list (the server said it changed).
func (s *Session) forgetTools() {
	s.toolsMu.Lock()
	s.tools = nil
	s.schemas = nil
	s.toolsMu.Unlock()
	listCache.Delete(legacyKey(s.Server))
}

// toolSchemas are a tool's input and output schemas, compiled once per
// session: resolving a schema with jsonschema-go costs far more than the
// checks themselves, and every step of a run may call the same tool.
type toolSchemas struct {
	input  *InputSchema
	output *jsonschema.Resolved
	hash   string // SchemaHash of the input schema
}

func (s *Session) compiled(t *mcp.Tool) *toolSchemas {
	s.toolsMu.Lock()
	c := s.schemas[t]
	s.toolsMu.Unlock()
	if c != nil {
		return c
	}
	c = &toolSchemas{input: CompileInputSchema(t.InputSchema), hash: SchemaHash(t.InputSchema)}
	if t.OutputSchema != nil {
		c.output = compileOutputSchema(t.OutputSchema)
	}
	s.toolsMu.Lock()
	if s.schemas == nil {
		s.schemas = map[*mcp.Tool]*toolSchemas{}
	}
	if prev := s.schemas[t]; prev != nil {
		c = prev
	} else {
		s.schemas[t] = c
	}
	s.toolsMu.Unlock()
	return c
}

// InputSchemaHash is SchemaHash of tool t's input schema (as returned by
// Session.Tool), computed once per session.
func (s *Session) InputSchemaHash(t *mcp.Tool) string { return s.compiled(t).hash }

// CoerceArgs is the package's CoerceArgs for tool t (as returned by
// Session.Tool), with t's inputSchema compiled once per session.
func (s *Session) CoerceArgs(t *mcp.Tool, args map[string]any) (map[string]any, error) {
	return s.compiled(t).input.Coerce(t.Name, args)
}

// ValidateStructured is the package's ValidateStructured for tool t, with
// t's outputSchema resolved once per session.
func (s *Session) ValidateStructured(t *mcp.Tool, res *mcp.CallToolResult) error {
	if t == nil || t.OutputSchema == nil {
		return nil
	}
	return validateStructured(t, res, s.compiled(t).output)
}

// CallTool calls a tool with a timeout (see docs/decisions.md, "Timeouts and
// memory limits"). When the timeout expires on a
// stdio server, its process group gets SIGTERM, then SIGKILL, and the
// session is dead. A tool error (isError) is returned as a result, not an error.
func (s *Session) CallTool(ctx context.Context, tool string, args map[string]any, timeout time.Duration) (*mcp.CallToolResult, error) {
	if err := s.alive(); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = s.Server.CallTimeout
	}
	// The timeout is an idle timeout: every progress notification of the
	// call restarts it, up to MaxCallTimeout in all.
	maxd := max(s.Server.MaxCallTimeout, timeout)
	cctx, cancel := context.WithTimeout(ctx, maxd)
	defer cancel()
	var idleFired atomic.Bool
	idle := afterFunc(timeout, func() { idleFired.Store(true); cancel() })
	defer idle.Stop()
	token := fmt.Sprintf("pflow-%d", s.progressSeq.Add(1))
	s.progressMu.Lock()
	if s.progress == nil {
		s.progress = map[string]func(){}
	}
	s.progress[token] = func() { idle.Reset(timeout) }
	s.progressMu.Unlock()
	defer func() {
		s.progressMu.Lock()
		delete(s.progress, token)
		s.progressMu.Unlock()
	}()
	if args == nil {
		args = map[string]any{}
	}
	// The call in flight, for a server that asks a question during it.
	step, _ := ctx.Value(stepKey{}).(string)
	call := &inflight{tool: tool, step: step, asker: node.AskerFrom(ctx), cancel: cancel,
		pause: func() func() {
			// A person may take longer than the idle timeout to answer.
			idle.Stop()
			return func() { idle.Reset(timeout) }
		}}
	cctx = context.WithValue(cctx, inflightKey{}, call)
	call.ctx = cctx
	s.addCall(call)
	defer s.removeCall(call)
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	params.SetProgressToken(token)
	res, err := s.cs.CallTool(cctx, params)
	if ferr := call.failure(); ferr != nil {
		// The server asked a question nobody could answer: the call was
		// ended, and says so.
		return nil, ferr
	}
	if err != nil {
		if !idleFired.Load() {
			timeout = maxd // the cap, not the idle timeout, ended it
		}
		if cctx.Err() != nil && ctx.Err() == nil && s.proc != nil {
			// Timed out: stop the server (its process group).
			s.setDead(classed(s.fail(timeoutText(timeout), tool, "The server was stopped after the timeout."), node.ClassTimeout))
			s.proc.terminate()
		}
		if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
			// The connection is gone: the run's next call reconnects.
			defer s.setDead(pferr.Newf(pferr.Execution, "MCP connection to server %s was lost", s.Server.Name))
		}
		return nil, s.classify(ctx, cctx, err, "tools/call", tool, timeout)
	}
	if res.IsError && s.proc != nil && s.proc.memExceeded.Load() > 0 {
		// The server answered while it was being stopped for its memory
		// (a browser server reports "browser has been closed"): the real
		// cause is the limit.
		return nil, s.classify(ctx, cctx, errors.New("stopped"), "tools/call", tool, timeout)
	}
	return res, nil
}

func timeoutText(d time.Duration) string {
	secs := d.Seconds()
	if secs == float64(int64(secs)) {
		return fmt.Sprintf("MCP tool timed out after %d seconds", int64(secs))
	}
	return fmt.Sprintf("MCP tool timed out after %g seconds", secs)
}

// Dead reports whether the session can no longer be used (server exited,
// was killed after a timeout, or the connection broke).
func (s *Session) Dead() bool {
	if s.alive() != nil {
		return true
	}
	return s.proc != nil && s.proc.gone()
}

func (s *Session) alive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead
}

func (s *Session) setDead(err error) {
	s.mu.Lock()
	if s.dead == nil {
		s.dead = err
	}
	s.mu.Unlock()
}

// Close ends the session and, for stdio, runs the staged shutdown
// (see process.stop). It is safe
// to call more than once and from any goroutine.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.setDead(pferr.Newf(pferr.Execution, "MCP session with server %s is closed", s.Server.Name))
		if s.proc != nil {
			s.proc.stopping.Store(true)
		}
		if s.cs != nil {
			done := make(chan struct{})
			go func() { s.cs.Close(); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * StopGrace):
			}
		}
		s.shutdown()
	})
	return nil
}

func (s *Session) shutdown() {
	if s.cancel != nil {
		defer s.cancel()
	}
	if s.proc != nil {
		s.proc.stop()
	}
	if s.sock != nil {
		s.sock.Close()
	}
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
}

// Pid returns the stdio server's process id (0 for http/sse).
func (s *Session) Pid() int {
	if s.proc == nil || s.proc.cmd.Process == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// where locates a failure: the server, and the tool when a call failed.
func (s *Session) where(tool string) string {
	where := fmt.Sprintf("server '%s'", s.Server.Name)
	if tool != "" {
		where += fmt.Sprintf(", tool '%s'", tool)
	}
	return where
}

func (s *Session) fail(msg, tool, hint string) *pferr.Error {
	e := pferr.New(pferr.Execution, s.Server.Redact(msg))
	e.Where = s.where(tool)
	if s.proc != nil {
		if lines := s.proc.stderr.Lines(); len(lines) > 0 {
			if hint != "" {
				hint += "\n"
			}
			hint += "Last lines of the server's stderr:\n  " + s.Server.Redact(strings.Join(lines, "\n  "))
		}
	}
	e.Hint = s.Server.Redact(hint)
	return e
}

// classify turns an SDK/transport error into its fixed message (see
// docs/decisions.md, "Every MCP failure is a step error").
func (s *Session) classify(parent, bounded context.Context, err error, phase, tool string, limit time.Duration) error {
	var pe *pferr.Error
	if errors.As(err, &pe) {
		if pe.Where == "" && ErrorClass(pe) == node.ClassAuthFailed {
			// A refusal answered by the sign-in handler: say where too.
			pe.Where = s.where(tool)
		}
		return pe
	}
	if parent.Err() != nil {
		return s.fail(fmt.Sprintf("MCP %s was cancelled", phase), tool, "The run was interrupted or ended before the server answered.")
	}
	if s.proc != nil {
		if rss := s.proc.memExceeded.Load(); rss > 0 {
			return classed(s.fail(fmt.Sprintf("MCP server %s exceeded its memory limit (%d MB used, max_memory_mb is %d) and was stopped", s.Server.Name, rss>>20, s.Server.MaxMemoryMB), tool,
				fmt.Sprintf("Raise \"max_memory_mb\" for server '%s' in mcp-servers.json if it legitimately needs more.", s.Server.Name)), node.ClassServerError)
		}
		if s.proc.tooLarge.Load() {
			return classed(s.fail(tooLargeText(s.Server, phase, tool), tool,
				fmt.Sprintf("Ask the tool for less (a smaller page or limit, a filter, fewer fields), or raise \"max_response_mb\" for server '%s' in mcp-servers.json (default %d, at most %d) if such results are expected.",
					s.Server.Name, DefaultMaxResponseMB, MaxResponseMB)), node.ClassServerError)
		}
		if s.proc.badJSON.Load() {
			return classed(s.fail("Invalid JSON response from server", tool, "The server wrote a line to stdout that is not valid JSON-RPC. Servers must log to stderr, never stdout."), node.ClassServerError)
		}
	}
	if s.rt != nil && s.rt.tooLarge.Load() {
		return classed(s.fail(tooLargeText(s.Server, phase, tool), tool,
			fmt.Sprintf("Ask the tool for less (a smaller page or limit, a filter, fewer fields), or raise \"max_response_mb\" for server '%s' in mcp-servers.json (default %d, at most %d) if such results are expected.",
				s.Server.Name, DefaultMaxResponseMB, MaxResponseMB)), node.ClassServerError)
	}
	var je *jsonrpc.Error
	isRPC := errors.As(err, &je) && je.Code != codeRejectedByTransport
	if s.rt != nil && !isRPC {
		s.rt.mu.Lock()
		status, dialErr := s.rt.status, s.rt.dialErr
		s.rt.mu.Unlock()
		if dialErr == nil && (status == http.StatusUnauthorized || status == http.StatusForbidden) {
			e := AuthFailed(s.Server, status)
			e.Where = s.where(tool)
			return e
		}
		if msg := s.rt.failure(s.Server.URL); msg != "" {
			s.rt.mu.Lock()
			dialErr, wait := s.rt.dialErr, s.rt.retryAfter
			s.rt.mu.Unlock()
			e := classed(s.fail(msg, tool, tlsProblem(s.Server.Name, s.Server.URL, dialErr)), s.rt.class())
			if egressProblem(dialErr) != nil {
				// The settings or the pins decide, not the attempt.
				if e.Details == nil {
					e.Details = map[string]any{}
				}
				e.Details["permanent"] = true
			}
			if wait > 0 {
				if e.Details == nil {
					e.Details = map[string]any{}
				}
				e.Details["retry_after_seconds"] = wait.Seconds()
			}
			return e
		}
	}
	if isRPC {
		hint := ""
		if je.Code == -32602 && tool != "" {
			hint = fmt.Sprintf("The server rejected the arguments of tool '%s'; compare the step's params with its schema: run 'pflow registry describe %s'.", tool, NodeType(s.Server.Name, tool))
		}
		return classed(s.fail(rpcText(je), tool, hint), rpcClass(je.Code))
	}
	if strings.Contains(err.Error(), "unsupported protocol version") {
		return s.fail("MCP protocol version not supported", tool, s.Server.Redact(err.Error())+"; pflow speaks "+strings.Join(AcceptedVersions, ", ")+".")
	}
	if bounded.Err() != nil {
		if phase == "tools/call" {
			return classed(s.fail(timeoutText(limit), tool, "Raise the step's 'timeout' param or the server's \"timeout\" in mcp-servers.json if the tool is legitimately slow."), node.ClassTimeout)
		}
		return classed(s.fail(fmt.Sprintf("MCP server %s did not answer %s within %d seconds", s.Server.Name, phase, int(limit.Seconds())), tool,
			fmt.Sprintf("Check that the server starts (run its command by hand), or raise \"startup_timeout\" for server '%s' in mcp-servers.json (a first 'npx -y' may be downloading it).", s.Server.Name)), node.ClassTimeout)
	}
	if s.proc != nil && !s.proc.stopping.Load() && s.proc.exited(time.Second) {
		return classed(s.fail("MCP server process terminated unexpectedly", tool, fmt.Sprintf("The server process ended (%s) during %s.", s.proc.exitStatus(), phase)), node.ClassServerError)
	}
	return s.fail(fmt.Sprintf("MCP %s failed: %s", phase, s.Server.Redact(err.Error())), tool, "")
}

// tooLargeText says which answer exceeded the message limit (the server
// and tool are in the error's Where).
func tooLargeText(srv *Server, phase, tool string) string {
	mb := maxMessage(srv) >> 20
	if tool != "" {
		return fmt.Sprintf("MCP response too large: the tool's result exceeded %d MB", mb)
	}
	return fmt.Sprintf("MCP response too large: the answer to %s exceeded %d MB", phase, mb)
}

// codeRejectedByTransport is go-sdk's code for a request its HTTP transport
// could not deliver (the HTTP failure then says what happened).
const codeRejectedByTransport = -32005

// maxErrorData bounds the server's error data quoted in a message.
const maxErrorData = 500

func rpcText(je *jsonrpc.Error) string {
	detail := je.Message
	if data := errorData(je.Data); data != "" && !strings.Contains(detail, data) {
		// What the server said about the offending argument or value.
		detail += " (server's details: " + data + ")"
	}
	switch je.Code {
	case -32601:
		return "Method not found: " + detail
	case -32602:
		return "Invalid params: " + detail
	case -32603:
		return "Internal error in MCP server: " + detail
	case -32700:
		return "Invalid JSON response from server: the server reported a parse error: " + detail
	}
	return fmt.Sprintf("MCP server error %d: %s", je.Code, detail)
}

// errorData renders a JSON-RPC error's data for a message: a string as
// itself, anything else as compact JSON; at most maxErrorData characters.
func errorData(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var text string
	if json.Unmarshal(raw, &text) != nil {
		var b bytes.Buffer
		if json.Compact(&b, raw) != nil {
			return ""
		}
		text = b.String()
	}
	text = strings.TrimSpace(text)
	if r := []rune(text); len(r) > maxErrorData {
		text = string(r[:maxErrorData]) + "…"
	}
	return text
}

// recordingTransport adds the configured headers to every request and
// remembers the last HTTP failure so errors can say what happened.
type recordingTransport struct {
	base    http.RoundTripper
	headers map[string]string
	sse     bool
	// limit bounds one message of a response (a JSON body, or one event
	// of an event stream), as max_response_mb bounds a stdio line.
	limit    int64
	tooLarge atomic.Bool

	mu      sync.Mutex
	status  int
	dialErr error
	// retryAfter is the wait the failing response asked for (its
	// Retry-After header), read when it arrived.
	retryAfter time.Duration
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	resp, err := t.base.RoundTrip(r)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		var ne *net.OpError
		if errors.As(err, &ne) || tlsProblem("", "", err) != "" || egressProblem(err) != nil {
			t.dialErr = err
		}
		return nil, err
	}
	// Only failures of requests that carry messages count: the optional
	// standalone GET stream of streamable HTTP may be refused harmlessly
	// (405, 400), and DELETE at close does not matter. The legacy SSE
	// transport's GET is its connection, so it counts there.
	if resp.StatusCode >= 400 && (req.Method == http.MethodPost || (req.Method == http.MethodGet && t.sse)) {
		t.status = resp.StatusCode
		t.retryAfter = node.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	if t.limit > 0 && resp.Body != nil {
		resp.Body = &cappedBody{rc: resp.Body, limit: t.limit, t: t, events: isEventStream(resp.Header.Get("Content-Type"))}
	}
	return resp, nil
}

// errMessageTooLarge ends a response whose message exceeds the limit.
var errMessageTooLarge = errors.New("MCP message exceeds max_response_mb")

// cappedBody fails a response body once one message in it exceeds the
// limit, so a runaway remote server cannot exhaust pflow's memory through
// the SDK's buffering: what the SDK holds stays within the limit. A
// message is the whole body, except in an event stream
// (text/event-stream), where it is one event: the bytes up to a blank
// line. Only there does a blank line end a message; in a JSON body it is
// whitespace like any other.
type cappedBody struct {
	rc     io.ReadCloser
	limit  int64
	events bool  // an event stream: each event is counted on its own
	n      int64 // bytes of the current message
	line   int   // bytes of the current line (event streams)
	cr     bool  // the last byte was CR (a CRLF is one line end)
	t      *recordingTransport
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if !b.events {
		b.n += int64(n)
		if b.n > b.limit {
			b.t.tooLarge.Store(true)
			return 0, errMessageTooLarge
		}
		return n, err
	}
	// SSE lines end in CRLF, LF or CR; an empty line ends the event.
	for _, c := range p[:n] {
		b.n++
		switch {
		case c == '\n' && b.cr:
			b.cr = false
			continue
		case c == '\n' || c == '\r':
			if b.line == 0 {
				b.n = 0
			}
			b.line = 0
			b.cr = c == '\r'
			continue
		}
		b.cr = false
		b.line++
		if b.n > b.limit {
			b.t.tooLarge.Store(true)
			return 0, errMessageTooLarge
		}
	}
	return n, err
}

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && strings.EqualFold(mt, "text/event-stream")
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// class is the error class of the transport's failure.
func (t *recordingTransport) class() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dialErr != nil {
		return node.ClassNetworkError
	}
	return node.ClassOfStatus(t.status)
}

// rpcClass is the error class of a JSON-RPC error code.
func rpcClass(code int64) string {
	switch code {
	case -32602:
		return node.ClassInvalidParams
	case -32601:
		return node.ClassNotFound
	}
	return node.ClassServerError
}

// classed marks e with its error class (see ErrorClass).
func classed(e *pferr.Error, class string) *pferr.Error {
	if class == "" {
		return e
	}
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details["error_class"] = class
	return e
}

// ErrorClass is the error class (node.Class*) of an error from a session:
// what a workflow edge may route on; "" when none fits.
func ErrorClass(err error) string {
	var pe *pferr.Error
	if errors.As(err, &pe) {
		if c, ok := pe.Details["error_class"].(string); ok {
			return c
		}
	}
	return ""
}

// Permanent reports whether an error from a session is one no retry can
// change: a connection the network policy refused, or a certificate that
// matches none of the server's pins.
func Permanent(err error) bool {
	var pe *pferr.Error
	if errors.As(err, &pe) {
		p, _ := pe.Details["permanent"].(bool)
		return p
	}
	return false
}

// RetryAfter is how long the server asked pflow to wait before trying
// again (the Retry-After header of its 429 or 503), carried by an error
// from a session; 0 when it asked for nothing.
func RetryAfter(err error) time.Duration {
	var pe *pferr.Error
	if errors.As(err, &pe) {
		if secs, ok := pe.Details["retry_after_seconds"].(float64); ok && secs > 0 {
			return time.Duration(secs * float64(time.Second))
		}
	}
	return 0
}

func (t *recordingTransport) failure(url string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case egressProblem(t.dialErr) != nil:
		// A refused address, redirect or pin: the refusal says it all.
		return egressProblem(t.dialErr).Error()
	case t.dialErr != nil && tlsProblem("", url, t.dialErr) != "":
		return fmt.Sprintf("Could not connect to MCP server at %s: its TLS certificate is not trusted", url)
	case t.dialErr != nil:
		return fmt.Sprintf("Could not connect to MCP server at %s. Check if the server is running and accessible.", url)
	case t.status == 404:
		return "Session expired or endpoint not found."
	case t.status == 429:
		return "Rate limited. Too many requests. Please wait and try again." + t.waitText()
	case t.status >= 500:
		return fmt.Sprintf("Server error (HTTP %d). The server encountered an error.", t.status) + t.waitText()
	case t.status >= 400:
		return fmt.Sprintf("HTTP error %d", t.status)
	}
	return ""
}

// waitText says how long the server asked to wait (t.mu held).
func (t *recordingTransport) waitText() string {
	if t.retryAfter <= 0 {
		return ""
	}
	return fmt.Sprintf(" The server asked to wait %s before trying again (Retry-After).", (t.retryAfter + time.Second - 1).Truncate(time.Second))
}

// Discover connects, lists every tool and closes, within the server's start-up
// timeout. The tools are read-only (see DiscoverVersion).
func Discover(ctx context.Context, srv *Server, log io.Writer) ([]*mcp.Tool, error) {
	tools, _, err := DiscoverVersion(ctx, srv, log)
	return tools, err
}

// DiscoverVersion is Discover, also returning the protocol version the
// server spoke. A list the server said stays fresh for a while (ttlMs,
// 2026-07-28) is answered again from memory until then, without
// connecting. The slice is the caller's; the tools it points to may be
// shared with that memory and with other callers: read them, never change
// them.
func DiscoverVersion(ctx context.Context, srv *Server, log io.Writer) ([]*mcp.Tool, string, error) {
	if c, ok := cachedTools(srv); ok {
		return slices.Clone(c.tools), c.protocol, nil
	}
	s, err := Connect(ctx, srv, log)
	if err != nil {
		return nil, "", err
	}
	defer s.Close()
	tools, err := s.ListTools(ctx)
	if err != nil {
		return nil, "", err
	}
	s.toolsMu.Lock()
	ttl := s.listTTL
	s.toolsMu.Unlock()
	if ttl > 0 {
		listCache.Store(legacyKey(srv), &cachedList{tools: slices.Clone(tools), protocol: s.ProtocolVersion(), until: time.Now().Add(ttl)})
	}
	return tools, s.ProtocolVersion(), nil
}

// ProtocolVersion is the MCP protocol version the server agreed to.
func (s *Session) ProtocolVersion() string {
	if s.cs == nil || s.cs.InitializeResult() == nil {
		return ""
	}
	return s.cs.InitializeResult().ProtocolVersion
}
