#!/usr/bin/env bash
# Side by side, in one run: one direct call of server-everything's echo tool
# through `pflow mcp-everything-echo --message=…` and through
# `mcporter call --stdio …` (the npm peer), whole process each time, runs
# alternated. Prints each median and the ratio. Usage: scripts/bench-direct-call.sh [N]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
n="${1:-15}"
peers="$root/testdata/peers/node_modules"
ev="$peers/@modelcontextprotocol/server-everything/dist/index.js"
[ -f "$ev" ] && [ -x "$peers/.bin/mcporter" ] || { echo "install the npm peers first: make peers" >&2; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export PFLOW_HOME="$work/home"; mkdir -m 700 "$PFLOW_HOME"
(cd "$root" && CGO_ENABLED=0 go build -o "$work/pflow" ./cmd/pflow)
"$work/pflow" mcp add "{\"everything\": {\"command\": \"node\", \"args\": [\"$ev\", \"stdio\"]}}" >/dev/null 2>&1
"$work/pflow" mcp sync everything >/dev/null 2>&1
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
p=(); m=()
for _ in $(seq "$n"); do
  p+=("$(ms "$work/pflow" mcp-everything-echo --message=hi)")
  m+=("$(ms "$peers/.bin/mcporter" call --stdio "node $ev stdio" echo message=hi)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
pm=$(median "${p[@]}"); mm=$(median "${m[@]}")
echo "direct call of echo, $n runs each, alternated"
echo "pflow mcp-everything-echo --message=hi   median ${pm} ms"
echo "mcporter call --stdio … echo message=hi  median ${mm} ms"
awk -v a="$pm" -v b="$mm" 'BEGIN { printf "ratio pflow / mcporter: %.2f×\n", a / b }'
