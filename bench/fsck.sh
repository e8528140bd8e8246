#!/bin/bash
# fsck.sh — what receive.fsckObjects (set by `git+ hook install`) costs a
# push: the same pushes into bare repositories (no hooks, so git's own cost
# alone) with it off and on, interleaved, median of REPS each.
#
#   small: one commit changing one file of a FILES-file tree (3 new objects:
#          unpacked loose, by unpack-objects --strict when on)
#   pack:  the whole FILES-file history into an empty repository (a pack,
#          by index-pack --strict when on)
#
# Reported per push: the median wall time and the median CPU time (user +
# system of git push and everything it ran: receive-pack, index-pack or
# unpack-objects), the latter meaningful on a loaded machine.
#
# usage: bench/fsck.sh [FILES [REPS]]   (default 5000 files, 15 reps)
set -eu
cd "$(dirname "$0")/.."
FILES=${1:-5000}
REPS=${2:-15}
sh bench/machine.sh
echo
echo "$ bash bench/fsck.sh $FILES $REPS"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@x GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@x
git init -q "$T/src"
# FILES files in 50 directories, in 20 commits (fast-import).
{
	for c in $(seq 1 20); do
		echo "commit refs/heads/main"
		echo "committer b <b@x> $((1700000000 + c)) +0000"
		msg="c$c"
		echo "data ${#msg}"
		echo "$msg"
		for i in $(seq "$c" 20 "$FILES"); do
			body="file $i line $c"
			echo "M 100644 inline d$((i % 50))/f$i.txt"
			echo "data ${#body}"
			echo "$body"
		done
	done
} | git -C "$T/src" fast-import --quiet
for r in $(seq 1 "$REPS"); do
	for mode in off on; do
		git -C "$T/src" commit-tree -p main -m "small $r $mode" \
			"$(printf '100644 blob %s\tsmall.txt\n' "$(echo "$r $mode" | git -C "$T/src" hash-object -w --stdin)" | git -C "$T/src" mktree)" >"$T/small-$r-$mode"
	done
done
median() { sort -n | awk '{a[NR]=$1} END {m=(NR+1)/2; printf "%.1f", (a[int(m)]+a[int(m+0.5)])/2*1000}'; }
TIMEFORMAT='%R %U %S'
# timed FILE CMD...: appends "wall cpu" seconds of CMD (and its children) to FILE.
timed() {
	f=$1
	shift
	{ time "$@" >/dev/null 2>&1; } 2>"$T/t"
	awk '{printf "%s %.3f\n", $1, $2 + $3}' "$T/t" >>"$f"
}
git init -q --bare "$T/small.git"
git -C "$T/src" push -q "$T/small.git" main:main
for r in $(seq 1 "$REPS"); do
	for mode in off on; do
		v=false; [ $mode = on ] && v=true
		git -C "$T/small.git" config receive.fsckObjects $v
		timed "$T/small-$mode.t" git -C "$T/src" push -q "$T/small.git" "$(cat "$T/small-$r-$mode"):refs/heads/s-$r-$mode"
		rm -rf "$T/pack.git"
		git init -q --bare "$T/pack.git"
		git -C "$T/pack.git" config receive.fsckObjects $v
		timed "$T/pack-$mode.t" git -C "$T/src" push -q "$T/pack.git" main:main
	done
done
objs=$(git -C "$T/src" count-objects -v | awk '/^in-pack|^count/ {n+=$2} END {print n}')
printf '%-34s %9s %9s %9s %9s %9s %9s\n' "push (medians, ms)" "wall off" "wall on" "added" "cpu off" "cpu on" "added"
for k in small pack; do
	woff=$(awk '{print $1}' "$T/$k-off.t" | median); won=$(awk '{print $1}' "$T/$k-on.t" | median)
	coff=$(awk '{print $2}' "$T/$k-off.t" | median); con=$(awk '{print $2}' "$T/$k-on.t" | median)
	label="small: 1 commit, 3 objects"
	[ $k = pack ] && label="pack: $objs objects, $FILES files"
	printf '%-34s %9s %9s %9s %9s %9s %9s\n' "$label" "$woff" "$won" "$(awk -v a="$won" -v b="$woff" 'BEGIN {printf "%+.1f", a-b}')" \
		"$coff" "$con" "$(awk -v a="$con" -v b="$coff" 'BEGIN {printf "%+.1f", a-b}')"
done
