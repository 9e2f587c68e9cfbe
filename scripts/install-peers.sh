#!/usr/bin/env bash
# Installs what the test suite drives: the npm packages (real MCP servers and
# clients) from testdata/peers/package-lock.json, and Debian's PostgreSQL and
# Chromium (a real database and a real browser behind real MCP servers).
# Idempotent and quick when already installed.
set -euo pipefail
cd "$(dirname "$0")/../testdata/peers"
# Debian packages: PostgreSQL (a real database behind a real MCP server)
# and Chromium (a real browser behind a browser automation server).
missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing Debian packages for the tests: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null ||
      { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
  elif [ "${CI:-}" = "true" ]; then
    echo "the tests need these Debian packages: apt-get install ${missing[*]}" >&2; exit 1
  else
    echo "WARNING: not installed: ${missing[*]} (apt-get install ${missing[*]}); the tests that need them will skip" >&2
  fi
fi
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
# A clean checkout reuses the packages an earlier install of the same lock
# file left in the cache (hard links: under a second, where npm ci takes
# half a minute); PFLOW_PEERS_CACHE=off always runs npm ci.
cache_root="${PFLOW_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pflow-test-peers}"
cache="$cache_root/$(sha256sum package-lock.json | cut -c1-16)"
if [ "$cache_root" != off ] && [ -f "$cache/node_modules/.pflow-lock-stamp" ] &&
  cmp -s package-lock.json "$cache/node_modules/.pflow-lock-stamp"; then
  rm -rf node_modules
  if cp -al "$cache/node_modules" node_modules 2>/dev/null || cp -a "$cache/node_modules" node_modules; then
    exit 0
  fi
  rm -rf node_modules
fi
npm ci --no-audit --no-fund --loglevel=error
cp package-lock.json "$stamp"
if [ "$cache_root" != off ] && [ ! -d "$cache" ] && mkdir -p "$cache_root" 2>/dev/null; then
  # Made aside and renamed into place: a concurrent install never sees half.
  tmp=$(mktemp -d "$cache_root/.tmp.XXXXXX")
  if cp -al node_modules "$tmp/node_modules" 2>/dev/null || cp -a node_modules "$tmp/node_modules"; then
    mv -T "$tmp" "$cache" 2>/dev/null || rm -rf "$tmp"
  else
    rm -rf "$tmp"
  fi
fi
