package proc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
)

// TrackingVar is the environment variable that marks every process pflow
// starts, and through inheritance every process those start, even one that
// left the process group (setsid, a double fork, Node's detached: true).
//
// Its value is a comma-separated list of random tokens: those pflow itself
// inherited (when pflow runs inside a step of another pflow run), the
// tokens of the trackers in the context (the run, a sync) and one token of
// the started process itself (the step's command, the MCP server). A scan
// of /proc for a token (ReapMarked, MemoryMeter) finds the whole tree that
// token was given to. This is the approach of CI runners (Jenkins'
// BUILD_ID, GitHub's RUNNER_TRACKING_ID). A process that clears or
// replaces its environment, or makes itself unreadable (not dumpable),
// cannot be found this way.
const TrackingVar = "PFLOW_RUN_TOKEN"

// NewToken returns a fresh random token for TrackingVar.
func NewToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type trackerKey struct{}

// Tracker marks the processes started for one run (or one `mcp sync`) and
// stops the ones left when it is closed. Get one from Track; Run and
// MarkCmd mark every process started with its context.
type Tracker struct {
	token  string
	tokens []string // the enclosing trackers' tokens, then token
	parent *Tracker // the enclosing tracker, if any
	used   atomic.Bool
	once   sync.Once
}

// live holds the tokens of the trackers not yet closed, for KillTracked.
var live = struct {
	sync.Mutex
	tokens map[string]bool
}{tokens: map[string]bool{}}

// Track starts a tracker for the work done with the returned context: every
// process started through Run or MarkCmd with that context (or one derived
// from it) carries the tracker's token. Close the tracker when the work
// ends. Trackers nest: a process started under an inner tracker carries the
// outer tokens too.
func Track(ctx context.Context) (context.Context, *Tracker) {
	t := &Tracker{token: NewToken()}
	t.parent, _ = ctx.Value(trackerKey{}).(*Tracker)
	t.tokens = append(append([]string(nil), ContextTokens(ctx)...), t.token)
	live.Lock()
	live.tokens[t.token] = true
	live.Unlock()
	return context.WithValue(ctx, trackerKey{}, t), t
}

// Token returns the tracker's own token.
func (t *Tracker) Token() string { return t.token }

// Close kills (SIGKILL) every process still carrying the tracker's token,
// repeating the scan until none is left, and returns how many it killed.
// The owners of those processes (a step, an MCP server's shutdown) have
// already had their chance to stop them gracefully; what is left here has
// escaped them. Closing twice does nothing. A tracker under which no
// process was started closes without scanning. On platforms other than
// Linux there is nothing to scan and Close returns 0.
func (t *Tracker) Close() int {
	n := 0
	t.once.Do(func() {
		if t.used.Load() {
			n = KillMarked(t.token)
		}
		live.Lock()
		delete(live.tokens, t.token)
		live.Unlock()
	})
	return n
}

// Tracked reports whether ctx carries a tracker, which stops at its Close
// whatever its processes left behind.
func Tracked(ctx context.Context) bool {
	_, ok := ctx.Value(trackerKey{}).(*Tracker)
	return ok
}

// ContextTokens returns the tokens of the trackers in ctx, outermost first
// (nil when there is none).
func ContextTokens(ctx context.Context) []string {
	if t, ok := ctx.Value(trackerKey{}).(*Tracker); ok {
		return t.tokens
	}
	return nil
}

// MarkEnv returns env with TrackingVar set to the tokens pflow inherited in
// its own environment followed by tokens. Any TrackingVar already in env
// (say, from a step's env param) is replaced, so a process cannot be
// started unmarked by accident.
func MarkEnv(env []string, tokens ...string) []string {
	var all []string
	if v := os.Getenv(TrackingVar); v != "" {
		all = strings.Split(v, ",")
	}
	all = append(all, tokens...)
	out := make([]string, 0, len(env)+1)
	prefix := TrackingVar + "="
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return append(out, prefix+strings.Join(all, ","))
}

// MarkCmd gives cmd (not yet started) a token of its own, on top of the
// tokens of the trackers in ctx, and returns it: ReapMarked(token, …) and
// MemoryMeter then find cmd's process and all its descendants. cmd.Env is
// set from cmd.Environ(), so a nil Env still means pflow's environment.
func MarkCmd(ctx context.Context, cmd *exec.Cmd) string {
	for t, _ := ctx.Value(trackerKey{}).(*Tracker); t != nil; t = t.parent {
		t.used.Store(true)
	}
	token := NewToken()
	ctxTokens := ContextTokens(ctx)
	tokens := make([]string, 0, len(ctxTokens)+1)
	tokens = append(append(tokens, ctxTokens...), token)
	cmd.Env = MarkEnv(cmd.Environ(), tokens...)
	return token
}

// KillTracked kills (SIGKILL) every process carrying the token of a tracker
// that is not closed yet, in one pass, without waiting. It is for a hard
// exit (a second Ctrl-C) that cannot wait for the run to end normally.
func KillTracked() {
	live.Lock()
	tokens := make(map[string]bool, len(live.tokens))
	for k := range live.tokens {
		tokens[k] = true
	}
	live.Unlock()
	if len(tokens) > 0 {
		killAny(tokens)
	}
}

// hasToken reports whether a TrackingVar value lists one of tokens.
func hasToken(value string, tokens map[string]bool) bool {
	for tok := range strings.SplitSeq(value, ",") {
		if tokens[tok] {
			return true
		}
	}
	return false
}
