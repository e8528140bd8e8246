// Package hook is the acceptance benchmark of the boundary (docs/boundary.md,
// issue "The boundary"): the latency of the whole pre-receive hook
// judging a candidate chain C_1..C_N (N = 1, 8, 32), against git's own
// `git merge-tree --write-tree --stdin` computing the same N merges.
//
//	go test ./bench/hook -run '^$' -bench . -benchtime 1x -args -small
//	go test ./bench/hook -run '^$' -bench . -benchtime 1x -timeout 60m
//	go test ./bench/hook -run '^$' -bench . -benchtime 1x -args -repo /tmp/gitplus-bench-20000-10000.git
//
// Nothing runs under a plain `go test ./...`: the work is in a benchmark.
//
// Flags (after -args):
//
//	-repo DIR     generated repository to start from (read only; cloned). Default
//	              $TMPDIR/gitplus-bench-<files>-<commits>.git, generated with
//	              bench/genrepo.sh when missing (slow: minutes on a loaded VM).
//	-small        2,000 files / 1,000 commits instead of 20,000 / 10,000
//	-depths LIST  chain depths (default 1,8,32; at most 32 = queueDepth)
//	-reps N       timed runs per measurement (median reported; default 7)
//	-pack         pack the loose objects after setup (see below)
//	-bin PATH     git+ binary to run (default: fixtures.Binary builds ./cmd/git+
//	              and ./cmd/git+hook from the work tree; use a build of HEAD
//	              while others edit it). When a git+hook binary sits beside
//	              it, the hook measured is `git+hook pre-receive`, the lean
//	              binary the installed script runs; else `git+ hook pre-receive`
//	-cli          measure `git+ hook pre-receive` even so
//	-base PATH    another git+ binary (a build of the commit before a
//	              change): its pre-receive command is timed too, floor and
//	              hook-warm, interleaved with -bin's (alternating which goes
//	              first), and a table of both medians and their ratio is
//	              printed: a change's cost measured in the same run
//	-owners N     N path owners entries in main's rules (docs/trust.md,
//	              "Path owners"): even ones own a src/dAA/dBB/ directory,
//	              approved by rev (met where a step changes it), odd ones
//	              paths no step changes, approved by nobody who counts: so
//	              every step is diffed and matched against all N.
//	              With -base, the base binary (which does not know the
//	              field, and refuses to fold rules that have it) is timed
//	              on a second work repository built the same way without
//	              owners, interleaved with this build on the one with them:
//	              the change's cost with the feature on, in the same run
//	-keep DIR     build the work repository in DIR (new) and keep it, with
//	              each depth's hook input DIR/stdin-<N> and merge-tree input
//	              DIR/pairs-<N>, for timing and profiling by hand
//	-cpuprofile F write a CPU profile of the in-process judgement
//	              (receive.JudgePush, deepest chain, fold cache warm but its
//	              merge facts dropped, so the merges are profiled) to F and
//	              print its top entries; FILE.cold the same with the fold
//	              cache removed before each judgement
//
// Setup (not timed): the generated repository is cloned (--bare, hard links)
// into a work repository; `git+ init` with an admin key (repo.admin implies
// every capability); member "rev" with hub.review; rules for refs/heads/main
// with requiredApprovals 1, requiredChecks ["ci"], queueCandidates, queueDepth
// 32. Then 32 pull-request heads off the tip C_0, each modifying 2 or 3
// existing files (one line appended) at paths no other head touches (one
// git fast-import); for each a pr.opened (admin) and review.submitted
// approve (rev) written with hubrefs.WriteEvent; the chain C_i =
// queue.BuildCandidate(C_{i-1}, H_i); a check.completed ci=success on C_i
// (admin) in PR_i's events; the hub refs moved with one `git update-ref
// --stdin`. Then the candidate branches refs/heads/queue/main/<pr id> are
// published as queue run publishes them: the pre-receive command judges
// their creation (one push of 32 refs), which learns each candidate's merge
// fact (policy/facts.go), and the refs are moved. The first publish folds
// every hub log; a second, with the facts dropped, is timed and printed next
// to git merge-tree computing the same 32 merges (the cost the landing no
// longer pays, paid when the queue publishes). Events and candidates are
// loose objects (as receive-pack leaves a push under receive.unpackLimit);
// with -pack they are packed by `git repack -d` first (as a larger push
// arrives). Every C_i's tree is checked against git merge-tree.
//
// Measured, per depth N, each a process running the pre-receive command
// (see -bin) with GIT_DIR set and stdin "<C_0> <C_N> refs/heads/main"; it
// must exit 0:
//
//	hook-cold   the fold cache (gitplus/foldcache) removed before the run:
//	            every hub log read and verified, every merge computed
//	hook-merge  the fold cache as the cold run left it, which holds no merge
//	            facts: every merge computed (a chain pushed without its
//	            candidate branches, such as one built by hand)
//	hook-warm   the same with the merge facts of C_1..C_N restored, as the
//	            queue lands a chain it published: no merge computed
//	git         `git merge-tree --write-tree --stdin` fed the N pairs
//	            "C_{i-1} H_i" (one process; it writes its result objects,
//	            which exist already)
//	r-*         hook / git (goal ≤ 1.0)
//	floor       the hook creating an unprotected branch (nothing judged:
//	            process start, refs, rules) and git merge-tree with no input
//	push        a whole landing as a user sees it: `git push` of C_N onto
//	            main from a client clone sharing the work repository's
//	            objects (nothing to send), through the hooks `git+ init`
//	            installed (pre-receive script and the command it runs, the
//	            fold cache and merge facts warm; post-receive), and the same
//	            push with hooks turned off (receive-pack run with
//	            core.hooksPath=/nonexistent); main is reset to C_0 around
//	            each. The line says which pre-receive command the script
//	            runs: the lean binary only for a clean build (see hooks)
//
// All figures are medians of -reps runs in the same process, interleaved per
// depth, so machine load affects both sides alike (it still adds noise).
package hook
