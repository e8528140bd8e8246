package policy

import (
	"errors"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// LandingSquash is the kind of a squash step's landing (docs/boundary.md,
// "Squash steps"): one parent, bound to its pull request and head by its
// trailers.
const LandingSquash = "squash"

// squashBinding reads what c's trailers bind it to, when c is shaped as a
// squash step: one parent and well-formed trailers.
func (a *auditor) squashBinding(c *commit) (queue.SquashBinding, bool) {
	if len(c.parents) != 1 {
		return queue.SquashBinding{}, false
	}
	return a.j.squashBindingOf(c) // squash.go
}

// squashOf reports whether the commit id is a squash step binding pull
// request prID at head rev, read through j: the audit's own judge, or a
// loader's (judgeState runs in several loaders at once, and a judge's
// commit memo is not safe for concurrent use).
func (a *auditor) squashOf(j *judge, id plumbing.Hash, prID string, rev plumbing.Hash) bool {
	c, err := j.commits.get(id)
	if err != nil || len(c.parents) != 1 {
		return false
	}
	b, ok := j.squashBindingOf(c) // squash.go
	return ok && b.PR == prID && b.Head == rev
}

// justifySquash looks, without a pr.merged naming c, for the pull request
// c's trailers name among those whose head was ever the bound head.
func (a *auditor) justifySquash(c *commit) (AuditLanding, bool, error) {
	b, ok := a.squashBinding(c)
	if !ok {
		return AuditLanding{}, false, nil
	}
	var first error
	tried := false
	for _, p := range a.headsBy[b.Head] {
		if p.st.ID != b.PR {
			continue
		}
		tried = true
		l, err := a.scan(c, p, b.Head, LandingSquash)
		if err == nil {
			return l, true, nil
		}
		if first == nil {
			first = err
		}
	}
	return AuditLanding{}, tried, first
}

// squashStateErr is stateErr's rule for a squash step landed merging rev
// (review judged): the branch took squash steps, no provenance, required
// checks green on the step or on rev (squashChecks, the step judged as
// landing alone), batch checks as for merge steps.
func (a *auditor) squashStateErr(st *pr.State, b trust.Branch, rev, landed, checked plumbing.Hash) error {
	if !b.Squash() {
		return refuse(CodeCandidateParents, "%s is a squash step of %s, but %s took merge steps (mergeMethod merge) when it landed", short(landed), short(rev), a.branch)
	}
	if b.RequireProvenance {
		return refuse(CodeProvenance, "%s required provenance, so it takes no squash steps, yet squash step %s is on it", a.branch, short(landed))
	}
	// Push boundaries are not recorded, so every step is judged as one
	// landing alone (squashChecks): a chain the hook took is also a run of
	// one-step landings it would take, each pushed in turn.
	_, err := squashChecks(st, b, landed, rev, true, nil)
	if checked != landed {
		// A partition step lands on its tested candidate's checks
		// alone (audittested.go).
		err = checks(st, b, checked.String(), checkedWhat(landed, checked))
	}
	var r *refusal
	if err != nil && b.Every() > 1 && errors.As(err, &r) {
		return &refusal{Code: r.Code, Reason: r.Reason, err: &groupPending{every: b.Every(), pr: st.ID}}
	}
	return err
}

// squashTree is rule 3 for a squash step: tree(c) equals
// mergeTree(first parent, the head its trailers bind), clean
// (squashstep.go, merged again: the audit reads no squash fact).
func (a *auditor) squashTree(c *commit) error {
	if err, ok := a.trees[c.id]; ok {
		return err
	}
	bind, ok := a.squashBinding(c)
	if !ok {
		return refuse(CodeSquashTrailers, "squash step %s lost its trailers", short(c.id))
	}
	prev, h := c.parents[0], bind.Head
	fault, detail, merged, err := a.j.squashTree(c, prev, h, false) // squashstep.go
	switch fault {
	case treeUnrelated:
		err = refuse(CodeCandidateConflict, "squash step %s: %s and %s have no common ancestor", short(c.id), short(prev), short(h))
	case treeUnreadable:
		err = objErr(plumbing.ZeroHash, err)
	case treeConflict:
		err = refuse(CodeCandidateConflict, "squash step %s: merging %s into %s conflicts at %s", short(c.id), short(h), short(prev), detail)
	case treeDiffers:
		err = refuse(CodeCandidateTree, "squash step %s has tree %s, but the merge of %s into %s is %s: its content was altered", short(c.id), short(c.tree), short(h), short(prev), short(merged))
	default:
		err = nil
	}
	a.trees[c.id] = err
	return err
}
