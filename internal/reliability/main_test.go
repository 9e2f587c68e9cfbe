package reliability

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/testutil/pflowbin"
	"github.com/pflow-go/pflow/internal/testutil/realpython"
)

var longFlag = flag.Bool("reliability.long", false, "run the long variants (many more kill points)")

// long reports whether the long variants were asked for.
func long() bool { return *longFlag || os.Getenv("PFLOW_LONG_TESTS") == "1" }

// budget is the wall-clock time a randomized loop may use.
func budget(short, longer time.Duration) time.Duration {
	if long() {
		return longer
	}
	return short
}

func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(hostileServerVar); ok {
		os.Exit(runHostileServer())
	}
	if mode, ok := os.LookupEnv(otherUserVar); ok {
		os.Exit(runOtherUser(mode, os.Args[1:]))
	}
	// Code steps start python3 each time: the interpreter, not a shim.
	realpython.Use()
	flag.Parse()
	os.Exit(m.Run())
}

// pflowBin returns the real binary, built once for every test package.
func pflowBin(t *testing.T) string {
	t.Helper()
	return pflowbin.Path(t)
}

// env is a clean environment for pflow processes: PATH, a temporary
// PFLOW_HOME and HOME, plus extra KEY=VALUE pairs. The test's own
// environment (which may hold real credentials) is not passed on.
func env(home string, extra ...string) []string {
	e := []string{
		"PATH=" + os.Getenv("PATH"),
		"PFLOW_HOME=" + home,
		"HOME=" + filepath.Join(home, "user-home"),
		"LANG=C",
	}
	return append(e, extra...)
}

// runResult is a finished pflow process.
type runResult struct {
	Stdout, Stderr string
	Code           int
}

// pflow runs the binary with args in the home directory, bounded by 60 s.
func pflow(t *testing.T, home string, extraEnv []string, stdin string, args ...string) runResult {
	t.Helper()
	return pflowIn(t, home, home, extraEnv, stdin, args...)
}

// pflowIn runs the binary with args in dir, bounded by 60 s. A pflow still
// running then gets SIGQUIT, so that the failure shows where each of its
// goroutines was (Go prints them on stderr), and SIGKILL 5 s later.
func pflowIn(t *testing.T, home, dir string, extraEnv []string, stdin string, args ...string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, pflowBin(t), args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = env(home, extraEnv...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			t.Fatalf("pflow %s: %v", strings.Join(args, " "), err)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("pflow %s: did not finish within 60 s\nstderr: %s", strings.Join(args, " "), se.String())
	}
	return runResult{so.String(), se.String(), code}
}

// mustPflow is pflow that fails the test on a non-zero exit.
func mustPflow(t *testing.T, home string, extraEnv []string, args ...string) runResult {
	t.Helper()
	r := pflow(t, home, extraEnv, "", args...)
	if r.Code != 0 {
		t.Fatalf("pflow %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// tempFiles lists the leftover atomic-write temp files (.<name>.*.tmp) in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// tempFilesIn lists files under dir whose name contains sub.
func tempFilesIn(t *testing.T, dir, sub string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), sub) {
			out = append(out, path)
		}
		return nil
	})
	return out
}
