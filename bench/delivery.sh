#!/bin/sh
# delivery.sh — push time with a black-holed webhook and mirror vs with no
# after-push configuration, the same pushes alternating in one run. See
# bench/delivery/delivery_test.go for what is measured.
#
# usage: bench/delivery.sh [ITERATIONS]   (default 40)
set -eu
cd "$(dirname "$0")/.."
n=${1:-40}
sh bench/machine.sh
echo
echo "$ go test ./bench/delivery -run '^\$' -bench . -benchtime ${n}x -v"
go test ./bench/delivery -run '^$' -bench . -benchtime "${n}x" -v
