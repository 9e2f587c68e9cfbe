#!/usr/bin/env bash
# Side by side, in one run: examples/fan-out.pflow.md (three independent
# shell steps that each wait DELAY seconds, then a join) with `parallel: true`
# and the same workflow with the line removed (steps in order), whole
# process each time, runs alternated. Prints each median and the ratios to
# one step's wait. Usage: scripts/bench-fan-out.sh [N] [DELAY]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
n="${1:-9}"
delay="${2:-0.2}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export PFLOW_HOME="$work/home"; mkdir -m 700 "$PFLOW_HOME"
(cd "$root" && CGO_ENABLED=0 go build -o "$work/pflow" ./cmd/pflow)
cp "$root/examples/fan-out.pflow.md" "$work/parallel.pflow.md"
grep -v '^- parallel: true$' "$root/examples/fan-out.pflow.md" > "$work/inorder.pflow.md"
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
p=(); q=(); v=()
for _ in $(seq "$n"); do
  p+=("$(ms "$work/pflow" --no-record "$work/parallel.pflow.md" delay="$delay")")
  q+=("$(ms "$work/pflow" --no-record "$work/inorder.pflow.md" delay="$delay")")
  v+=("$(ms "$work/pflow" --version)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
pm=$(median "${p[@]}"); qm=$(median "${q[@]}"); vm=$(median "${v[@]}")
wait_ms=$(awk -v d="$delay" 'BEGIN { printf "%d", d * 1000 }')
echo "fan-out of 3 steps waiting ${delay}s each, then a join; $n runs each, alternated"
echo "parallel: true   median ${pm} ms"
echo "in order         median ${qm} ms"
echo "pflow --version  median ${vm} ms (process start-up, in both figures)"
awk -v p="$pm" -v q="$qm" -v w="$wait_ms" -v v="$vm" 'BEGIN {
  printf "parallel / one wait: %.2f×   in order / one wait: %.2f×   parallel / in order: %.2f×\n", p / w, q / w, p / q
  printf "parallel minus start-up / one wait: %.2f×\n", (p - v) / w }'
