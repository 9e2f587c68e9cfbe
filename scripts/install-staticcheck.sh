#!/usr/bin/env bash
# Installs staticcheck, the linter `make lint` runs, built from source with
# `go install` through the Go module proxy, into
#   ${PFLOW_TEST_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/pflow-test-tools}/staticcheck-<version>-<go version>/staticcheck
# once per staticcheck version and Go toolchain: staticcheck understands the
# Go it was built with, so a newer toolchain gets a build of its own. A later
# run, from this or any other checkout, finds it there and returns at once.
# The first build takes seconds with a warm Go build cache and a few minutes
# with a cold one (4m50s on a busy 2-core machine, 2 minutes of CPU).
# Progress goes to stderr; the binary's path is the only line on stdout.
#   usage: install-staticcheck.sh <version>   (a honnef.co/go/tools tag, e.g. v0.8.2)
set -euo pipefail
version="${1:?usage: install-staticcheck.sh <version>}"
pkg=honnef.co/go/tools/cmd/staticcheck
GO="${GO:-go}"
gover=$("$GO" env GOVERSION)
tools="${PFLOW_TEST_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/pflow-test-tools}"
dir="$tools/staticcheck-$version-$gover"
bin="$dir/staticcheck"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$dir"
# One builder per machine: a second `make lint` waits for the first's build.
exec 9>"$dir.lock"
if command -v flock >/dev/null 2>&1 && ! flock -n 9; then
  echo "staticcheck $version: another process is building it; waiting" >&2
  flock 9
fi
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
echo "staticcheck $version: not in $dir; building it with $gover (go install $pkg@$version); later runs reuse it" >&2
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
# GOFLAGS is cleared so that a -mod or -tags of the caller's does not reach
# a build outside this module; GOTOOLCHAIN names the toolchain this module
# selected, which outside it might be another (an older local go).
toolchain="${GOTOOLCHAIN:-}"
if [[ "$gover" =~ ^go[0-9]+(\.[0-9]+)*((rc|beta)[0-9]+)?$ ]]; then
  toolchain="$gover"
fi
if ! (cd "$tmp" && GOBIN="$tmp" GOFLAGS= GOTOOLCHAIN="$toolchain" "$GO" install "$pkg@$version") >"$tmp/build.log" 2>&1 || [ ! -x "$tmp/staticcheck" ]; then
  echo "install-staticcheck: go install $pkg@$version failed; last lines:" >&2
  tail -n 30 "$tmp/build.log" >&2
  echo "fix: the build needs the Go module proxy (GOPROXY) to be reachable; run the command by hand to see why it fails" >&2
  exit 1
fi
mv -f "$tmp/staticcheck" "$bin"
echo "staticcheck $version: built in $((SECONDS - start))s: $bin" >&2
echo "$bin"
