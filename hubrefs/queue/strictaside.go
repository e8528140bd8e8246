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
// culprit a strict chain would evict — is judged by the step built on it
// in its lane, its follower (stepAbove): red too, it is evicted on those
// two red runs (a broken pull request fails every step built on it in its
// lane); green, it is run again in place; pending, it waits, and the steps
// above the follower are not published meanwhile (aboveEvidence). With no
// follower it leaves the chain at once, as a red group does under batch
// checks (aside.go): the chain is built again without it in the same pass,
// and it is tried alone on the target, a trial of one (published with the
// group marks of a group of one, trial, citing the step's red run, in its
// lane). A green trial puts it back into the chain, queued again as of its
// trial; a red one evicts it (judgeTrials), after two red runs — its step's
// and its trial's. check run therefore runs such a step once (SearchStep):
// the follower, the trial or the run in place is its retry.
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
// (see above). The step above it in its lane, built on it and checked on
// the same scope (stepAbove), is the evidence: green, the red was a flake
// of the culprit's run, so it is published again citing that run (run
// again in place: the steps above keep their candidates); pending, it
// waits for that verdict; red too, a broken pull request fails every step
// built on it in its lane, so it is evicted on these two red runs; none,
// it is tried aside. A step already run again in place, or one that must be
// evicted as before, is evicted.
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
	f, ok := p.stepAbove(chain, i)
	if !ok {
		return redAside
	}
	switch f.verdict {
	case Green:
		if p.heals == nil {
			p.heals = map[string]Publish{}
		}
		p.heals[st.PR] = Publish{PR: st.PR, Head: st.Head, Step: st.Commit, Parents: StepParents(p.in.Branch.Squash(), st.Parent, st.Head),
			Branch: Branch(p.q.Target, st.PR), Run: st.run, Partition: st.Partition}
		chain[i].note = fmt.Sprintf("red at %s (%s, run %s), but %s above it, built on it, is green: run again in place (docs/queue.md, \"A red strict step tried aside\")",
			st.Commit, strings.Join(st.Failed, ", "), st.run, f.pr)
		return redWait
	case Red:
		chain[i].evidence = fmt.Sprintf("; %s of pull request %s, built on it in lane %s, is red too (docs/queue.md, \"A red strict step tried aside\")",
			f.step, f.pr, st.Partition)
		return redEvict
	}
	chain[i].note = fmt.Sprintf("red at %s (%s, run %s); waiting for the verdict of %s above it, built on it: run again in place when green, evicted when red",
		st.Commit, strings.Join(st.Failed, ", "), st.run, f.pr)
	return redWait
}

// follower is the step built on a red strict step in its lane and its
// verdict.
type follower struct {
	pr, step, verdict string
}

// stepAbove finds the step built on chain[i] in its lane: the next step of
// its chain, or, when chain[i] is its chain's last, the standing candidate
// of another entry built on it in the same lane — the lane's next chain,
// past a global entry that does not change the lane's inputs (lanes.go).
// ok is false when nothing stands on it.
func (p *planner) stepAbove(chain []Step, i int) (follower, bool) {
	st := chain[i]
	if i+1 < len(chain) {
		if next := chain[i+1]; next.Partition == st.Partition && next.timeout == "" {
			return follower{next.PR, next.Commit, next.Verdict}, true
		}
		return follower{}, false // another scope, or red by checkTimeout's silence: no evidence
	}
	for _, e := range p.q.Entries {
		if e.PR == st.PR {
			continue
		}
		rec := p.standingRec(candidateEntry{pr: e.PR, head: e.Head, seq: e.Seq})
		if rec == nil || rec.Trial || rec.Parents[0] != st.Commit || rec.Partition != st.Partition {
			continue
		}
		ps, ok := p.in.PRs[e.PR]
		if !ok {
			continue
		}
		return follower{e.PR, rec.Step, StepVerdict(p.q, e.PR, ps, p.in.Branch, p.in.Trust, rec.Step).Verdict}, true
	}
	return follower{}, false
}

// aboveEvidence reports whether steps[k] of a strict lane chain is not
// published yet: a step below it other than the one just below is red, and
// steps[k] has no verdict. The step just above a red step is its evidence
// and runs; the steps above that stand on a pull request that is probably
// broken (a broken one fails every step built on it in its lane), so their
// checks wait until the red step is run again in place or leaves the chain.
func aboveEvidence(steps []Step, k int) bool {
	if steps[k].Verdict != Pending {
		return false
	}
	for j := 0; j < k-1; j++ {
		if steps[j].Verdict == Red {
			return true
		}
	}
	return false
}
