package queue

import (
	"fmt"
	"slices"
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
// branch without partitions is (build). A global entry is a chain of one,
// built on the composition of every chain ahead of it and landing after
// them — under strict checks only the green steps of a lane whose inputs
// it does not change, the others landing after it (splitLanes); every
// lane's entries behind it land after it (lanes). With one partition a
// global entry is a step of the one lane instead.
//
// A lane is built on the tip when it starts. Once another lane lands, its
// standing candidates stand on an older tip: they are kept — not rebuilt,
// not run again — as long as they can land on the current tip by the
// boundary's rule for partition steps (policy, tested.go): the lane's
// first candidate is kept when its partition step on the tip passes that
// rule (Tested), every later one when its parent agrees, on the lane's
// inputs, with the step below it in the lane (under strict checks; under
// batch checks a lane's chain is kept whole on its first candidate's
// parent, so that its groups' candidates stand on each other, as the
// boundary's vouching needs). A global entry's candidate is kept while it
// stands on a commit with the composition's very tree. The chains land in
// order, each after the chains it must follow (chainPlan.after), step by
// step on the tip the chains landed before it in this pass left: a step
// whose parent is that tip as it is, any other as its partition step
// there (BuildTested), judged by the rule first; a chain stops at the
// first step that would be refused (the next pass rebuilds it on the tip).
// All chains that land in one pass travel in one landing of at most
// queueDepth steps.

// classify returns the partition of entry c (its candidate on the tip, by
// the membership rule), or "" and why it is global; and the files its
// candidate on the tip changes (nil when it conflicts there: it changes
// anything, for all the planner knows).
func (p *planner) classify(c candidateEntry) (partition, why string, files []string, err error) {
	r, err := p.merge(p.in.Tip, c)
	if err != nil {
		return "", "", nil, err
	}
	if len(r.conflicts) > 0 {
		return "", "it conflicts with the tip at " + strings.Join(r.conflicts, ", "), nil, nil
	}
	files, err = p.in.Changed(p.in.Tip, r.step)
	if err != nil {
		return "", "", nil, fmt.Errorf("%w: the files pull request %s changes onto %s: %w", ErrMerge, c.pr, p.in.Tip, err)
	}
	m := p.in.Branch.PartitionOf(files)
	return m.Partition, m.Why, files, nil
}

// lanes builds the chains of a branch with partitions (see above), in the
// order they land. Each lane is a chain of its own; a global entry is a
// chain of one built on the composition of every chain ahead of it (the
// target as it will be once they have landed), and lands after them —
// save the steps of lanes it does not touch that splitLanes moves behind
// it. The
// entries of a lane behind a global entry land after it too, in a chain
// of their own: built on the global entry's candidate when it changes one
// of the lane's inputs, else on the lane's chain before it (the global
// entry changes nothing the lane's checks read, so its candidates do not
// depend on it).
func (p *planner) lanes(ready []candidateEntry) ([]*chainPlan, error) {
	in := p.in
	if in.Changed == nil || in.BuildTested == nil || in.Tested == nil {
		return nil, fmt.Errorf("%w: the branch has partitions but the plan lacks Changed, BuildTested or Tested", ErrInput)
	}
	var chains []*chainPlan
	// Per lane, where its next chain goes: built on base, standing on on
	// (what its red steps may be the doing of), landing after after.
	type next struct {
		base      plumbing.Hash
		on, after []*chainPlan
		last      *chainPlan // its last chain
	}
	lanes := map[string]*next{}
	for _, x := range in.Branch.Partitions {
		lanes[x.Name] = &next{base: in.Tip}
	}
	pending := map[string][]candidateEntry{}
	counts := map[string]int{} // per lane, entries given a place
	var waits []Wait
	overflow := false // a lane entry has no place (beyond the depth)
	// fresh: per lane, the chain the last flush built (the lane's entries
	// since the global entry before), which the next global entry may
	// split (splitLanes).
	fresh := map[string]*chainPlan{}
	// flush builds the lane entries pending, each lane's in a chain of its
	// own where its next chain goes.
	flush := func() error {
		clear(fresh)
		for _, x := range in.Branch.Partitions {
			entries, l := pending[x.Name], lanes[x.Name]
			if len(entries) == 0 {
				continue
			}
			c := &chainPlan{lane: x.Name, base: l.base, on: l.on, after: l.after}
			held := p.held(c)
			var err error
			if p.every > 1 {
				if c.base, err = p.laneBase(x.Name, entries[0], c.base); err != nil {
					return err
				}
			}
			if p.every == 1 {
				p.standing = func(e candidateEntry, parent plumbing.Hash, first bool) (*Recorded, error) {
					if e.global {
						return p.reuseGlobal(e, parent, first)
					}
					return p.reuse(x.Name, e, parent, first)
				}
			}
			c.steps, c.beyond, err = p.build(c.base, entries, x.Name, len(entries), held, blocked(c))
			p.standing = nil
			if err != nil {
				return err
			}
			chains = append(chains, c)
			fresh[x.Name] = c
			l.last, l.on, l.after = c, []*chainPlan{c}, []*chainPlan{c}
			if n := len(c.steps); n > 0 {
				l.base = plumbing.NewHash(c.steps[n-1].Commit)
			} else {
				l.base = c.base
			}
		}
		pending = map[string][]candidateEntry{}
		return nil
	}
	for i, c := range ready {
		part, why, files, err := p.classify(c)
		if err != nil {
			return nil, err
		}
		if part == "" && len(in.Branch.Partitions) == 1 {
			// One partition: nothing runs beside its lane, so a global
			// entry is a step of it (checked whole), as on a branch
			// without partitions.
			part, c.global = in.Branch.Partitions[0].Name, true
		}
		if part != "" {
			if counts[part] >= p.depth {
				waits = append(waits, Wait{PR: c.pr, Head: c.head, Reason: laneWhy(part, fmt.Sprintf("beyond the queue depth (%d)", p.depth))})
				overflow = true
				continue
			}
			pending[part] = append(pending[part], c)
			counts[part]++
			continue
		}
		// A global entry: on the composition of every chain ahead of it.
		var touched []string // the lanes whose inputs it changes
		for _, x := range in.Branch.Partitions {
			for _, f := range files {
				if x.Input(f) {
					touched = append(touched, x.Name)
					break
				}
			}
		}
		behind := ""
		for _, name := range touched {
			if counts[name] >= p.depth {
				behind = fmt.Sprintf("global (%s): beyond the queue depth (%d) of lane %s", why, p.depth, name)
			}
		}
		if overflow {
			// An entry ahead of it has no place yet: it would land after it.
			behind = fmt.Sprintf("global (%s): waits for the entries ahead of it beyond the lanes' depth (%d)", why, p.depth)
		}
		if behind == "" {
			if err := flush(); err != nil {
				return nil, err
			}
			var rest []*chainPlan // the lanes' steps that land after it (splitLanes)
			if p.every == 1 && files != nil {
				if rest, err = p.splitLanes(c, touched, fresh); err != nil {
					return nil, err
				}
			}
			b, ok, err := p.compose(in.Tip, chains)
			if err != nil {
				return nil, err
			}
			if !ok {
				unsplit(rest)
				behind = fmt.Sprintf("global (%s): waits for the chains ahead of it to land (their steps do not merge on one another)", why)
			} else {
				ahead := slices.Clone(chains)
				gc := &chainPlan{base: b, on: ahead, after: ahead, global: why}
				p.standing = p.reuseGlobal
				gc.steps, _, err = p.build(b, []candidateEntry{c}, "", 1, p.held(gc), blocked(gc))
				p.standing = nil
				if err != nil {
					return nil, err
				}
				chains = append(chains, gc)
				for _, r := range rest {
					r.after = append(r.after, gc)
					chains = append(chains, r)
					l := lanes[r.lane]
					l.last, l.on, l.after = r, []*chainPlan{r}, []*chainPlan{r}
				}
				if len(gc.steps) == 0 {
					continue // evicted (conflict) or waiting: nothing lands after it
				}
				for _, x := range in.Branch.Partitions {
					l := lanes[x.Name]
					if slices.Contains(touched, x.Name) {
						counts[x.Name]++
						l.base, l.on = plumbing.NewHash(gc.steps[0].Commit), []*chainPlan{gc}
					}
					l.after = append(slices.Clone(l.after), gc)
				}
				continue
			}
		}
		// Not built: it and everything behind it wait.
		waits = append(waits, Wait{PR: c.pr, Head: c.head, Reason: behind})
		for _, e := range ready[i+1:] {
			waits = append(waits, Wait{PR: e.pr, Head: e.head, Reason: "behind global pull request " + c.pr + ", which waits"})
		}
		break
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(waits) > 0 {
		if len(chains) == 0 {
			chains = append(chains, &chainPlan{base: in.Tip})
		}
		last := chains[len(chains)-1]
		last.behind = append(last.behind, waits...)
	}
	return chains, nil
}

// splitLanes splits, for global entry g (changing files in the lanes
// touched), the chain each other lane built since the global entry before
// (fresh) in two: the steps g is built on — those green now, or, once g's
// candidate stands, those it was built on (splitAt) — and the rest, which
// land after g as partition steps on a tip holding it: g changes nothing
// their checks read, so their candidates stay what they were tested as,
// and g's check need not wait for theirs. It returns the second parts,
// standing on the first (docs/queue.md, "Global entries"). Under strict
// checks only: a batch group must stay whole behind its end.
func (p *planner) splitLanes(g candidateEntry, touched []string, fresh map[string]*chainPlan) ([]*chainPlan, error) {
	var rest []*chainPlan
	for _, x := range p.in.Branch.Partitions {
		c := fresh[x.Name]
		if c == nil || slices.Contains(touched, x.Name) {
			continue
		}
		settled := true
		for _, a := range c.after {
			settled = settled && a.allGreen(p.q, p.every)
		}
		if !settled {
			continue // what it lands after is still checked: so is g then
		}
		k, err := p.splitAt(g, x, c)
		if err != nil {
			return nil, err
		}
		if k == len(c.steps) {
			continue
		}
		top := c.base
		if k > 0 {
			top = plumbing.NewHash(c.steps[k-1].Commit)
		}
		r := &chainPlan{lane: x.Name, base: top, steps: c.steps[k:], beyond: c.beyond, on: []*chainPlan{c}, after: []*chainPlan{c}}
		c.steps, c.beyond = c.steps[:k:k], nil
		rest = append(rest, r)
	}
	return rest, nil
}

// splitAt is where splitLanes splits lane x's chain c for global entry g:
// after the steps g's standing candidate was built on, when their tree
// there is the candidate's parent's on x's paths (so g keeps its candidate
// while the steps after them turn green), else after c's green steps.
func (p *planner) splitAt(g candidateEntry, x trust.Partition, c *chainPlan) (int, error) {
	if rec := p.standingRec(g); rec != nil && !rec.Trial && rec.Partition == "" {
		parent := plumbing.NewHash(rec.Parents[0])
		for k := len(c.steps); k >= 0; k-- {
			top := c.base
			if k > 0 {
				top = plumbing.NewHash(c.steps[k-1].Commit)
			}
			differ, err := p.in.Changed(top, parent)
			if err != nil {
				return 0, fmt.Errorf("%w: comparing %s with %s: %w", ErrMerge, top, parent, err)
			}
			if !slices.ContainsFunc(differ, x.Owns) {
				return k, nil
			}
		}
	}
	k := 0
	for k < len(c.steps) && c.steps[k].Verdict == Green {
		k++
	}
	return k, nil
}

// unsplit joins the chains splitLanes split again: each second part back
// onto the first, the one chain it stands on.
func unsplit(rest []*chainPlan) {
	for _, r := range rest {
		c := r.on[0]
		c.steps = append(c.steps, r.steps...)
		c.beyond = r.beyond
	}
}

// widenGroups marks, under batch checks, every step of a group that holds
// a global step (the one lane of a branch with one partition chains global
// entries too) to be checked whole: its end vouches for the group, so its
// checks must read what the global step changes, not the lane's inputs
// alone (queue.candidate records no partition for them, and check run sets
// no GITPLUS_CHECK_PARTITION).
func widenGroups(chain []Step) {
	mixed := map[string]bool{}
	for _, st := range chain {
		if st.GroupEnd != "" && st.Partition == "" {
			mixed[st.GroupEnd] = true
		}
	}
	for i := range chain {
		chain[i].wide = chain[i].GroupEnd != "" && mixed[chain[i].GroupEnd]
	}
}

// held reports whether chain c stands on a chain that is not green as a
// whole, or is held itself: its red steps then wait (build).
func (p *planner) held(c *chainPlan) bool {
	for _, a := range c.on {
		if !a.allGreen(p.q, p.every) || p.held(a) {
			return true
		}
	}
	return false
}

// blocked reports whether chain c lands after a chain that still has steps
// queued: it cannot land before they do (batch checks pin its groups).
func blocked(c *chainPlan) bool {
	for _, a := range c.after {
		if len(a.steps) > 0 || blocked(a) {
			return true
		}
	}
	return false
}

// lanesGreen reports whether every lane chain a global entry's chain c is
// built on is green as a whole: its candidate is then checked. The global
// entries ahead of it need not be: checking it while theirs run is the
// speculation of any chain — should one of them fail, it is built and
// checked again — where waiting would line the global entries up one check
// after the other.
func (p *planner) lanesGreen(c *chainPlan) bool {
	for _, a := range c.on {
		if a.global == "" && !a.allGreen(p.q, p.every) {
			return false
		}
	}
	return true
}

// compose is the commit the target would hold once the chains of a segment
// landed on base, in order (each step as it is when it stands on what is
// below it, else as its partition step there): what a global entry behind
// them is built on. ok is false when a partition step does not merge.
func (p *planner) compose(base plumbing.Hash, chains []*chainPlan) (plumbing.Hash, bool, error) {
	cur := base
	for _, c := range chains {
		for _, st := range c.steps {
			if st.Parent == cur.String() {
				cur = plumbing.NewHash(st.Commit)
				continue
			}
			d, conflicts, err := p.buildTested(cur, st)
			if err != nil || len(conflicts) > 0 {
				return plumbing.ZeroHash, false, err
			}
			cur = d
		}
	}
	return cur, true, nil
}

// buildTested is PlanInput.BuildTested for step st on parent, memoised.
func (p *planner) buildTested(parent plumbing.Hash, st Step) (plumbing.Hash, []string, error) {
	k := [3]string{parent.String(), st.Head, st.Commit}
	if r, ok := p.tested[k]; ok {
		return r.step, r.conflicts, nil
	}
	d, conflicts, err := p.in.BuildTested(parent, plumbing.NewHash(st.Head), plumbing.NewHash(st.Commit), st.PR)
	if err != nil {
		return plumbing.ZeroHash, nil, fmt.Errorf("%w: partition step of pull request %s onto %s: %w", ErrMerge, st.PR, parent, err)
	}
	if p.tested == nil {
		p.tested = map[[3]string]mres{}
	}
	p.tested[k] = mres{d, conflicts}
	return d, conflicts, nil
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
	d, conflicts, err := p.buildTested(p.in.Tip, Step{PR: c.pr, Head: c.head, Commit: rec.Step})
	if err != nil || len(conflicts) > 0 {
		return false, err
	}
	part, refused, err := p.in.Tested(p.in.Tip, d, tested, head, c.pr)
	if err != nil {
		return false, fmt.Errorf("%w: judging the partition step of pull request %s: %w", ErrMerge, c.pr, err)
	}
	return refused == "" && part == lane, nil
}

// laneBase is what a lane chain under batch checks is built on, given the
// base it would be built on (the tip, a global entry's candidate, or the
// lane's chain before): its first entry's standing candidate's parent when
// that candidate was published in this lane and can stand in for base —
// it lands on the tip (landsOnTip) when base is the tip, else its parent
// agrees with base on every input of the lane — so that the lane's chain,
// built on it, is the very chain CI is running; else base.
func (p *planner) laneBase(lane string, first candidateEntry, base plumbing.Hash) (plumbing.Hash, error) {
	rec := p.standingRec(first)
	if rec == nil || rec.Parents[0] == base.String() || rec.Trial || rec.Partition != lane {
		return base, nil
	}
	var ok bool
	var err error
	if base == p.in.Tip {
		ok, err = p.landsOnTip(lane, first, rec)
	} else {
		ok, err = p.sameInputs(lane, plumbing.NewHash(rec.Parents[0]), base)
	}
	if err != nil || !ok {
		return base, err
	}
	return plumbing.NewHash(rec.Parents[0]), nil
}

// sameInputs reports whether commits a and b agree on every input of the
// partition lane.
func (p *planner) sameInputs(lane string, a, b plumbing.Hash) (bool, error) {
	x, _ := p.in.Branch.Partition(lane)
	differ, err := p.in.Changed(a, b)
	if err != nil {
		return false, fmt.Errorf("%w: comparing %s with %s: %w", ErrMerge, a, b, err)
	}
	for _, f := range differ {
		if x.Input(f) {
			return false, nil
		}
	}
	return true, nil
}

// reuse returns the standing candidate of entry c to keep in its lane at
// parent (the lane's step below, or the tip for the first: first), under
// strict checks: one standing on parent itself is what a merge would
// build anyway (nil: merged); one on another commit, published in this
// lane (so CI ran the lane's checks on it, not another scope's), is kept
// when it lands on the tip (first) or when its parent agrees with parent
// on every input of the lane's partition.
func (p *planner) reuse(lane string, c candidateEntry, parent plumbing.Hash, first bool) (*Recorded, error) {
	rec := p.standingRec(c)
	if rec == nil || rec.Trial || rec.Parents[0] == parent.String() || rec.Partition != lane {
		return nil, nil
	}
	if first {
		ok, err := p.landsOnTip(lane, c, rec)
		if err != nil || !ok {
			return nil, err
		}
		return rec, nil
	}
	if ok, err := p.sameInputs(lane, plumbing.NewHash(rec.Parents[0]), parent); err != nil || !ok {
		return nil, err
	}
	return rec, nil
}

// reuseGlobal returns the standing candidate of global entry c to keep
// on parent (the composition of the lanes ahead of it): one published as
// global and built on a commit with parent's very tree — the same lanes
// composed in another order, or partly landed already — was tested on
// what parent holds, whole, and lands on it (JudgeTested's rule for a
// global step: the tested tree, exactly).
func (p *planner) reuseGlobal(c candidateEntry, parent plumbing.Hash, first bool) (*Recorded, error) {
	rec := p.standingRec(c)
	if rec == nil || rec.Trial || rec.Parents[0] == parent.String() || rec.Partition != "" {
		return nil, nil
	}
	differ, err := p.in.Changed(plumbing.NewHash(rec.Parents[0]), parent)
	if err != nil {
		return nil, fmt.Errorf("%w: comparing %s with %s: %w", ErrMerge, rec.Parents[0], parent, err)
	}
	if len(differ) > 0 {
		return nil, nil
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
		for _, a := range c.after {
			if a.landed < len(a.steps) {
				j = 0 // what it stands on lands first
			}
		}
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
			d, conflicts, err := p.buildTested(cur, st)
			if err != nil {
				return err
			}
			if len(conflicts) > 0 {
				c.stopped = laneStop(st, cur, "its partition step conflicts at "+strings.Join(conflicts, ", "))
				break
			}
			part, refused, err := in.Tested(cur, d, tested, head, st.PR)
			if err != nil {
				return fmt.Errorf("%w: judging the partition step of pull request %s: %w", ErrMerge, st.PR, err)
			}
			if refused != "" || part != st.Partition {
				if refused == "" {
					refused = fmt.Sprintf("it lands in partition %q, not %q", part, st.Partition)
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
