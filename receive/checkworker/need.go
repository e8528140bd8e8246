package checkworker

// Which candidates need a run (docs/queue.md, "Check workers"): the queue's
// own verdict of the step, not "a result exists". A failure an eviction
// already cited is pending again for the planner (queue.StepVerdict), so a
// pull request entered again after a flake evicted it is checked again at
// the same candidate commit.

import (
	"maps"
	"slices"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/repo"
)

// needsRun reports whether check name must run at commit of pull request
// st, and why not when it need not. A commit a queue's latest
// queue.candidate for the pull request names needs it while the step's
// verdict misses it (queue.StepVerdict); any other commit (a branch the
// queue did not announce, a head) while no success or failure of it is
// recorded.
func needsRun(t *trust.State, queues map[string]*queue.State, st *pr.State, name, commit string) (bool, string) {
	for _, id := range slices.Sorted(maps.Keys(queues)) {
		q := queues[id]
		rec, ok := q.LatestCandidate(st.ID)
		if !ok || rec.Step != commit {
			continue
		}
		b, ok := t.Rules.For(q.Target)
		if !ok || !slices.Contains(b.RequiredChecks, name) {
			return false, "the rules of " + q.Target + " do not require " + name
		}
		j := queue.StepVerdict(q, st.ID, st, b, t, commit)
		if slices.Contains(j.Missing, name) {
			return true, ""
		}
		return false, "queue " + id + " has its verdict: " + j.Verdict
	}
	if got, ok := st.Check(name, commit); ok && got != pr.Cancelled {
		return false, "already recorded: " + got
	}
	return true, ""
}

// queueStates folds r's queues (those that do not fold are left out: the
// planner skips them too).
func queueStates(r *repo.Repo, t *trust.State) map[string]*queue.State {
	logs, _, err := r.QueueLogs(t)
	out := map[string]*queue.State{}
	if err != nil {
		return out
	}
	for id, l := range logs {
		out[id] = l.State
	}
	return out
}
