#!/bin/bash
# idle.sh — the CPU time of an idle `git+ queue run` against `git for-each-ref
# refs/hub`, on a repository kept by `bench/scale.sh -keep DIR N`, for one or
# more builds of git+ compared back to back (docs/scale.md, "The idle pass
# memo"; BENCHMARKS.md, "Scale with open pull requests").
#
# Each round times, one after the other, RUNS runs of for-each-ref, RUNS
# idle passes of each binary, and RUNS of for-each-ref again, and prints the
# CPU time (user+sys, children included, from /usr/bin/time over the whole
# loop, so its 10 ms resolution is divided by RUNS) per run in ms. Rounds
# alternate the builds, so load that comes and goes falls on all of them.
#
# usage: bench/idle.sh [-miss] DIR N ROUNDS RUNS GIT+...
#   DIR     the -keep directory of bench/scale.sh (DIR/rN.git, keys, bin/)
#   -miss   empty the queue run memo's file before every pass (a damaged
#           entry: a miss), so the pass reads and plans in full, as the
#           first pass after any change does, and writes the memo again
#
# The first pass of a fresh repository publishes candidates: run
#   DIR/bin/git+ --key DIR/q queue run --target main
# once in DIR/rN.git before measuring.
set -eu
miss=
if [ "${1:-}" = "-miss" ]; then miss=1; shift; fi
[ $# -ge 5 ] || { echo "usage: bench/idle.sh [-miss] DIR N ROUNDS RUNS GIT+..." >&2; exit 2; }
dir=$(cd "$1" && pwd) n=$2 rounds=$3 runs=$4
shift 4
sh "$(dirname "$0")/machine.sh"
cd "$dir/r$n.git"
export HOME="$dir/home" GIT_CONFIG_NOSYSTEM=1 PATH="$dir/bin:$PATH"
# The memo's file: the first 20 bytes of SHA-256("gitplus queue run memo v1\n"
# + target + "\n" + queue id) (receive/queuerun/memo.go).
memo=gitplus/foldcache/$(printf 'gitplus queue run memo v1\nrefs/heads/main\n' | sha256sum | cut -c1-40)
# loop CMD...: CPU ms per run of RUNS runs of CMD.
loop() {
	/usr/bin/time -f '%U %S' -o "$dir/idle.time" bash -c '
		for ((i = 0; i < '"$runs"'; i++)); do
			[ -z "'"$miss"'" ] || [ "$1" = git ] || : >"'"$memo"'"
			"$@" >/dev/null 2>&1 || exit 1
		done' _ "$@"
	awk -v n="$runs" '{printf "%.1f", ($1 + $2) * 1000 / n}' "$dir/idle.time"
}
for b in "$@"; do "$b" --key "$dir/q" queue run --target main >/dev/null 2>&1; done # warm
for ((r = 0; r < rounds; r++)); do
	line="round $r, load $(cut -d' ' -f1 /proc/loadavg): for-each-ref $(loop git for-each-ref refs/hub)"
	for b in "$@"; do
		line+=", $b $(loop "$b" --key "$dir/q" queue run --target main)"
	done
	echo "$line, for-each-ref $(loop git for-each-ref refs/hub)"
done
