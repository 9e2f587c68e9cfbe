package bench

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
)

// GoBench holds the results of `go test -bench` runs: for each benchmark
// (name without the -GOMAXPROCS suffix) and unit ("ns/op", "items/s", ...),
// one value per run (-count).
type GoBench map[string]map[string][]float64

// ParseGoBench reads `go test -bench` output. Lines that are not results
// (goos:, PASS, ok, logs) are skipped.
func ParseGoBench(r io.Reader) GoBench {
	out := GoBench{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		for j := 2; j+1 < len(f); j += 2 {
			v, err := strconv.ParseFloat(f[j], 64)
			if err != nil {
				continue
			}
			if out[name] == nil {
				out[name] = map[string][]float64{}
			}
			out[name][f[j+1]] = append(out[name][f[j+1]], v)
		}
	}
	return out
}

// Median returns the median value of unit for benchmark name and whether
// it was measured.
func (g GoBench) Median(name, unit string) (float64, bool) {
	vs := g[name][unit]
	if len(vs) == 0 {
		return 0, false
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}

// Runs is the number of measurements of unit for name.
func (g GoBench) Runs(name, unit string) int { return len(g[name][unit]) }
