#!/usr/bin/env bash
# Runs every Fuzz* target in the module for ${FUZZTIME:-30s} each.
# Plain `go test` already runs each target's seed corpus (testdata/fuzz/...);
# this is the long run. New crashers are written to the package's
# testdata/fuzz/<Target>/ directory: commit them with the fix.
#
#   FUZZTIME=5m ./scripts/fuzz.sh            # every target, 5 minutes each
#   ./scripts/fuzz.sh ./internal/workflow    # only the targets of these packages
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=(./...)
fi

failed=()
total=0
for pkg in $("$GO" list "${pkgs[@]}"); do
	dir=$("$GO" list -f '{{.Dir}}' "$pkg")
	targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*(' "$dir"/*_test.go 2>/dev/null | sed 's/^func //; s/($//' | sort -u || true)
	for t in $targets; do
		total=$((total + 1))
		echo "=== $pkg $t ($FUZZTIME)"
		if ! "$GO" test "$pkg" -run '^$' -fuzz "^${t}\$" -fuzztime "$FUZZTIME"; then
			failed+=("$pkg $t")
		fi
	done
done

echo
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: ${#failed[@]} of $total targets failed:"
	printf '  %s\n' "${failed[@]}"
	echo "The failing inputs are under each package's testdata/fuzz/<Target>/; reproduce with"
	echo "  go test <pkg> -run '<Target>/<file>'"
	exit 1
fi
echo "fuzz: all $total targets ran for $FUZZTIME without a failure"
