#!/bin/sh
# audit.sh — `git+ verify --branch` (policy.Audit) over N landings against
# `git log --first-parent` of the same branch, in the same run.
#
# usage: bench/audit.sh [LANDINGS]   (default 1000)
set -eu
cd "$(dirname "$0")/.."
sh bench/machine.sh
echo
echo "$ go test ./bench/audit -run '^\$' -bench . -benchtime 3x -args -landings ${1:-1000}"
go test ./bench/audit -run '^$' -bench . -benchtime 3x -timeout 30m -args -landings "${1:-1000}"
