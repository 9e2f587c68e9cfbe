package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{5 * ms}, 5 * ms},
		{[]time.Duration{9 * ms, 1 * ms, 5 * ms}, 5 * ms},
		{[]time.Duration{4 * ms, 1 * ms, 100 * ms, 2 * ms}, 3 * ms}, // mean of the middle two; outlier ignored
	} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// Contenders run once per round in rotating order, after untimed warm-up
// rounds, so that no contender always runs first (or last) under load.
func TestInterleaveRotatesOrderAndCountsOnlyTimedRounds(t *testing.T) {
	log := filepath.Join(t.TempDir(), "order")
	var cs []Contender
	for _, n := range []string{"a", "b", "c"} {
		cs = append(cs, Contender{Name: n, Argv: []string{"/bin/sh", "-c", "echo " + n + " >> " + log}})
	}
	ts, err := Interleave(context.Background(), cs, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	got := strings.Join(strings.Fields(string(b)), "")
	if want := "abc" + "abc" + "bca" + "cab"; got != want {
		t.Errorf("run order %q, want %q (warm-up, then rotating rounds)", got, want)
	}
	for i, tm := range ts {
		if tm.Name != cs[i].Name || len(tm.Wall) != 3 || len(tm.CPU) != 3 {
			t.Errorf("timing %d: name %q, %d wall and %d CPU samples; want %q with 3 each", i, tm.Name, len(tm.Wall), len(tm.CPU), cs[i].Name)
		}
		for _, w := range tm.Wall {
			if w <= 0 {
				t.Errorf("%s: non-positive wall time %v", tm.Name, w)
			}
		}
	}
}

// A failing contender stops the run with its name, command and output, so
// the person running `make bench` can reproduce it.
func TestInterleaveNamesTheFailingContender(t *testing.T) {
	cs := []Contender{
		{Name: "fine", Argv: []string{"/bin/sh", "-c", "true"}},
		{Name: "broken server", Argv: []string{"/bin/sh", "-c", "echo 'Command not found: mcp-x' >&2; exit 3"}},
	}
	_, err := Interleave(context.Background(), cs, 2, 0)
	if err == nil {
		t.Fatal("no error for a contender that exits 3")
	}
	for _, want := range []string{"broken server failed", "exit status 3", "Command not found: mcp-x", `/bin/sh -c 'echo`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestRunOnceMeasuresChildCPU(t *testing.T) {
	c := Contender{Name: "spin", Argv: []string{"/bin/sh", "-c", `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done`}}
	_, cpu, err := RunOnce(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if cpu <= 0 {
		t.Errorf("CPU time %v for a busy loop, want > 0", cpu)
	}
}

func TestRunOnceStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := RunOnce(ctx, Contender{Name: "hang", Argv: []string{"/bin/sh", "-c", "sleep 30 & wait"}})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("no error for a contender killed by the context")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunOnce did not return after its context ended (process group not killed)")
	}
}

func TestContenderCommandQuotes(t *testing.T) {
	c := Contender{Argv: []string{"node", "calls.mjs", "20", "echo", `{"message":"hi"}`, "--", "it's"}}
	want := `node calls.mjs 20 echo '{"message":"hi"}' -- 'it'\''s'`
	if got := c.Command(); got != want {
		t.Errorf("Command() = %s, want %s", got, want)
	}
}

const goBenchOutput = `goos: linux
goarch: amd64
pkg: github.com/pflow-go/pflow/internal/bench
cpu: Intel(R) Xeon(R) Processor
BenchmarkBatchEngine/items=1000-2         	       3	   6277303 ns/op	       792.6 held-B/item	    159326 items/s
BenchmarkBatchEngine/items=1000-2         	       3	   5277303 ns/op	       790.0 held-B/item	    189326 items/s
BenchmarkBatchEngine/items=1000-2         	       3	   9277303 ns/op	       791.0 held-B/item	    109326 items/s
    bench_test.go:42: npm peers not installed
BenchmarkRegistryLoad1000                 	     300	   4800000 ns/op	  123456 B/op	    2000 allocs/op
PASS
ok  	github.com/pflow-go/pflow/internal/bench	10.484s
`

func TestParseGoBench(t *testing.T) {
	g := ParseGoBench(strings.NewReader(goBenchOutput))
	if len(g) != 2 {
		t.Fatalf("parsed %d benchmarks, want 2: %v", len(g), g)
	}
	for _, c := range []struct {
		name, unit string
		want       float64
	}{
		{"BenchmarkBatchEngine/items=1000", "ns/op", 6277303},
		{"BenchmarkBatchEngine/items=1000", "items/s", 159326},
		{"BenchmarkBatchEngine/items=1000", "held-B/item", 791.0},
		{"BenchmarkRegistryLoad1000", "ns/op", 4800000},
		{"BenchmarkRegistryLoad1000", "allocs/op", 2000},
	} {
		got, ok := g.Median(c.name, c.unit)
		if !ok || got != c.want {
			t.Errorf("Median(%s, %s) = %v, %v; want %v", c.name, c.unit, got, ok, c.want)
		}
	}
	if n := g.Runs("BenchmarkBatchEngine/items=1000", "ns/op"); n != 3 {
		t.Errorf("Runs = %d, want 3", n)
	}
	if _, ok := g.Median("BenchmarkMissing", "ns/op"); ok {
		t.Error("Median of a missing benchmark reported as measured")
	}
}

// Measure reports the peak RSS of the process it ran: a shell holding 50 MB
// in a variable peaks at least 40 MB above one that does nothing.
func TestMeasureReportsPeakRSS(t *testing.T) {
	small, err := Measure(context.Background(), Contender{Name: "true", Argv: []string{"/bin/sh", "-c", "true"}})
	if err != nil {
		t.Fatal(err)
	}
	big, err := Measure(context.Background(), Contender{Name: "hold 50 MB", Argv: []string{"/bin/sh", "-c",
		`x=$(head -c 50000000 /dev/zero | tr '\0' a); echo ${#x}`}})
	if err != nil {
		t.Fatal(err)
	}
	if small.MaxRSS <= 0 || big.MaxRSS < small.MaxRSS+40<<20 {
		t.Fatalf("peak RSS: %d bytes for true, %d for a 50 MB variable", small.MaxRSS, big.MaxRSS)
	}
}
