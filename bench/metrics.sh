#!/bin/bash
# metrics.sh — what a scrape of git+ serve's /metrics costs against an idle
# `git+ queue run`, on a repository kept by `bench/scale.sh -keep DIR N`
# (docs/operating.md, "Metrics"; BENCHMARKS.md, "Scale with open pull
# requests"). The goal: a scrape within 2x an idle pass.
#
# It starts DIR/bin/git+ serve over DIR, then each round times RUNS idle
# passes (a process each: wall and CPU, user+sys, of the process) and RUNS
# scrapes (curl: wall; CPU: the server's, from /proc/PID/stat, over the
# RUNS scrapes), in ms per run; rounds alternate which goes first. Then,
# once each, the memo misses: a scrape with the stats memo's entry emptied
# (it counts every queue and pull request log through the fold cache, as
# the first scrape after any change does) and a pass with the queue run
# memo's entry emptied.
#
# usage: bench/metrics.sh DIR N ROUNDS RUNS
set -eu
[ $# -eq 4 ] || { echo "usage: bench/metrics.sh DIR N ROUNDS RUNS" >&2; exit 2; }
dir=$(cd "$1" && pwd) n=$2 rounds=$3 runs=$4
sh "$(dirname "$0")/machine.sh"
repo="$dir/r$n.git"
export HOME="$dir/home" GIT_CONFIG_NOSYSTEM=1 PATH="$dir/bin:$PATH"
gp="$dir/bin/git+"
cd "$repo"
"$gp" --key "$dir/q" queue run --target main >/dev/null 2>&1 || true # the first pass publishes
log=$(mktemp)
"$gp" serve --root "$dir" --listen 127.0.0.1:0 >"$log.out" 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$log" "$log.out"' EXIT
for _ in $(seq 100); do grep -q listening "$log.out" 2>/dev/null && break; sleep 0.1; done
url="$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$log.out" | head -1)metrics?repository=r$n.git"
memoQ=gitplus/foldcache/$(printf 'gitplus queue run memo v1\nrefs/heads/main\n' | sha256sum | cut -c1-40)
memoS=gitplus/foldcache/$(printf 'gitplus queue stats memo v1\n' | sha256sum | cut -c1-40)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; } # server ticks
tick=$(getconf CLK_TCK)
now() { date +%s%N; }
# passes: "WALL CPU" ms per idle pass over RUNS.
passes() {
	/usr/bin/time -f '%U %S' -o "$dir/metrics.time" bash -c '
		for ((i = 0; i < '"$runs"'; i++)); do "$0" --key "$1" queue run --target main >/dev/null 2>&1 || exit 1; done' "$gp" "$dir/q"
	local t0 t1; read -r u s <"$dir/metrics.time"
	echo "$u $s"
}
scrapes() {
	local c0 c1 t0 t1
	c0=$(cpu); t0=$(now)
	for ((i = 0; i < runs; i++)); do curl -sf -o /dev/null "$url" || exit 1; done
	t1=$(now); c1=$(cpu)
	awk -v w="$((t1 - t0))" -v c="$((c1 - c0))" -v n="$runs" -v k="$tick" 'BEGIN {printf "%.1f %.1f", w/1e6/n, c*1000/k/n}'
}
passes_t() {
	local t0 t1 uc; t0=$(now); uc=$(passes); t1=$(now)
	set -- $uc
	awk -v w="$((t1 - t0))" -v u="$1" -v s="$2" -v n="$runs" 'BEGIN {printf "%.1f %.1f", w/1e6/n, (u+s)*1000/n}'
}
curl -sf -o /dev/null "$url"; "$gp" --key "$dir/q" queue run --target main >/dev/null 2>&1 # warm both memos
echo "wall ms and CPU ms (user+sys) per run; $runs runs per cell; $n open pull requests"
printf '| round | load | idle pass wall | idle pass CPU | scrape wall | scrape CPU (server) | scrape/idle wall | scrape/idle CPU |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for ((r = 0; r < rounds; r++)); do
	if ((r % 2 == 0)); then p=$(passes_t); s=$(scrapes); else s=$(scrapes); p=$(passes_t); fi
	set -- $p $s
	printf '| %d | %s | %s | %s | %s | %s | %s | %s |\n' "$r" "$(cut -d' ' -f1 /proc/loadavg)" "$1" "$2" "$3" "$4" \
		"$(awk -v a="$3" -v b="$1" 'BEGIN {printf "%.2f", a/b}')" "$(awk -v a="$4" -v b="$2" 'BEGIN {printf "%.2f", a/b}')"
done
# Misses, once each.
: >"$memoS"; c0=$(cpu); t0=$(now); curl -sf -o /dev/null "$url"; t1=$(now); c1=$(cpu)
echo "scrape, stats memo missed: $(awk -v w="$((t1 - t0))" -v c="$((c1 - c0))" -v k="$tick" 'BEGIN {printf "%.1f ms wall, %.1f ms CPU", w/1e6, c*1000/k}')"
: >"$memoQ"; t0=$(now); /usr/bin/time -f '%U %S' -o "$dir/metrics.time" "$gp" --key "$dir/q" queue run --target main >/dev/null 2>&1; t1=$(now)
read -r u s <"$dir/metrics.time"
echo "queue run, pass memo missed: $(awk -v w="$((t1 - t0))" -v u="$u" -v s="$s" 'BEGIN {printf "%.1f ms wall, %.1f ms CPU", w/1e6, (u+s)*1000}')"
