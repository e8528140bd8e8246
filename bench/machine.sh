#!/bin/sh
# machine.sh — print the machine a benchmark ran on (for BENCHMARKS.md):
# CPUs, memory, CPU model, go and git versions, and the load average, which
# on a shared VM inflates wall-clock figures more than anything we measure.
set -eu
echo "date:   $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "nproc:  $(nproc)"
echo "memory: $(free -h | awk '/^Mem:/ {print $2 " total, " $7 " available"}')"
echo "cpu:    $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "go:     $(go version)"
echo "git:    $(git --version)"
echo "load:   $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
