#!/bin/sh
# soak.sh — the closed-loop queue soak at full size: `git+ serve` over HTTP,
# the README's wake rules running `queue run` and `check run --retries 1`,
# 4 clones × PER_CLONE pull requests opened at once (one conflicting pair,
# one broken, one flaky), until the queue drains. Prints landings per
# minute, CI runs per landed pull request, queue pushes per landing, and
# passes started vs passes that did work (docs/queue.md).
#
# usage: bench/soak.sh [PER_CLONE]   (default 8)
set -eu
cd "$(dirname "$0")/.."
n=${1:-8}
sh bench/machine.sh
echo
echo "$ GITPLUS_SOAK_PER_CLONE=$n go test ./cmd/git+ -run '^TestQueueSoak\$' -v -timeout 60m"
GITPLUS_SOAK_PER_CLONE=$n go test ./cmd/git+ -run '^TestQueueSoak$' -count 1 -v -timeout 60m 2>&1 | grep -E '^(=== |--- |    e2e_soak_test.go|PASS|FAIL|ok)'
