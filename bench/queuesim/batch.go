package main

import (
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Batch checks (the rules field checkEvery; docs/queue.md, "Batch checks")
// in the simulator. The planner does the work: it cuts the chain into
// groups, marks them on what it publishes, searches a red group aside in
// trials (or by halving in the chain)
// and lands what a green group end vouches for. The simulator only does
// what the runner and CI do around it, here.

// setCheckEvery is the rules field: trust.Branch holds 0 for the default 1.
func setCheckEvery(b *trust.Branch, k int) {
	if k > 1 {
		b.CheckEvery = k
	}
}

// candidateEvent is the queue.candidate the runner appends for p, group
// marks included, exactly as receive/queuerun writes it: the simulated
// queue log then folds (marks, LatestCandidate, silence) as the real one.
func candidateEvent(p queue.Publish) hubrefs.QueueCandidate {
	return hubrefs.QueueCandidate{Base: base(hubrefs.TypeQueueCandidate), PR: p.PR, Head: p.Head, Step: p.Step,
		Parents: p.Parents, Branch: p.Branch, GroupEnd: p.GroupEnd, GroupSize: p.GroupSize, Trial: p.Trial, Run: p.Run, Partition: p.Partition}
}

// ciSkips is `git+ check run`'s batch rule, read when the CI job starts
// (after the pass that woke it): it runs nothing when the latest
// queue.candidate of the pull request names the step as one inside a group
// (groupEnd another step). A step no longer the latest record (rebuilt
// meanwhile) still runs, as check run does: it only skips what the queue
// says a group end covers.
func ciSkips(q *queue.State, prID, step string) bool {
	rec, ok := q.LatestCandidate(prID)
	return ok && rec.Step == step && rec.GroupEnd != "" && rec.GroupEnd != rec.Step
}
