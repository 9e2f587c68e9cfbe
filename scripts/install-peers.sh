#!/usr/bin/env bash
# Installs the npm packages the test suite drives (real MCP servers and
# clients) from testdata/peers/package-lock.json. Idempotent and quick when
# already installed.
set -euo pipefail
cd "$(dirname "$0")/../testdata/peers"
if [ ! -f package.json ]; then
  echo "no npm peers declared yet"; exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  if [ "${CI:-}" = "true" ]; then echo "npm is required to install the MCP test peers" >&2; exit 1; fi
  echo "WARNING: npm not found; tests that need the MCP peers will skip" >&2; exit 0
fi
stamp=node_modules/.pflow-lock-stamp
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp"; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
cp package-lock.json "$stamp"
