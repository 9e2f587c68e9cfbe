package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The summary keeps package verdicts and failing tests' output, drops the
// chatter of passing tests, and ends with the counts.
func TestSummary(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"chatter\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: boom\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB"}`,
		`{"Action":"skip","Package":"p","Test":"TestC"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\n"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}`,
		`{"Action":"fail","Package":"p"}`,
		`{"Action":"output","Package":"q","Output":"ok  \tq\t0.2s\n"}`,
		`{"Action":"pass","Package":"q"}`,
	}, "\n")
	var out strings.Builder
	s := newSummary(&out)
	if err := s.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if !s.report() {
		t.Fatal("a failed test must fail the run")
	}
	got := out.String()
	for _, want := range []string{"--- FAIL: TestB (p)\n    b_test.go:9: boom\n", "FAIL\tp\t0.1s\n", "ok  \tq\t0.2s\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "chatter") {
		t.Errorf("a passing test's output is printed:\n%s", got)
	}
	if !strings.HasSuffix(got, "1 passed, 1 failed (1 skipped)\n") {
		t.Errorf("last line:\n%s", got)
	}
	// A build failure (plain text from go test) fails the run even with no failed test.
	s = newSummary(&out)
	s.read(strings.NewReader("# p\n./x.go:1: syntax error\n"))
	if !s.report() {
		t.Error("a build failure must fail the run")
	}
	// Go 1.24+ reports a build failure as build-output events: shown.
	out.Reset()
	s = newSummary(&out)
	s.read(strings.NewReader(`{"ImportPath":"p","Action":"build-output","Output":"./x.go:3:2: undefined: y\n"}` + "\n" +
		`{"ImportPath":"p","Action":"build-fail"}` + "\n" + `{"Action":"output","Package":"p","Output":"FAIL\tp [build failed]\n"}` + "\n" + `{"Action":"fail","Package":"p"}`))
	if !s.report() || !strings.Contains(out.String(), "./x.go:3:2: undefined: y") {
		t.Errorf("the compiler's message is not shown:\n%s", out.String())
	}
}

// A test binary that dies reports no result for the tests it was running.
// The summary shows each of them as failed with its output, then the panic
// line, the tests the panic names, the goroutine in the hung test, and the
// package's last lines of output, and names the package at the end. The
// inputs are recorded `go test -json` streams (testdata/*.json).
func TestSummaryOfADeadTestBinary(t *testing.T) {
	for _, c := range []struct {
		file        string
		want        []string
		last        string
		passed, bad int
	}{
		{file: "timeout.json", passed: 1, bad: 1, want: []string{
			"--- FAIL: TestWaitsForever (example.com/rec/hang) [no result: the test binary died: panic: test timed out after 3s]\n=== RUN   TestWaitsForever\n    hang_test.go:11: waiting for the server\n",
			"panic: test timed out after 3s\n\trunning tests:\n\t\tTestWaitsForever (3s)\n",
			"a goroutine of a running test:\ngoroutine 20 [sleep]:\n",
			"example.com/rec/hang.TestWaitsForever(",
			"=== example.com/rec/hang: its last 30 lines of output:\n",
			"  example.com/rec/hang: the test binary died: panic: test timed out after 3s while running TestWaitsForever\n",
		}, last: "1 passed, 1 failed\n"},
		{file: "timeout-parallel.json", passed: 1, bad: 1, want: []string{
			// The parent test runs while its subtest hangs: the subtest is the one reported.
			"--- FAIL: TestServers/stuck (example.com/rec/phang) [no result: the test binary died: panic: test timed out after 2s]\n",
			"    phang_test.go:12: starting stuck\n",
			"\trunning tests:\n\t\tTestServers/stuck (2s)\n",
			"example.com/rec/phang.TestServers.func1(",
			"while running TestServers/stuck\n",
		}, last: "1 passed, 1 failed\n"},
		{file: "crash.json", passed: 1, bad: 1, want: []string{
			"--- FAIL: TestCrashesInAGoroutine (example.com/rec/crash) [no result: the test binary died: panic: assignment to entry in nil map]\n",
			"    crash_test.go:11: starting the worker\n",
			// A short panic is shown whole.
			"=== example.com/rec/crash: the test binary died: panic: assignment to entry in nil map\npanic: assignment to entry in nil map\n\ngoroutine 9 [running]:\nexample.com/rec/crash.TestCrashesInAGoroutine.func1()\n",
			"while running TestCrashesInAGoroutine\n",
		}, last: "1 passed, 1 failed\n"},
		{file: "exit.json", passed: 0, bad: 1, want: []string{
			"--- FAIL: TestExits (example.com/rec/exit) [no result: the test binary exited before its tests finished (os.Exit, or killed by a signal?)]\n=== RUN   TestExits\n    exit_test.go:9: about to exit\n",
			"=== example.com/rec/exit: its last 2 lines of output:\n=== RUN   TestExits\n    exit_test.go:9: about to exit\n",
		}, last: "0 passed, 1 failed\n"},
		{file: "buildfail.json", want: []string{
			"broken/broken_test.go:5:34: undefined: undefinedThing\n",
			"FAIL\texample.com/rec/broken [build failed]\n",
			"  example.com/rec/broken: build failed (the compiler's messages are above)\n",
		}, last: "0 passed, 0 failed — 1 package(s) failed outside a test; listed above\n"},
	} {
		t.Run(c.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var out strings.Builder
			s := newSummary(&out)
			if err := s.read(f); err != nil {
				t.Fatal(err)
			}
			if !s.report() {
				t.Error("the run is not failed")
			}
			got := out.String()
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			if !strings.HasSuffix(got, c.last) {
				t.Errorf("last line: want %q in:\n%s", c.last, got)
			}
			if s.passed != c.passed || s.failed != c.bad {
				t.Errorf("passed %d, failed %d; want %d, %d", s.passed, s.failed, c.passed, c.bad)
			}
			// The panic is shown once in the block, not also in the test's output.
			if n := strings.Count(got, "\npanic: "); n > 1 {
				t.Errorf("the panic line is shown %d times:\n%s", n, got)
			}
		})
	}
}
