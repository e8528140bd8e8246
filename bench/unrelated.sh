#!/bin/sh
# unrelated.sh — what an unrelated history pushed at a protected branch
# costs the pre-receive hook (docs/boundary.md, "Bounded work").
#
# usage: bench/unrelated.sh [COMMITS [HOOK_BINARY]]
#   COMMITS: length of the unrelated history (default 100000).
#   HOOK_BINARY: a git+hook binary to time (default: built from this tree);
#   pass one built from an older commit to compare before and after.
#
# It makes a git+ repository with main protected (1 approval, check ci,
# queue candidates, queueDepth 8), stores a linear unrelated history of
# COMMITS commits in it on an unprotected branch, then times the hook
# judging "main -> that history's tip" (what `git push -f tip:main` asks),
# best of 5, beside `git rev-list --count` of the same history (what walking
# it costs git).
set -eu
cd "$(dirname "$0")/.."
N=${1:-100000}
sh bench/machine.sh
echo
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
go build -o "$T/git+" ./cmd/git+
if [ -n "${2:-}" ]; then HOOK=$2; else go build -o "$T/git+hook" ./cmd/git+hook; HOOK=$T/git+hook; fi
export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
mkdir -p "$HOME"
ssh-keygen -q -t ed25519 -N '' -f "$T/admin" -C admin
"$T/git+" --key "$T/admin" init --open --admin admin "$T/r.git" >/dev/null
git init -q "$T/w"
git -C "$T/w" commit -q --allow-empty -m root
git -C "$T/w" push -q "$T/r.git" HEAD:refs/heads/main
echo '{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":["ci"],"queueCandidates":true,"queueDepth":8}}}' |
  "$T/git+" --key "$T/admin" --repo "$T/r.git" rules set - >/dev/null
awk -v n="$N" 'BEGIN {
  for (i = 1; i <= n; i++) {
    printf "commit refs/heads/other\nmark :%d\ncommitter x <x@example.invalid> %d +0000\ndata 2\nc\n", i, 1700000000 + i
    if (i > 1) printf "from :%d\n", i - 1
    printf "M 644 inline f.txt\ndata %d\n%d\n\n", length(i "") + 1, i
  }
}' | git -C "$T/r.git" fast-import --quiet
OLD=$(git -C "$T/r.git" rev-parse refs/heads/main)
NEW=$(git -C "$T/r.git" rev-parse refs/heads/other)
best() { # best wall time of 5 runs of "$@", in ms
  b=
  for _ in 1 2 3 4 5; do
    s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N)
    ms=$(( (e - s) / 1000000 ))
    if [ -z "$b" ] || [ "$ms" -lt "$b" ]; then b=$ms; fi
  done
  echo "$b"
}
hook() { echo "$OLD $NEW refs/heads/main" | GIT_DIR="$T/r.git" "$HOOK" pre-receive; }
echo "$ echo \"$OLD $NEW refs/heads/main\" | $HOOK pre-receive"
hook 2>&1 | head -1
echo "hook: $(best hook) ms; git rev-list --count ($N commits): $(best git -C "$T/r.git" rev-list --count "$NEW") ms"
