package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/llmtest"
)

// docMessage turns a message as docs/troubleshooting.md quotes it into a
// pattern: <placeholders> and "..." stand for any text.
func docMessage(msg string) *regexp.Regexp {
	var b strings.Builder
	for msg != "" {
		lt, dots := strings.IndexByte(msg, '<'), strings.Index(msg, "...")
		switch {
		case dots == 0:
			b.WriteString(`.*`)
			msg = msg[3:]
		case lt == 0 && strings.IndexByte(msg, '>') > 0:
			b.WriteString(`.+?`)
			msg = msg[strings.IndexByte(msg, '>')+1:]
		default:
			next := len(msg)
			for _, i := range []int{lt, dots} {
				if i > 0 && i < next {
					next = i
				}
			}
			if lt == 0 { // a lone '<'
				next = 1
			}
			b.WriteString(regexp.QuoteMeta(msg[:next]))
			msg = msg[next:]
		}
	}
	return regexp.MustCompile(b.String())
}

const plainWorkflow = `# Plain
Says hi.

## Steps

### s
Say hi.
- type: shell
- command: echo hi
`

// TestTroubleshootingMessagesAreProduced runs the real binary into the
// failures docs/troubleshooting.md lists (every message it quotes
// is produced by a test), each matched against the heading's text as
// written there. The messages of failures a command line cannot provoke
// (MCP protocol faults, the MCP server's own tools) are produced by their
// packages' tests, which assert the same text.
func TestTroubleshootingMessagesAreProduced(t *testing.T) {
	bin := buildPflow(t)
	cases := []struct {
		msg   string // as the heading quotes it
		files map[string]string
		setup func(t *testing.T, dir, home string) []string // extra env
		stdin string
		args  []string
		// asUser runs pflow as an unprivileged user when the test runs as
		// root (root may remove and read anything).
		asUser bool
	}{
		{msg: "flags must come before the workflow: found <flags> after '<workflow>'",
			files: map[string]string{"w.pflow.md": plainWorkflow}, args: []string{"w.pflow.md", "--no-trace"}},
		{msg: "'<name>' is both a saved workflow (<path>) and a node type (<type>); pflow does not guess which to run",
			setup: func(t *testing.T, dir, home string) []string {
				writeFile(t, filepath.Join(home, "workflows", "read-file.pflow.md"), plainWorkflow, 0o644)
				return nil
			},
			args: []string{"read-file", "--file_path=x"}},
		{msg: "unknown parameter --<param> for node '<type>'", args: []string{"shell", "--comand=x"}},
		{msg: "node '<type>' has no main input, so <what> has nowhere to go", stdin: "data\n", args: []string{"read-file", "--file_path=x"}},
		{msg: "a lone '>' reached pflow after node '<type>'", args: []string{"shell", "--command=echo x", ">"}},
		{msg: `"<request>" is not a saved workflow, a file or a node type, and planning a workflow from words needs an LLM, but none is configured`, args: []string{"find python files"}},
		{msg: `the workflow <model> planned for "<request>" is still invalid after <n> repairs`,
			setup: func(t *testing.T, dir, home string) []string {
				fake := llmtest.NewOpenAI(t)
				fake.SetDefault(llmtest.Text("# Broken\nReads a step that does not exist.\n\n## Steps\n\n### show\nShow it.\n- type: shell\n- command: echo ${nowhere.stdout}\n"))
				return fake.EnvList()
			},
			args: []string{"--yes", "find python files"}},
		{msg: `argument "<arg>" is not a key=value parameter`,
			files: map[string]string{"w.pflow.md": plainWorkflow}, args: []string{"w.pflow.md", "stray"}},
		{msg: "invalid parameter name(s): <names>",
			files: map[string]string{"w.pflow.md": plainWorkflow}, args: []string{"w.pflow.md", "a b=x"}},
		{msg: "Piped input cannot be routed to workflow",
			files: map[string]string{"w.pflow.md": plainWorkflow}, stdin: "some data\n", args: []string{"w.pflow.md"}},
		{msg: "piped input is binary (not UTF-8 text) and cannot be routed to input '<name>'",
			files: map[string]string{"w.pflow.md": "# In\nReads stdin.\n\n## Inputs\n\n### data\nThe data.\n- type: string\n- stdin: true\n\n## Steps\n\n### s\nShow.\n- type: shell\n- stdin: ${data}\n- command: wc -c\n"},
			stdin: "\xff\xfe\x00\x01", args: []string{"w.pflow.md"}},
		{msg: "is indented with a tab inside the",
			files: map[string]string{"w.pflow.md": "# Tab\nA tab.\n\n## Steps\n\n### s\nSay.\n- type: shell\n- command: echo hi\n- env:\n\tA: b\n"},
			args:  []string{"--validate-only", "w.pflow.md"}},
		{msg: "workflow stopped after <n> steps: the action edges form an endless loop through '<id>'",
			// A loop validation cannot rule out (a fails, b succeeds and goes
			// back to a), of in-process steps so that its steps are cheap.
			files: map[string]string{"w.pflow.md": "# Loop\nLoops.\n\n## Steps\n\n### a\nA.\n- type: read-file\n- file_path: /no/such/file\n- retries: 0\n- on_error: b\n\n### b\nB.\n- type: echo\n- message: again\n- next: a\n"},
			args:  []string{"w.pflow.md"}},
		{msg: "Command timed out after <n> seconds; it and every process it started were stopped.",
			files: map[string]string{"w.pflow.md": "# Slow\nSleeps.\n\n## Steps\n\n### s\nSleep.\n- type: shell\n- timeout: 1\n- command: sleep 60\n"},
			args:  []string{"w.pflow.md"}},
		{msg: "working directory '<dir>' does not exist",
			files: map[string]string{"w.pflow.md": "# Cwd\nNo such dir.\n\n## Steps\n\n### s\nSay.\n- type: shell\n- cwd: /no/such/dir\n- command: echo hi\n"},
			args:  []string{"w.pflow.md"}},
		{msg: "python3 not found on PATH: the code node runs inline Python with the system python3.",
			setup: func(t *testing.T, dir, home string) []string { return []string{"PATH=" + dir} },
			args:  []string{"registry", "run", "code", "code=result = 1"}},
		{msg: "No LLM model configured and no API key found.",
			args: []string{"registry", "run", "llm", "prompt=hi"}},
		{msg: "Unknown model provider '<p>' in model '<m>'",
			args: []string{"registry", "run", "llm", "prompt=hi", "model=nosuch/model-1"}},
		{msg: "unresolved template(s) kept as text in step '<id>': <refs>",
			setup: func(t *testing.T, dir, home string) []string {
				writeFile(t, filepath.Join(home, "settings.json"), `{"runtime": {"template_resolution_mode": "permissive"}}`, 0o600)
				return nil
			},
			files: map[string]string{"w.pflow.md": "# Perm\nPermissive.\n\n## Inputs\n\n### data\nAn object.\n- type: object\n- required: false\n- default: {}\n\n## Steps\n\n### s\nSay.\n- type: shell\n- command: echo \"${data.missing}\"\n"},
			args:  []string{"w.pflow.md"}},
		{msg: "batch '<id>': <k>/<n> items succeeded, <f> failed (error_handling: continue); first error at item [<i>]: <msg>",
			files: map[string]string{"w.pflow.md": "# Batch\nSome fail.\n\n## Steps\n\n### each\nCheck.\n- type: shell\n- command: test \"${item}\" = 1\n\n```yaml batch\nitems: [1, 2, 3]\nerror_handling: continue\n```\n"},
			args:  []string{"w.pflow.md"}},
		{msg: "Warning: output key '<key>' not found; available outputs: <list>",
			files: map[string]string{"w.pflow.md": "# Branch\nAn output from a branch not taken.\n\n## Steps\n\n### a\nFine.\n- type: shell\n- command: echo ok\n\n```yaml on\nerror: b\n```\n\n### b\nRecovery.\n- type: shell\n- command: echo recovered\n\n## Outputs\n\n### fixed\nFrom the recovery.\n- source: ${b.stdout}\n"},
			args:  []string{"-o", "fixed", "w.pflow.md"}},
		{msg: `Invalid server name: "<x>". Use lowercase letters, digits and hyphens only`,
			args: []string{"mcp", "add", `{"Bad Name!": {"command": "true"}}`}},
		{msg: "Server names '<a>' and '<b>' both become '<c>'",
			args: []string{"mcp", "add", `{"my_server": {"command": "true"}, "my-server": {"command": "true"}}`}},
		{msg: "Invalid MCP config format: 'mcpServers' must be an object",
			args: []string{"mcp", "add", `{"mcpServers": 1}`}},
		{msg: "Warning: environment variable <VAR> not found, using empty string (MCP server '<name>').",
			setup: func(t *testing.T, dir, home string) []string {
				run(t, bin, dir, home, nil, "mcp", "add", `{"envy": {"command": "true", "env": {"X": "${PFLOW_TEST_NO_SUCH_VAR}"}}}`)
				return nil
			},
			args: []string{"mcp", "sync", "envy"}},
		{msg: "Warning: MCP server '<name>': <header> is empty (check the variable it comes from); the auth header is not sent",
			setup: func(t *testing.T, dir, home string) []string {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := l.Addr().String()
				l.Close() // nothing answers there: the warning comes before connecting
				run(t, bin, dir, home, nil, "mcp", "add", `{"remote": {"type": "http", "url": "http://`+addr+`/mcp", "auth": {"type": "bearer", "token": "${PFLOW_TEST_EMPTY_TOKEN}"}}}`)
				return []string{"PFLOW_TEST_EMPTY_TOKEN="}
			},
			args: []string{"mcp", "sync", "remote"}},
		{msg: "refusing to serve MCP on <addr> with --no-auth: anyone who can reach that address could run commands as you",
			args: []string{"mcp", "serve", "--http", "0.0.0.0:0", "--no-auth"}},
		{msg: `workflow name "<x>" looks like a path; names cannot contain '/', '\', '..' or NUL`,
			args: []string{"workflow", "delete", "..", "--yes"}},
		{msg: "settings file is not valid JSON (<detail>); not overwriting it",
			setup: func(t *testing.T, dir, home string) []string {
				writeFile(t, filepath.Join(home, "settings.json"), "{bad", 0o600)
				return nil
			},
			args: []string{"settings", "set-env", "A=b"}},
		{msg: "Warning: <path> holds secrets but is readable by other users (mode <mode>). Run: chmod 600 <path>",
			setup: func(t *testing.T, dir, home string) []string {
				writeFile(t, filepath.Join(home, "settings.json"), `{"env": {"SOME_TOKEN": "v"}}`, 0o644)
				return nil
			},
			args: []string{"settings", "list-env"}},
		{msg: `invalid setting key "<k>": keys are environment variable names`,
			args: []string{"settings", "set-env", "1x=y"}},
		{msg: "node type '<type>' is disabled by settings: <reason>",
			setup: func(t *testing.T, dir, home string) []string {
				writeFile(t, filepath.Join(home, "settings.json"), `{"registry": {"nodes": {"allow": [], "deny": ["shell"]}}}`, 0o600)
				return nil
			},
			args: []string{"registry", "run", "shell", "command=echo hi"}},
		{msg: "the node registry is corrupt (<detail>) and there is no usable backup at <path>",
			setup: func(t *testing.T, dir, home string) []string {
				writeFile(t, filepath.Join(home, "registry.json"), "{not json", 0o600)
				return nil
			},
			args: []string{"registry", "list"}},
		{msg: "Warning: <path>: retention limits must be 0 (no limit) or more, got max_count <n>, max_age_days <n>; using the defaults (<count> runs, <days> days)",
			setup: func(t *testing.T, dir, home string) []string {
				writeFile(t, filepath.Join(home, "settings.json"), `{"retention": {"max_count": -1, "max_age_days": 3}}`, 0o600)
				return nil
			},
			files: map[string]string{"w.pflow.md": plainWorkflow}, args: []string{"w.pflow.md"}},
		{msg: "Warning: could not remove old traces: <detail>",
			setup: func(t *testing.T, dir, home string) []string {
				writeFile(t, filepath.Join(home, "settings.json"), `{"retention": {"max_count": 1, "max_age_days": 0}}`, 0o600)
				// An old "trace" that cannot be removed: a directory whose
				// content its owner may not delete.
				old := filepath.Join(home, "debug", "workflow-trace-old-20200101-000000-000-00000000.json")
				writeFile(t, filepath.Join(old, "keep"), "x", 0o644)
				os.Chmod(filepath.Join(home, "debug"), 0o777)
				os.Chmod(old, 0o555)
				t.Cleanup(func() { os.Chmod(old, 0o755) })
				past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
				os.Chtimes(old, past, past)
				return nil
			},
			files: map[string]string{"w.pflow.md": plainWorkflow}, args: []string{"w.pflow.md"}, asUser: true},
		{msg: "pflow's home <dir> belongs to <user>, not to you",
			setup: func(t *testing.T, dir, home string) []string {
				if os.Geteuid() != 0 {
					t.Skip("giving the home to another user needs root")
				}
				os.Chown(home, 65534, 65534)
				return nil
			},
			files: map[string]string{"w.pflow.md": plainWorkflow}, args: []string{"w.pflow.md"}},
		{msg: "pflow's home <dir> is writable by <who>",
			setup: func(t *testing.T, dir, home string) []string {
				os.Chmod(home, 0o777)
				return nil
			},
			files: map[string]string{"w.pflow.md": plainWorkflow}, args: []string{"workflow", "list"}},
	}
	for _, c := range cases {
		t.Run(c.msg, func(t *testing.T) {
			bin, base := bin, t.TempDir()
			if c.asUser && os.Geteuid() == 0 {
				// Everything the unprivileged user needs is reachable by it.
				var err error
				if base, err = os.MkdirTemp("", "pflow-user-"); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(base) })
				os.Chmod(base, 0o777)
				data, err := os.ReadFile(bin)
				if err != nil {
					t.Fatal(err)
				}
				bin = filepath.Join(base, "pflow")
				writeFile(t, bin, string(data), 0o755)
			}
			dir, home := filepath.Join(base, "work"), filepath.Join(base, "home")
			os.MkdirAll(dir, 0o777)
			os.MkdirAll(home, 0o700)
			for name, body := range c.files {
				writeFile(t, filepath.Join(dir, name), body, 0o644)
			}
			var env []string
			if c.setup != nil {
				env = c.setup(t, dir, home)
			}
			if c.asUser && os.Geteuid() == 0 {
				// setpriv (util-linux) drops root for this one run.
				args := append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, c.args...)
				filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
					if err == nil && !strings.Contains(p, "workflow-trace-old") {
						os.Chown(p, 65534, 65534)
					}
					return nil
				})
				c.args, bin = args, "setpriv"
			}
			out := runAny(t, bin, dir, home, env, c.stdin, c.args...)
			if !docMessage(c.msg).MatchString(out) {
				t.Errorf("docs/troubleshooting.md quotes %q, but pflow %s printed:\n%s", c.msg, strings.Join(c.args, " "), out)
			}
		})
	}
}

func writeFile(t *testing.T, p, body string, mode os.FileMode) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode)
}

// run runs pflow and fails the test when it fails.
func run(t *testing.T, bin, dir, home string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PFLOW_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pflow %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runAny runs pflow and returns what it printed, whatever its exit code.
func runAny(t *testing.T, bin, dir, home string, env []string, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard, not an assertion
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PFLOW_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	cmd.Run()
	return b.String()
}
