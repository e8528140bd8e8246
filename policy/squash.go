package policy

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// CodeSquashTrailers: a squash step's trailers do not bind it to one pull
// request's current head (docs/boundary.md, "Squash steps"): a
// Git-Plus-PR or Git-Plus-Head missing, repeated, malformed or outside the
// last paragraph, or a head that is not that pull request's head.
const CodeSquashTrailers = "squash-trailers"

// squashStep is one step of a squash chain: the commit and what its
// trailers bind it to.
type squashStep struct {
	c    *commit
	bind queue.SquashBinding
}

// squashLanding judges an update of a branch whose rules say
// "mergeMethod": "squash" whose new tip is no open pull request's head
// (docs/boundary.md, "Squash steps"). A chain of squash steps lands;
// anything else is refused as on a merge branch.
func (j *judge) squashLanding(u Update, b trust.Branch, tip *commit) error {
	if len(tip.parents) > 1 {
		if j.rewind(u) {
			return nonFastForward(u)
		}
		return refuse(CodeCandidateParents, "%s has %d parents, but %s takes squash steps (mergeMethod squash): one parent, the previous step, and the trailers %s and %s", short(u.New), len(tip.parents), u.Ref, queue.TrailerPR, queue.TrailerHead)
	}
	if len(tip.parents) == 0 || !j.squashTip(tip) {
		if j.rewind(u) {
			return nonFastForward(u)
		}
		return j.notAHead(u.Ref, u.New, "commit")
	}
	if b.RequireProvenance {
		return refuse(CodeProvenance, "%s requires provenance, so it takes no squash steps built by the queue (they are unsigned); land pull request heads directly", u.Ref)
	}
	if u.Old.IsZero() {
		return refuse(CodeNotAPRHead, "%s does not exist yet, so a squash step has nothing to start from; push an approved pull request head first", u.Ref)
	}
	depth := 1 // pr merge's one step
	if b.QueueCandidates {
		depth = b.QueueDepth
	}
	direct, err := j.squashChain(u, b, tip, depth)
	if err != nil {
		return err
	}
	if b.QueueCandidates && !direct {
		if err := j.queuePaused(u); err != nil { // pause.go
			return err
		}
	}
	return j.checkObjects(u.New, u.Old) // fsck.go
}

// squashTip reports whether c's message names either squash trailer (it
// tries to be a squash step); false for an unreadable commit, which the
// refusal that follows reads again.
func (j *judge) squashTip(c *commit) bool {
	_, found, _ := j.squashTrailersOf(c) // squashstep.go
	return found
}

// squashChain judges a chain of squash steps from u.Old to u.New: each
// step S_i has exactly the parent S_{i-1}; its trailers name an open pull
// request based on the branch and that pull request's current head H_i,
// whose review rules hold at H_i; the required checks hold by
// squashChecks (on S_i, or on H_i when S_i lands alone or has H_i's very
// tree), batch checks as for merge steps; and tree(S_i) is exactly the
// clean mergeTree(S_{i-1}, H_i). It is the merge step's judgement with
// the head read from the trailers instead of the second parent.
//
// direct reports a landing of one step justified by its head's checks
// alone: pr merge's landing, judged as a direct landing of the head, which
// a paused queue does not stop (docs/queue.md, "Pausing a queue").
func (j *judge) squashChain(u Update, b trust.Branch, tip *commit, depth int) (direct bool, err error) {
	var steps []*commit
	for c := tip; ; {
		if len(steps) >= depth {
			return false, refuse(CodeChainTooDeep, "%s is more than %d first-parent steps above %s's tip %s (queueDepth; one step without queueCandidates); land a shorter chain", short(u.New), depth, u.Ref, short(u.Old))
		}
		steps = append(steps, c)
		if len(c.parents) == 0 {
			return false, refuse(CodeNonFastForward, "%s does not reach %s's tip %s by first parents", short(u.New), u.Ref, short(u.Old))
		}
		if c.parents[0] == u.Old {
			break
		}
		next, err := j.commits.get(c.parents[0])
		if err != nil {
			return false, err
		}
		c = next
	}
	for l, r := 0, len(steps)-1; l < r; l, r = l+1, r-1 {
		steps[l], steps[r] = steps[r], steps[l]
	}
	j.foldPRs()
	used := map[string]plumbing.Hash{}
	prev := u.Old
	batch := b.Every() > 1
	unchecked := map[int]error{}
	bound := make([]squashStep, len(steps))
	revs := make([]plumbing.Hash, len(steps)) // whose checks count (branch.go groups)
	var partition []testedAt
	for i, c := range steps {
		// Rules 1 and 2, what a squash step is (squashstep.go): exactly
		// the parent S_{i-1}, and trailers binding it.
		bind, fault, err := j.squashShape(c, b)
		if fault == squashParents || fault == squashShapeOK && c.parents[0] != prev {
			return false, refuse(CodeCandidateParents, "step %d of the chain, %s, has parents %s; a squash step has exactly the parent [%s]", i+1, short(c.id), hashes(c.parents), short(prev))
		}
		if fault == squashNoTrailers {
			if err != nil {
				return false, err // unreadable or malformed
			}
			err = fmt.Errorf("no %s and %s trailers", queue.TrailerPR, queue.TrailerHead)
		}
		if fault != squashShapeOK {
			return false, refuse(CodeSquashTrailers, "step %d (%s): %v; a squash step's message ends with %s: <pull request id> and %s: <the head squashed>, once each", i+1, short(c.id), err, queue.TrailerPR, queue.TrailerHead)
		}
		h := bind.Head
		// Rule 2: the named pull request is open on the branch and h is
		// its current head.
		cands := j.openHeads(u.Ref, h)
		var named *pr.State
		var others []string
		for _, cand := range cands {
			if cand.ID == bind.PR {
				named = cand
			} else {
				others = append(others, cand.ID)
			}
		}
		if named == nil {
			if len(others) > 0 {
				return false, refuse(CodeSquashTrailers, "step %d (%s) names pull request %s, but its %s %s is the head of pull request %s; a squash step names the pull request whose head it squashed", i+1, short(c.id), bind.PR, queue.TrailerHead, short(h), strings.Join(others, ", "))
			}
			return false, j.notAHead(u.Ref, h, fmt.Sprintf("the %s of step %d (%s),", queue.TrailerHead, i+1, short(c.id)))
		}
		if at, dup := used[named.ID]; dup {
			return false, refuse(CodeDuplicatePR, "pull request %s appears twice in the chain (at %s and %s); a pull request lands at most once", named.ID, short(at), short(c.id))
		}
		// Rules 4 and 5, and the step's path owners (owners.go): the
		// files it changes against its parent, as for a merge step.
		if err := review(named, b, h.String()); err != nil {
			return false, err
		}
		var prevTree plumbing.Hash // the old tip's is read from its commit when needed
		if i > 0 {
			prevTree = steps[i-1].tree
		}
		if err := owners(named, b, h.String(), j.stepChanged(c, lazyChanged(j.in.Objects, j.merges, prev, prevTree, c.id, c.tree))); err != nil {
			return false, err
		}
		sameTree := func() bool {
			hc, herr := j.commits.get(h)
			return herr == nil && hc.tree == c.tree
		}
		rev, what, isTested, err := j.checksRev(b, c, "squash step") // branch.go
		if err != nil {
			return false, err
		}
		revs[i] = rev
		var byHead bool
		if isTested {
			if _, err := testedShape(j.in.Objects, b, TestedStep{Prev: prev, Step: c.id, Tested: rev, Head: h, PR: named.ID, Squash: true}); err != nil {
				return false, err
			}
			// A partition step lands on its tested candidate's checks
			// alone (tested.go), never on its head's.
			err = checks(named, b, rev.String(), what)
			partition = append(partition, testedAt{i: i, s: TestedStep{Prev: prev, Step: c.id, Tested: rev, Head: h, PR: named.ID}})
		} else {
			byHead, err = squashChecks(named, b, c.id, h, len(steps) == 1, sameTree)
		}
		if err != nil {
			if !batch {
				return false, err
			}
			unchecked[i] = err
		}
		direct = len(steps) == 1 && byHead
		used[named.ID] = c.id
		bound[i] = squashStep{c: c, bind: bind}
		prev = c.id
	}
	if len(unchecked) > 0 {
		if err := j.groups(u, b, steps, revs, unchecked); err != nil {
			return false, err
		}
	}
	// Rule 3, last: the tree is exactly mergeTree(S_{i-1}, H_i), clean.
	prev = u.Old
	for i, s := range bound {
		h := s.bind.Head
		switch fault, detail, merged, err := j.squashTree(s.c, prev, h, true); fault { // squashstep.go
		case treeUnrelated:
			return false, refuse(CodeCandidateConflict, "step %d (%s): %s and %s have no common ancestor", i+1, short(s.c.id), short(prev), short(h))
		case treeUnreadable:
			return false, objErr(plumbing.ZeroHash, err)
		case treeConflict:
			return false, refuse(CodeCandidateConflict, "step %d (%s): merging %s into %s conflicts at %s; rebase the pull request", i+1, short(s.c.id), short(h), short(prev), detail)
		case treeDiffers:
			return false, refuse(CodeCandidateTree, "squash step %d (%s) has tree %s, but the merge of %s into %s is %s; a squash step's tree must be exactly that merge (git+ merge-tree)", i+1, short(s.c.id), short(s.c.tree), short(h), short(prev), short(merged))
		}
		prev = s.c.id
	}
	// Last, the partition steps' rule (tested.go).
	return direct, j.judgeTested(b, partition)
}

// squashChecks is the check rule of a squash step S landing the head h of
// st (docs/boundary.md, "Squash steps", rule 5), the one function the hook
// and the audit call: every required check is success on S
// (pr.State.ChecksOn), or on h when S lands alone (alone: the landing adds
// S and nothing else, as pr merge pushes it, judged as a direct landing of
// h is) or when S has h's very tree (sameTree, asked only then: the
// checked tree is the landed one). A step of a longer chain keeps its own
// checks (batch checks aside, which the caller judges). A required check
// that failed on S itself is never outweighed by the head: the merged tree
// was tested and is known bad. The refusal names the head for a step
// landing alone, what pr merge asks for. byHead reports that the head's
// checks, not the step's own, justify S.
func squashChecks(st *pr.State, b trust.Branch, step, h plumbing.Hash, alone bool, sameTree func() bool) (byHead bool, err error) {
	err = checks(st, b, step.String(), "squash step")
	if err == nil {
		return false, nil
	}
	if len(st.ChecksOn(b, step.String()).Failed) > 0 {
		return false, err
	}
	if !alone && !sameTree() {
		return false, err
	}
	herr := checks(st, b, h.String(), "head")
	if herr == nil {
		return true, nil
	}
	if alone {
		return false, herr
	}
	return false, err
}
