#!/bin/sh
# queuesim.sh — the merge-queue simulator running the real planner
# (hubrefs/queue.PlanPass over real folds and real candidate commits in
# memory; docs/queue.md, "The simulator"). Prints one table per flaky rate:
# serial, strict depths 2–8, adaptive depth, and whatever -disciplines adds
# (batch:DEPTH/K once the planner has checkEvery). Simulated time: machine
# load changes how long it takes, never the figures.
#
# usage: bench/queuesim.sh [FLAGS]   (e.g. -seeds 40, -prs 200, -flaky 0,0.05,
#        -disciplines serial,2-8,adaptive:8,batch:12/4)
set -eu
cd "$(dirname "$0")/.."
sh bench/machine.sh
echo
echo "$ go run ./bench/queuesim $*"
go run ./bench/queuesim "$@"
