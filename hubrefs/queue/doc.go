// Package queue is the pure core of the merge queue (docs/queue.md):
// the fold of one queue ref, the candidate commit, and the planner that
// decides one pass of `git+ queue run`. No clock, environment, process or file.
//
// # Fold
//
// Fold reads one queue ref's verified events in causal order. The root is
// queue.opened (id, target). Only events signed by a current hub.queue holder
// count; the others are recorded in State.Ignored, as are queue.entered of a
// pull request already queued or after queue.closed, and queue.left of one not
// queued. Position is the causal order of the queue.entered events within a
// priority class, high entries before normal ones (absent is normal); a
// queue.left ends an entry and re-entering makes a new one at the end of its
// class. A queue.entered of an active pull request at the entry's head and
// base with another priority changes the entry's class and nothing else (its
// episode continues); any other queue.entered of an active one is ignored.
// queue.candidate records per pull request the latest (head, step, parents,
// branch). queue.reset(tip) marks every recorded candidate whose chain (first
// parents followed through recorded steps) is rooted on another tip as
// Invalidated. A malformed payload, another repository, a non-queue type, a
// missing or second root fail the fold (ErrMalformed, ErrNoRoot): the boundary
// admitted them, so something is wrong with the ref, not with the queue.
//
// # Candidate
//
// Candidate is the commit content as a pure function; BuildCandidate reads the
// two committer times, runs mergetree.Merge in builder mode and writes the
// commit. The message is "Merge pull request <id> into <target short
// name>\n\n<title>\n" (title on one line; omitted when empty).
//
// # The pass
//
// PlanPass (the planner; named so because the output type is Plan) decides
// steps 2–8 of docs/queue.md from a PlanInput. The executor (receive/queuerun)
// carries a whole Plan out in one atomic push, every ref with the expected
// old value it was planned from, and plans again on a stale push
// (docs/queue.md). The effects, in field order:
//
//  1. Settle: for each, append pr.merged when Merged is set, then queue.left.
//  2. Enter: append queue.entered (auto-enter).
//  3. Land: push Ref from Old to New with expected old value Old, through the
//     hooks; then per Landed pr.merged{Head, Ref, Commit} and queue.left(landed).
//     If the swap fails because the target moved: append queue.reset{tip: the
//     new value}, and call PlanPass again with the new Tip (and refolded
//     state); the chain is rebuilt there. A hook refusal: report it, the
//     candidates stand, and skip the landing's records.
//  4. Evict: append queue.left (failed or conflict, Detail names checks/paths).
//  5. Publish: force-push Branch to Step, then append queue.candidate.
//     Steps that land in this pass are not published.
//  6. Delete: delete exactly these candidate branches (settled, evicted and
//     landed entries' branches; one that does not exist is already done).
//
// Then plan again: a pass over a state with nothing new has Appends() == 0.
//
// Rules: an entry settles as withdrawn when its pull request is absent from
// PRs or closed; when the target contains the entered head it is landed (with
// pr.merged unless one names that revision already; its commit is the recorded
// candidate step if the target holds it, else the head) if the pull request's
// head is still the entered one, else stale; a merged pull request the target
// does not hold is withdrawn; a moved head or a base other than the target is
// stale. Ready entries (pr.State.Satisfies at the entered head) are chained in
// queue order up to the depth; the others wait. A conflict evicts and the
// chain goes on. Verdicts read the required checks at C_i from PR_i's fold:
// all success green, any failure red, otherwise (absent, cancelled) pending;
// no required checks is green. The first non-green step decides: red → its
// entry is evicted (failed) and the chain rebuilt without it, repeatedly;
// pending → whatever is behind waits. The longest green prefix lands.
// Merge results are memoised per (parent, head, pr) within a pass.
//
// Episodes (docs/queue.md): an entry's episode runs from its queue.entered to
// its queue.left. A failure that an earlier queue.left(failed) of the same
// pull request cited (its "run") does not count again, and a step whose
// latest queue.candidate is older than the entry's queue.entered is
// published again, so a re-entered pull request gets a fresh verdict. With
// Branch.CheckTimeout and PlanInput.Now, a step announced in this episode
// whose required checks are still missing that long after its
// queue.candidate is red (detail names the checks and the timeout). When
// RedTargetEvictions different pull requests already failed as the first
// candidate on the current tip (log and this plan together), the next red
// first candidate is not evicted: Plan.TargetRed says why.
//
// Batch checks (docs/queue.md, "Batch checks"): with Branch.CheckEvery K >
// 1 the steps past what lands are cut into groups of at most K, published
// with their group (queue.candidate groupEnd, groupSize); the prefix that
// lands is the one the boundary accepts from the published marks; a red
// group end, once every group below it is green, is set aside and searched
// in trials on the target while the chain goes on without it (aside.go;
// docs/queue.md, "Searching a red group aside"), and only a red trial of
// one is evicted; a red group of pull requests trials cleared before is
// searched in the chain by halving (batch.go). With K = 1 none of this
// applies and the rules above hold as written.
package queue
