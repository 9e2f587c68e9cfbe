package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/proc"
)

// Shutdown timings (see docs/decisions.md, "One MCP session per server per
// run"): close stdin → StopGrace → SIGTERM group →
// StopGrace → SIGKILL group.
var StopGrace = 2 * time.Second

// maxMessage returns the bound on one JSON-RPC message from srv, in bytes.
func maxMessage(srv *Server) int {
	mb := srv.MaxResponseMB
	if mb <= 0 {
		mb = DefaultMaxResponseMB
	}
	return mb << 20
}

// inheritedEnv are the variables of pflow's environment a stdio server gets,
// before the config's own env: the MCP Python SDK's whitelist (secrets in
// pflow's environment reach a server only through its "env"), plus what
// package runners need to find their caches, registries, proxies and CA
// bundles, so that `npx -y`, `uvx` and `pipx run` servers start as they do
// in a shell.
var inheritedEnv = []string{
	"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
	// XDG base directories (caches and configs of npm, uv, pip, ...).
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
	// Proxies and CA bundles.
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
	// npm / npx and Node version managers.
	"npm_config_cache", "npm_config_registry", "npm_config_prefix", "npm_config_userconfig", "npm_config_globalconfig",
	"NPM_CONFIG_CACHE", "NPM_CONFIG_REGISTRY", "NPM_CONFIG_PREFIX", "NPM_CONFIG_USERCONFIG", "NPM_CONFIG_GLOBALCONFIG",
	// npm behind a company proxy or CA.
	"npm_config_proxy", "npm_config_https_proxy", "npm_config_noproxy", "npm_config_strict_ssl", "npm_config_cafile", "npm_config_ca",
	"NPM_CONFIG_PROXY", "NPM_CONFIG_HTTPS_PROXY", "NPM_CONFIG_NOPROXY", "NPM_CONFIG_STRICT_SSL", "NPM_CONFIG_CAFILE", "NPM_CONFIG_CA",
	"NVM_DIR", "VOLTA_HOME", "PNPM_HOME", "COREPACK_HOME", "BUN_INSTALL",
	// uv / uvx, pip / pipx.
	"UV_CACHE_DIR", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_PYTHON_INSTALL_DIR", "UV_TOOL_DIR",
	"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CACHE_DIR", "PIPX_HOME", "PIPX_BIN_DIR",
}

// process is a stdio server: its own process group, stdout filtered down to
// JSON lines, the last lines of stderr kept for error messages, and a memory
// watchdog.
type process struct {
	srv    *Server
	cmd    *exec.Cmd
	token  string // marks the server and all its descendants (proc.TrackingVar)
	stdin  io.WriteCloser
	out    *stdoutFilter // filtered stdout, handed to mcp.IOTransport
	stderr *proc.TailBuffer
	log    io.Writer

	done    chan struct{} // closed when the process has exited and been reaped
	waitErr error

	badJSON     atomic.Bool  // a line that looked like JSON did not parse
	tooLarge    atomic.Bool  // a message exceeded maxMessage; the session is unusable
	memExceeded atomic.Int64 // RSS in bytes when the watchdog stopped the server
	stopping    atomic.Bool  // we are shutting it down (not a crash)
	stopOnce    sync.Once
}

func startProcess(ctx context.Context, srv *Server, log io.Writer) (*process, error) {
	path, err := lookPath(srv.Command, srv.ProcessEnv)
	if err != nil {
		return nil, pferr.Newf(pferr.Execution, "Command not found: %s", srv.Command).
			WithWhere(fmt.Sprintf("MCP server '%s'", srv.Name)).
			WithHint(fmt.Sprintf("Install %s or fix \"command\" of server '%s' in mcp-servers.json (see: pflow mcp list).", srv.Command, srv.Name))
	}
	cmd := exec.Command(path, srv.Args...)
	cmd.Args[0] = srv.Command
	cmd.Env = childEnv(srv)
	if srv.Dir != "" {
		st, err := os.Stat(srv.Dir)
		if err != nil || !st.IsDir() {
			return nil, pferr.Newf(pferr.Config, "Working directory of MCP server %s does not exist: %s", srv.Name, srv.Dir).
				WithHint(fmt.Sprintf("Fix \"cwd\" of server '%s' in mcp-servers.json.", srv.Name))
		}
		cmd.Dir = srv.Dir
	}
	proc.SetProcessGroup(cmd)
	// The server and everything it starts, even a child that leaves the
	// group (a browser, a daemon), carry the run's tokens and one of the
	// server's own: shutdown and the memory watchdog find them by it.
	token := proc.MarkCmd(ctx, cmd)
	// A grandchild that inherited stderr must not keep Wait (and so crash
	// detection) from returning once the server itself has exited.
	cmd.WaitDelay = 500 * time.Millisecond
	tail := proc.NewTailBuffer(10, 8<<10)
	if srv.Secrets != nil {
		tail.Cut = srv.Secrets.Suffix // an overlong line never keeps half a secret
	}
	p := &process{srv: srv, cmd: cmd, token: token, stderr: tail, log: log, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	pipeErr := func(err error) error {
		return pferr.Newf(pferr.Execution, "Cannot start MCP server %s: %v", srv.Name, err).
			WithHint("The system could not create the server's stdin/stdout pipes; check the open-file limit (ulimit -n).")
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, pipeErr(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, pipeErr(err)
	}
	if err := cmd.Start(); err != nil {
		return nil, pferr.Newf(pferr.Execution, "Command not found: %s", srv.Command).
			WithWhere(fmt.Sprintf("MCP server '%s'", srv.Name)).
			WithHint(fmt.Sprintf("Starting it failed: %v", err))
	}
	p.stdin = stdin
	p.out = &stdoutFilter{p: p, r: bufio.NewReaderSize(stdout, 64<<10), c: stdout, limit: maxMessage(srv)}
	go func() {
		p.waitErr = reap(cmd)
		close(p.done)
	}()
	if srv.MaxMemoryMB > 0 {
		go p.watchMemory(int64(srv.MaxMemoryMB) << 20)
	}
	return p, nil
}

func lookPath(command string, env func(string) (string, bool)) (string, error) {
	if strings.Contains(command, "/") {
		st, err := os.Stat(command)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", errors.New("not executable")
		}
		return command, nil
	}
	pathVar := os.Getenv("PATH")
	if env != nil {
		if v, ok := env("PATH"); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, command)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func childEnv(srv *Server) []string {
	var env []string
	seen := map[string]bool{}
	for k, v := range srv.Env {
		env = append(env, k+"="+v)
		seen[k] = true
	}
	for _, k := range inheritedEnv {
		if seen[k] {
			continue
		}
		var v string
		var ok bool
		if srv.ProcessEnv != nil {
			v, ok = srv.ProcessEnv(k)
		} else {
			v, ok = os.LookupEnv(k)
		}
		if ok && !strings.HasPrefix(v, "()") {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// stdoutFilter is the server's stdout as the SDK reads it: JSON lines only.
// Lines that are not JSON at all (banners, log lines) are skipped and kept
// with the stderr lines, so error messages show what the server said (see
// docs/decisions.md, "Every MCP failure is a step error"); a
// line that starts like JSON but does not parse is passed on, so the session
// fails and the call reports "Invalid JSON response from server". It filters
// in the SDK's reading goroutine (no extra goroutine or pipe per message).
type stdoutFilter struct {
	p       *process
	r       *bufio.Reader
	c       io.Closer
	line    []byte
	pending []byte // filtered bytes not yet read
	err     error  // sticky: io.EOF, or the message-size error
	limit   int    // longest message, in bytes
}

func (f *stdoutFilter) Read(b []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.next()
	}
	n := copy(b, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// Close closes the stdout pipe, which ends a Read blocked on it.
func (f *stdoutFilter) Close() error { return f.c.Close() }

// next reads one line and sets pending (JSON) or err.
func (f *stdoutFilter) next() {
	f.line = f.line[:0]
	for {
		chunk, err := f.r.ReadSlice('\n')
		f.line = append(f.line, chunk...)
		if err == bufio.ErrBufferFull {
			if len(f.line) > f.limit {
				f.p.tooLarge.Store(true)
				f.err = fmt.Errorf("message from server exceeds %d MB", f.limit>>20)
				f.line = nil
				go io.Copy(io.Discard, f.r) // keep the server from blocking on a full pipe
				return
			}
			continue
		}
		if t := bytes.TrimSpace(f.line); len(t) > 0 {
			if t[0] != '{' && t[0] != '[' {
				f.p.stderr.Write(append(append([]byte("[stdout] "), t...), '\n'))
			} else {
				if !json.Valid(t) {
					f.p.badJSON.Store(true)
				}
				f.pending = append(t, '\n')
			}
		}
		if err != nil {
			f.err = io.EOF
		}
		return
	}
}

// reap waits for a server process (a test delays it).
var reap = (*exec.Cmd).Wait

// gone reports whether the process has exited, even when done is not closed
// yet: a killed server is a zombie until it is reaped, and cmd.Wait returns
// up to WaitDelay later still when a grandchild holds its stderr. Asking the
// kernel closes that window for a caller deciding whether to reuse the
// session (Pool.Acquire).
func (p *process) gone() bool {
	select {
	case <-p.done:
		return true
	default:
	}
	return p.cmd.Process != nil && proc.Exited(p.cmd.Process.Pid)
}

// exited reports whether the process has exited, waiting up to d for it.
func (p *process) exited(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

func (p *process) exitStatus() string {
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + ws.Signal().String()
		}
		return "exit status " + strconv.Itoa(ee.ExitCode())
	}
	if p.waitErr == nil {
		return "exit status 0"
	}
	return p.waitErr.Error()
}

// signal sends sig to the server's process group.
func (p *process) signal(sig syscall.Signal) {
	if p.cmd.Process != nil {
		_ = proc.KillGroup(p.cmd.Process.Pid, sig)
	}
}

// terminate stops the server's tree now: proc.TerminateTree sends SIGTERM to
// the group and to the marked descendants outside it, waits up to StopGrace,
// then SIGKILLs all of them. It then waits up to StopGrace for the server to
// be reaped. Used on a call timeout and by the memory watchdog.
func (p *process) terminate() {
	proc.TerminateTree(p.cmd, p.token, StopGrace)
	p.exited(StopGrace)
}

// stop is the staged shutdown (see docs/decisions.md, "One MCP session per
// server per run"): close stdin, wait StopGrace, SIGTERM the group,
// wait StopGrace, SIGKILL the group. Grandchildren left in the group after
// the leader exited are killed too, and so are the descendants that left the
// group (found by the server's token): SIGTERM, up to StopGrace, SIGKILL.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		p.stopping.Store(true)
		p.stdin.Close()
		if !p.exited(StopGrace) {
			p.terminate()
		}
		p.signal(syscall.SIGKILL)
		proc.ReapMarked(p.token, StopGrace)
		p.out.Close()
	})
}

// watchMemory stops the server when the RSS of its whole tree (its process
// group and every descendant carrying its token, even one that left the
// group) exceeds limit.
func (p *process) watchMemory(limit int64) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	meter := proc.NewMemoryMeter(p.token, p.cmd.Process.Pid)
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			if rss := meter.RSS(); rss > limit {
				p.memExceeded.Store(rss)
				p.terminate()
				return
			}
		}
	}
}
