#!/bin/bash
# scale.sh — what the CLI costs as the number of open pull requests grows.
#
# For each N (default 1000 and 10000) it makes a bare repository with
# `git+ init` (members dev, rev, ci, q; queue rules on main; one queue),
# adds N approved pull requests, all entered in the queue, with
# `go run ./bench/scale` (in process, minutes not hours), and times, against
# `git for-each-ref refs/hub` on the same repository in the same run:
#
#   for-each-ref   git for-each-ref refs/hub (the cost of reading the refs)
#   pr-list        git+ pr list
#   run-first      the first `git+ queue run` (publishes the first candidates)
#   run-idle       `git+ queue run` again with nothing changed
#   pr-list-again  `git+ pr list` after the passes
#   write          one new pull request opened, approved and entered
#                  (`pr open`, `pr review --approve`, `queue enter`, each a
#                  push through the hooks)
#
# Each timing is the median of REPS runs (default 5; the first pass runs
# once). Ratios are to for-each-ref's median.
#
# usage: bench/scale.sh [-reps R] [N...]
#        bench/scale.sh -keep DIR N   (only generate DIR/r<N>.git, with the
#                                      binaries and keys beside it, and stop:
#                                      for profiling)
set -eu
cd "$(dirname "$0")/.."
reps=5
keep=
if [ "${1:-}" = "-reps" ]; then reps=$2; shift 2; fi
if [ "${1:-}" = "-keep" ]; then keep=$2; shift 2; fi
sizes=${*:-"1000 10000"}
sh bench/machine.sh
echo

if [ -n "$keep" ]; then
	mkdir -p "$keep"
	work=$(cd "$keep" && pwd)
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
go build -o "$work/bin/" ./cmd/git+ ./cmd/git+hook
go build -o "$work/scalegen" ./bench/scale
gp="$work/bin/git+"
export PATH="$work/bin:$PATH"
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid \
	GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
mkdir -p "$HOME"
for k in admin dev rev ci q; do ssh-keygen -q -t ed25519 -N '' -C "$k" -f "$work/$k"; done

# now: nanoseconds since the epoch.
now() { date +%s%N; }
# med: the median of its arguments, printed with one decimal.
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]}'; }
# timeit REPS CMD...: "WALL CPU", the medians over REPS runs of CMD of its
# wall time and of its CPU time (user+sys of it and its children), in ms.
# On a loaded machine wall time is mostly waiting for a CPU; CPU time is not.
timeit() {
	local r=$1 i ws=() cs=(); shift
	for ((i = 0; i < r; i++)); do
		/usr/bin/time -f '%e %U %S' -o "$work/time" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; "$@" >&2 || true; exit 1; }
		read -r e u s <"$work/time"
		ws+=("$(awk -v e="$e" 'BEGIN {print e*1000}')")
		cs+=("$(awk -v u="$u" -v s="$s" 'BEGIN {print (u+s)*1000}')")
	done
	echo "$(med "${ws[@]}") $(med "${cs[@]}")"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b == 0) b = 1; printf "%.1f", a/b}'; }
# cell "WALL CPU": "WALL ms (CPU)"
cell() { set -- $1; echo "$1 ms ($2)"; }

echo "Wall ms (CPU ms, user+sys); ratios are of wall times, then of CPU times."
printf '| open PRs | for-each-ref | pr list (cold) | first pass | idle pass | pr list | write (open+review+enter) | 3 git pushes, no hooks | pr list / fer | idle / fer |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for n in $sizes; do
	bare="$work/r$n.git"
	src="$work/src$n"
	"$gp" --key "$work/admin" init --open "$bare" >/dev/null 2>&1
	git init -q -b main "$src"
	echo base >"$src/base.txt"
	git -C "$src" add . && git -C "$src" commit -qm base && git -C "$src" push -q "$bare" main 2>/dev/null
	for m in "dev hub.pr" "rev hub.review" "ci hub.check:ci" "q hub.queue"; do
		set -- $m
		(cd "$bare" && "$gp" --key "$work/admin" member add "$1" --key "$work/$1.pub" --cap "$2" >/dev/null 2>&1)
	done
	cat >"$work/rules.json" <<-EOF
	{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true}},
	 "ceilings": {"eventsPerRef": $((2 * n + 100))}}
	EOF
	(cd "$bare" && "$gp" --key "$work/admin" rules set "$work/rules.json" >/dev/null 2>&1)
	(cd "$bare" && "$gp" --key "$work/q" queue open --target main >/dev/null 2>&1)
	t0=$(now)
	"$work/scalegen" -repo "$bare" -n "$n" -dev "$work/dev" -rev "$work/rev" -q "$work/q" >&2
	echo "generated $n pull requests in $(( ($(now) - t0) / 1000000 )) ms" >&2
	[ -n "$keep" ] && exit 0

	cd "$bare"
	fer=$(timeit "$reps" git for-each-ref refs/hub)
	list=$(timeit 1 "$gp" pr list)
	first=$(timeit 1 "$gp" --key "$work/q" queue run --target main)
	idle=$(timeit "$reps" "$gp" --key "$work/q" queue run --target main)
	list2=$(timeit "$reps" "$gp" pr list)
	# One write: a new commit, then open, approve and enter it.
	ws=() cs=()
	for ((i = 0; i < reps; i++)); do
		c=$(git commit-tree -p main -m "extra $i" "$(git rev-parse main^{tree})")
		git update-ref "refs/heads/extra$i" "$c"
		/usr/bin/time -f '%e %U %S' -o "$work/t1" "$gp" --key "$work/dev" pr open --base main --head "$c" --title "extra $i" >"$work/id" 2>/dev/null
		id=$(tail -1 "$work/id")
		/usr/bin/time -f '%e %U %S' -o "$work/t2" "$gp" --key "$work/rev" pr review "$id" --approve >/dev/null 2>&1
		/usr/bin/time -f '%e %U %S' -o "$work/t3" "$gp" --key "$work/q" queue enter "$id" >/dev/null 2>&1
		read -r w c < <(cat "$work/t1" "$work/t2" "$work/t3" | awk '{w += $1; c += $2 + $3} END {print w*1000, c*1000}')
		ws+=("$w") cs+=("$c")
	done
	write="$(med "${ws[@]}") $(med "${cs[@]}")"
	# What git alone costs for three such pushes (hooks off), N refs here.
	ws=() cs=()
	for ((i = 0; i < reps; i++)); do
		: >"$work/tg"
		for k in 1 2 3; do
			c=$(git commit-tree -p main -m "plain $i $k" "$(git rev-parse main^{tree})")
			/usr/bin/time -f '%e %U %S' -a -o "$work/tg" git -c core.hooksPath=/nonexistent push -q . "$c:refs/plain/$i-$k" >/dev/null 2>&1
		done
		read -r w c < <(awk '{w += $1; c += $2 + $3} END {print w*1000, c*1000}' "$work/tg")
		ws+=("$w") cs+=("$c")
	done
	gitpush="$(med "${ws[@]}") $(med "${cs[@]}")"
	cd - >/dev/null
	set -- $fer; fw=$1 fc=$2
	set -- $list2; lw=$1 lc=$2
	set -- $idle; iw=$1 ic=$2
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s |\n' "$n" "$(cell "$fer")" "$(cell "$list")" "$(cell "$first")" \
		"$(cell "$idle")" "$(cell "$list2")" "$(cell "$write")" "$(cell "$gitpush")" \
		"$(ratio "$lw" "$fw")" "$(ratio "$lc" "$fc")" "$(ratio "$iw" "$fw")" "$(ratio "$ic" "$fc")"
	rm -rf "$bare"
done
