package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pflow-go/pflow/internal/bench"
	"github.com/pflow-go/pflow/internal/trace"
)

// Traces is the bounded-trace benchmark: runs whose values are huge or
// deeply nested, with their trace and without (the "Bounded" target of
// docs/decisions.md, "Measured targets").
type Traces struct {
	Rounds int
	Cases  []TraceCase
}

// TraceCase is one workflow of the bounded-trace benchmark.
type TraceCase struct {
	Name    string
	Command string
	// TraceBytes is the largest trace file the runs wrote.
	TraceBytes int64
	// Marker is the truncation marker the trace must hold; MarkerFound
	// says whether every trace did.
	Marker      string
	MarkerFound bool
	// Median peak RSS (bytes) and wall time of pflow with and without the trace.
	RSS, RSSNoTrace   int64
	Wall, WallNoTrace time.Duration
}

// Trace benchmark case names, used by the report.
const (
	tDeep = "9,000-level-deep JSON value"
	tBig  = "50 MB value"
)

// deepTraceWorkflow prints a JSON object nested levels deep from a shell
// step; the next step reads one level into it, so the template engine
// parses it and the trace holds the parsed value (params and outputs of
// "use") as well as the text (stdout of "deep").
func deepTraceWorkflow(levels int) string {
	return fmt.Sprintf("# Deep value\nA JSON value %[1]d levels deep.\n\n## Steps\n\n### deep\nPrint it.\n- type: shell\n\n"+
		"```shell command\nyes '{\"a\":' | head -n %[1]d | tr -d '\\n'; printf 1; yes '}' | head -n %[1]d | tr -d '\\n'\n```\n\n"+
		"### use\nRead one level into it.\n- type: echo\n- data: ${deep.stdout.a}\n", levels)
}

// bigTraceWorkflow prints n bytes from a shell step and passes them on.
func bigTraceWorkflow(n int) string {
	return fmt.Sprintf("# Big value\nA %[1]d-byte value.\n\n## Steps\n\n### big\nPrint it.\n- type: shell\n- max_output: %[2]d\n\n"+
		"```shell command\nhead -c %[1]d /dev/zero | tr '\\0' x\n```\n\n"+
		"### use\nPass it on.\n- type: echo\n- data: ${big.stdout}\n", n, n+n/5)
}

func (s *suite) benchTraces(ctx context.Context) (*Traces, error) {
	home := filepath.Join(s.tmp, "home-traces")
	debug := filepath.Join(home, "debug")
	out := &Traces{Rounds: s.cfg.roundsTrace}
	for _, c := range []struct {
		name, file, src, marker string
	}{
		{tDeep, "deep.pflow.md", deepTraceWorkflow(9000), fmt.Sprintf("<truncated: deeper than %d levels; object of 1 key>", trace.MaxDepth)},
		{tBig, "big.pflow.md", bigTraceWorkflow(50_000_000), fmt.Sprintf("... <truncated: kept %d of %d bytes>", trace.MaxString, 50_000_000)},
	} {
		wf := filepath.Join(s.tmp, c.file)
		if err := os.WriteFile(wf, []byte(c.src), 0o644); err != nil {
			return nil, err
		}
		with := bench.Contender{Name: "pflow " + c.file, Argv: []string{s.bin["pflow"], wf}, Env: s.env(home)}
		without := bench.Contender{Name: "pflow --no-trace " + c.file, Argv: []string{s.bin["pflow"], "--no-trace", wf}, Env: s.env(home)}
		s.step("bounded traces, %s: with and without the trace × %d interleaved rounds", c.name, s.cfg.roundsTrace)
		tc := TraceCase{Name: c.name, Command: shorten(with.Command()), Marker: c.marker, MarkerFound: true}
		var rss, rssNo []int64
		var wall, wallNo []time.Duration
		for r := 0; r < s.cfg.roundsTrace; r++ {
			pair := []bench.Contender{with, without}
			if r%2 == 1 {
				pair[0], pair[1] = pair[1], pair[0]
			}
			for _, ct := range pair {
				traced := ct.Name == with.Name
				if traced {
					os.RemoveAll(debug)
				}
				u, err := bench.Measure(ctx, ct)
				if err != nil {
					return nil, err
				}
				if !traced {
					rssNo, wallNo = append(rssNo, u.MaxRSS), append(wallNo, u.Wall)
					continue
				}
				rss, wall = append(rss, u.MaxRSS), append(wall, u.Wall)
				files, _ := filepath.Glob(filepath.Join(debug, trace.FilePattern))
				if len(files) != 1 {
					return nil, fmt.Errorf("bounded traces: %s wrote %d traces into %s, want 1", ct.Command(), len(files), debug)
				}
				data, err := os.ReadFile(files[0])
				if err != nil {
					return nil, err
				}
				tc.TraceBytes = max(tc.TraceBytes, int64(len(data)))
				tc.MarkerFound = tc.MarkerFound && bytes.Contains(data, []byte(c.marker))
			}
		}
		tc.RSS, tc.RSSNoTrace = medianInt(rss), medianInt(rssNo)
		tc.Wall, tc.WallNoTrace = bench.Median(wall), bench.Median(wallNo)
		s.step("  trace %s, peak RSS %s (--no-trace %s), wall %s (--no-trace %s), marker found: %v",
			fmtBytes(tc.TraceBytes), fmtBytes(tc.RSS), fmtBytes(tc.RSSNoTrace), fms(tc.Wall), fms(tc.WallNoTrace), tc.MarkerFound)
		out.Cases = append(out.Cases, tc)
	}
	return out, nil
}

// onlyTraces runs the bounded-trace group alone (-only traces) and prints
// its summary rows and table, for a quick figure without the npm peers.
func (s *suite) onlyTraces(ctx context.Context, cfg config) error {
	s.step("machine: load %s", loadavg())
	if err := s.build(ctx); err != nil {
		return err
	}
	r := &Report{Config: cfg}
	var err error
	if r.Traces, err = s.benchTraces(ctx); err != nil {
		return err
	}
	var b strings.Builder
	for _, t := range r.traceTargets() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", t.Area, t.Goal, t.Measured, t.Comparison, t.Ratio, t.Verdict, t.Why)
	}
	b.WriteString("\n" + r.TracesTable())
	_, err = os.Stdout.WriteString(b.String())
	return err
}

func medianInt(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// fmtBytes renders a size in KiB or MiB.
func fmtBytes(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
}

// traceTargets are the "Bounded" rows of the summary.
func (r *Report) traceTargets() []Target {
	goals := map[string]string{
		tDeep: "a trace of a 9,000-level-deep value stays under its documented cap",
		tBig:  "a trace of a 50 MB value stays under its documented cap",
	}
	if r.Traces == nil {
		return []Target{{Area: "Bounded", Goal: goals[tDeep] + "; … a 50 MB value", Verdict: notMeasured}}
	}
	var ts []Target
	for _, c := range r.Traces.Cases {
		why := fmt.Sprintf("cap %s per file (%d levels, %s per string, %s items per list or object); ",
			fmtBytes(trace.MaxFileBytes), trace.MaxDepth, thousands(trace.MaxString)+" bytes", thousands(trace.MaxItems))
		if c.MarkerFound {
			why += fmt.Sprintf("the trace holds the marker `%s`", strings.TrimPrefix(c.Marker, "... "))
		} else {
			why += fmt.Sprintf("the marker `%s` is missing from the trace", c.Marker)
		}
		why += fmt.Sprintf("; writing the trace changes pflow's peak RSS by %+.1f MiB", float64(c.RSS-c.RSSNoTrace)/(1<<20))
		ts = append(ts, Target{Area: "Bounded", Goal: goals[c.Name],
			Measured:   fmt.Sprintf("trace %s, pflow peak RSS %s", fmtBytes(c.TraceBytes), fmtBytes(c.RSS)),
			Comparison: "`--no-trace`: peak RSS " + fmtBytes(c.RSSNoTrace), Ratio: ratio(float64(c.RSS), float64(c.RSSNoTrace)) + " RSS",
			Verdict: verdict(c.TraceBytes <= trace.MaxFileBytes && c.MarkerFound), Why: why})
	}
	return ts
}

// TracesTable renders the bounded-trace benchmark.
func (r *Report) TracesTable() string {
	if r.Traces == nil {
		return "_not measured_\n"
	}
	var rows [][]string
	for _, c := range r.Traces.Cases {
		rows = append(rows, []string{c.Name, fmtBytes(c.TraceBytes), fmt.Sprint(c.MarkerFound), fmtBytes(c.RSS), fmtBytes(c.RSSNoTrace),
			fms(c.Wall), fms(c.WallNoTrace), "`" + c.Command + "`"})
	}
	return table([]string{"value", "trace file", "marker", "peak RSS", "peak RSS `--no-trace`", "median wall", "wall `--no-trace`", "command"}, rows)
}
