#!/usr/bin/env bash
# Wall time of `rally --version` (process start to exit), the median and
# 90th percentile of N runs of a freshly built binary.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-50}
bin=$(mktemp -d)/rally
go build -o "$bin" ./cmd/rally
"$bin" --version >/dev/null # warm the page cache
times=()
for _ in $(seq "$n"); do
	s=$(date +%s%N)
	"$bin" --version >/dev/null
	e=$(date +%s%N)
	times+=($(((e - s) / 1000)))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
echo "rally --version over $n runs: median $((sorted[n / 2] / 1000)).$(((sorted[n / 2] % 1000) / 100)) ms, p90 $((sorted[n * 9 / 10] / 1000)).$(((sorted[n * 9 / 10] % 1000) / 100)) ms"
