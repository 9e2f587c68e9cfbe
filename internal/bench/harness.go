// Package bench measures pflow against its comparisons for
// docs/BENCHMARKS.md (see docs/decisions.md, "Measured targets"). Timings on a
// shared machine are noisy,
// so every figure is a median of interleaved runs: each round runs every
// contender once, in rotating order, so that they share the same load, and
// figures are reported as ratios to a comparison measured in the same run.
//
// The command internal/bench/cmd/pflowbench (run by scripts/bench.sh,
// `make bench`) drives the whole suite and rewrites docs/BENCHMARKS.md.
package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Contender is one command of a side-by-side comparison.
type Contender struct {
	Name string
	Argv []string
	Env  []string // full environment (nil: inherit)
	Dir  string
}

// Command renders the contender as a shell command line for the report.
func (c Contender) Command() string {
	var b strings.Builder
	for i, a := range c.Argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a == "" || strings.ContainsAny(a, " \"'{}$*?[]\\;&|<>()") {
			b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
		} else {
			b.WriteString(a)
		}
	}
	return b.String()
}

// Timing is what one contender measured over all rounds.
type Timing struct {
	Name string
	Wall []time.Duration
	CPU  []time.Duration // user + system of the process and its waited-for children
}

// MedianWall is the median wall-clock time.
func (t Timing) MedianWall() time.Duration { return Median(t.Wall) }

// MedianCPU is the median CPU time.
func (t Timing) MedianCPU() time.Duration { return Median(t.CPU) }

// Median returns the median of ds (the mean of the middle two for an even
// count), 0 for none.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Interleave runs every contender once per round, rotating the order each
// round, after warmup untimed rounds. A contender that fails stops the
// measurement with an error naming it, its command and its output's tail.
func Interleave(ctx context.Context, cs []Contender, rounds, warmup int) ([]Timing, error) {
	out := make([]Timing, len(cs))
	for i, c := range cs {
		out[i].Name = c.Name
	}
	for r := -warmup; r < rounds; r++ {
		for k := range cs {
			i := (max(r, 0) + k) % len(cs)
			wall, cpu, err := RunOnce(ctx, cs[i])
			if err != nil {
				return nil, err
			}
			if r >= 0 {
				out[i].Wall = append(out[i].Wall, wall)
				out[i].CPU = append(out[i].CPU, cpu)
			}
		}
	}
	return out, nil
}

// RunOnce runs c and returns its wall-clock and CPU time.
func RunOnce(ctx context.Context, c Contender) (wall, cpu time.Duration, err error) {
	u, err := Measure(ctx, c)
	return u.Wall, u.CPU, err
}

// Usage is what one run of a contender cost.
type Usage struct {
	Wall, CPU time.Duration
	// MaxRSS is the peak resident set size in bytes of the process or of
	// the largest child it waited for (getrusage's ru_maxrss).
	MaxRSS int64
}

// Measure runs c once and returns its wall-clock time, CPU time and peak RSS.
func Measure(ctx context.Context, c Contender) (Usage, error) {
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	var outb tail
	cmd.Stdout = &outb
	cmd.Stderr = &outb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	u := Usage{Wall: time.Since(start)}
	if err != nil {
		return Usage{}, fmt.Errorf("%s failed (%v)\n  command: %s\n  output (last lines):\n%s\n  fix: run the command by hand to see why", c.Name, err, c.Command(), indent(outb.String()))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		u.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		u.MaxRSS = int64(ru.Maxrss) * 1024 // kilobytes on Linux
	}
	return u, nil
}

// tail keeps the last 4 KiB written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.b) }

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString("    " + l + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
