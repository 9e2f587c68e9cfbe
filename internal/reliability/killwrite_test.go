package reliability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/home"
	"github.com/pflow-go/pflow/internal/library"
	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/registry"
	"github.com/pflow-go/pflow/internal/reliability/loopwriter"
	"github.com/pflow-go/pflow/internal/settings"
	"github.com/pflow-go/pflow/internal/testutil/pflowbin"
)

// checker validates the file a writer kind writes after a kill and returns
// its version; prev is the version seen after the previous kill (a version
// may never go back: that would be a lost write).
type checker func(t *testing.T, p home.Paths, prev int) int

var killKinds = []struct {
	kind  string
	file  func(p home.Paths) string
	check checker
}{
	{"settings", func(p home.Paths) string { return p.Settings }, checkSettings},
	{"mcp-servers", func(p home.Paths) string { return p.MCPServers }, checkServers},
	{"registry", func(p home.Paths) string { return p.Registry }, checkRegistry},
	{"workflow", func(p home.Paths) string { return filepath.Join(p.Workflows, loopwriter.WFName+library.Ext) }, checkWorkflow},
}

// TestKillMidWrite SIGKILLs a process that rewrites registry.json,
// mcp-servers.json, settings.json or a saved workflow in a tight loop, at
// random points, many times; after every kill the file must be a complete
// old or new version (it parses, nothing is truncated or mixed, no write
// that had finished is lost), and the only leftovers are the temp files a
// killed write can leave (at most one per kill).
func TestKillMidWrite(t *testing.T) {
	for _, k := range killKinds {
		t.Run(k.kind, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			p := home.Resolve(root)
			deadline := time.Now().Add(budget(6*time.Second, 90*time.Second))
			prev, kills, advanced := 0, 0, 0
			for kills < 20 || time.Now().Before(deadline) {
				startKilledWriter(t, k.kind, root)
				kills++
				cur := k.check(t, p, prev)
				if cur > prev {
					advanced++
				}
				prev = cur
				if t.Failed() {
					t.Fatalf("after kill %d the %s file is broken (see above)", kills, k.kind)
				}
			}
			if prev == 0 || advanced < kills/4 {
				t.Fatalf("%d kills, final version %d, %d kills after progress: the writer hardly wrote anything, so the test proved nothing", kills, prev, advanced)
			}
			dir := filepath.Dir(k.file(p))
			if tmps := tempFiles(t, dir); len(tmps) > kills {
				t.Fatalf("%d temp files left in %s after %d kills (at most one per kill expected): %v", len(tmps), dir, kills, tmps)
			} else {
				t.Logf("%d kills, file at version %d, %d leftover temp files", kills, prev, len(tmps))
			}
		})
	}
}

// startKilledWriter runs the loop writer for kind and SIGKILLs it at a
// random point: after 0–2 finished writes, a random fraction (0–120 %) of
// one write's duration into the next.
func startKilledWriter(t *testing.T, kind, root string) {
	t.Helper()
	cmd := exec.Command(pflowbin.Command(t, "loopwriterd"), kind)
	cmd.Env = env(root)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) time.Time {
		select {
		case l, ok := <-lines:
			if !ok || l != what {
				kill()
				cmd.Wait()
				t.Fatalf("writer %s: expected %q, got %q (stderr: %s)", kind, what, l, stderr.String())
			}
		case <-time.After(30 * time.Second):
			kill()
			cmd.Wait()
			t.Fatalf("writer %s: no %q within 30 s (stderr: %s)", kind, what, stderr.String())
		}
		return time.Now()
	}
	last := next("ready")
	write := 20 * time.Millisecond
	for i := rand.IntN(3); i > 0; i-- {
		now := next("wrote")
		write = now.Sub(last)
		last = now
	}
	time.Sleep(time.Duration(rand.Int64N(int64(write) * 6 / 5)))
	kill()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("writer %s ended by itself (%v) before the kill: %s", kind, err, stderr.String())
	}
}

func readOrMissing(t *testing.T, path string) ([]byte, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return data, true
}

func checkSettings(t *testing.T, p home.Paths, prev int) int {
	data, ok := readOrMissing(t, p.Settings)
	if !ok {
		if prev > 0 {
			t.Errorf("settings.json vanished after version %d was written", prev)
		}
		return 0
	}
	var raw struct {
		Env map[string]string `json:"env"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Errorf("settings.json is not valid JSON (%d bytes): %v", len(data), err)
		return prev
	}
	n, err := strconv.Atoi(raw.Env["COUNTER"])
	if err != nil || raw.Env["PAD"] != loopwriter.Pad(n) {
		t.Errorf("settings.json is not one complete version: COUNTER=%q, PAD of %d bytes", raw.Env["COUNTER"], len(raw.Env["PAD"]))
	}
	if n < prev {
		t.Errorf("settings.json went back from version %d to %d: a finished write was lost", prev, n)
	}
	var warn bytes.Buffer
	if _, err := settings.Load(p.Settings, &warn); err != nil || warn.Len() > 0 {
		t.Errorf("settings.Load: %v %s", err, warn.String())
	}
	if st, err := os.Stat(p.Settings); err == nil && st.Mode().Perm() != 0o600 {
		t.Errorf("settings.json has mode %04o after a crash, want 0600", st.Mode().Perm())
	}
	return n
}

func checkServers(t *testing.T, p home.Paths, prev int) int {
	data, ok := readOrMissing(t, p.MCPServers)
	if !ok {
		if prev > 0 {
			t.Errorf("mcp-servers.json vanished after %d servers were added", prev)
		}
		return 0
	}
	var raw struct {
		Servers map[string]struct {
			Args []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Errorf("mcp-servers.json is not valid JSON (%d bytes): %v", len(data), err)
		return prev
	}
	n := len(raw.Servers)
	for i := 0; i < n; i++ {
		s, ok := raw.Servers[loopwriter.ServerName(i)]
		if !ok || len(s.Args) != 1 || s.Args[0] != loopwriter.Pad(i)[:loopwriter.ServerPad] {
			t.Errorf("mcp-servers.json has %d servers but %s is missing or incomplete", n, loopwriter.ServerName(i))
			break
		}
	}
	if n < prev {
		t.Errorf("mcp-servers.json lost servers: %d before the kill, %d after", prev, n)
	}
	if _, err := mcpclient.LoadFile(p.MCPServers); err != nil {
		t.Errorf("mcpclient.LoadFile: %v", err)
	}
	return n
}

var crashToolRE = regexp.MustCompile(`^mcp-crash-tool-(\d+)$`)

func checkRegistry(t *testing.T, p home.Paths, prev int) int {
	data, ok := readOrMissing(t, p.Registry)
	if !ok {
		if prev > 0 {
			t.Errorf("registry.json vanished after %d entries were written", prev)
		}
		return 0
	}
	var f registry.File
	if err := json.Unmarshal(data, &f); err != nil {
		t.Errorf("registry.json is not valid JSON (%d bytes): %v", len(data), err)
		return prev
	}
	n := 0
	for k := range f.Nodes {
		if crashToolRE.MatchString(k) {
			n++
		}
	}
	for i := 0; i < n; i++ {
		e := f.Nodes[loopwriter.ToolType(i)]
		if e == nil || e.MCP == nil || e.Interface.Description != loopwriter.Pad(i)[:loopwriter.RegistryPad] {
			t.Errorf("registry.json has %d crash-test entries but %s is missing or incomplete", n, loopwriter.ToolType(i))
			break
		}
	}
	if n < prev {
		t.Errorf("registry.json lost entries: %d before the kill, %d after", prev, n)
	}
	if bak, ok := readOrMissing(t, p.Registry+".bak"); ok {
		var b registry.File
		if err := json.Unmarshal(bak, &b); err != nil {
			t.Errorf("registry.json.bak is not valid JSON (%d bytes): %v", len(bak), err)
		}
	}
	var warn bytes.Buffer
	if _, err := registry.Open(p.Registry, &warn).Load(); err != nil || warn.Len() > 0 {
		t.Errorf("registry load after the kill: %v %s", err, warn.String())
	}
	return n
}

func checkWorkflow(t *testing.T, p home.Paths, prev int) int {
	path := filepath.Join(p.Workflows, loopwriter.WFName+library.Ext)
	data, ok := readOrMissing(t, path)
	if !ok {
		if prev > 0 {
			t.Errorf("saved workflow vanished after version %d was saved", prev)
		}
		return 0
	}
	lib := &library.Library{Dir: p.Workflows, DraftsDir: p.Drafts}
	s, err := lib.Load(loopwriter.WFName)
	if err != nil {
		t.Errorf("saved workflow does not load (%d bytes): %v", len(data), err)
		return prev
	}
	n, err := strconv.Atoi(strings.TrimPrefix(s.Meta.Description, "v"))
	if err != nil || !bytes.Contains(data, []byte(fmt.Sprintf("echo v%d # %s\n", n, loopwriter.Pad(n)[:loopwriter.WorkflowPad]))) {
		t.Errorf("saved workflow is not one complete version: description %q, %d bytes", s.Meta.Description, len(data))
	}
	if n < prev {
		t.Errorf("saved workflow went back from version %d to %d", prev, n)
	}
	return n
}
