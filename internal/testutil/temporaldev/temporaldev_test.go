package temporaldev

import (
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
