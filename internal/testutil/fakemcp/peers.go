package fakemcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RepoRoot returns the repository root: the nearest directory above the
// working directory that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("repository root (go.mod) not found above the working directory")
		}
		dir = parent
	}
}

// PeersDir returns <repo>/testdata/peers, where scripts/install-peers.sh
// installs the npm test peers, after checking that every path in files
// (relative to it) exists and every command in commands is on PATH. When
// one is missing the test is skipped loudly, or fails when CI=true, naming
// what is missing and how to install it.
func PeersDir(t testing.TB, files []string, commands ...string) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), "testdata", "peers")
	missing := ""
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			missing = filepath.Join(dir, f)
			break
		}
	}
	for _, c := range commands {
		if missing != "" {
			break
		}
		if _, err := exec.LookPath(c); err != nil {
			missing = "the command " + c + " on PATH"
		}
	}
	if missing != "" {
		msg := fmt.Sprintf("test peers not installed: %s is missing; run scripts/install-peers.sh (make test does)", missing)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPING: " + msg)
	}
	return dir
}
