package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/home"
	"github.com/pflow-go/pflow/internal/testutil/racechild"
)

// Another user of the same machine (see docs/security.md, "The home is
// yours alone" and "Boundaries on a shared machine"). When the suite runs
// as root, as CI does, these tests run programs as user nobody (65534)
// against a home that belongs to root, and check what that user could see
// or make root's pflow do. Root ignores permissions, so only a process of
// another user shows whether a file is really private.

// otherUserVar makes the test binary one of the other user's programs (see
// runOtherUser); its value is the mode.
const otherUserVar = "PFLOW_RELIABILITY_OTHER_USER"

// otherSecretVar holds a text whose presence in a file the other user
// reads is reported as a leak.
const otherSecretVar = "PFLOW_RELIABILITY_OTHER_SECRET"

// probeResult is what the other user's program found at one path.
type probeResult struct {
	Path string `json:"path"`
	Read bool   `json:"read"`           // the file was read, or the directory listed
	Leak bool   `json:"leak,omitempty"` // what was read holds the secret
	Err  string `json:"err,omitempty"`
}

// runOtherUser is the other user's program (the test binary, run as user
// nobody). Modes:
//
//   - read PATH...: read each file (list each directory) and print a
//     probeResult per path, one JSON object a line.
//   - walk DIR: read every file and list every directory under DIR that
//     the user can, printing a probeResult for each.
//   - post URL BODY [AUTHORIZATION]: POST BODY as a stateless MCP request
//     and print the status code, a newline and the answer.
//   - flood URL: 256 requests without a token, 32 at a time, each
//     announcing a body it never sends; print the count of each answer.
//   - drop:MODE ARGS...: run as root (from a step), run this program again
//     as nobody in MODE.
func runOtherUser(mode string, args []string) int {
	out := json.NewEncoder(os.Stdout)
	secret := os.Getenv(otherSecretVar)
	probe := func(path string) probeResult {
		r := probeResult{Path: path}
		var data []byte
		st, err := os.Lstat(path)
		if err == nil && st.IsDir() {
			var es []os.DirEntry
			es, err = os.ReadDir(path)
			for _, e := range es {
				data = append(data, e.Name()+"\n"...)
			}
		} else if err == nil {
			data, err = os.ReadFile(path)
		}
		if err != nil {
			r.Err = err.Error()
			return r
		}
		r.Read = true
		r.Leak = secret != "" && bytes.Contains(data, []byte(secret))
		return r
	}
	switch {
	case mode == "read":
		for _, p := range args {
			out.Encode(probe(p))
		}
	case mode == "walk":
		filepath.WalkDir(args[0], func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				out.Encode(probeResult{Path: path, Err: err.Error()})
				return nil
			}
			out.Encode(probe(path))
			return nil
		})
	case mode == "post":
		code, body, err := postMCP(args[0], args[1], args[2:]...)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("%d\n%s", code, body)
	case mode == "flood":
		// args: URL; 256 requests, 32 at a time, without a token, each with a
		// body announced and never sent; prints how many got 401.
		var mu sync.Mutex
		got := map[string]int{}
		var wg sync.WaitGroup
		jobs := make(chan int)
		for w := 0; w < 32; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range jobs {
					r := stalledPost(args[0])
					mu.Lock()
					got[r]++
					mu.Unlock()
				}
			}()
		}
		for i := 0; i < 256; i++ {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		json.NewEncoder(os.Stdout).Encode(got)
	case strings.HasPrefix(mode, "drop:"):
		self, _ := os.Executable()
		cmd := exec.Command(self, args...)
		cmd.Env = []string{otherUserVar + "=" + strings.TrimPrefix(mode, "drop:"), otherSecretVar + "=" + secret}
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.SysProcAttr = asNobody()
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
		return 2
	}
	return 0
}

// stalledPost announces a 100 MB body to the MCP endpoint at url, without
// a token, sends none of it, and returns the answer's status code (or why
// there was none within 20 s).
func stalledPost(url string) string {
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	c, err := net.DialTimeout("tcp", host, 20*time.Second)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{", host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	return strconv.Itoa(resp.StatusCode)
}

// asNobody makes a process run as user and group nobody, without root's
// supplementary groups.
func asNobody() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, NoSetGroups: true}}
}

// statelessMeta is the _meta of a stateless MCP request (revision 2026-07-28).
const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"other-user","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// toolCall is the body of a stateless tools/call request.
func toolCall(tool string, args map[string]any) string {
	b, _ := json.Marshal(args)
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + statelessMeta + `,"name":"` + tool + `","arguments":` + string(b) + `}}`
}

// postMCP sends one stateless MCP request (with an Authorization header
// when given) and returns the status and the answer (the JSON-RPC message,
// taken out of an event stream).
func postMCP(url, body string, authorization ...string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.Unmarshal([]byte(body), &m)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", m.Method)
	if m.Params.Name != "" {
		req.Header.Set("Mcp-Name", m.Params.Name)
	}
	if len(authorization) > 0 && authorization[0] != "" {
		req.Header.Set("Authorization", authorization[0])
	}
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", err
	}
	text := string(b)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(text, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, `"id":1`) {
				text = d
			}
		}
	}
	return resp.StatusCode, text, nil
}

// toolText is the text of a tools/call answer's first content block (the
// whole answer when it has none).
func toolText(body string) string {
	var m struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(body), &m) != nil || len(m.Result.Content) == 0 {
		return body
	}
	return m.Result.Content[0].Text
}

// otherUser is the other user of the machine.
type otherUser struct {
	t   *testing.T
	bin string // a copy of the test binary the user may run
}

// newOtherUser returns the other user. It needs root (to run a program as
// nobody); CI runs the suite as root.
func newOtherUser(t *testing.T) *otherUser {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("acting as another user needs root (CI runs this suite as root): run as root to check the multi-user boundaries")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &otherUser{t: t, bin: worldReadable(t, self)}
}

// run runs the user's program in mode and returns its output.
func (o *otherUser) run(mode string, secret string, args ...string) string {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.bin, args...)
	cmd.Env = []string{otherUserVar + "=" + mode, otherSecretVar + "=" + secret, "PATH=/usr/bin:/bin", racechild.Env()}
	cmd.Dir = "/"
	cmd.SysProcAttr = asNobody()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		o.t.Fatalf("the other user's %s %v: %v\n%s%s", mode, args, err, so.String(), se.String())
	}
	return so.String()
}

// probe runs mode read or walk and returns what the user found.
func (o *otherUser) probe(mode, secret string, paths ...string) []probeResult {
	o.t.Helper()
	return parseProbes(o.t, o.run(mode, secret, paths...))
}

func parseProbes(t *testing.T, out string) []probeResult {
	t.Helper()
	var rs []probeResult
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var r probeResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("the other user's program printed %q: %v", line, err)
		}
		rs = append(rs, r)
	}
	return rs
}

// pflowAs runs pflow as the other user.
func (o *otherUser) pflow(bin, root, dir string, args ...string) runResult {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env(root)
	cmd.Dir = dir
	cmd.SysProcAttr = asNobody()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		o.t.Fatalf("pflow %v as the other user: %v", args, err)
	}
	return runResult{so.String(), se.String(), code}
}

// sharedDir is a fresh directory every user may enter (0755), as /home or
// /srv are: what is private in it is private by its own modes.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pflow-multiuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// giveAway makes everything under path belong to the other user.
func giveAway(t *testing.T, path string) {
	t.Helper()
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// serveHTTP starts `pflow mcp serve --http 127.0.0.1:0` as the current user
// with args and extra environment, and returns its URL, its process id and
// stop, which stops it with SIGINT (as the end of the test does) and
// returns its stderr.
func serveHTTP(t *testing.T, root, dir string, extraEnv []string, args ...string) (url string, pid int, stop func() string) {
	t.Helper()
	cmd := exec.Command(pflowBin(t), append([]string{"mcp", "serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = env(root, extraEnv...)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	logged := make(chan struct{})
	urlc := make(chan string, 1)
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	stopped := false
	stop = func() string {
		if !stopped {
			stopped = true
			cmd.Process.Signal(syscall.SIGINT)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second): // only a hung server gets here
				cmd.Process.Kill()
				<-done
			}
			<-logged
		}
		return log.String()
	}
	t.Cleanup(func() { stop() })
	select {
	case u := <-urlc:
		return u, cmd.Process.Pid, stop
	case <-logged:
		t.Fatalf("pflow mcp serve --http exited before listening:\n%s", stop())
	case <-time.After(60 * time.Second):
		t.Fatalf("pflow mcp serve --http did not start within 60 s:\n%s", stop())
	}
	return "", 0, nil
}

// reportWorkflow reads a secret-named input and long piped notes, caches
// a step, and lets the other user look at the temporary directory
// that holds the notes while the second step runs.
const reportWorkflow = "# Report\nSends a report with a token.\n\n" +
	"## Inputs\n\n### api_token\nThe API token.\n- type: string\n\n" +
	"### notes\nLong notes, piped.\n- type: string\n- stdin: true\n\n" +
	"## Steps\n\n### greet\nUse the token (a step with a secret is never cached).\n- type: shell\n\n" +
	"```shell command\necho \"token ${api_token}\"\n```\n\n" +
	"### size\nCount the notes, cached.\n- type: shell\n- cache: true\n\n" +
	"```shell command\nprintf '%s' \"${notes}\" | wc -c\n```\n\n" +
	"### probe\nLet the other user look at the notes' temporary file.\n- type: shell\n\n" +
	"```shell command\nprintf '%s' \"${notes}\" | wc -c\n" +
	"PFLOW_RELIABILITY_OTHER_USER=drop:read \"$PROBE\" \"$TMPDIR\"/pflow-values-* \"$TMPDIR\"/pflow-values-*/*\n```\n\n" +
	"## Outputs\n\n### said\nWhat greet said.\n- source: ${greet.stdout}\n\n" +
	"### seen\nWhat the other user found.\n- source: ${probe.stdout}\n"

// TestOtherUserReadsNothingInTheHome: after real runs of a workflow with a
// secret-named input, a saved workflow's run, settings with a key and the
// token file of `pflow mcp serve --http`, every file in the home is 0600
// and every directory 0700; the other user can read none of them — not
// even with the home itself opened to 0755, which pflow accepts — nor the
// temporary file that carries a large value to a step while it runs, and
// pflow run as that user refuses the home.
func TestOtherUserReadsNothingInTheHome(t *testing.T) {
	other := newOtherUser(t)
	const secret = "s3cret-MultiUser-7d41c9"
	const keySecret = "sk-MultiUserSettings-90be"
	base := sharedDir(t)
	root := filepath.Join(base, "home")
	p := home.Resolve(root)
	tmp := filepath.Join(base, "tmp")
	os.Mkdir(tmp, 0o700)
	os.Chmod(tmp, 0o777|os.ModeSticky) // a shared TMPDIR, as /tmp is
	src := filepath.Join(base, "src")
	wf := writeFile(t, filepath.Join(src, "report.pflow.md"), reportWorkflow)
	notes := strings.Repeat("notes ", 40<<10) + secret // over 128 KiB: a file in TMPDIR
	extra := []string{"TMPDIR=" + tmp, "PROBE=" + other.bin, otherSecretVar + "=" + secret}

	mustIn(t, root, src, extra, "settings", "set-env", "OPENAI_API_KEY", keySecret)
	mustIn(t, root, src, extra, "workflow", "save", wf, "--name", "report")
	var seen string
	for _, target := range []string{"report", wf} {
		r := pflowIn(t, root, src, extra, notes, "--output-format", "json", target, "api_token="+secret)
		if r.Code != 0 {
			t.Fatalf("pflow %s: exit %d\n%s\n%s", target, r.Code, r.Stdout, r.Stderr)
		}
		var out struct {
			Result map[string]string `json:"result"`
		}
		json.Unmarshal([]byte(r.Stdout), &out)
		seen = out.Result["seen"]
	}
	// While the step ran, its value was in TMPDIR, out of the other
	// user's reach, and it is gone once the step ended.
	probes := parseProbes(t, strings.TrimSpace(strings.SplitN(seen, "\n", 2)[1]))
	if len(probes) != 2 || !strings.Contains(probes[0].Path, "pflow-values-") {
		t.Fatalf("the step did not see its value's temporary directory: %q", seen)
	}
	for _, pr := range probes {
		if pr.Read || !strings.Contains(pr.Err, "permission denied") {
			t.Errorf("the other user reached the temporary copy of a step's value: %+v", pr)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("TMPDIR keeps %v after the runs", left)
	}
	_, _, stop := serveHTTP(t, root, src, nil) // makes mcp-serve.token
	stop()

	// Every file 0600, every directory 0700; and the ones that matter are
	// there, so that this proves something.
	var files []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		st, _ := os.Lstat(path)
		switch {
		case st.IsDir() && st.Mode().Perm() != 0o700:
			t.Errorf("directory %s has mode %04o, want 0700", path, st.Mode().Perm())
		case st.Mode().IsRegular() && st.Mode().Perm() != 0o600:
			t.Errorf("file %s has mode %04o, want 0600", path, st.Mode().Perm())
		case !st.IsDir() && !st.Mode().IsRegular():
			t.Errorf("%s is neither a file nor a directory (%s)", path, st.Mode())
		}
		if st.Mode().IsRegular() {
			files = append(files, path)
		}
		return nil
	})
	glob := func(pattern string) string {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(root, pattern))
		if len(m) == 0 {
			t.Fatalf("no %s under the home after the runs: the test proves nothing", pattern)
		}
		return m[0]
	}
	named := []string{
		glob("runs/*/run.json"), glob("runs/*/steps.jsonl"), glob("debug/workflow-trace-*.json"),
		glob("workflows/report.pflow.md"), glob("mcp-serve.token"), glob("settings.json"), glob("cache/steps/*/*.json"),
	}
	if b, _ := os.ReadFile(p.Settings); !bytes.Contains(b, []byte(keySecret)) {
		t.Fatalf("settings.json does not hold the key: the test proves nothing")
	}
	if b, _ := os.ReadFile(named[3]); !bytes.Contains(b, []byte("last_execution_params")) {
		t.Fatalf("the saved workflow has no last_execution_params: the test proves nothing\n%s", b)
	}

	// The home is the user's own; opened to 0755 (accepted: no one else
	// can change it), it still shows the other user nothing but names.
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	mustIn(t, root, src, nil, "workflow", "list")
	for _, pr := range other.probe("read", secret, append(named, files...)...) {
		if pr.Read || !strings.Contains(pr.Err, "permission denied") {
			t.Errorf("the other user read %s (%+v)", pr.Path, pr)
		}
	}
	for _, s := range []string{secret, keySecret} {
		for _, pr := range other.probe("walk", s, base) {
			if pr.Leak {
				t.Errorf("the other user read a secret in %s", pr.Path)
			}
			if pr.Read && strings.HasPrefix(pr.Path, root+"/") {
				t.Errorf("the other user read %s", pr.Path)
			}
		}
	}
	// pflow, run by the other user on this home, refuses it.
	r := other.pflow(worldReadable(t, pflowBin(t)), root, "/", "workflow", "list")
	if r.Code == 0 || !strings.Contains(r.Stderr, "belongs to root") || strings.Contains(r.Stdout+r.Stderr, "report") {
		t.Errorf("pflow as the other user on root's home: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// mustIn is pflowIn that fails the test on a non-zero exit.
func mustIn(t *testing.T, root, dir string, extraEnv []string, args ...string) runResult {
	t.Helper()
	r := pflowIn(t, root, dir, extraEnv, "", args...)
	if r.Code != 0 {
		t.Fatalf("pflow %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// errMarker is returned by marked when a marker file exists.
var errMarker = errors.New("marker exists")

// marked reports whether the marker file exists.
func marked(path string) error {
	if _, err := os.Lstat(path); err == nil {
		return errMarker
	}
	return nil
}

// plantHome fills dir as another user would to take over the pflow of
// whoever uses it: an MCP server, a saved workflow and a settings env that
// each would create marker; settings that would mask the fix out of
// pflow's refusal (every value in settings.json env is masked).
func plantHome(t *testing.T, dir, marker string) {
	t.Helper()
	touch := "touch " + marker
	servers, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"evil": map[string]any{"command": "/bin/sh", "args": []string{"-c", touch}}}})
	writeFile(t, filepath.Join(dir, "mcp-servers.json"), string(servers))
	settings, _ := json.Marshal(map[string]any{"env": map[string]any{
		"HIDE_VAR": "PFLOW_HOME", "HIDE_FIX": "chmod 700", "HIDE_WHY": "belongs to", "HIDE_DIR": dir,
		"PFLOW_TEMPORAL_KEY": "planted", "BASH_ENV": marker}})
	writeFile(t, filepath.Join(dir, "settings.json"), string(settings))
	writeFile(t, filepath.Join(dir, "workflows", "evil.pflow.md"),
		"# Evil\nPlanted.\n\n## Steps\n\n### s\nTouch.\n- type: shell\n\n```shell command\n"+touch+"\n```\n")
	for _, d := range []string{dir, filepath.Join(dir, "workflows")} {
		os.Chmod(d, 0o700)
	}
}

// TestHomeOfAnotherUserIsRefused: a PFLOW_HOME the other user made (theirs,
// one everyone may write, or their link to root's home) stops every
// command of root's pflow with a security error that names the directory
// and the fix — settings planted there cannot mask them — and nothing in
// it runs: not its MCP servers, not its saved workflows.
func TestHomeOfAnotherUserIsRefused(t *testing.T) {
	newOtherUser(t)
	base := sharedDir(t)
	marker := filepath.Join(base, "marker")
	for _, c := range []struct {
		name  string
		mode  os.FileMode
		owned bool     // by the other user
		want  []string // in stderr
	}{
		{"owned by the other user", 0o700, true, []string{"belongs to nobody (uid 65534), not to you", "Set PFLOW_HOME to a directory you own"}},
		{"made 0777 by the other user", 0o777, true, []string{"belongs to nobody (uid 65534), not to you", "Set PFLOW_HOME to a directory you own"}},
		{"root's, writable by everyone", 0o777, false, []string{"is writable by its group and every user (mode 0777)", "chmod 700 "}},
		{"root's, a sticky shared folder", 0o777 | os.ModeSticky, false, []string{"is writable by its group and every user (mode 0777)", "chmod 700 "}},
		{"root's, writable by its group", 0o770, false, []string{"is writable by its group (mode 0770)", "chmod 700 "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(base, strings.Map(func(r rune) rune {
				if r == ' ' || r == ',' || r == '\'' {
					return '-'
				}
				return r
			}, c.name))
			plantHome(t, dir, marker)
			if c.owned {
				giveAway(t, dir)
			}
			if err := os.Chmod(dir, c.mode); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"evil"}, {"run", "evil"}, {"mcp", "sync", "--all"}, {"mcp", "test", "evil"}, {"mcp", "list"},
				{"mcp", "serve"}, {"workflow", "list"}, {"settings", "show"}, {"registry", "list"},
				{"registry", "run", "shell", "command=" + "touch " + marker},
			} {
				r := pflowIn(t, dir, base, nil, "", args...)
				if r.Code == 0 {
					t.Errorf("pflow %s accepted the home: %s%s", strings.Join(args, " "), r.Stdout, r.Stderr)
					continue
				}
				for _, w := range append([]string{"pflow's home " + dir + " ", "another user could change the workflows"}, c.want...) {
					if !strings.Contains(r.Stderr, w) {
						t.Errorf("pflow %s: stderr lacks %q:\n%s", strings.Join(args, " "), w, r.Stderr)
					}
				}
				if err := marked(marker); err != nil {
					t.Fatalf("pflow %s ran what the other user planted: %v", strings.Join(args, " "), err)
				}
			}
		})
	}
	// PFLOW_HOME names a link the other user made in a shared folder, to a
	// private home of root's: between pflow's check of the home and its
	// reads, they could point it at a home of theirs.
	t.Run("a link of the other user's", func(t *testing.T) {
		shared := filepath.Join(base, "shared")
		mine := filepath.Join(base, "mine")
		theirs := filepath.Join(base, "theirs")
		os.Mkdir(shared, 0o700)
		os.Chmod(shared, 0o777|os.ModeSticky)
		os.Mkdir(mine, 0o700)
		plantHome(t, theirs, marker)
		giveAway(t, theirs)
		link := filepath.Join(shared, "pflow-home")
		if err := os.Symlink(mine, link); err != nil {
			t.Fatal(err)
		}
		giveAway(t, link)
		for _, args := range [][]string{{"evil"}, {"mcp", "sync", "--all"}, {"workflow", "list"}} {
			r := pflowIn(t, link, base, nil, "", args...)
			if r.Code == 0 || !strings.Contains(r.Stderr, "pflow's home "+link+" is reached through the symlink "+link+", which belongs to nobody (uid 65534)") ||
				!strings.Contains(r.Stderr, "Set PFLOW_HOME to the directory itself") {
				t.Errorf("pflow %s: exit %d, want the link refused:\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
			}
		}
		if es, _ := os.ReadDir(mine); len(es) != 0 {
			t.Errorf("pflow used the home behind the other user's link: %v", es)
		}
		if err := marked(marker); err != nil {
			t.Fatal("pflow ran what the other user planted")
		}
	})
}

// markerWorkflow is an inline workflow whose one shell step creates marker.
func markerWorkflow(marker string) string {
	return "# Touch\nCreates a marker.\n\n## Steps\n\n### touch\nTouch it.\n- type: shell\n\n```shell command\ntouch " + marker + "\n```\n"
}

// TestOtherUserCannotUseTheHTTPServer: `pflow mcp serve --http` started by
// root without a token makes one only root can read; the other user,
// without it, gets 401 for every request — a workflow_execute of a shell
// step never runs — and cannot read the token file. The same request with
// the token runs the step (so the refusal is the token's doing).
func TestOtherUserCannotUseTheHTTPServer(t *testing.T) {
	other := newOtherUser(t)
	base := sharedDir(t)
	root := filepath.Join(base, "home")
	p := home.Resolve(root)
	marker := filepath.Join(base, "marker")
	url, _, _ := serveHTTP(t, root, base, nil)
	call := toolCall("workflow_execute", map[string]any{"workflow": markerWorkflow(marker)})
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"other","version":"1"}}}`

	guess := "Bearer " + strings.Repeat("0", 64)
	for _, c := range []struct{ name, body, auth string }{
		{"workflow_execute without a token", call, ""},
		{"workflow_execute with a guessed token", call, guess},
		{"workflow_execute with an empty bearer", call, "Bearer "},
		{"workflow_execute with the home's path as token", call, "Bearer " + p.MCPServeToken},
		{"initialize without a token", initialize, ""},
	} {
		out := other.run("post", "", url, c.body, c.auth)
		code, body, _ := strings.Cut(out, "\n")
		if code != "401" || !strings.Contains(body, "unauthorized") {
			t.Errorf("%s: %s %s, want 401", c.name, code, body)
		}
		if err := marked(marker); err != nil {
			t.Fatalf("%s: the shell step ran for the other user", c.name)
		}
	}
	// The token file is root's alone, even in a home opened to 0755.
	for _, mode := range []os.FileMode{0o700, 0o755} {
		os.Chmod(root, mode)
		for _, pr := range other.probe("read", "", p.MCPServeToken) {
			if pr.Read || !strings.Contains(pr.Err, "permission denied") {
				t.Errorf("home mode %04o: the other user read the token file: %+v", mode, pr)
			}
		}
	}
	// Root, with the token, runs the same call.
	tok, err := os.ReadFile(p.MCPServeToken)
	if err != nil {
		t.Fatal(err)
	}
	code, body, err := postMCP(url, call, "Bearer "+strings.TrimSpace(string(tok)))
	if err != nil || code != http.StatusOK || !strings.Contains(toolText(body), `"status":"success"`) {
		t.Fatalf("root's call with the token: %d %s %v", code, body, err)
	}
	if marked(marker) == nil {
		t.Fatalf("root's call did not run the step: the refusals above prove nothing")
	}
}

// TestTokenOnTheCommandLineIsNamed: every local user can read a process's
// command line (ps), not its environment. A server given --token warns that
// the other user can read it there (and they can: the test reads it as
// that user); one given PFLOW_MCP_TOKEN shows the other user nothing and
// does not warn.
func TestTokenOnTheCommandLineIsNamed(t *testing.T) {
	other := newOtherUser(t)
	base := sharedDir(t)
	root := filepath.Join(base, "home")
	const tok = "cmdline-token-MultiUser-5be0a7c3d2e1"
	for _, c := range []struct {
		name  string
		env   []string
		args  []string
		warns bool
	}{
		{"--token", nil, []string{"--token", tok}, true},
		{"PFLOW_MCP_TOKEN", []string{"PFLOW_MCP_TOKEN=" + tok}, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			url, pid, stop := serveHTTP(t, root, base, c.env, c.args...)
			proc := fmt.Sprintf("/proc/%d/", pid)
			seen := false
			for _, pr := range other.probe("read", tok, proc+"cmdline", proc+"environ") {
				seen = seen || pr.Leak
				if strings.HasSuffix(pr.Path, "environ") && pr.Read {
					t.Errorf("the other user read the server's environment")
				}
			}
			if seen {
				out := other.run("post", "", url, toolCall("workflow_list", map[string]any{}), "Bearer "+tok)
				if !strings.HasPrefix(out, "200\n") {
					t.Errorf("the token the other user read is not the server's: %s", out)
				}
			}
			log := stop()
			warned := strings.Contains(log, "every user of this machine can read --token in the process list (ps): pass the token in PFLOW_MCP_TOKEN instead")
			if seen && !warned {
				t.Errorf("the other user read the token on the command line, and the server did not warn:\n%s", log)
			}
			if warned != c.warns {
				t.Errorf("warned %v, want %v:\n%s", warned, c.warns, log)
			}
		})
	}
}

// writeWorkflow writes content to path (one template, input v).
func writeWorkflow(path string) string {
	return "# Note\nWrites a note.\n\n## Inputs\n\n### v\nPart of the path.\n- type: string\n\n" +
		"## Steps\n\n### write\nWrite it.\n- type: write-file\n- file_path: " + path + "\n- content: a note\n"
}

// TestDataStaysInsideTheAllowedDirectories: a value from data cannot take a
// file step out of its folder — a `..` it makes is refused, from the
// command line and over HTTP — and over HTTP nothing leaves --allow-dir: an
// absolute value, or a symlink the other user planted in a shared folder
// inside it, is refused before the step writes. A plain value is written
// (so the refusals are the paths' doing).
func TestDataStaysInsideTheAllowedDirectories(t *testing.T) {
	newOtherUser(t)
	base := sharedDir(t)
	root := filepath.Join(base, "home")
	p := home.Resolve(root)
	allowed := filepath.Join(base, "allowed")
	outside := filepath.Join(base, "outside")
	shared := filepath.Join(allowed, "shared")
	for _, d := range []string{outside, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(shared, 0o777|os.ModeSticky)
	link := filepath.Join(shared, "link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	giveAway(t, link)

	notes := filepath.Join(allowed, "notes")
	cases := []struct {
		name, path, v, want string
		ok                  bool
	}{
		{"a plain value", notes + "/${v}", "ok.txt", "", true},
		{"a value making ..", notes + "/${v}", "../../outside/dotdot", "the value of ${v} makes the path segment", false},
		{"a value making .. alone", notes + "/${v}/escape", "..", "the value of ${v} makes the path segment", false},
		{"an absolute value", "${v}", filepath.Join(outside, "absolute"), "outside", false},
		{"a symlink the other user planted", link + "/${v}", "planted", "outside", false},
	}
	url, _, _ := serveHTTP(t, root, base, nil, "--allow-dir", allowed)
	tok, err := os.ReadFile(p.MCPServeToken)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run("http "+c.name, func(t *testing.T) {
			code, body, err := postMCP(url, toolCall("workflow_execute", map[string]any{
				"workflow": writeWorkflow(c.path), "parameters": map[string]any{"v": c.v}}), "Bearer "+strings.TrimSpace(string(tok)))
			if err != nil || code != http.StatusOK {
				t.Fatalf("%d %s %v", code, body, err)
			}
			text := toolText(body)
			ok := strings.Contains(text, `"status":"success"`)
			if ok != c.ok || !strings.Contains(text, c.want) {
				t.Errorf("success %v (want %v), want %q in:\n%s", ok, c.ok, c.want, text)
			}
		})
	}
	wf := filepath.Join(base, "note.pflow.md")
	for _, c := range cases[:3] {
		t.Run("cli "+c.name, func(t *testing.T) {
			writeFile(t, wf, writeWorkflow(c.path))
			r := pflowIn(t, root, base, nil, "", wf, "v="+c.v)
			if (r.Code == 0) != c.ok || !strings.Contains(r.Stderr, c.want) {
				t.Errorf("exit %d (want success %v), want %q in:\n%s", r.Code, c.ok, c.want, r.Stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(notes, "ok.txt")); err != nil {
		t.Errorf("the plain value was not written: the refusals prove nothing: %v", err)
	}
	if left, _ := os.ReadDir(outside); len(left) != 0 {
		t.Errorf("data wrote outside its folders: %v", left)
	}
}

// TestFileStepsDoNotFollowPlantedLinks: in a folder every user may write
// (sticky, like /tmp), the other user can plant a symlink where root's
// workflow will write, read or copy, pointing at root's files. File steps
// refuse to follow such a link, as Linux does with fs.protected_symlinks
// (not every machine turns it on, and pflow resolved links itself, which
// that setting does not cover): the step fails, names the link and its
// owner, and root's files are untouched. Root's own links there, and links
// in folders others cannot write, are followed as before.
func TestFileStepsDoNotFollowPlantedLinks(t *testing.T) {
	newOtherUser(t)
	base := sharedDir(t)
	root := filepath.Join(base, "home")
	shared := filepath.Join(base, "shared")
	victim := filepath.Join(base, "victim") // root's private folder
	mine := filepath.Join(base, "mine")
	for _, d := range []string{shared, victim, mine} {
		os.Mkdir(d, 0o700)
	}
	os.Chmod(shared, 0o777|os.ModeSticky)
	const original = "root's own settings\n"
	bashrc := writeFile(t, filepath.Join(victim, ".bashrc"), original)
	secretFile := writeFile(t, filepath.Join(victim, "secret.txt"), "root's private data\n")
	src := writeFile(t, filepath.Join(base, "src.txt"), "a source\n")
	plant := func(name, target string) string {
		link := filepath.Join(shared, name)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		giveAway(t, link)
		return link
	}
	report := plant("report.txt", bashrc)
	input := plant("input.txt", secretFile)
	dir := plant("dir", victim)
	chain := plant("chain", report) // a planted link to a planted link
	own := filepath.Join(shared, "own")
	os.Symlink(mine, own) // root's own link: followed

	step := func(typ string, params ...string) string {
		w := "# Files\nA file step.\n\n## Steps\n\n### s\nThe step.\n- type: " + typ + "\n" + strings.Join(params, "")
		if typ == "read-file" {
			w += "\n## Outputs\n\n### out\nWhat it read.\n- source: ${s.content}\n"
		}
		return w
	}
	wf := filepath.Join(base, "files.pflow.md")
	for _, c := range []struct {
		name, workflow, link string
	}{
		{"write-file", step("write-file", "- file_path: "+report+"\n", "- content: pwned\n"), report},
		{"write-file append", step("write-file", "- file_path: "+report+"\n", "- content: pwned\n", "- append: true\n"), report},
		{"write-file through a planted folder", step("write-file", "- file_path: "+dir+"/new.txt\n", "- content: pwned\n"), dir},
		{"write-file through two links", step("write-file", "- file_path: "+chain+"\n", "- content: pwned\n"), chain},
		{"read-file", step("read-file", "- file_path: "+input+"\n"), input},
		{"copy-file", step("copy-file", "- source_path: "+src+"\n", "- dest_path: "+dir+"/\n"), dir},
		{"copy-file over", step("copy-file", "- source_path: "+input+"\n", "- dest_path: "+filepath.Join(base, "copied.txt")+"\n"), input},
		{"move-file", step("move-file", "- source_path: "+src+"\n", "- dest_path: "+dir+"/moved.txt\n"), dir},
		{"delete-file", step("delete-file", "- file_path: "+dir+"/secret.txt\n", "- confirm: true\n"), dir},
	} {
		t.Run(c.name, func(t *testing.T) {
			writeFile(t, wf, c.workflow)
			r := pflowIn(t, root, base, nil, "", "--output-format", "json", wf)
			out := r.Stdout + r.Stderr
			if r.Code == 0 || !strings.Contains(out, c.link) || !strings.Contains(out, "uid 65534") {
				t.Errorf("exit %d, want a failure naming the link %s and its owner:\n%s", r.Code, c.link, out)
			}
			if strings.Contains(out, "private data") {
				t.Errorf("the step read root's file through the link:\n%s", out)
			}
		})
		if b, _ := os.ReadFile(bashrc); string(b) != original {
			t.Fatalf("%s: root's file was written through the link: %q", c.name, b)
		}
		if es, _ := os.ReadDir(victim); len(es) != 2 {
			t.Fatalf("%s: root's folder changed: %v", c.name, es)
		}
		if _, err := os.Stat(src); err != nil {
			t.Fatalf("%s: the source moved: %v", c.name, err)
		}
	}
	// A planted link itself can be deleted (it is not followed).
	writeFile(t, wf, step("delete-file", "- file_path: "+report+"\n", "- confirm: true\n"))
	if r := pflowIn(t, root, base, nil, "", wf); r.Code != 0 {
		t.Fatalf("deleting the planted link: exit %d\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Lstat(report); err == nil {
		t.Fatalf("the planted link was not deleted")
	}
	if b, _ := os.ReadFile(bashrc); string(b) != original {
		t.Fatalf("deleting the link changed its target: %q", b)
	}
	// Root's own link in the shared folder is followed.
	writeFile(t, wf, step("write-file", "- file_path: "+own+"/ok.txt\n", "- content: fine\n"))
	if r := pflowIn(t, root, base, nil, "", wf); r.Code != 0 {
		t.Fatalf("root's own link: exit %d\n%s", r.Code, r.Stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "ok.txt")); string(b) != "fine" {
		t.Fatalf("root's own link was not followed: %q", b)
	}
}

// TestOtherUserCannotCrowdOutTheOwner: the other user, without the token,
// floods the HTTP server with requests that announce a 100 MB body and
// never send it. Each is answered 401 at once, without the body (the
// connection is closed, so none holds one of the 128 connection slots),
// and root's own call with the token is served after it.
func TestOtherUserCannotCrowdOutTheOwner(t *testing.T) {
	other := newOtherUser(t)
	base := sharedDir(t)
	root := filepath.Join(base, "home")
	url, _, _ := serveHTTP(t, root, base, nil)
	var got map[string]int
	if err := json.Unmarshal([]byte(other.run("flood", "", url)), &got); err != nil {
		t.Fatal(err)
	}
	if got["401"] != 256 {
		t.Errorf("answers to the other user's stalled requests: %v, want 256 × 401", got)
	}
	tok, _ := os.ReadFile(home.Resolve(root).MCPServeToken)
	code, body, err := postMCP(url, toolCall("workflow_list", map[string]any{}), "Bearer "+strings.TrimSpace(string(tok)))
	if err != nil || code != http.StatusOK {
		t.Fatalf("root's call after the flood: %d %s %v", code, body, err)
	}
}

// TestWorkingDirectoryIsNotTheHome: root runs pflow in a folder the other
// user controls (theirs, writable by all), where they planted a workflow
// named like a saved one, MCP servers, settings and a .pflow home. pflow
// reads none of it: a name is looked up in root's library only, the
// configuration is the home's, and an HTTP client's `evil` or
// `evil.pflow.md` names no file there. Nothing planted runs.
func TestWorkingDirectoryIsNotTheHome(t *testing.T) {
	newOtherUser(t)
	base := sharedDir(t)
	root := filepath.Join(base, "home")
	theirs := filepath.Join(base, "theirs")
	marker := filepath.Join(base, "marker")
	plantHome(t, filepath.Join(theirs, ".pflow"), marker)
	plantHome(t, theirs, marker)
	writeFile(t, filepath.Join(theirs, "evil.pflow.md"), markerWorkflow(marker))
	writeFile(t, filepath.Join(theirs, "pflow.json"), `{"mcpServers": {"evil": {"command": "/bin/sh", "args": ["-c", "touch `+marker+`"]}}}`)
	giveAway(t, theirs)
	os.Chmod(theirs, 0o777)

	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"evil"}, false},
		{[]string{"run", "evil"}, false},
		{[]string{"mcp", "list"}, true},
		{[]string{"mcp", "sync", "--all"}, false}, // "No MCP servers configured"
		{[]string{"workflow", "list"}, true},
		{[]string{"registry", "list"}, true},
		{[]string{"settings", "show"}, true},
	} {
		r := pflowIn(t, root, theirs, nil, "", c.args...)
		if (r.Code == 0) != c.ok {
			t.Errorf("pflow %s: exit %d, want success %v\n%s%s", strings.Join(c.args, " "), r.Code, c.ok, r.Stdout, r.Stderr)
		}
		if strings.Contains(r.Stdout, "evil") || strings.Contains(r.Stdout, "HIDE_") {
			t.Errorf("pflow %s shows what the other user planted in the working directory:\n%s", strings.Join(c.args, " "), r.Stdout)
		}
		if err := marked(marker); err != nil {
			t.Fatalf("pflow %s ran what the other user planted", strings.Join(c.args, " "))
		}
	}
	url, _, _ := serveHTTP(t, root, theirs, nil)
	tok, _ := os.ReadFile(home.Resolve(root).MCPServeToken)
	for _, ref := range []string{"evil", "evil.pflow.md", "./evil.pflow.md"} {
		code, body, err := postMCP(url, toolCall("workflow_execute", map[string]any{"workflow": ref}), "Bearer "+strings.TrimSpace(string(tok)))
		if err != nil || code != http.StatusOK || strings.Contains(toolText(body), `"status":"success"`) {
			t.Errorf("workflow_execute %q from the other user's folder: %d %s %v", ref, code, body, err)
		}
		if err := marked(marker); err != nil {
			t.Fatalf("workflow_execute %q ran the other user's workflow", ref)
		}
	}
}
