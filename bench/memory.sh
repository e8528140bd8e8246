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
#   BEFORE  a revision of this repository: also time git+ built from it
#           (the "before" columns of BENCHMARKS.md)
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
BEFORE=${BEFORE:-}

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
unset GIT_DIR GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_QUARANTINE_PATH GIT_INDEX_FILE
export GIT_AUTHOR_NAME=B GIT_AUTHOR_EMAIL=b@example.invalid GIT_AUTHOR_DATE='1700000000 +0000'
export GIT_COMMITTER_NAME=B GIT_COMMITTER_EMAIL=b@example.invalid GIT_COMMITTER_DATE='1700000000 +0000'

sh bench/machine.sh
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gitplus-memory.XXXXXX")
if [ "$KEEP" = 1 ]; then echo "scratch: $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi
go build -o "$TMP/git+" ./cmd/git+
GITPLUS=$TMP/git+
if [ -n "$BEFORE" ]; then
	mkdir "$TMP/before"
	git archive "$BEFORE" | tar -x -C "$TMP/before"
	(cd "$TMP/before" && go build -o "$TMP/git+before" ./cmd/git+)
fi

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

# --- FILES-file trees, each side changing 50 files: nested
# (src/dNN/dMM/fNNNNNN.txt, about 200 files a directory) and flat (all in
# one directory, one tree object of FILES entries).
gentree() { # gentree DIR PATHFORMAT
	git init -q --bare "$1"
	awk -v files="$FILES" -v flat="$2" '
	function path(i) { return flat ? sprintf("f%06d.txt", i) : sprintf("src/d%02d/d%02d/f%06d.txt", i % 50, int(i / 50) % 20, i) }
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
	}' | git -C "$1" fast-import --quiet
	git -C "$1" repack -adq
}
gentree "$TMP/tree.git" 0
gentree "$TMP/flat.git" 1

# run LABEL DIR: REPS alternating runs; prints medians and ratios.
run() {
	label=$1 dir=$2
	: >"$TMP/git.txt"
	: >"$TMP/plus.txt"
	: >"$TMP/before.txt"
	i=0
	while [ $i -lt "$REPS" ]; do
		ge=0 pe=0
		/usr/bin/time -f '%e %M' -a -o "$TMP/git.txt" git -C "$dir" merge-tree --write-tree ours theirs >"$TMP/git.out" || ge=$?
		/usr/bin/time -f '%e %M' -a -o "$TMP/plus.txt" "$GITPLUS" merge-tree --git-dir "$dir" ours theirs >"$TMP/plus.out" || pe=$?
		if [ -n "$BEFORE" ]; then
			/usr/bin/time -f '%e %M' -a -o "$TMP/before.txt" "$TMP/git+before" merge-tree --git-dir "$dir" ours theirs >/dev/null || true
		fi
		i=$((i + 1))
	done
	# Both must agree on the outcome: exit 0 and the same tree id when
	# clean, exit 1 on a conflict (git prints a tree id even then).
	g="$ge $(head -n 1 "$TMP/git.out")"
	p="$pe $(head -n 1 "$TMP/plus.out")"
	[ "$ge" = 1 ] && [ "$pe" = 1 ] && g=conflict p=conflict
	[ "$g" = "$p" ] || { echo "memory.sh: $label: git says '$g', git+ says '$p'" >&2; exit 1; }
	median() { grep -v '^Command' | cut -d' ' -f"$1" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
	gt=$(median 1 <"$TMP/git.txt") gm=$(median 2 <"$TMP/git.txt")
	pt=$(median 1 <"$TMP/plus.txt") pm=$(median 2 <"$TMP/plus.txt")
	bt=0 bm=0
	if [ -n "$BEFORE" ]; then bt=$(median 1 <"$TMP/before.txt") bm=$(median 2 <"$TMP/before.txt"); fi
	awk -v l="$label" -v gt="$gt" -v gm="$gm" -v pt="$pt" -v pm="$pm" -v bt="$bt" -v bm="$bm" -v before="$BEFORE" 'BEGIN {
		printf "| %-24s | %6.2f s | %6.2f s | %5.2f× | %5.0f MiB | %5.0f MiB | %5.2f× |", l, gt, pt, (gt > 0 ? pt / gt : 0), gm / 1024, pm / 1024, pm / gm
		if (before != "") printf " %6.2f s (%5.2f×) | %5.0f MiB (%5.2f×) |", bt, (gt > 0 ? bt / gt : 0), bm / 1024, bm / gm
		printf "\n" }'
}

echo
echo "$REPS runs each, alternating; medians. ratio = git+ / git.${BEFORE:+ before = git+ built from $BEFORE.}"
echo
if [ -n "$BEFORE" ]; then
	echo "| merge                    |   git    |   git+   | time   |    git    |   git+    | memory | before: time         | before: memory       |"
	echo "|--------------------------|----------|----------|--------|-----------|-----------|--------|----------------------|----------------------|"
else
	echo "| merge                    |   git    |   git+   | time   |    git    |   git+    | memory |"
	echo "|--------------------------|----------|----------|--------|-----------|-----------|--------|"
fi
run "binary ${MB} MiB, loose" "$B"
run "binary ${MB} MiB, packed" "$TMP/binpack.git"
run "tree, $FILES files" "$TMP/tree.git"
run "flat, $FILES files" "$TMP/flat.git"
