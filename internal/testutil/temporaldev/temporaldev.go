// Package temporaldev runs a real Temporal dev server (`temporal server
// start-dev`, in memory, on loopback) for tests. The temporal CLI is not
// built here: `make tools` (a step of `make test`, which runs
// scripts/install-temporal-dev.sh) installs it once per machine and version
// into the test tools cache, and every test process uses that binary. Each
// Start gets its own server on free ports, stopped when the test ends.
package temporaldev

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/proc"
	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

const (
	// cliPackage and cliVersion name the temporal CLI the tests run;
	// scripts/install-temporal-dev.sh reads both from here.
	cliPackage = "github.com/temporalio/cli/cmd/temporal"
	cliVersion = "v1.5.1"

	// readyTimeout bounds the wait for a new server's frontend to answer.
	readyTimeout = 2 * time.Minute
)

// ToolsEnv names the variable holding the test tools cache directory; the
// Makefile sets it for both the install script and `go test`. Unset, it is
// ${XDG_CACHE_HOME:-$HOME/.cache}/pflow-test-tools, as in the script.
const ToolsEnv = "PFLOW_TEST_TOOLS"

// Server is a running Temporal dev server.
type Server struct {
	// HostPort is the frontend's gRPC address, 127.0.0.1:<port>.
	HostPort string
	// Namespace is the namespace the server creates at launch, "default".
	Namespace string
}

// Path returns where scripts/install-temporal-dev.sh installs the temporal
// CLI of version cliVersion.
func Path() (string, error) {
	tools := os.Getenv(ToolsEnv)
	if tools == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("temporaldev: no test tools directory: set %s or HOME (%v)", ToolsEnv, err)
			}
			cache = filepath.Join(home, ".cache")
		}
		tools = filepath.Join(cache, "pflow-test-tools")
	}
	return filepath.Join(tools, "temporal-"+cliVersion, "temporal"), nil
}

// Binary returns the path of the installed temporal CLI (version v1.5.1).
// When it is not installed the test is skipped with a message naming the
// make target that installs it, or fails when CI=true: it is never built
// here, under the test's timeout.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := Path()
	if err == nil {
		var st os.FileInfo
		if st, err = os.Stat(bin); err == nil && (st.IsDir() || st.Mode()&0o111 == 0) {
			err = errors.New("not an executable file")
		}
	}
	if err != nil {
		msg := fmt.Sprintf("temporal CLI %s not installed (%v); run `make tools` (`make test` runs it first), which builds it once into the test tools cache", cliVersion, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPING: " + msg)
	}
	return bin
}

// Start starts `temporal server start-dev` on free loopback ports with an
// in-memory store, and waits until its frontend serves the default namespace. The server and its whole
// process group are stopped when the test ends. Start fails the test if the
// server cannot be started.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	// The ports are free when chosen, but another process (a test suite
	// running beside this one) may take one before the server binds it:
	// then the server exits at once, and it is started again on others.
	for attempt := 1; ; attempt++ {
		srv, err := start(t, bin)
		if err == nil {
			return srv
		}
		if !errors.Is(err, errPortTaken) || attempt == 5 {
			t.Fatal(err)
		}
	}
}

// errPortTaken is a server that exited because one of its ports was taken.
var errPortTaken = errors.New("a port was taken")

func start(t testing.TB, bin string) (*Server, error) {
	t.Helper()
	ports := pickPorts(t, 4)
	hostPort := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	args := []string{
		"server", "start-dev",
		"--ip", "127.0.0.1",
		"--port", strconv.Itoa(ports[0]),
		"--ui-port", strconv.Itoa(ports[1]),
		"--http-port", strconv.Itoa(ports[2]),
		"--metrics-port", strconv.Itoa(ports[3]),
		"--headless",
		"--log-level", "error",
		"--disable-config-file", "--disable-config-env",
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	out := &fakemcp.Buffer{} // the exec package writes it while start reads it
	cmd.Stdout = out
	cmd.Stderr = out
	proc.SetProcessGroup(cmd)
	setPdeathsig(cmd)
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("temporaldev: starting %s: %v", bin, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		proc.Terminate(cmd, 5*time.Second)
		<-exited
	})

	deadline := time.Now().Add(readyTimeout)
	for {
		probe := exec.Command(bin, "operator", "namespace", "describe",
			"--namespace", "default", "--address", hostPort,
			"--command-timeout", "5s",
			"--disable-config-file", "--disable-config-env")
		probe.Dir = cmd.Dir
		probeOut, err := probe.CombinedOutput()
		if err == nil {
			break
		}
		select {
		case <-exited:
			err := fmt.Errorf("temporaldev: temporal server exited before it was ready (%v)\n  command: %s %s\n  server output (last lines):\n%s",
				waitErr, bin, strings.Join(args, " "), lastLines(out.String()))
			if strings.Contains(out.String(), "address already in use") {
				err = fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return nil, err
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("temporaldev: temporal server on %s did not serve namespace default within %s\n  command: %s %s\n  last probe: %v\n%s\n  server output (last lines):\n%s",
				hostPort, readyTimeout, bin, strings.Join(args, " "), err, lastLines(string(probeOut)), lastLines(out.String()))
		}
		select {
		case <-exited:
		case <-time.After(200 * time.Millisecond):
		}
	}
	return &Server{HostPort: hostPort, Namespace: "default"}, nil
}

// pickPorts chooses the server's ports (a test replaces it to take one).
var pickPorts = freePorts

// freePorts returns n distinct loopback ports that were free a moment ago.
// All listeners are held until every port is chosen, so none repeats.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("temporaldev: finding a free port on 127.0.0.1: %v", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// lastLines returns the last 40 lines of s, indented.
func lastLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return "    " + strings.Join(lines, "\n    ")
}
