#!/usr/bin/env bash
# Runs every benchmark of docs/decisions.md ("Measured targets") side by side with its comparison and
# rewrites docs/BENCHMARKS.md (medians of interleaved runs, ratios, the
# machine, the exact commands). `make bench` runs this.
#
# Usage: scripts/bench.sh [-quick] [-out FILE] [-raw FILE.json] [-rounds N] ...
#        scripts/bench.sh -h        lists every option (round counts, -count)
#
# Needs Go and the npm test peers; installs the peers first if they are
# missing (as `make test` does). No root, no network beyond the npm registry
# for that install. Takes under 10 minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -e testdata/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js ]; then
  echo "bench: installing the npm test peers (scripts/install-peers.sh)" >&2
  ./scripts/install-peers.sh
fi
exec go run ./internal/bench/cmd/pflowbench "$@"
