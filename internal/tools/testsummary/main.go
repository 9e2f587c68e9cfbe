// Command testsummary reads `go test -json` on stdin and prints what a
// person needs from a whole-suite run: each package's result line, the full
// output of every failing test (and of a package that did not build), and
// one last line "N passed, N failed" (plus skips when there are any). It
// exits 1 when anything failed, so `make test` keeps go test's verdict.
//
// A test binary that dies (go test's timeout panic, a panic in a goroutine,
// os.Exit, a signal) reports no result for the tests it was running: they
// are shown as failed, with their output, the panic line, the tests the
// panic names as running, the goroutines in them, and the package's last
// lines of output. A package that does not build is named at the end too.
//
//	go test -race -count=1 -json ./... | go run ./internal/tools/testsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// event is one line of test2json output.
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
}

// summary accumulates a run.
type summary struct {
	out                    io.Writer
	passed, failed, skiped int
	pkgFailed              bool
	buf                    map[string][]string // package\x00test -> output lines
	pkgs                   map[string]*pkgState
	died                   []string // one line per package that failed outside a test
}

// pkgState is what is kept of a package's run until its verdict: the tests
// started and not finished, and every output line after the first panic.
type pkgState struct {
	running []string // in the order they started
	failed  int      // tests that reported a failure
	lines   []string // the last tailLines output lines, any test
	panic   []string // from the first panic or fatal error line on
}

// tailLines is how many of a dead package's last output lines are shown,
// and of each of its unfinished tests' output.
const tailLines = 30

func newSummary(out io.Writer) *summary {
	return &summary{out: out, buf: map[string][]string{}, pkgs: map[string]*pkgState{}}
}

func main() {
	s := newSummary(os.Stdout)
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if s.report() {
		os.Exit(1)
	}
}

func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not test2json (a build error printed by go test itself).
			fmt.Fprintln(s.out, string(line))
			if len(line) > 0 {
				s.pkgFailed = true
			}
			continue
		}
		s.add(e)
	}
	return sc.Err()
}

func (s *summary) pkg(name string) *pkgState {
	ps := s.pkgs[name]
	if ps == nil {
		ps = &pkgState{}
		s.pkgs[name] = ps
	}
	return ps
}

func (s *summary) add(e event) {
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "build-output":
		// The compiler's messages of a package that does not build (go
		// test -json reports them as events of their own since Go 1.24).
		fmt.Fprint(s.out, e.Output)
		return
	case "build-fail":
		s.pkgFailed = true
		return
	case "run":
		ps := s.pkg(e.Package)
		ps.running = append(ps.running, e.Test)
	case "output":
		ps := s.pkg(e.Package)
		if e.Test == "" && isVerdict(e.Output) {
			fmt.Fprint(s.out, e.Output)
			return
		}
		if len(ps.panic) > 0 || isPanic(e.Output) {
			ps.panic = append(ps.panic, e.Output)
		}
		ps.lines = append(ps.lines, e.Output)
		if len(ps.lines) > 2*tailLines {
			ps.lines = append(ps.lines[:0], ps.lines[len(ps.lines)-tailLines:]...)
		}
		if e.Test == "" {
			// Package-level lines: the ok/FAIL verdicts and build output.
			if t := strings.TrimSpace(e.Output); t != "" && t != "PASS" && t != "FAIL" && !strings.HasPrefix(t, "=== ") && !strings.HasPrefix(t, "testing: warning: no tests") {
				fmt.Fprint(s.out, e.Output)
			}
			return
		}
		s.buf[key] = append(s.buf[key], e.Output)
	case "pass":
		if e.Test == "" {
			delete(s.pkgs, e.Package)
			return
		}
		s.passed++
		s.finished(e)
		delete(s.buf, key)
	case "skip":
		if e.Test == "" {
			delete(s.pkgs, e.Package)
			return
		}
		s.skiped++
		s.finished(e)
		delete(s.buf, key)
	case "fail":
		if e.Test == "" {
			s.pkgFailed = true
			s.packageFailed(e)
			return
		}
		s.failed++
		s.finished(e)
		s.pkg(e.Package).failed++
		fmt.Fprintf(s.out, "--- FAIL: %s (%s)\n", e.Test, e.Package)
		for _, l := range s.buf[key] {
			fmt.Fprint(s.out, l)
		}
		delete(s.buf, key)
	}
}

// finished removes a test that reported its result from its package's
// running tests.
func (s *summary) finished(e event) {
	ps := s.pkgs[e.Package]
	if ps == nil {
		return
	}
	if i := slices.Index(ps.running, e.Test); i >= 0 {
		ps.running = slices.Delete(ps.running, i, i+1)
	}
}

// isVerdict reports whether a package-level output line is go test's
// verdict on the package ("ok  \tpkg\t0.1s", "FAIL\tpkg\t0.1s").
func isVerdict(line string) bool {
	return strings.HasPrefix(line, "ok  \t") || strings.HasPrefix(line, "FAIL\t")
}

// isPanic reports whether an output line starts a panic or a fatal runtime
// error: what a test binary prints when it dies.
func isPanic(line string) bool {
	return strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ")
}

// packageFailed handles a package's FAIL verdict. A package whose tests all
// reported results failed through them (already shown). One that did not
// build is named for the end. One whose test binary died leaves tests that
// never reported: each is shown as failed, then the panic, the goroutines of
// the tests that were running, and the package's last lines of output.
func (s *summary) packageFailed(e event) {
	ps := s.pkgs[e.Package]
	delete(s.pkgs, e.Package)
	if e.FailedBuild != "" {
		s.died = append(s.died, fmt.Sprintf("%s: build failed (the compiler's messages are above)", e.Package))
		return
	}
	// A line that only looks like a panic (a child process's output) in a
	// package whose failures all came with results is not a death.
	if ps == nil || (len(ps.running) == 0 && (len(ps.panic) == 0 || ps.failed > 0)) {
		return
	}
	// A parent test is running while its subtests are: only the innermost
	// tests are reported, so one hang counts once.
	var running []string
	for _, t := range ps.running {
		inner := false
		for _, u := range ps.running {
			if strings.HasPrefix(u, t+"/") {
				inner = true
			}
		}
		if !inner {
			running = append(running, t)
		}
	}
	cause := "the test binary exited before its tests finished (os.Exit, or killed by a signal?)"
	if len(ps.panic) > 0 {
		cause = "the test binary died: " + strings.TrimSpace(ps.panic[0])
	}
	for _, t := range running {
		s.failed++
		fmt.Fprintf(s.out, "--- FAIL: %s (%s) [no result: %s]\n", t, e.Package, cause)
		out := s.buf[e.Package+"\x00"+t]
		// The panic is shown once, below, not in the output of the test it
		// was attributed to.
		if i := slices.IndexFunc(out, isPanic); i >= 0 {
			out = out[:i]
		}
		if len(out) > tailLines {
			fmt.Fprintf(s.out, "    (its last %d of %d lines of output)\n", tailLines, len(out))
			out = out[len(out)-tailLines:]
		}
		for _, l := range out {
			fmt.Fprint(s.out, l)
		}
	}
	for k := range s.buf {
		if strings.HasPrefix(k, e.Package+"\x00") {
			delete(s.buf, k)
		}
	}
	fmt.Fprintf(s.out, "=== %s: %s\n", e.Package, cause)
	if len(ps.panic) > 0 && len(ps.panic) <= tailLines {
		// A short panic is shown whole: it is the package's last output.
		for _, l := range ps.panic {
			fmt.Fprint(s.out, l)
		}
	} else {
		if len(ps.panic) > 0 {
			// A long one (a timeout's dump of every goroutine): its first
			// line, the tests it names, and the goroutines in them.
			named, stacks := panicDetails(ps.panic, running)
			for _, l := range named {
				fmt.Fprint(s.out, l)
			}
			for _, st := range stacks {
				fmt.Fprintln(s.out, "  a goroutine of a running test:")
				for _, l := range st {
					fmt.Fprint(s.out, l)
				}
			}
		}
		tail := ps.lines
		if len(tail) > tailLines {
			tail = tail[len(tail)-tailLines:]
		}
		fmt.Fprintf(s.out, "=== %s: its last %d lines of output:\n", e.Package, len(tail))
		for _, l := range tail {
			fmt.Fprint(s.out, l)
		}
	}
	what := cause
	if len(running) > 0 {
		what += " while running " + strings.Join(running, ", ")
	}
	s.died = append(s.died, e.Package+": "+what)
}

// panicDetails returns, from a panic's output, its first line and the
// "running tests:" list that follows a timeout, and the goroutine stacks
// (at most 4) that are in one of the running tests' functions.
func panicDetails(lines []string, running []string) (named []string, stacks [][]string) {
	named = append(named, lines[0])
	i := 1
	if i < len(lines) && strings.TrimSpace(lines[i]) == "running tests:" {
		for named = append(named, lines[i]); i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t\t"); i++ {
			named = append(named, lines[i+1])
		}
	}
	var funcs []string
	for _, t := range running {
		top, _, _ := strings.Cut(t, "/")
		funcs = append(funcs, "."+top+"(", "."+top+".")
	}
	var cur []string
	flush := func() {
		if len(cur) > 0 && len(stacks) < 4 && slices.ContainsFunc(cur, func(l string) bool {
			return slices.ContainsFunc(funcs, func(f string) bool { return strings.Contains(l, f) })
		}) {
			stacks = append(stacks, cur)
		}
		cur = nil
	}
	for _, l := range lines[i:] {
		if strings.HasPrefix(l, "goroutine ") {
			flush()
		}
		if cur != nil || strings.HasPrefix(l, "goroutine ") {
			if strings.TrimSpace(l) == "" {
				flush()
				continue
			}
			cur = append(cur, l)
		}
	}
	flush()
	return named, stacks
}

// report prints the last line and says whether the run failed.
func (s *summary) report() bool {
	// Tests of a package whose verdict never came (go test itself was
	// killed) are still running: name them.
	for _, name := range slices.Sorted(maps.Keys(s.pkgs)) {
		if ps := s.pkgs[name]; len(ps.running) > 0 || len(ps.panic) > 0 {
			s.packageFailed(event{Action: "fail", Package: name})
		}
	}
	if len(s.died) > 0 {
		fmt.Fprintln(s.out, "Packages that failed outside a test's own result:")
		for _, d := range s.died {
			fmt.Fprintln(s.out, "  "+d)
		}
	}
	line := fmt.Sprintf("%d passed, %d failed", s.passed, s.failed)
	if s.skiped > 0 {
		line += fmt.Sprintf(" (%d skipped)", s.skiped)
	}
	fail := s.failed > 0 || s.pkgFailed
	if fail && s.failed == 0 {
		if len(s.died) > 0 {
			line += fmt.Sprintf(" — %d package(s) failed outside a test; listed above", len(s.died))
		} else {
			line += " — a package failed to build or exited early; see above"
		}
	}
	fmt.Fprintln(s.out, line)
	return fail
}
