package durable_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// BenchmarkTemporalBatch runs a 2,000-item batch of a 50 ms shell step
// (max_concurrent 50) locally, on one Temporal worker and on two, side by
// side: each round runs every contender once, so they share the machine's
// load. It reports the medians and the ratios to the local run (see
// docs/BENCHMARKS.md). Run it with:
//
//	go test -run '^$' -bench TemporalBatch -benchtime 1x ./internal/durable
func BenchmarkTemporalBatch(b *testing.B) {
	const items, rounds = 2000, 3
	local := newCluster(b)
	one := newCluster(b)
	one.worker(b)
	two := newCluster(b)
	two.worker(b)
	two.worker(b)
	wf := filepath.Join(local.dir, "batch.pflow.md")
	writeFile(b, wf, fmt.Sprintf("# Batch\n\n## Steps\n\n### items\nThe items.\n- type: shell\n- command: seq -s, 1 %d | sed 's/.*/[&]/'\n\n"+
		"### work\nFifty milliseconds of work per item.\n- type: shell\n- command: sleep 0.05; echo ${n}\n\n"+
		"```yaml batch\nitems: ${items.stdout}\nas: n\nparallel: true\nmax_concurrent: 50\n```\n\n## Outputs\n\n### done\nItems done.\n- source: ${work.success_count}\n", items))
	contenders := []struct {
		name string
		run  func() result
	}{
		{"local", func() result { return local.pflow(b, "--no-record", "--no-trace", wf) }},
		{"temporal-1-worker", func() result { return one.pflow(b, "--no-trace", "--temporal", one.srv.HostPort, wf) }},
		{"temporal-2-workers", func() result { return two.pflow(b, "--no-trace", "--temporal", two.srv.HostPort, wf) }},
	}
	times := map[string][]time.Duration{}
	b.ResetTimer()
	for r := range rounds {
		for i := range contenders {
			c := contenders[(i+r)%len(contenders)] // rotating order
			start := time.Now()
			res := c.run()
			d := time.Since(start)
			if res.code != 0 || res.stdout == "" {
				b.Fatalf("%s failed (%d): %s %s", c.name, res.code, res.stdout, res.stderr)
			}
			times[c.name] = append(times[c.name], d)
		}
	}
	b.StopTimer()
	median := func(ds []time.Duration) time.Duration {
		s := append([]time.Duration(nil), ds...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[len(s)/2]
	}
	base := median(times["local"])
	for _, c := range contenders {
		m := median(times[c.name])
		b.ReportMetric(m.Seconds(), c.name+"-s")
		if c.name != "local" {
			b.ReportMetric(float64(m)/float64(base), c.name+"-x-local")
			b.ReportMetric(float64(m-base)/float64(items)/1e6, c.name+"-ms-per-item-over-local")
		}
		b.Logf("%-20s median %v over %d rounds %v", c.name, m.Round(time.Millisecond), rounds, times[c.name])
	}
}
