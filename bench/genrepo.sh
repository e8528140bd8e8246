#!/bin/sh
# genrepo.sh — generate a deterministic bare git repository for benchmarks.
#
# usage: bench/genrepo.sh OUT_DIR [FILES [COMMITS]]
#    or: OUT_DIR=… FILES=… COMMITS=… bench/genrepo.sh
#
#   OUT_DIR   bare repository to create (must not exist or be empty)
#   FILES     files in the root commit (default 20000), spread over
#             src/dNN/dMM/ directories (about 20 files per directory)
#   COMMITS   commits in total on refs/heads/main (default 10000); every
#             commit after the root rewrites TOUCH files (default 3)
#   TOUCH     files changed per commit (default 3)
#   REPACK    "full" (default): git repack -adf --window=10 --depth=50, one
#             pack with ofs-deltas as a server would hold; "none": keep
#             fast-import's pack as is
#   REVINDEX  1 to also write a .rev file (pack.writeReverseIndex)
#
# The stream is produced by awk and fed to git fast-import, so generation is
# fast (seconds for the defaults, plus the repack). Same inputs, same object
# ids: dates, names and contents are fixed, nothing random.
set -eu

OUT_DIR=${1:-${OUT_DIR:?usage: genrepo.sh OUT_DIR [FILES [COMMITS]]}}
FILES=${2:-${FILES:-20000}}
COMMITS=${3:-${COMMITS:-10000}}
TOUCH=${TOUCH:-3}
REPACK=${REPACK:-full}
REVINDEX=${REVINDEX:-0}

case $FILES$COMMITS$TOUCH in *[!0-9]*) echo "genrepo: FILES, COMMITS and TOUCH must be numbers" >&2; exit 2;; esac
[ "$FILES" -ge 1 ] && [ "$COMMITS" -ge 1 ] || { echo "genrepo: need FILES ≥ 1 and COMMITS ≥ 1" >&2; exit 2; }
if [ -e "$OUT_DIR" ] && [ -n "$(ls -A "$OUT_DIR" 2>/dev/null)" ]; then
	echo "genrepo: $OUT_DIR exists and is not empty" >&2
	exit 2
fi

# Isolated from the caller's configuration; fixed identity.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
unset GIT_DIR GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_QUARANTINE_PATH GIT_INDEX_FILE

git init -q --bare -b main "$OUT_DIR"

awk -v files="$FILES" -v commits="$COMMITS" -v touch="$TOUCH" '
function path(i) { return sprintf("src/d%02d/d%02d/f%06d.txt", i % 50, int(i / 50) % 20, i) }
function content(i, rev,    s, k) {
	s = sprintf("// file %d\n", i)
	for (k = 0; k < 8; k++)
		s = s sprintf("line %d of file %d: some text to make deltas worth having\n", k, i)
	s = s sprintf("revision %d\n", rev)
	return s
}
function blob(p, s) { printf "M 100644 inline %s\ndata %d\n%s\n", p, length(s), s }
function header(n, msg) {
	printf "commit refs/heads/main\n"
	printf "author Gen <gen@example.invalid> %d +0000\n", 1700000000 + n * 60
	printf "committer Gen <gen@example.invalid> %d +0000\n", 1700000000 + n * 60
	printf "data %d\n%s\n", length(msg), msg
}
BEGIN {
	header(0, "root: " files " files\n")
	for (i = 0; i < files; i++) blob(path(i), content(i, 0))
	print ""
	x = 12345
	for (n = 1; n < commits; n++) {
		header(n, "commit " n "\n")
		for (j = 0; j < touch; j++) {
			x = (x * 1103515245 + 12345) % 2147483648
			i = int(x / 65536) % files
			blob(path(i), content(i, n))
		}
		print ""
	}
}' | git -C "$OUT_DIR" fast-import --quiet
git -C "$OUT_DIR" rev-parse --verify -q refs/heads/main >/dev/null || { echo "genrepo: fast-import failed" >&2; exit 1; }

case $REPACK in
full) git -C "$OUT_DIR" -c pack.writeReverseIndex="$([ "$REVINDEX" = 1 ] && echo true || echo false)" \
	repack -adfq --window=10 --depth=50 ;;
none) ;;
*) echo "genrepo: REPACK must be full or none" >&2; exit 2 ;;
esac
git -C "$OUT_DIR" count-objects -v | sed -n 's/^\(count\|in-pack\|size-pack\):/genrepo: &/p' >&2
