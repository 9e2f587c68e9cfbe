package main

import (
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
	s := &summary{out: &out, buf: map[string][]string{}}
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
	s = &summary{out: &out, buf: map[string][]string{}}
	s.read(strings.NewReader("# p\n./x.go:1: syntax error\n"))
	if !s.report() {
		t.Error("a build failure must fail the run")
	}
	// Go 1.24+ reports a build failure as build-output events: shown.
	out.Reset()
	s = &summary{out: &out, buf: map[string][]string{}}
	s.read(strings.NewReader(`{"ImportPath":"p","Action":"build-output","Output":"./x.go:3:2: undefined: y\n"}` + "\n" +
		`{"ImportPath":"p","Action":"build-fail"}` + "\n" + `{"Action":"output","Package":"p","Output":"FAIL\tp [build failed]\n"}` + "\n" + `{"Action":"fail","Package":"p"}`))
	if !s.report() || !strings.Contains(out.String(), "./x.go:3:2: undefined: y") {
		t.Errorf("the compiler's message is not shown:\n%s", out.String())
	}
}
