#!/usr/bin/env bash
# Installs the temporal CLI whose dev server the Temporal tests run
# (internal/testutil/temporaldev), built from source with `go install`, into
#   ${PFLOW_TEST_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/pflow-test-tools}/temporal-<version>/temporal
# The version is the one temporaldev.go names. A later run, from this or any
# other checkout, finds it there and returns at once. The first build takes
# minutes (several hundred packages; ten or more on 2 cores with a cold Go
# cache), which is why `make test` runs this before `go test` and the tests
# never build it themselves. Prints the binary's path on its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/internal/testutil/temporaldev/temporaldev.go"
pkg=$(sed -n 's/^[[:space:]]*cliPackage[[:space:]]*=[[:space:]]*"\(.*\)"/\1/p' "$src")
version=$(sed -n 's/^[[:space:]]*cliVersion[[:space:]]*=[[:space:]]*"\(.*\)"/\1/p' "$src")
if [ -z "$pkg" ] || [ -z "$version" ]; then
  echo "install-temporal-dev: cliPackage or cliVersion not found in $src" >&2
  exit 1
fi
tools="${PFLOW_TEST_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/pflow-test-tools}"
dir="$tools/temporal-$version"
bin="$dir/temporal"
if [ -x "$bin" ]; then
  echo "temporal CLI $version: $bin"
  exit 0
fi
mkdir -p "$dir"
# One builder per machine: a second `make test` waits for the first's build.
exec 9>"$dir.lock"
if command -v flock >/dev/null 2>&1 && ! flock -n 9; then
  echo "temporal CLI $version: another process is building it; waiting"
  flock 9
fi
if [ -x "$bin" ]; then
  echo "temporal CLI $version: $bin"
  exit 0
fi
GO="${GO:-go}"
echo "temporal CLI $version: not in $dir; building it from source (go install $pkg@$version)"
echo "  this takes a few minutes once, longer on a cold Go build cache; later runs reuse it"
tmp=$(mktemp -d "$dir/.build.XXXXXX")
log="$tmp/build.log"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
downloads=0 built=0 last=$SECONDS
# -v names each package as it is compiled, and the go command names each
# module it downloads: both are counted into a progress line every 20 s,
# printed also while one large package compiles (read times out).
set +e
(cd "$tmp" && GOBIN="$tmp" GOFLAGS= "$GO" install -v "$pkg@$version") 2>&1 | tee "$log" |
  while :; do
    IFS= read -r -t 20 line
    st=$?
    if [ $st = 0 ]; then
      case "$line" in
        "go: downloading "*) downloads=$((downloads + 1)) ;;
        *" "* | "") ;;
        *) built=$((built + 1)) ;;
      esac
    elif [ $st -le 128 ]; then
      break
    fi
    if [ $((SECONDS - last)) -ge 20 ]; then
      last=$SECONDS
      echo "  temporal CLI $version: $((SECONDS - start))s, $downloads modules downloaded, $built packages compiled"
    fi
  done
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" != 0 ] || [ ! -x "$tmp/temporal" ]; then
  echo "install-temporal-dev: go install $pkg@$version failed (exit $rc); last lines:" >&2
  tail -n 30 "$log" >&2
  echo "fix: the build needs the Go module proxy (GOPROXY) to be reachable; run the command by hand to see why it fails" >&2
  exit 1
fi
mv -f "$tmp/temporal" "$bin"
echo "temporal CLI $version: built in $((SECONDS - start))s: $bin"
