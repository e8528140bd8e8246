package policy

// What a squash step IS (docs/boundary.md, "Squash steps"): the one test
// of whether a commit is a squash step of a branch, binding a pull request
// and one of its heads. A commit is one when, under the branch's rules in
// force:
//
//  1. the branch takes squash steps ("mergeMethod": "squash");
//  2. the commit has exactly one parent;
//  3. its message's trailers bind it to the pull request and the head
//     (queue.SquashTrailers: Git-Plus-PR and Git-Plus-Head, once each, in
//     the last paragraph);
//  4. its tree is exactly the clean mergeTree(its parent, that head): the
//     step landed the head's change on its parent as one commit.
//
// The hook's squash chains (squash.go: rules 1, 2 and 6, each with its own
// refusal and in its own place in the cheapest-first order), the hub's
// squash exception of pr.merged (hubmerged.go), the audit's squash steps
// (auditsquash.go) and its check of every pr.merged (auditmerged.go) all
// judge by these functions. Trailers alone bind nothing: a commit of any
// pull request may carry them in its message.

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/gitobj"
)

// squashFault is what keeps a commit's shape from being a squash step's.
type squashFault int

const (
	squashShapeOK     squashFault = iota
	squashNotMethod               // the branch takes merge steps
	squashParents                 // not exactly one parent
	squashNoTrailers              // neither trailer: the commit does not try to be one
	squashBadTrailers             // a trailer missing, repeated, malformed or misplaced
)

// squashShape judges rules 1 to 3 on c for a branch whose rules are b:
// what c's trailers bind it to, or the fault (err says what is wrong with
// trailers that try, squashBadTrailers). An unreadable or malformed commit
// is an error (a refusal naming it).
func (j *judge) squashShape(c *commit, b trust.Branch) (queue.SquashBinding, squashFault, error) {
	if !b.Squash() {
		return queue.SquashBinding{}, squashNotMethod, nil
	}
	if len(c.parents) != 1 {
		return queue.SquashBinding{}, squashParents, nil
	}
	bind, found, err := j.squashTrailersOf(c)
	switch {
	case err != nil && !found:
		return queue.SquashBinding{}, squashNoTrailers, err
	case !found:
		return queue.SquashBinding{}, squashNoTrailers, nil
	case err != nil:
		return queue.SquashBinding{}, squashBadTrailers, err
	}
	return bind, squashShapeOK, nil
}

// squashTrailersOf reads c's trailers (queue.SquashTrailers): found is
// false when the message names neither key; err is the trailers' fault, or
// a malformed commit (found false then, with a CodeBadObject refusal).
func (j *judge) squashTrailersOf(c *commit) (queue.SquashBinding, bool, error) {
	raw, err := j.commits.rawOf(c)
	if err != nil {
		return queue.SquashBinding{}, false, err
	}
	pc, err := gitobj.ParseCommit(raw)
	if err != nil {
		return queue.SquashBinding{}, false, refuse(CodeBadObject, "%s is not a well-formed commit: %v", short(c.id), err)
	}
	return queue.SquashTrailers(pc.Message)
}

// squashBindingOf reads what c's trailers bind it to, when they are well
// formed (rule 3 alone: the squash facts learn from it, and the audit
// picks which pull request a squash step names).
func (j *judge) squashBindingOf(c *commit) (queue.SquashBinding, bool) {
	b, found, err := j.squashTrailersOf(c)
	return b, found && err == nil
}

// squashTree is rule 4 on step c merging head onto its parent prev:
// treeOK when tree(c) is exactly the clean mergeTree(prev, head), read from
// the squash fact when facts is set and the fold cache holds one
// (squashfacts.go: the hook's speed-up; the audit, whose verdicts do not
// depend on the cache, always merges), else merged.
func (j *judge) squashTree(c *commit, prev, head plumbing.Hash, facts bool) (fault treeFault, detail string, merged plumbing.Hash, err error) {
	if facts && j.knownSquash(c, prev, head) {
		return treeOK, "", c.tree, nil
	}
	return candidateTree(j.in.Objects, prev, head, c.tree, j.merges)
}

// isSquashStep reports whether commit id is a squash step, under the
// branch rules b, that binds pull request prID at head: rules 1 to 4
// above (facts: as squashTree). err is an object that cannot be read (the
// caller refuses with it); a commit that is simply not such a step is
// (false, nil).
func (j *judge) isSquashStep(id plumbing.Hash, b trust.Branch, prID string, head plumbing.Hash, facts bool) (bool, error) {
	c, err := j.commits.get(id)
	if err != nil {
		return false, err
	}
	bind, fault, err := j.squashShape(c, b)
	if fault != squashShapeOK {
		if isMissing(err) {
			return false, err
		}
		return false, nil
	}
	if bind.PR != prID || bind.Head != head {
		return false, nil
	}
	switch fault, _, _, err := j.squashTree(c, c.parents[0], head, facts); fault {
	case treeOK:
		return true, nil
	case treeUnreadable:
		return false, objErr(plumbing.ZeroHash, err)
	}
	return false, nil
}

// squashNotStep says, for a refusal, why commit id is not a squash step
// of b binding prID at head (isSquashStep said false).
func (j *judge) squashNotStep(id plumbing.Hash, b trust.Branch, prID string, head plumbing.Hash) string {
	c, err := j.commits.get(id)
	if err != nil {
		return err.Error()
	}
	bind, fault, err := j.squashShape(c, b)
	switch fault {
	case squashNotMethod:
		return "the branch takes merge steps (mergeMethod merge), not squash steps"
	case squashParents:
		return fmt.Sprintf("it has %d parents, not one", len(c.parents))
	case squashNoTrailers:
		return fmt.Sprintf("its message has no %s and %s trailers", queue.TrailerPR, queue.TrailerHead)
	case squashBadTrailers:
		return fmt.Sprintf("its trailers are malformed (%v)", err)
	}
	if bind.PR != prID || bind.Head != head {
		return fmt.Sprintf("its trailers bind pull request %s at %s", bind.PR, short(bind.Head))
	}
	switch fault, detail, merged, _ := j.squashTree(c, c.parents[0], head, false); fault {
	case treeConflict:
		return fmt.Sprintf("merging %s onto its parent %s conflicts at %s", short(head), short(c.parents[0]), detail)
	case treeDiffers:
		return fmt.Sprintf("its tree %s is not the merge of %s onto its parent %s (%s)", short(c.tree), short(head), short(c.parents[0]), short(merged))
	case treeUnrelated:
		return fmt.Sprintf("%s and its parent %s have no common ancestor", short(head), short(c.parents[0]))
	}
	return "it cannot be read"
}
