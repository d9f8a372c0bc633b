#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: formatting, vet, the race-
# enabled tests (with the count of tests that skipped, and why), the
# packages that print times of day again in the two zones furthest from
# UTC, and a short run of every fuzz target.
# FUZZTIME=0 skips the fuzzing; FUZZTIME=1m fuzzes longer.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi
go vet ./...
# -json for scripts/testcount, which prints what plain go test prints (the
# ok/FAIL line of every package, failing tests' output) and then the tests
# that skipped, with their reasons: a test skips when an outside program it
# needs is missing here (CI=true makes those fail instead).
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/testcount" ./scripts/testcount
go test -race -count=1 -json ./... | "$bin/testcount"
# The telemetry end-to-end test runs a real OpenTelemetry Collector; it is
# a module of its own (internal/otelcoltest) so that the collector's
# dependencies stay out of rally's go.mod, and ./... does not reach it.
# Without -race: its subject is what crosses the wire, and the race run
# above covered the session's instrumentation.
(cd internal/otelcoltest && go vet ./... && go test -count=1 ./...)

# Times of day: a test that formats one without pinning its clock and zone
# passes at some hours and fails at others. These packages print times, so
# they run again in the zones furthest ahead of UTC (+14) and behind it
# (-12), where "now + 5 h" crosses midnight at other hours than here.
# Without -race: the race run above covered their concurrency. The two
# zones run side by side: these tests mostly wait on processes, terminals
# and browsers (about a third of a core each), so together they take little
# longer than one.
timed="./retry/ ./auth/ ./fleet/ ./session/... ./internal/app/cli/ ./internal/app/tui/ ./internal/app/web/"
pids=()
for tz in Pacific/Kiritimati Etc/GMT+12; do
	echo "again in TZ=$tz: $timed"
	TZ=$tz go test -count=1 $timed >"$bin/tz-${tz//\//-}.log" 2>&1 &
	pids+=($!)
done
failed=0
for i in 0 1; do
	wait "${pids[$i]}" || failed=1
done
for tz in Pacific/Kiritimati Etc/GMT+12; do
	echo "TZ=$tz:"
	cat "$bin/tz-${tz//\//-}.log"
done
[ "$failed" = 0 ]

fuzztime=${FUZZTIME:-5s}
log="$bin/fuzz.log"
# fuzz_one runs one target. Go 1.26's fuzz coordinator can end a clean run
# with a bare "context deadline exceeded" when -fuzztime expires while a
# worker is busy (golang/go#75804, fixed in Go 1.27). A real finding always
# writes "Failing input written to …" (or panics, or fails an assertion), so
# only that bare message is retried, once; anything else fails the run.
fuzz_one() {
	for try in 1 2; do
		if go test -run='^$' -fuzz="^${2}\$" -fuzztime="$fuzztime" -fuzzminimizetime=5s "$1" >"$log" 2>&1; then
			return 0
		fi
		if grep -q 'Failing input written to\|panic:\|_test.go:[0-9]' "$log" || ! grep -q 'context deadline exceeded' "$log"; then
			cat "$log"
			exit 1
		fi
		echo "  (go fuzz coordinator deadline race, golang/go#75804; no failing input; try $try)"
	done
	echo "  the deadline race twice in a row and still no failing input: not counted as a failure"
}
if [ "$fuzztime" != "0" ]; then
	# Every FuzzXxx function, package by package.
	for pkg in $(go list ./...); do
		dir=$(go list -f '{{.Dir}}' "$pkg")
		for fn in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
			echo "fuzz $pkg $fn for $fuzztime"
			fuzz_one "$pkg" "$fn"
		done
	done
fi
echo "all checks passed"
