package mcptest

import (
	"bufio"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// startDaemon starts the process cmd makes for a free 127.0.0.1 port, in a
// process group of its own, and waits until a line of its output (stdout
// and stderr) contains ready. A port that another process takes between
// being chosen and being bound (a test suite running beside this one)
// makes the daemon exit at once: it is started again on another port. The
// group gets stop when the test ends. It returns the port.
func startDaemon(t *testing.T, what, ready string, stop syscall.Signal, cmd func(port int) *exec.Cmd) int {
	t.Helper()
	for attempt := 1; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		c := cmd(port)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		c.Stderr = c.Stdout
		if err := c.Start(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Cleanup(func() { syscall.Kill(-c.Process.Pid, stop); c.Wait() })
		var log fakemcp.Buffer
		isReady, exited := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(exited)
			var once sync.Once
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				log.Write([]byte(sc.Text() + "\n"))
				if strings.Contains(sc.Text(), ready) {
					once.Do(func() { close(isReady) })
				}
			}
		}()
		select {
		case <-isReady:
			return port
		case <-exited:
			lower := strings.ToLower(log.String())
			if attempt < 5 && (strings.Contains(lower, "address already in use") || strings.Contains(lower, "eaddrinuse")) {
				continue
			}
			t.Fatalf("%s exited before it was ready:\n%s", what, log.String())
		case <-time.After(60 * time.Second): // a guard against a hang
			t.Fatalf("%s did not start:\n%s", what, log.String())
		}
	}
}

// A daemon that finds its port taken is started again on another one; one
// that fails otherwise fails the test with its output (checked here by the
// attempts it takes).
func TestStartDaemonRetriesATakenPort(t *testing.T) {
	attempts := 0
	port := startDaemon(t, "a daemon", "serving", syscall.SIGKILL, func(port int) *exec.Cmd {
		attempts++
		if attempts == 1 {
			return exec.Command("sh", "-c", `echo "could not bind 127.0.0.1: Address already in use" >&2; exit 1`)
		}
		return exec.Command("sh", "-c", "echo serving; exec sleep 300")
	})
	if attempts != 2 || port == 0 {
		t.Fatalf("attempts %d, port %d", attempts, port)
	}
}
