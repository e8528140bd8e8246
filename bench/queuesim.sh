#!/bin/sh
# queuesim.sh — the queue simulation: exact-candidate chains (fixed and
# adaptive depth) against serial landing and batch-and-halve, same seeds.
#
# usage: bench/queuesim.sh [FLAGS]   (e.g. -sweep, -prs 200, -broken 0.2)
set -eu
cd "$(dirname "$0")/.."
echo "$ go run ./bench/queuesim $*"
go run ./bench/queuesim "$@"
