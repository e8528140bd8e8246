package queue

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Searching a red group aside (docs/queue.md, "Searching a red group
// aside"). Under batch checks a red group end says only that one of its
// group's pull requests is broken. Searching it inside the chain holds up
// every step behind it for the whole search. Instead, once every group
// below a red group is green, the planner takes the group's pull requests
// out of the chain (they stay queued) and rebuilds the chain without them,
// so the queue goes on landing; the group is searched in trials: its two
// halves, each built on the target on its own and published with the mark
// trial (queue.candidate "trial": true) as a group of its own, whose last
// step CI runs, both at once. A green trial clears its pull requests: they
// go back into the chain, queued again as of their trial (behind what was
// queued before it, so the chain in flight is not rebuilt). A red trial of
// two or more is halved again; a red trial of one is the culprit, evicted
// alone on its own red run — unless the other half of the group it came
// from (its sibling: the trial citing the same run) is red too, which two
// culprits or a flake explain: then it is tried alone once more, citing its
// own red run, and evicted if red again; while that half has no verdict
// yet, it waits. (Trying the first half only, and inferring the
// second, was simulated and not kept: it ran more, not less — the
// untested half goes back into the chain, and a flaky first half sends the
// culprit back with it — and evicted more innocents; docs/queue.md.) A trial is a candidate chain on the
// target like any other: the boundary judges it by the same rule, so no
// landing depends on it being a trial.
//
// A red group in which two or more pull requests were cleared by trials
// before (two pull requests that pass alone and fail together would go
// round for ever) is searched inside the chain by halving, as before
// (batchGroups).

// trialGroup is a group of entries to try: built on the target as a
// trial citing run, the check.completed that made the group it comes from
// red (none for silence).
type trialGroup struct {
	members []candidateEntry
	run     string
	lane    string // the partition its trial is checked in (strict checks: strictaside.go)
}

// trialSet is one trial standing: the entries it holds, in its chain
// order, with their trial records.
type trialSet struct {
	end     string // its last step (its records' GroupEnd)
	base    string // the commit the trial is built on
	members []candidateEntry
	recs    []Recorded
}

// splitAside takes out of ready the entries whose latest queue.candidate,
// in their current episode and standing, is a trial step for their head;
// it returns the others (in ready's order) and the trials, in the order of
// their first member's record.
func splitAside(q *State, ready []candidateEntry) ([]candidateEntry, []*trialSet) {
	rest := ready[:0:0]
	byEnd := map[string]*trialSet{}
	var trials []*trialSet
	for _, c := range ready {
		rec := q.latestRec(c.pr)
		if rec == nil || !rec.Trial || rec.Seq <= c.seq || !rec.Invalidated.IsZero() || rec.Head != c.head {
			rest = append(rest, c)
			continue
		}
		t := byEnd[rec.GroupEnd]
		if t == nil {
			t = &trialSet{end: rec.GroupEnd}
			byEnd[rec.GroupEnd] = t
			trials = append(trials, t)
		}
		t.members = append(t.members, c)
		t.recs = append(t.recs, *rec)
	}
	for _, t := range trials {
		sort.Sort(byRecordSeq{t})
		t.base = t.recs[0].Parents[0]
	}
	sort.SliceStable(trials, func(i, j int) bool { return trials[i].recs[0].Seq < trials[j].recs[0].Seq })
	return rest, trials
}

type byRecordSeq struct{ t *trialSet }

func (b byRecordSeq) Len() int           { return len(b.t.members) }
func (b byRecordSeq) Less(i, j int) bool { return b.t.recs[i].Seq < b.t.recs[j].Seq }
func (b byRecordSeq) Swap(i, j int) {
	b.t.members[i], b.t.members[j] = b.t.members[j], b.t.members[i]
	b.t.recs[i], b.t.recs[j] = b.t.recs[j], b.t.recs[i]
}

// endMember is the index of the member whose record is the trial's last
// step, or -1 when that pull request is no longer in it.
func (t *trialSet) endMember() int {
	for i, r := range t.recs {
		if r.Step == t.end {
			return i
		}
	}
	return -1
}

// complete reports whether every step the trial was published with is
// still in it (none of its pull requests left or moved on meanwhile).
func (t *trialSet) complete() bool {
	e := t.endMember()
	return e == len(t.members)-1 && t.recs[e].GroupSize == len(t.members)
}

// halves splits a red group (two or more entries, in chain order) into the
// trials that search it: its first half and its second half; a group of
// one is a trial of its own.
func halves(g []candidateEntry) [][]candidateEntry {
	if len(g) < 2 {
		return [][]candidateEntry{g}
	}
	m := (len(g) + 1) / 2
	return [][]candidateEntry{g[:m:m], g[m:]}
}

// orderKey is where entry c stands in the queue: as of its queue.entered,
// or as of its latest trial when a trial in its current episode cleared it.
func orderKey(q *State, c candidateEntry) int {
	if rec := q.latestRec(c.pr); rec != nil && rec.TrialSeq > c.seq {
		return rec.TrialSeq
	}
	return c.seq
}

// requeue orders ready by priority class, then by orderKey, keeping the
// queue's order where the keys are the entered ones.
func requeue(q *State, ready []candidateEntry) {
	moved := false
	keys := make(map[string]int, len(ready))
	for _, c := range ready {
		keys[c.pr] = orderKey(q, c)
		moved = moved || keys[c.pr] != c.seq
	}
	if !moved {
		return
	}
	sort.SliceStable(ready, func(i, j int) bool {
		a, b := ready[i], ready[j]
		if (a.prio == PriorityHigh) != (b.prio == PriorityHigh) {
			return a.prio == PriorityHigh
		}
		return keys[a.pr] < keys[b.pr]
	})
}

// canAside reports whether the red group chain[lo..hi] may be searched
// aside: at most one of its pull requests was cleared by a trial before in
// its current episode.
func canAside(q *State, chain []Step, lo, hi int) bool {
	tried := 0
	for _, st := range chain[lo : hi+1] {
		if rec := q.latestRec(st.PR); rec != nil && rec.TrialSeq > st.enteredSeq {
			tried++
		}
	}
	return tried <= 1
}

// trialWhy is the waiting reason of an entry in a trial; strict: the
// branch's checks are strict, so the trial is a red strict step's
// (strictaside.go), not a red group's.
func trialWhy(t *trialSet, v string, strict bool) string {
	what := "checks pending at " + t.end
	if v == Red {
		what = "red at " + t.end
	}
	why := "its group was red: docs/queue.md, \"Searching a red group aside\""
	if strict {
		why = "its step was red: docs/queue.md, \"A red strict step tried aside\""
	}
	return fmt.Sprintf("aside from the chain in a trial of %d on %s (%s): %s", len(t.members), t.base, why, what)
}

// judgeTrials decides the standing trials: a green one's entries go back
// into ready; a red one of one pull request, complete, is evicted (the
// culprit); a red one of more is tried again in halves, and one a pull
// request left (or whose last one left) is tried again whole; a pending
// one waits. It reports into out and returns ready and the groups to try.
func judgeTrials(in PlanInput, out *Plan, trials []*trialSet, ready []candidateEntry, firstRed *[]string, del func(string)) ([]candidateEntry, []trialGroup) {
	q := in.Queue
	type judged struct {
		sv  Judged
		why string
	}
	js := make([]judged, len(trials))
	greenOnTip := false
	for i, t := range trials {
		e := t.endMember()
		if e < 0 {
			continue
		}
		c := t.members[e]
		sv := StepVerdict(q, c.pr, c.p, in.Branch, in.Trust, t.end)
		if sv.Verdict == Pending {
			if why := silent(in, c, t.end, sv.Missing); why != "" {
				sv.Verdict, sv.Failed, sv.Missing, js[i].why = Red, sv.Missing, nil, why
			}
		}
		js[i].sv = sv
		greenOnTip = greenOnTip || (sv.Verdict == Green && t.base == in.Tip.String())
	}
	// sibling is the verdict of the other trial split from the same red
	// run as trials[i] ("" when there is none, or none recorded).
	sibling := func(i int) string {
		run := trials[i].recs[0].Run
		for k, t := range trials {
			if k != i && run != "" && t.recs[0].Run == run {
				return js[k].sv.Verdict
			}
		}
		return ""
	}
	var next []trialGroup
	for i, t := range trials {
		j := js[i]
		switch {
		case t.endMember() < 0:
			next = append(next, trialGroup{members: t.members, lane: t.recs[0].Partition}) // its last pull request left: try the rest
		case j.sv.Verdict == Green:
			ready = append(ready, t.members...)
		case j.sv.Verdict == Red && !t.complete():
			next = append(next, trialGroup{t.members, j.sv.Run, t.recs[0].Partition})
		case j.sv.Verdict == Red && len(t.members) == 1 && sibling(i) == Pending:
			out.Waiting = append(out.Waiting, Wait{PR: t.members[0].pr, Head: t.members[0].head,
				Reason: trialWhy(t, Red, in.Branch.Every() == 1) + "; waiting for the other half of its group before it is evicted"})
		case j.sv.Verdict == Red && len(t.members) == 1 && sibling(i) == Red && j.sv.Run != "":
			next = append(next, trialGroup{t.members, j.sv.Run, t.recs[0].Partition}) // both halves red: once more alone
		case j.sv.Verdict == Red && len(t.members) == 1:
			c := t.members[0]
			if t.base == in.Tip.String() && !greenOnTip {
				if why := targetRed(in, *firstRed); why != "" {
					out.TargetRed = why
					out.Waiting = append(out.Waiting, Wait{PR: c.pr, Head: c.head, Reason: trialWhy(t, Red, in.Branch.Every() == 1) + "; " + why})
					continue
				}
				*firstRed = append(*firstRed, c.pr)
			}
			detail := "failed: " + strings.Join(j.sv.Failed, ", ") + " at " + t.end + ", a trial of it alone on " + t.base
			if j.sv.Run != "" {
				detail += " (run " + j.sv.Run + ")"
			}
			if j.why != "" {
				detail = "failed: " + j.why + " at " + t.end
			}
			out.Evict = append(out.Evict, Evict{PR: c.pr, Head: c.head, Reason: ReasonFailed, Detail: detail,
				Checks: j.sv.Failed, Step: t.end, Run: j.sv.Run})
			del(c.pr)
		case j.sv.Verdict == Red:
			for _, h := range halves(t.members) {
				next = append(next, trialGroup{h, j.sv.Run, t.recs[0].Partition})
			}
		default:
			for _, c := range t.members {
				out.Waiting = append(out.Waiting, Wait{PR: c.pr, Head: c.head, Reason: trialWhy(t, Pending, in.Branch.Every() == 1)})
			}
		}
	}
	return ready, next
}

// publishTrials builds each group of entries on base as a trial (a chain
// of its own on the target) and publishes it: every step marked with the
// trial's last step and size, and trial, citing the group's red run. A pull request whose merge
// conflicts there is evicted for the conflict, as in the chain.
func publishTrials(in PlanInput, out *Plan, base plumbing.Hash, groups []trialGroup,
	merge func(parent plumbing.Hash, c candidateEntry) (mres, error), del func(string)) error {
	q := in.Queue
	for _, g := range groups {
		parent := base
		var steps []Step
		for _, c := range g.members {
			r, err := merge(parent, c)
			if err != nil {
				return err
			}
			if len(r.conflicts) > 0 {
				out.Evict = append(out.Evict, Evict{PR: c.pr, Head: c.head, Reason: ReasonConflict,
					Detail: "conflict: " + strings.Join(r.conflicts, ", "), Paths: r.conflicts})
				del(c.pr)
				continue
			}
			steps = append(steps, Step{PR: c.pr, Head: c.head, Parent: parent.String(), Commit: r.step.String(), enteredSeq: c.seq})
			parent = r.step
		}
		if len(steps) == 0 {
			continue
		}
		end := steps[len(steps)-1].Commit
		t := &trialSet{end: end, base: base.String()}
		for i := range steps {
			steps[i].GroupEnd, steps[i].GroupSize = end, len(steps)
			t.members = append(t.members, candidateEntry{pr: steps[i].PR})
		}
		for _, st := range steps {
			out.Waiting = append(out.Waiting, Wait{PR: st.PR, Head: st.Head, Reason: trialWhy(t, Pending, in.Branch.Every() == 1)})
			if rec := q.latestRec(st.PR); announces(rec, st) && rec.Trial && rec.Run == g.run {
				continue
			}
			out.Publish = append(out.Publish, Publish{PR: st.PR, Head: st.Head, Step: st.Commit, Parents: StepParents(in.Branch.Squash(), st.Parent, st.Head),
				Branch: Branch(q.Target, st.PR), GroupEnd: st.GroupEnd, GroupSize: st.GroupSize, Trial: true, Run: g.run, Partition: g.lane})
		}
	}
	return nil
}
