package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Docs are tested: every shell block of README.md, docs/*.md and
// examples/**/README.md is run here, or says why not in the HTML comment
// right above it:
//
//	<!-- illustrative: why -->   not run (needs a real account, runs forever …)
//	<!-- tested: TestName -->    run by that test (which must exist)
//
// A block runs with bash (-e, pipefail) in a sandbox: a fresh folder holding
// a copy of examples/ and the npm test peers (testdata), a fresh PFLOW_HOME
// and HOME, and the binary under test first on PATH as `pflow`. The blocks
// of one document run in order in one sandbox, so a later block sees what an
// earlier one saved. A ```console block holds `$ command` lines, each
// followed by what it prints on stdout; `...` stands for any lines. A
// ```markdown block under <!-- file: path --> is written to that path in
// the sandbox first, so a document's workflows run as printed.

// fence is one top-level fenced block of a markdown document.
type fence struct {
	info   string // the info string: "sh", "console", "markdown" …
	body   string
	line   int    // 1-based line of the opening fence
	marker string // the HTML comment right above, without <!-- -->
}

var fenceOpen = regexp.MustCompile("^(`{3,}|~{3,})(.*)$")

// fences returns the top-level fenced code blocks of md (CommonMark: a fence
// closes with at least as many of the same characters and no info string;
// fences inside a longer one are its content).
func fences(md string) []fence {
	lines := strings.Split(md, "\n")
	var out []fence
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		open := m[1]
		f := fence{info: strings.TrimSpace(m[2]), line: i + 1}
		for j := i - 1; j >= 0; j-- {
			l := strings.TrimSpace(lines[j])
			if l == "" {
				continue
			}
			if strings.HasPrefix(l, "<!--") && strings.HasSuffix(l, "-->") {
				f.marker = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "<!--"), "-->"))
			}
			break
		}
		var body []string
		j := i + 1
		for ; j < len(lines); j++ {
			l := strings.TrimRight(lines[j], " ")
			if strings.HasPrefix(l, open[:1]) && strings.Trim(l, open[:1]) == "" && len(l) >= len(open) {
				break
			}
			body = append(body, lines[j])
		}
		f.body = strings.Join(body, "\n")
		out = append(out, f)
		i = j
	}
	return out
}

func isShell(info string) bool {
	lang, _, _ := strings.Cut(info, " ")
	switch lang {
	case "sh", "bash", "shell", "console", "zsh":
		return true
	}
	return false
}

// documents are the files whose shell blocks are tested.
func documents(t *testing.T, root string) []string {
	t.Helper()
	docs := []string{filepath.Join(root, "README.md")}
	md, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, md...)
	filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "README.md" {
			docs = append(docs, p)
		}
		return nil
	})
	return docs
}

func TestDocsShellBlocks(t *testing.T) {
	root := repoRoot(t)
	bin := buildPflow(t)
	tests := testNames(t, root)
	ran := 0
	for _, doc := range documents(t, root) {
		rel, _ := filepath.Rel(root, doc)
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		blocks := fences(string(data))
		t.Run(rel, func(t *testing.T) {
			var sb *sandbox
			for _, b := range blocks {
				where := fmt.Sprintf("%s:%d", rel, b.line)
				switch {
				case strings.HasPrefix(b.marker, "file:"):
					if sb == nil {
						sb = newSandbox(t, root, bin)
					}
					sb.write(t, strings.TrimSpace(strings.TrimPrefix(b.marker, "file:")), b.body)
					continue
				case !isShell(b.info):
					continue
				case strings.HasPrefix(b.marker, "illustrative"):
					continue
				case strings.HasPrefix(b.marker, "tested:"):
					name := strings.TrimSpace(strings.TrimPrefix(b.marker, "tested:"))
					if !tests[name] {
						t.Errorf("%s: the block says it is run by %s, but no test of that name exists", where, name)
					}
					continue
				case b.marker != "":
					t.Errorf("%s: unknown marker <!-- %s --> above a shell block (illustrative: …, tested: TestName or file: path)", where, b.marker)
					continue
				}
				if strings.Contains(b.body, "testdata/peers") {
					if _, err := os.Stat(filepath.Join(root, "testdata", "peers", "node_modules")); err != nil {
						t.Fatalf("%s needs the npm test peers, which are missing (%v): `make test` installs them, or `make peers`", where, err)
					}
				}
				if sb == nil {
					sb = newSandbox(t, root, bin)
				}
				ran++
				if strings.HasPrefix(b.info, "console") {
					sb.console(t, where, b.body)
				} else {
					sb.script(t, where, b.body)
				}
			}
		})
	}
	if ran < 5 {
		t.Fatalf("only %d doc blocks ran; the extraction is broken", ran)
	}
}

// sandbox is where one document's blocks run.
type sandbox struct {
	dir string
	env []string
}

func newSandbox(t *testing.T, root, bin string) *sandbox {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join(root, "examples"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, ".home")
	os.MkdirAll(home, 0o755)
	env := []string{"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home, "PFLOW_HOME=" + filepath.Join(home, ".pflow"), "TMPDIR=" + t.TempDir(), "NO_COLOR=1", "LANG=C.UTF-8"}
	for _, kv := range os.Environ() {
		// The Go and npm caches stay the machine's (a block may build or
		// start an npm peer); nothing else of the caller's leaks in.
		for _, k := range []string{"GOCACHE=", "GOMODCACHE=", "GOPATH=", "GOFLAGS=", "GOTOOLCHAIN=", "npm_config_cache="} {
			if strings.HasPrefix(kv, k) {
				env = append(env, kv)
			}
		}
	}
	return &sandbox{dir: dir, env: env}
}

func (s *sandbox) write(t *testing.T, rel, body string) {
	t.Helper()
	p := filepath.Join(s.dir, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (s *sandbox) run(script string) (stdout, stderr string, err error) {
	// A guard against a block that never ends, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir = s.dir
	cmd.Env = s.env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func (s *sandbox) script(t *testing.T, where, body string) {
	t.Helper()
	out, errOut, err := s.run(body)
	if err != nil {
		t.Errorf("%s: the block failed (%v) in %s:\n%s\nstdout:\n%s\nstderr:\n%s", where, err, s.dir, body, out, errOut)
	}
}

// console runs each `$ command` of body and compares its stdout with the
// lines the document shows under it.
func (s *sandbox) console(t *testing.T, where, body string) {
	t.Helper()
	type step struct {
		cmd  string
		want []string
	}
	var steps []step
	for _, l := range strings.Split(body, "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			steps = append(steps, step{cmd: c})
		} else if len(steps) > 0 {
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, l)
		}
	}
	if len(steps) == 0 {
		t.Errorf("%s: a console block without a `$ command` line", where)
	}
	for _, st := range steps {
		out, errOut, err := s.run(st.cmd)
		if err != nil {
			t.Errorf("%s: `%s` failed (%v):\nstdout:\n%s\nstderr:\n%s", where, st.cmd, err, out, errOut)
			continue
		}
		for len(st.want) > 0 && strings.TrimSpace(st.want[len(st.want)-1]) == "" {
			st.want = st.want[:len(st.want)-1]
		}
		got := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if out == "" {
			got = nil
		}
		if !linesMatch(st.want, got) {
			t.Errorf("%s: `%s` printed\n%s\nbut the document shows\n%s", where, st.cmd, strings.Join(got, "\n"), strings.Join(st.want, "\n"))
		}
	}
}

// linesMatch compares lines, with "..." in want standing for any lines.
func linesMatch(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) == "..." {
		for i := 0; i <= len(got); i++ {
			if linesMatch(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && strings.TrimRight(want[0], " ") == strings.TrimRight(got[0], " ") && linesMatch(want[1:], got[1:])
}

// testNames are the Test functions of the repository.
func testNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	re := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	names := map[string]bool{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			data, _ := os.ReadFile(p)
			for _, m := range re.FindAllStringSubmatch(string(data), -1) {
				names[m[1]] = true
			}
		}
		return nil
	})
	return names
}

// TestFencesParser pins the block extraction the docs test relies on.
func TestFencesParser(t *testing.T) {
	md := "x\n<!-- illustrative: no -->\n```sh\necho a\n```\n````markdown\n# W\n```shell command\necho b\n```\n````\n\n```console\n$ echo c\nc\n```\n"
	fs := fences(md)
	if len(fs) != 3 || fs[0].marker != "illustrative: no" || fs[0].body != "echo a" || fs[1].info != "markdown" || !strings.Contains(fs[1].body, "```shell command") || fs[2].line != 13 {
		t.Fatalf("fences: %+v", fs)
	}
	if !linesMatch([]string{"a", "...", "z"}, []string{"a", "b", "c", "z"}) || linesMatch([]string{"a"}, []string{"a", "b"}) || !linesMatch([]string{"..."}, nil) {
		t.Fatal("linesMatch")
	}
}
