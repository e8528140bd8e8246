package queue

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/trust"
)

// A red strict step tried aside (docs/queue.md, "A red strict step tried
// aside"). On a branch with partitions under strict checks (checkEvery 1),
// a chain step that is red on its own — every step below it green, the
// culprit a strict chain would evict — leaves the chain at once, as a red
// group does under batch checks (aside.go): the chain is built again
// without it in the same pass, and it is tried alone on the target, a
// trial of one (published with the group marks of a group of one, trial,
// citing the step's red run, in its lane). A green trial puts it back into
// the chain, queued again as of its trial; a red one evicts it (judgeTrials),
// after two red runs — its step's and its trial's — the evidence a retry
// of the step gave before, but without holding the lane up for it.
// check run therefore runs such a step once (SearchStep): its trial is its
// retry.
//
// A step is evicted in the chain as before (on its one red run) when its
// pull request was already cleared by a trial in its current entry (one
// that passes alone and fails on the chain would go round for ever; check
// run retries such a step), when its red is checkTimeout's silence, or when
// the target already looks red on the step's parent (the red target's own
// rule, docs/queue.md "A red target", then applies).

// StrictAside reports whether branch b tries its red strict chain steps
// aside: strict checks on a branch with partitions.
func StrictAside(b trust.Branch) bool {
	return b.Every() == 1 && len(b.Partitions) > 0
}

// clearedBefore reports whether a trial cleared (or tried) pull request
// prID, entered at fold position seq, in its current entry.
func clearedBefore(q *State, prID string, seq int) bool {
	rec := q.latestRec(prID)
	return rec != nil && rec.TrialSeq > seq
}

// SearchStep says why `check run` runs the step that rec (the latest
// queue.candidate of its pull request in queue q, whose target b protects)
// names once, whatever --retries says: its red starts the planner's search
// (a trial; the last step of a batch group of more than one; a strict step
// tried aside when red), which is its retry. "" when it is retried as
// asked.
func SearchStep(q *State, rec Recorded, b trust.Branch) string {
	switch {
	case rec.Trial:
		return fmt.Sprintf("a trial of %d in queue %s", rec.GroupSize, q.ID)
	case rec.GroupEnd == rec.Step && rec.GroupSize > 1:
		return fmt.Sprintf("the last step of a group of %d in queue %s", rec.GroupSize, q.ID)
	case rec.GroupEnd == "" && StrictAside(b):
		seq := -1
		for _, e := range q.Entries {
			if e.PR == rec.PR {
				seq = e.Seq
			}
		}
		if seq < 0 || rec.Seq <= seq || clearedBefore(q, rec.PR, seq) {
			return "" // not a step of the current entry, or cleared once already
		}
		return fmt.Sprintf("a strict step in queue %s, tried aside alone when red", q.ID)
	}
	return ""
}

// What build does with a red strict culprit (strictRed).
const (
	redEvict = iota // evicted, as in a strict chain without partitions
	redWait         // it waits: run again in place, or its follower's verdict first
	redAside        // out of the chain, tried alone on the target
)

// strictRed decides what becomes of the red culprit chain[i] of a strict
// chain (every step below it green) on a branch that tries red steps aside
// (see above). The step just above it in the chain, built on it and
// checked on the same scope, is the evidence: green, the red was a flake
// of the culprit's run, so it is published again citing that run (run
// again in place: the steps above keep their candidates); pending, it
// waits for that verdict; red, or none, the culprit is tried aside. A step
// already run again in place, or one that must be evicted as before, is
// evicted.
func (p *planner) strictRed(chain []Step, i int) int {
	st := chain[i]
	if !p.strictAside || p.every != 1 || st.timeout != "" || st.run == "" || clearedBefore(p.q, st.PR, st.enteredSeq) {
		return redEvict
	}
	if rec := p.q.latestRec(st.PR); rec != nil && rec.Seq > st.enteredSeq && healed(rec, st) {
		return redEvict // red again where it was run again: two red runs
	}
	if i == 0 && RedTarget(p.q, st.Parent, p.firstRed[plumbing.NewHash(st.Parent)]) != "" {
		return redEvict // the red target's rule decides (build)
	}
	if i+1 < len(chain) && chain[i+1].Partition == st.Partition {
		switch chain[i+1].Verdict {
		case Green:
			if p.heals == nil {
				p.heals = map[string]Publish{}
			}
			p.heals[st.PR] = Publish{PR: st.PR, Head: st.Head, Step: st.Commit, Parents: StepParents(p.in.Branch.Squash(), st.Parent, st.Head),
				Branch: Branch(p.q.Target, st.PR), Run: st.run, Partition: st.Partition}
			chain[i].note = fmt.Sprintf("red at %s (%s, run %s), but %s above it, built on it, is green: run again in place (docs/queue.md, \"A red strict step tried aside\")",
				st.Commit, strings.Join(st.Failed, ", "), st.run, chain[i+1].PR)
			return redWait
		case Pending:
			chain[i].note = fmt.Sprintf("red at %s (%s, run %s); waiting for the verdict of %s above it, built on it, before it is run again in place (green) or tried aside (red)",
				st.Commit, strings.Join(st.Failed, ", "), st.run, chain[i+1].PR)
			return redWait
		}
	}
	return redAside
}
