#!/bin/sh
# memory.sh — wall time and peak memory of `git+ merge-tree` against
# `git merge-tree --write-tree`, side by side in the same run.
#
# usage: bench/memory.sh [REPS]
#    or: REPS=… MB=… FILES=… KEEP=1 bench/memory.sh
#
#   REPS    runs of each command, alternating git and git+ (default 5);
#           the table reports medians
#   MB      size of the binary file (default 100)
#   FILES   files in the tree merge (default 200000)
#   KEEP    1: keep the scratch directory (printed) for profiling
#
# Merges:
#   binary, loose   a MB-MiB file of random bytes changed on both sides (a
#                   binary conflict, exit 1 for both), all objects loose as
#                   `git add` writes them
#   binary, packed  the same objects after `git repack -ad` without deltas
#   tree, FILES     a FILES-file tree (src/dNN/dMM/fNNNNNN.txt, one pack)
#                   where each side changes 50 different files: a clean merge
#
# Peak memory is the maximum resident set size (/usr/bin/time -f %M) of the
# process; time is wall-clock. On a loaded machine compare the ratios, which
# are taken in the same run.
set -eu
cd "$(dirname "$0")/.."
REPS=${1:-${REPS:-5}}
MB=${MB:-100}
FILES=${FILES:-200000}
KEEP=${KEEP:-0}

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
unset GIT_DIR GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_QUARANTINE_PATH GIT_INDEX_FILE
export GIT_AUTHOR_NAME=B GIT_AUTHOR_EMAIL=b@example.invalid GIT_AUTHOR_DATE='1700000000 +0000'
export GIT_COMMITTER_NAME=B GIT_COMMITTER_EMAIL=b@example.invalid GIT_COMMITTER_DATE='1700000000 +0000'

sh bench/machine.sh
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gitplus-memory.XXXXXX")
if [ "$KEEP" = 1 ]; then echo "scratch: $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi
go build -o "$TMP/git+" ./cmd/git+
GITPLUS=$TMP/git+

# --- binaries: base, ours, theirs (each side overwrites 1 MiB of its own).
B=$TMP/bin.git
git init -q --bare "$B"
head -c $((MB << 20)) /dev/urandom >"$TMP/base.bin"
cp "$TMP/base.bin" "$TMP/ours.bin"
cp "$TMP/base.bin" "$TMP/theirs.bin"
head -c 1048576 /dev/urandom | dd of="$TMP/ours.bin" bs=1M seek=10 conv=notrunc status=none
head -c 1048576 /dev/urandom | dd of="$TMP/theirs.bin" bs=1M seek=$((MB / 2)) conv=notrunc status=none
commit() { # commit NAME FILE [PARENT]: a commit whose tree holds FILE as big.bin
	blob=$(git -C "$B" hash-object -w "$2")
	tree=$(printf '100644 blob %s\tbig.bin\n' "$blob" | git -C "$B" mktree)
	if [ $# -ge 3 ]; then c=$(git -C "$B" commit-tree "$tree" -p "$3" -m "$1"); else c=$(git -C "$B" commit-tree "$tree" -m "$1"); fi
	git -C "$B" update-ref "refs/heads/$1" "$c"
	echo "$c"
}
base=$(commit base "$TMP/base.bin")
commit ours "$TMP/ours.bin" "$base" >/dev/null
commit theirs "$TMP/theirs.bin" "$base" >/dev/null
rm -f "$TMP"/*.bin
cp -r "$B" "$TMP/binpack.git"
git -C "$TMP/binpack.git" -c pack.window=0 repack -adq

# --- a FILES-file tree, each side changing 50 files.
T=$TMP/tree.git
git init -q --bare "$T"
awk -v files="$FILES" '
function path(i) { return sprintf("src/d%02d/d%02d/f%06d.txt", i % 50, int(i / 50) % 20, i) }
function blob(p, s) { printf "M 100644 inline %s\ndata %d\n%s\n", p, length(s), s }
function header(ref, n, msg) {
	printf "commit %s\nmark :%d\n", ref, n
	printf "committer Gen <gen@example.invalid> %d +0000\n", 1700000000 + n * 60
	printf "data %d\n%s\n", length(msg), msg
}
BEGIN {
	header("refs/heads/base", 1, "root")
	for (i = 0; i < files; i++) blob(path(i), sprintf("file %d\nline two\n", i))
	print ""
	header("refs/heads/ours", 2, "ours"); print "from :1"
	for (k = 0; k < 50; k++) { i = (k * 3989) % files; blob(path(i), sprintf("file %d ours\n", i)) }
	print ""
	header("refs/heads/theirs", 3, "theirs"); print "from :1"
	for (k = 0; k < 50; k++) { i = (k * 3989 + 1) % files; blob(path(i), sprintf("file %d theirs\n", i)) }
	print ""
}' | git -C "$T" fast-import --quiet
git -C "$T" repack -adq

# run LABEL DIR: REPS alternating runs; prints medians and ratios.
run() {
	label=$1 dir=$2
	: >"$TMP/git.txt"
	: >"$TMP/plus.txt"
	i=0
	while [ $i -lt "$REPS" ]; do
		ge=0 pe=0
		/usr/bin/time -f '%e %M' -a -o "$TMP/git.txt" git -C "$dir" merge-tree --write-tree ours theirs >"$TMP/git.out" || ge=$?
		/usr/bin/time -f '%e %M' -a -o "$TMP/plus.txt" "$GITPLUS" merge-tree --git-dir "$dir" ours theirs >"$TMP/plus.out" || pe=$?
		i=$((i + 1))
	done
	# Both must agree on the outcome: exit 0 and the same tree id when
	# clean, exit 1 on a conflict (git prints a tree id even then).
	g="$ge $(head -n 1 "$TMP/git.out")"
	p="$pe $(head -n 1 "$TMP/plus.out")"
	[ "$ge" = 1 ] && [ "$pe" = 1 ] && g=conflict p=conflict
	[ "$g" = "$p" ] || { echo "memory.sh: $label: git says '$g', git+ says '$p'" >&2; exit 1; }
	median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
	gt=$(grep -v '^Command' "$TMP/git.txt" | cut -d' ' -f1 | median)
	gm=$(grep -v '^Command' "$TMP/git.txt" | cut -d' ' -f2 | median)
	pt=$(grep -v '^Command' "$TMP/plus.txt" | cut -d' ' -f1 | median)
	pm=$(grep -v '^Command' "$TMP/plus.txt" | cut -d' ' -f2 | median)
	awk -v l="$label" -v gt="$gt" -v gm="$gm" -v pt="$pt" -v pm="$pm" 'BEGIN {
		printf "| %-18s | %7.2f s | %7.2f s | %5.2f× | %7.0f MiB | %7.0f MiB | %5.2f× |\n",
			l, gt, pt, (gt > 0 ? pt / gt : 0), gm / 1024, pm / 1024, pm / gm }'
}

echo
echo "$REPS runs each, alternating; medians. ratio = git+ / git."
echo
echo "| merge              |     git    |    git+    | time  |    git      |    git+     | memory |"
echo "|--------------------|------------|------------|-------|-------------|-------------|--------|"
run "binary ${MB} MiB, loose" "$B"
run "binary ${MB} MiB, packed" "$TMP/binpack.git"
run "tree, $FILES files" "$T"
