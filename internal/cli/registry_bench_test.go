package cli

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// BenchmarkRegistryListCommand runs 'pflow registry list' in-process against
// $PFLOW_BENCH_HOME (skipped when unset).
func BenchmarkRegistryListCommand(b *testing.B) {
	home := os.Getenv("PFLOW_BENCH_HOME")
	if home == "" {
		b.Skip("set PFLOW_BENCH_HOME to a home with a large registry.json")
	}
	for b.Loop() {
		var out, errb bytes.Buffer
		ios := &IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errb}
		if code := Main(context.Background(), []string{"registry", "list"}, ios, []string{"PFLOW_HOME=" + home}); code != 0 {
			b.Fatal(errb.String())
		}
	}
}
