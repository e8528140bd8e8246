package queue

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Partitions and lanes (docs/queue.md, "Partitions and lanes"). On a
// branch whose rules name partitions, each ready entry belongs to the
// partition holding every file its candidate on the tip changes (none
// lying in another partition's reads: trust.Branch.PartitionOf), or is
// global. Each partition is a lane: a chain of its own, up to the depth,
// whose steps are judged, evicted and published as the one chain of a
// branch without partitions is (build). A global entry waits for every
// ready entry ahead of it, in any lane; the entries behind it, of any lane,
// wait for it. When the first ready entry is global, the pass builds one
// chain on the tip over the ready entries, as on a branch without
// partitions; once it has landed, the entries behind it are in lanes again.
//
// A lane is built on the tip when it starts. Once another lane lands, its
// standing candidates stand on an older tip: they are kept — not rebuilt,
// not run again — as long as they can land on the current tip by the
// boundary's rule for partition steps (policy, tested.go): the lane's
// first candidate is kept when its partition step on the tip passes that
// rule (Tested), every later one when its parent agrees, on the lane's
// inputs, with the step below it in the lane (only under strict checks:
// under batch checks a lane is one chain built on its first candidate's
// parent, so that its groups' candidates stand on each other, as the
// boundary's vouching needs). A lane's landable prefix (batchLandable)
// lands step by step on the tip the lanes landed before it in this pass
// left: a step whose parent is that tip as it is, any other as its
// partition step there (BuildTested), judged by the rule first; the lane
// stops at the first step that would be refused (the next pass rebuilds it
// on the tip). All lanes that land in one pass travel in one landing.

// classify returns the partition of entry c (its candidate on the tip, by
// the membership rule), or "" and why it is global.
func (p *planner) classify(c candidateEntry) (partition, why string, err error) {
	r, err := p.merge(p.in.Tip, c)
	if err != nil {
		return "", "", err
	}
	if len(r.conflicts) > 0 {
		return "", "it conflicts with the tip at " + strings.Join(r.conflicts, ", "), nil
	}
	files, err := p.in.Changed(p.in.Tip, r.step)
	if err != nil {
		return "", "", fmt.Errorf("%w: the files pull request %s changes onto %s: %w", ErrMerge, c.pr, p.in.Tip, err)
	}
	m := p.in.Branch.PartitionOf(files)
	return m.Partition, m.Why, nil
}

// lanes builds the chains of a branch with partitions (see above).
func (p *planner) lanes(ready []candidateEntry) ([]*chainPlan, error) {
	in := p.in
	if in.Changed == nil || in.BuildTested == nil || in.Tested == nil {
		return nil, fmt.Errorf("%w: the branch has partitions but the plan lacks Changed, BuildTested or Tested", ErrInput)
	}
	if len(ready) == 0 {
		return nil, nil
	}
	// Classify in queue order up to the first global entry.
	parts := make([]string, 0, len(ready))
	global, globalWhy := -1, ""
	for i, c := range ready {
		part, why, err := p.classify(c)
		if err != nil {
			return nil, err
		}
		if part == "" {
			global, globalWhy = i, why
			break
		}
		parts = append(parts, part)
	}
	if global == 0 {
		// A global entry first: one chain on the tip over every ready
		// entry, as without partitions.
		c := &chainPlan{base: in.Tip}
		var err error
		if c.steps, c.beyond, err = p.build(in.Tip, ready, ""); err != nil {
			return nil, err
		}
		return []*chainPlan{c}, nil
	}
	var chains []*chainPlan
	var ahead []string
	for _, x := range in.Branch.Partitions {
		var entries []candidateEntry
		for i, part := range parts {
			if part == x.Name {
				entries = append(entries, ready[i])
			}
		}
		if len(entries) == 0 {
			continue
		}
		c := &chainPlan{lane: x.Name, base: in.Tip}
		var err error
		if p.every > 1 {
			if c.base, err = p.laneBase(x.Name, entries[0]); err != nil {
				return nil, err
			}
			p.standing = nil
		} else {
			p.standing = func(c candidateEntry, parent plumbing.Hash, first bool) (*Recorded, error) {
				return p.reuse(x.Name, c, parent, first)
			}
		}
		c.steps, c.beyond, err = p.build(c.base, entries, x.Name)
		p.standing = nil
		if err != nil {
			return nil, err
		}
		ahead = append(ahead, x.Name)
		chains = append(chains, c)
	}
	if global > 0 {
		// The global entry and everything behind it wait for the lanes.
		g := ready[global]
		why := fmt.Sprintf("global (%s): waits for the %d ready entries ahead of it in lanes %s to land or leave", globalWhy, global, strings.Join(ahead, ", "))
		last := chains[len(chains)-1]
		last.behind = append(last.behind, Wait{PR: g.pr, Head: g.head, Reason: why})
		for _, c := range ready[global+1:] {
			last.behind = append(last.behind, Wait{PR: c.pr, Head: c.head, Reason: "behind global pull request " + g.pr + ", which waits for the lanes ahead of it"})
		}
	}
	return chains, nil
}

// standingRec is the latest queue.candidate of entry c when it stands: in
// the entry's current episode, for its head, not invalidated by a reset.
func (p *planner) standingRec(c candidateEntry) *Recorded {
	rec := p.q.latestRec(c.pr)
	if rec == nil || !rec.Invalidated.IsZero() || rec.Seq <= c.seq || rec.Head != c.head || len(rec.Parents) == 0 {
		return nil
	}
	return rec
}

// landsOnTip reports whether the standing candidate rec of entry c, in
// lane, would land on the tip as its partition step: the boundary's rule
// (Tested) on the step BuildTested makes there.
func (p *planner) landsOnTip(lane string, c candidateEntry, rec *Recorded) (bool, error) {
	tested, head := plumbing.NewHash(rec.Step), plumbing.NewHash(c.head)
	d, conflicts, err := p.in.BuildTested(p.in.Tip, head, tested, c.pr)
	if err != nil {
		return false, fmt.Errorf("%w: partition step of pull request %s onto %s: %w", ErrMerge, c.pr, p.in.Tip, err)
	}
	if len(conflicts) > 0 {
		return false, nil
	}
	part, refused, err := p.in.Tested(p.in.Tip, d, tested, head, c.pr)
	if err != nil {
		return false, fmt.Errorf("%w: judging the partition step of pull request %s: %w", ErrMerge, c.pr, err)
	}
	return refused == "" && part == lane, nil
}

// laneBase is what a lane under batch checks is built on: its first
// entry's standing candidate's parent, when that candidate lands on the
// tip (landsOnTip); else the tip.
func (p *planner) laneBase(lane string, first candidateEntry) (plumbing.Hash, error) {
	rec := p.standingRec(first)
	if rec == nil || rec.Parents[0] == p.in.Tip.String() || rec.Trial {
		return p.in.Tip, nil
	}
	ok, err := p.landsOnTip(lane, first, rec)
	if err != nil || !ok {
		return p.in.Tip, err
	}
	return plumbing.NewHash(rec.Parents[0]), nil
}

// reuse returns the standing candidate of entry c to keep in its lane at
// parent (the lane's step below, or the tip for the first: first), under
// strict checks: one standing on parent itself is what a merge would
// build anyway (nil: merged); one on another commit is kept when it lands
// on the tip (first) or when its parent agrees with parent on every input
// of the lane's partition.
func (p *planner) reuse(lane string, c candidateEntry, parent plumbing.Hash, first bool) (*Recorded, error) {
	rec := p.standingRec(c)
	if rec == nil || rec.Trial || rec.Parents[0] == parent.String() {
		return nil, nil
	}
	if first {
		ok, err := p.landsOnTip(lane, c, rec)
		if err != nil || !ok {
			return nil, err
		}
		return rec, nil
	}
	x, _ := p.in.Branch.Partition(lane)
	differ, err := p.in.Changed(plumbing.NewHash(rec.Parents[0]), parent)
	if err != nil {
		return nil, fmt.Errorf("%w: comparing %s with %s: %w", ErrMerge, rec.Parents[0], parent, err)
	}
	for _, f := range differ {
		if x.Input(f) {
			return nil, nil
		}
	}
	return rec, nil
}

// landLanes lands each lane's landable prefix, lanes in the rules' order,
// each on the tip the ones before it left: a step whose parent is that
// tip as it is, any other as its partition step there, judged by the
// boundary's rule; a lane stops at the first step that would be refused,
// keeping the longest prefix before it that is landable on its own. One
// landing carries at most queueDepth steps, the bound of the boundary's
// walk: lanes past it land in the next round.
func (p *planner) landLanes(chains []*chainPlan) error {
	in, q := p.in, p.q
	top := in.Tip
	var landed []Landed
	// The boundary walks at most queueDepth steps of one landing: the lanes
	// after that land in the next round.
	budget := in.Branch.QueueDepth
	if budget <= 0 {
		budget = trust.DefaultQueueDepth
	}
	for _, c := range chains {
		j := min(batchLandable(c.steps, q, p.every), budget-len(landed))
		tops := []plumbing.Hash{top}
		commits := make([]string, 0, j)
		for k := 0; k < j; k++ {
			st := c.steps[k]
			cur := tops[len(tops)-1]
			if st.Parent == cur.String() {
				tops = append(tops, plumbing.NewHash(st.Commit))
				commits = append(commits, st.Commit)
				continue
			}
			tested, head := plumbing.NewHash(st.Commit), plumbing.NewHash(st.Head)
			d, conflicts, err := in.BuildTested(cur, head, tested, st.PR)
			if err != nil {
				return fmt.Errorf("%w: partition step of pull request %s onto %s: %w", ErrMerge, st.PR, cur, err)
			}
			if len(conflicts) > 0 {
				c.stopped = laneStop(st, cur, "its partition step conflicts at "+strings.Join(conflicts, ", "))
				break
			}
			part, refused, err := in.Tested(cur, d, tested, head, st.PR)
			if err != nil {
				return fmt.Errorf("%w: judging the partition step of pull request %s: %w", ErrMerge, st.PR, err)
			}
			if refused != "" || part != c.lane {
				if refused == "" {
					refused = "it lands in partition " + part + ", not " + c.lane
				}
				c.stopped = laneStop(st, cur, refused)
				break
			}
			tops = append(tops, d)
			commits = append(commits, d.String())
		}
		m := len(commits)
		for m > 0 && !Landable(c.steps[:m], q, p.every) {
			m--
		}
		c.landed = m
		for k, st := range c.steps[:m] {
			landed = append(landed, Landed{PR: st.PR, Head: st.Head, Commit: commits[k]})
			p.del(st.PR)
		}
		top = tops[m]
	}
	if len(landed) > 0 {
		p.out.Land = &Land{Ref: q.Target, Old: in.Tip.String(), New: top.String(), Landed: landed}
	}
	return nil
}

// laneStop says why a green lane step does not land.
func laneStop(st Step, on plumbing.Hash, why string) string {
	return fmt.Sprintf("green, but its candidate %s cannot land on %s as a partition step (%s); the lane is rebuilt on the tip", st.Commit, on, why)
}
