#!/bin/sh
# queuesim.sh — the merge-queue simulator running the real planner
# (hubrefs/queue.PlanPass over real folds and real candidate commits in
# memory; docs/queue.md, "The simulator"). Prints one table per flaky rate:
# serial, strict depths 2–8, adaptive depth and batch checks (batch:DEPTH/K,
# the rules' checkEvery K) by default, or what -disciplines lists. Simulated
# time: machine load changes how long it takes, never the figures.
#
# usage: bench/queuesim.sh [FLAGS]   (e.g. -seeds 40, -prs 200, -flaky 0,0.05,
#        -retries 0, -broken 0.02, -disciplines serial,2-8,adaptive:8,batch:12/4)
set -eu
cd "$(dirname "$0")/.."
sh bench/machine.sh
echo
echo "$ go run ./bench/queuesim $*"
go run ./bench/queuesim "$@"
