package temporaldev

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestStartServesTheDefaultNamespace(t *testing.T) {
	srv := Start(t)
	if srv.Namespace != "default" {
		t.Errorf("Namespace = %q, want default", srv.Namespace)
	}
	cmd := exec.Command(Binary(t), "workflow", "list",
		"--address", srv.HostPort, "--namespace", srv.Namespace,
		"--disable-config-file", "--disable-config-env")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("temporal workflow list --address %s: %v\n%s", srv.HostPort, err, out)
	}
}

// A port taken between choosing it and the server binding it (by a test
// suite running beside this one) makes the server exit; Start starts it
// again on other ports.
func TestStartRetriesWhenAPortIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	attempts := 0
	pickPorts = func(t testing.TB, n int) []int {
		attempts++
		ports := freePorts(t, n)
		if attempts == 1 {
			ports[2] = taken.Addr().(*net.TCPAddr).Port // the HTTP port
		}
		return ports
	}
	defer func() { pickPorts = freePorts }()
	srv := Start(t)
	if attempts != 2 || srv.HostPort == "" {
		t.Fatalf("attempts %d, server %+v", attempts, srv)
	}
}

// The tests run the temporal CLI that scripts/install-temporal-dev.sh
// installed (by version, in the test tools cache); the script and Path
// agree on where it is, and a missing one skips the test, naming the make
// target, instead of being built under the test's timeout.
func TestBinaryIsTheOneTheInstallScriptInstalls(t *testing.T) {
	tools := t.TempDir()
	t.Setenv(ToolsEnv, tools)
	t.Setenv("CI", "")
	bin, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(tools, "temporal-"+cliVersion, "temporal"); bin != want {
		t.Fatalf("Path() = %s, want %s", bin, want)
	}
	for ci, want := range map[string]string{"": "skip: SKIPPING: temporal CLI v1.5.1 not installed", "true": "fatal: temporal CLI v1.5.1 not installed"} {
		t.Setenv("CI", ci)
		if msg := stopped(func(tb testing.TB) { Binary(tb) }); !strings.HasPrefix(msg, want) || !strings.Contains(msg, "run `make tools`") {
			t.Errorf("CI=%q: Binary without the binary: %q, want %q… naming `make tools`", ci, msg, want)
		}
	}
	t.Setenv("CI", "")

	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Binary(t); got != bin {
		t.Fatalf("Binary = %s, want %s", got, bin)
	}
	// With the binary in place the script finds it and builds nothing.
	out, err := exec.Command(filepath.Join("..", "..", "..", "scripts", "install-temporal-dev.sh")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), bin) {
		t.Fatalf("install-temporal-dev.sh: %v\n%s\nwant it to name %s", err, out, bin)
	}
}

// stopper is a testing.TB whose Skip and Fatal record their message and
// stop the function under test.
type stopper struct {
	testing.TB
	msg string
}

func (s *stopper) Helper()           {}
func (s *stopper) Skip(args ...any)  { s.msg = "skip: " + fmt.Sprint(args...); panic(s) }
func (s *stopper) Fatal(args ...any) { s.msg = "fatal: " + fmt.Sprint(args...); panic(s) }

// stopped runs f and returns how it stopped ("" when it returned).
func stopped(f func(testing.TB)) (msg string) {
	s := &stopper{}
	defer func() {
		if r := recover(); r != nil && r != any(s) {
			panic(r)
		}
		msg = s.msg
	}()
	f(s)
	return ""
}
