// Command testsummary reads `go test -json` on stdin and prints what a
// person needs from a whole-suite run: each package's result line, the full
// output of every failing test (and of a package that did not build), and
// one last line "N passed, N failed" (plus skips when there are any). It
// exits 1 when anything failed, so `make test` keeps go test's verdict.
//
//	go test -race -count=1 -json ./... | go run ./internal/tools/testsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of test2json output.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// summary accumulates a run.
type summary struct {
	out                    io.Writer
	passed, failed, skiped int
	pkgFailed              bool
	buf                    map[string][]string // package\x00test -> output lines
}

func main() {
	s := &summary{out: os.Stdout, buf: map[string][]string{}}
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
	case "output":
		if e.Test == "" {
			// Package-level lines: the ok/FAIL verdicts and build output.
			if t := strings.TrimSpace(e.Output); t != "" && t != "PASS" && t != "FAIL" && !strings.HasPrefix(t, "=== ") && !strings.HasPrefix(t, "testing: warning: no tests") {
				fmt.Fprint(s.out, e.Output)
			}
			return
		}
		s.buf[key] = append(s.buf[key], e.Output)
	case "pass":
		if e.Test != "" {
			s.passed++
		}
		delete(s.buf, key)
	case "skip":
		if e.Test != "" {
			s.skiped++
		}
		delete(s.buf, key)
	case "fail":
		if e.Test == "" {
			s.pkgFailed = true
			return
		}
		s.failed++
		fmt.Fprintf(s.out, "--- FAIL: %s (%s)\n", e.Test, e.Package)
		for _, l := range s.buf[key] {
			fmt.Fprint(s.out, l)
		}
		delete(s.buf, key)
	}
}

// report prints the last line and says whether the run failed.
func (s *summary) report() bool {
	line := fmt.Sprintf("%d passed, %d failed", s.passed, s.failed)
	if s.skiped > 0 {
		line += fmt.Sprintf(" (%d skipped)", s.skiped)
	}
	fail := s.failed > 0 || s.pkgFailed
	if fail && s.failed == 0 {
		line += " — a package failed to build or exited early; see above"
	}
	fmt.Fprintln(s.out, line)
	return fail
}
