package temporaldev

import (
	"net"
	"os/exec"
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
