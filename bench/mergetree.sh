#!/bin/sh
# mergetree.sh — mergeTree against `git merge-tree --write-tree --stdin`.
#
# usage: bench/mergetree.sh [REPO [N]]
#
# Always runs the in-package benchmark (200 small random merges, both sides
# in the same run). With REPO (a git directory, e.g. a clone of git/git),
# also replays its newest N (default 200) real two-parent merges that have
# one merge base and no renames, reporting agreement and the time ratio.
set -eu
cd "$(dirname "$0")/.."
sh bench/machine.sh
echo
echo "$ go test ./mergetree -run '^\$' -bench MergeVsGit -benchtime 20x"
go test ./mergetree -run '^$' -bench MergeVsGit -benchtime 20x
if [ $# -ge 1 ]; then
	echo
	echo "$ go run ./bench/mergetree -repo $1 -n ${2:-200} -rounds 3"
	go run ./bench/mergetree -repo "$1" -n "${2:-200}" -rounds 3
fi
