#!/bin/sh
# hook.sh — latency of the pre-receive hook judging a candidate chain of
# depth 1, 8 and 32 against `git merge-tree --stdin` doing the same merges.
# See bench/hook/doc.go for what is measured.
#
# usage: bench/hook.sh [-small] [other -args flags of bench/hook]
#   -small: 2,000 files / 1,000 commits (minutes); without it the generated
#   repository has 20,000 files / 10,000 commits (generation alone is slow).
set -eu
cd "$(dirname "$0")/.."
sh bench/machine.sh
echo
echo "$ go test ./bench/hook -run '^\$' -bench . -benchtime 1x -timeout 60m -args $*"
go test ./bench/hook -run '^$' -bench . -benchtime 1x -timeout 60m -args "$@"
