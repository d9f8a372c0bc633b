#!/usr/bin/env bash
# Mutation testing: small bugs (a flipped comparison, a changed sign, a
# dropped increment) are put into the code one at a time by gremlins, and
# each package's own tests must fail on every one of them. A mutant that
# lives is a bug the tests would let through, or an equivalent change
# (one that cannot alter behaviour); see README "Contributing".
#
#   scripts/mutate.sh              packages changed since main, changed lines only
#   scripts/mutate.sh -b BASE      ... since BASE (a branch or commit)
#   scripts/mutate.sh -a ./fleet   whole packages, every line
#
# Too slow for CI on 2 cores (one `go test` per mutant); run it by hand.
# WORKERS (default 1) and TIMEOUT_COEFFICIENT (default 10: each mutant is
# compiled inside its timeout, slow on a busy machine) tune gremlins;
# EXCLUDE is a space-separated list of file regexps to leave out
# (EXCLUDE='edit\.go read\.go' scripts/mutate.sh -a ./tool).
# Its --test-cpu flag is not used: v0.6.0 passes it to go test as one
# argument ("-cpu 1"), which fails every run and so "kills" every mutant.
set -euo pipefail
cd "$(dirname "$0")/.."

version=v0.6.0
base=main
all=false
while getopts ab: opt; do
	case $opt in
	a) all=true ;;
	b) base=$OPTARG ;;
	*)
		echo "usage: $0 [-a] [-b base] [./pkg ...]" >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))

gremlins=$(command -v gremlins || true)
if [ -z "$gremlins" ]; then
	gremlins="$(go env GOPATH | cut -d: -f1)/bin/gremlins"
	if [ ! -x "$gremlins" ]; then
		echo "installing gremlins $version" >&2
		go install "github.com/go-gremlins/gremlins/cmd/gremlins@$version"
	fi
fi

pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	# The packages whose non-test Go files changed since base.
	mapfile -t pkgs < <(git diff --name-only "$base" -- '*.go' ':!*_test.go' |
		xargs -r -n1 dirname | sort -u | sed 's|^|./|')
	if [ ${#pkgs[@]} -eq 0 ]; then
		echo "no Go code changed since $base" >&2
		exit 0
	fi
fi

exclude=(-E /) # a subpackage is its own run, killed by its own tests
for e in ${EXCLUDE:-}; do
	exclude+=(-E "$e")
done
diff=()
if ! $all; then
	diff=(--diff "$base")
	# gremlins v0.6.0 matches the diff's paths (from the repository root)
	# against paths inside the package it was given, so no line ever
	# matched; this git hands it the diff relative to that package.
	shim=$(mktemp -d)
	trap 'rm -rf "$shim"' EXIT
	cat >"$shim/git" <<-SHIM
		#!/bin/sh
		if [ "\$1" = diff ]; then
			shift
			exec $(command -v git) diff --relative="\$MUTATE_PKG" "\$@"
		fi
		exec $(command -v git) "\$@"
	SHIM
	chmod +x "$shim/git"
fi

export CI=true # tests that need redis-server, tmux or chromium fail rather than skip
# gremlins times its coverage run to set each mutant's timeout; a cached
# test result makes that run look instant, and every mutant then "times
# out" falsely.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1"
status=0
for pkg in "${pkgs[@]}"; do
	echo "== $pkg" >&2
	MUTATE_PKG=${pkg#./} PATH=${shim:+$shim:}$PATH "$gremlins" unleash --workers "${WORKERS:-1}" --timeout-coefficient "${TIMEOUT_COEFFICIENT:-10}" \
		"${diff[@]}" "${exclude[@]}" -S lt "$pkg" || status=1
done
exit $status
