#!/usr/bin/env bash
# Runs pflow's Go benchmarks and prints the raw results (benchstat format).
# Usage: scripts/bench.sh [count]   (default count 5)
# The figures in docs/BENCHMARKS.md come from one run of this script.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-5}
out=${BENCH_OUT:-bench-results.txt}
{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(go version) $(nproc) cores"
  go test -run '^$' -bench . -benchmem -count "$count" \
    ./internal/runtime/ ./internal/registry/ ./internal/discovery/ ./internal/app/ \
    ./internal/template/ ./internal/workflow/ ./internal/validate/ 2>&1
} | tee "$out"
echo "raw results written to $out"
