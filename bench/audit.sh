#!/bin/sh
# audit.sh — `git+ verify --branch` (policy.Audit) over N landings against
# `git log --first-parent` of the same branch, in the same run.
#
# usage: bench/audit.sh [LANDINGS [BENCH FLAGS...]]   (default 1000)
#   e.g. bench/audit.sh 1000 -cpuprofile /tmp/audit.prof
#        (then go tool pprof /tmp/audit.prof, and /tmp/audit.prof.cold)
set -eu
cd "$(dirname "$0")/.."
n=${1:-1000}
[ $# -gt 0 ] && shift
sh bench/machine.sh
echo
echo "$ go test ./bench/audit -run '^\$' -bench . -benchtime 3x -args -landings $n $*"
go test ./bench/audit -run '^$' -bench . -benchtime 3x -timeout 30m -args -landings "$n" "$@"
