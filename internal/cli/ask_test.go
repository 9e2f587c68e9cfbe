package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ttyRun runs pflow with stdin and stderr on a pseudo-terminal (stdout
// captured), as a person at a terminal does.
type ttyRun struct {
	t      *testing.T
	ptmx   *os.File
	mu     sync.Mutex
	screen bytes.Buffer
	stdout bytes.Buffer
	code   chan int
}

func startTTY(t *testing.T, home string, args ...string) *ttyRun {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	r := &ttyRun{t: t, ptmx: ptmx, code: make(chan int, 1)}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			r.mu.Lock()
			r.screen.Write(buf[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	ios := &IOStreams{In: tty, Out: &r.stdout, ErrOut: tty, InTTY: true, ErrTTY: true}
	env := []string{"PFLOW_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=xterm"}
	go func() { r.code <- Main(context.Background(), args, ios, env) }()
	return r
}

// waitScreen waits until the terminal shows s (a hang detector bounds it).
func (r *ttyRun) waitScreen(s string) {
	r.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r.mu.Lock()
		seen := strings.Contains(r.screen.String(), s)
		r.mu.Unlock()
		if seen {
			return
		}
		if time.Now().After(deadline) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.t.Fatalf("the terminal never showed %q:\n%s", s, r.screen.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *ttyRun) wait() (int, string) {
	r.t.Helper()
	select {
	case c := <-r.code:
		return c, r.stdout.String()
	case <-time.After(time.Minute):
		r.t.Fatal("pflow did not end")
	}
	return 0, ""
}

// On a terminal the ask step asks there: the person types a choice (its
// name, a unique start of it, or its number) and the run routes on it.
func TestAskOnATerminal(t *testing.T) {
	example, _ := filepath.Abs("../../examples/approval.pflow.md")
	for _, tc := range []struct{ typed, want string }{{"approve\n", "deployed x\n"}, {"d\n", "cancelled\n"}, {"maybe\n1\n", "deployed x\n"}} {
		home := t.TempDir()
		r := startTTY(t, home, example, "what=x")
		r.waitScreen("Deploy x?")
		r.waitScreen("Choose [approve/deny]: ")
		io.WriteString(r.ptmx, tc.typed)
		code, out := r.wait()
		if code != 0 || out != tc.want {
			t.Fatalf("typed %q: exit %d, stdout %q; terminal:\n%s", tc.typed, code, out, r.screen.String())
		}
	}
}

// A person who does not answer within the step's timeout: the default
// choice is taken (or, without one, the timeout action).
func TestAskOnATerminalTimesOut(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "t.pflow.md")
	os.WriteFile(wf, []byte(`# T
Asks with a short timeout.

## Steps

### gate
Ask.
- type: ask
- message: Go on?
- timeout: 300ms
- default: deny
- on: {approved: yes, denied: no}

### yes
Approved.
- type: shell
- command: printf yes
- output_mappings: {stdout: result}

### no
Denied.
- type: shell
- command: printf no
- output_mappings: {stdout: result}

## Outputs

### result
What happened.
`), 0o600)
	r := startTTY(t, t.TempDir(), wf)
	r.waitScreen("Go on?")
	code, out := r.wait()
	if code != 0 || out != "no\n" {
		t.Fatalf("exit %d, stdout %q; terminal:\n%s", code, out, r.screen.String())
	}
}
