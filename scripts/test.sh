#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: formatting, vet, the race-
# enabled tests, and a short run of every fuzz target.
# FUZZTIME=0 skips the fuzzing; FUZZTIME=1m fuzzes longer.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi
go vet ./...
go test -race -count=1 ./...

fuzztime=${FUZZTIME:-10s}
if [ "$fuzztime" != "0" ]; then
	# Every FuzzXxx function, package by package.
	for pkg in $(go list ./...); do
		dir=$(go list -f '{{.Dir}}' "$pkg")
		for fn in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
			echo "fuzz $pkg $fn for $fuzztime"
			go test -run="^$" -fuzz="^${fn}\$" -fuzztime="$fuzztime" -fuzzminimizetime=5s "$pkg" >/tmp/rally-fuzz.log 2>&1 || { cat /tmp/rally-fuzz.log; exit 1; }
		done
	done
fi
echo "all checks passed"
