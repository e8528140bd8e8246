package policy

// The tip a direct landing fast-forwarded from, as the audit finds it
// (docs/trust.md, "Path owners"): the hook judges a direct landing's path
// owners by the files the head changes against the branch's tip before the
// push (the old tip), so the audit must diff from the same commit.
//
// Which commit was the old tip is not written anywhere, but it is
// determined: the branch only fast-forwards, so its successive tips form
// one line by ancestry, and every tip was a landing (a pull request head,
// a candidate or squash step, or a commit landed where no pull request was
// required). The old tip of a direct landing of head H is therefore the
// newest landing H contains (other than H). For a head built on the tip
// that is the commit below the head's own commits on the first-parent
// chain; for the everyday head that merged the branch into a feature
// branch (its first parent is the feature, the branch comes in through the
// merge's second parent) it is not on the chain at all: the chain runs
// down the feature to its fork point, and the landings made meanwhile are
// reached only through the merge.
//
// top(x) is the newest landings at or below commit x: x itself when x is a
// landing, else the newest of its parents' tops. A chain commit the walk
// judged is a landing when the walk justified it; a commit off the chain
// is one when the audit justifies it as a landing of the branch (justify,
// with its own path owners judged from its own old tip, found the same
// way): the records prove that commit was a tip, and a commit the records
// cannot justify — the feature's own commits, a head no review let land —
// is looked through, never taken for a tip. Of several tops the newest
// wins, by ancestry; in a history where two cannot be ordered (a merge of
// two landed lines that no tip ever held together), the landing is judged
// against each, so nothing the hook judged is missed.

import (
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
)

// directFrom returns the tips a direct landing of c fast-forwarded from:
// the newest landings c brings (one, except as said above), or the zero
// hash for a root.
func (a *auditor) directFrom(c *commit) ([]plumbing.Hash, error) {
	all, err := a.topsOf(nil, c.parents)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return []plumbing.Hash{plumbing.ZeroHash}, nil
	}
	return all, nil
}

// top returns the newest landings at or below commit id.
func (a *auditor) top(id plumbing.Hash) ([]plumbing.Hash, error) {
	i, onChain := a.pos[id]
	if onChain && i < a.cur {
		return a.chainTop(i)
	}
	if ts, ok := a.tops[id]; ok {
		return ts, nil
	}
	c, err := a.j.commits.get(id)
	if err != nil {
		return nil, err
	}
	// History below Since is not judged: it lies below every tip the walk
	// starts from. Dates only pick when to ask; the ancestry test decides.
	if since := a.chain[0]; c.time <= since.time {
		below, err := a.j.commits.isAncestor(id, since.id)
		if err != nil {
			return nil, err
		}
		if below {
			a.tops[id] = []plumbing.Hash{since.id}
			return a.tops[id], nil
		}
	}
	landing, err := a.isLanding(c)
	if err != nil {
		return nil, err
	}
	ts := []plumbing.Hash{id}
	if !landing {
		ts = nil
		for _, p := range c.parents {
			pt, err := a.top(p)
			if err != nil {
				return nil, err
			}
			ts = append(ts, pt...)
		}
		if ts, err = a.maxima(ts); err != nil {
			return nil, err
		}
	}
	if !onChain { // a chain commit above the walk is judged by it later
		a.tops[id] = ts
	}
	return ts, nil
}

// chainTop is top of chain[i], which the walk has judged (i < a.cur).
func (a *auditor) chainTop(i int) ([]plumbing.Hash, error) {
	if a.landedAt[i] {
		return []plumbing.Hash{a.chain[i].id}, nil
	}
	// Down to the nearest landing, or a commit already known (chain[0] is
	// a landing), then up again: a commit the walk did not justify is
	// looked through to its parents.
	j := i
	for !a.landedAt[j] {
		if _, ok := a.tops[a.chain[j].id]; ok {
			break
		}
		j--
	}
	base := []plumbing.Hash{a.chain[j].id}
	if !a.landedAt[j] {
		base = a.tops[a.chain[j].id]
	}
	for k := j + 1; k <= i; k++ {
		ts, err := a.topsOf(base, a.chain[k].parents[1:])
		if err != nil {
			return nil, err
		}
		a.tops[a.chain[k].id] = ts
		base = ts
	}
	return base, nil
}

// topsOf is the newest of the landings in and those parents bring (top
// of each parent, maxima of all).
func (a *auditor) topsOf(in []plumbing.Hash, parents []plumbing.Hash) ([]plumbing.Hash, error) {
	ts := append([]plumbing.Hash{}, in...)
	for _, p := range parents {
		pt, err := a.top(p)
		if err != nil {
			return nil, err
		}
		ts = append(ts, pt...)
	}
	return a.maxima(ts)
}

// isLanding reports whether c, a commit the walk has not judged, is a
// landing of the branch: the audit justifies it (a step waiting for its
// group's checks counts: its shape and review hold).
func (a *auditor) isLanding(c *commit) (bool, error) {
	_, onChain := a.pos[c.id]
	if v, ok := a.valid[c.id]; ok && !onChain {
		return v, nil
	}
	_, err := a.justify(c)
	v := err == nil
	if err != nil {
		var g *groupPending
		var r *refusal
		switch {
		case errors.As(err, &g):
			v = true
		case !errors.As(err, &r):
			return false, err
		}
	}
	if !onChain {
		a.valid[c.id] = v
	}
	return v, nil
}

// maxima returns the commits of ts (without repeats) that are ancestors of
// no other one of them: the newest, by ancestry, never by date.
func (a *auditor) maxima(ts []plumbing.Hash) ([]plumbing.Hash, error) {
	var uniq []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			uniq = append(uniq, t)
		}
	}
	if len(uniq) < 2 {
		return uniq, nil
	}
	var out []plumbing.Hash
	for i, t := range uniq {
		below := false
		for k, u := range uniq {
			if k == i {
				continue
			}
			anc, err := a.j.commits.isAncestor(t, u)
			if err != nil {
				return nil, err
			}
			if anc {
				below = true
				break
			}
		}
		if !below {
			out = append(out, t)
		}
	}
	return out, nil
}
