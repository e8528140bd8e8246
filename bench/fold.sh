#!/bin/sh
# fold.sh — read + verify + fold one pull request of 1,000 and 10,000 events
# against `git log --format=%B` of the same ref, in the same run.
#
# usage: bench/fold.sh [BENCHTIME]   (default 3x; setup takes a while)
set -eu
cd "$(dirname "$0")/.."
sh bench/machine.sh
echo
echo "$ go test ./bench/fold -run '^\$' -bench '^BenchmarkFold\$' -benchtime ${1:-3x} -timeout 30m"
go test ./bench/fold -run '^$' -bench '^BenchmarkFold$' -benchtime "${1:-3x}" -timeout 30m
