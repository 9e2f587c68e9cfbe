package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestColourOnlyOnATerminal runs the real binary with stderr on a
// pseudo-terminal and with stderr piped: colour (ANSI escapes) appears only
// on the terminal, and NO_COLOR, --no-color and TERM=dumb turn it off there;
// CLICOLOR_FORCE turns it on in a pipe. No emoji anywhere.
func TestColourOnlyOnATerminal(t *testing.T) {
	bin := buildPflow(t)
	wf, _ := filepath.Abs(filepath.Join("..", "..", "examples", "hello.pflow.md"))
	home := t.TempDir()
	base := []string{"PATH=" + os.Getenv("PATH"), "PFLOW_HOME=" + home, "HOME=" + home, "TERM=xterm-256color"}

	onTTY := func(t *testing.T, env []string, args ...string) string {
		t.Helper()
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatalf("no pseudo-terminal: %v", err)
		}
		defer ptmx.Close()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(append([]string{}, base...), env...)
		var stdout bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, tty
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		var errOut bytes.Buffer
		done := make(chan struct{})
		go func() { io.Copy(&errOut, ptmx); close(done) }() // ends with EIO when pflow exits
		if err := cmd.Wait(); err != nil {
			t.Fatalf("pflow %v: %v\n%s", args, err, errOut.String())
		}
		<-done
		return errOut.String()
	}
	piped := func(t *testing.T, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(append([]string{}, base...), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pflow %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	const esc = "\x1b[3" // an SGR colour (the live progress line also uses \x1b[K)
	noEmoji := func(t *testing.T, s string) {
		t.Helper()
		for _, e := range []string{"📊", "❌", "💰", "✨", "⚠️"} {
			if strings.Contains(s, e) {
				t.Errorf("emoji %q in output:\n%s", e, s)
			}
		}
	}

	s := onTTY(t, nil, wf, "name=World")
	if !strings.Contains(s, esc) || !strings.Contains(s, "Workflow completed") {
		t.Errorf("a terminal gets colour:\n%q", s)
	}
	noEmoji(t, s)
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"NO_COLOR", []string{"NO_COLOR=1"}, nil},
		{"--no-color", nil, []string{"--no-color"}},
		{"TERM=dumb", []string{"TERM=dumb"}, nil},
	} {
		s := onTTY(t, c.env, append(c.args, wf, "name=World")...)
		if strings.Contains(s, esc) || !strings.Contains(s, "Workflow completed") {
			t.Errorf("%s: no colour on the terminal:\n%q", c.name, s)
		}
	}
	s = piped(t, nil, wf, "name=World")
	if strings.Contains(s, esc) {
		t.Errorf("a pipe gets no colour:\n%q", s)
	}
	noEmoji(t, s)
	if s := piped(t, []string{"CLICOLOR_FORCE=1"}, wf, "name=World"); !strings.Contains(s, esc) {
		t.Errorf("CLICOLOR_FORCE=1 forces colour into a pipe:\n%q", s)
	}
	if s := piped(t, []string{"CLICOLOR_FORCE=1", "NO_COLOR=1"}, wf, "name=World"); strings.Contains(s, esc) {
		t.Errorf("NO_COLOR wins over CLICOLOR_FORCE:\n%q", s)
	}
}

// syncBuf is a buffer written by one goroutine and read by the test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestElapsedTimeOfALongStep: on a terminal, a step that runs for more than
// a second shows its elapsed time while it runs. The step waits for a file
// the test creates only once the time has been shown (no clock bound).
func TestElapsedTimeOfALongStep(t *testing.T) {
	bin := buildPflow(t)
	dir := t.TempDir()
	release := filepath.Join(dir, "release")
	wf := filepath.Join(dir, "long.pflow.md")
	os.WriteFile(wf, []byte("# Long\nWaits for a file.\n\n## Steps\n\n### wait\nWait.\n- type: shell\n- timeout: 600\n"+
		"- command: while [ ! -f '"+release+"' ]; do sleep 0.05; done; echo done\n"), 0o644)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(bin, wf)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PFLOW_HOME=" + dir, "HOME=" + dir, "TERM=xterm", "NO_COLOR=1"}
	cmd.Stderr = tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var out syncBuf
	go io.Copy(&out, ptmx)
	defer os.WriteFile(release, nil, 0o644)
	deadline := time.Now().Add(60 * time.Second) // only a hung pflow reaches it
	// Any elapsed time: the display is redrawn every second, and on a
	// loaded machine the first redraw after the first second may come
	// when 2 s have passed (the test once saw "wait... 2s" first).
	shown := regexp.MustCompile(`wait\.\.\. [0-9]+s`)
	for !shown.MatchString(out.String()) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no elapsed time shown:\n%q", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	os.WriteFile(release, nil, 0o644)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pflow: %v\n%q", err, out.String())
	}
}
