package policy

import (
	"errors"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Partition steps in the audit (docs/boundary.md, "Partition steps"): a
// step naming its tested candidate (Git-Plus-Tested) is justified, under
// the rules it landed by, as the hook justified it: its pull request's
// checks at the tested candidate (stateErr, through checkedRev) and
// JudgeTested on the step (tested). Batch checks vouch through the tested
// candidates' marks and only along candidates that stand on each other
// (markedRev, linkedRange), as JudgeBatchLinked does at the hook.

// checkedRev is the revision whose checks count for the step landed of
// kind (a candidate or squash step) under b, read through j: its tested
// candidate when b has partitions and the step names one, else the step.
// A trailer that does not read leaves the step (tested refuses it).
func (a *auditor) checkedRev(j *judge, b trust.Branch, landed plumbing.Hash, kind string) plumbing.Hash {
	if kind == LandingDirect || len(b.Partitions) == 0 {
		return landed
	}
	c, err := j.commits.get(landed)
	if err != nil {
		return landed
	}
	t, found, err := j.testedOf(c)
	if err != nil || !found {
		return landed
	}
	return t
}

// checkedWhat names the revision whose checks a refusal is about.
func checkedWhat(landed, checked plumbing.Hash) string {
	if checked != landed {
		return "tested candidate"
	}
	return "candidate"
}

// tested judges a landed candidate or squash step c naming a tested
// candidate by JudgeTested under the rules b it landed by; a step that
// names none (or a branch without partitions, whose steps carry their
// own checks) has nothing more to judge.
func (a *auditor) tested(c *commit, b trust.Branch) error {
	if len(b.Partitions) == 0 {
		return nil
	}
	t, found, err := a.j.testedOf(c)
	if err != nil || !found {
		return err
	}
	s := TestedStep{Prev: c.parents[0], Step: c.id, Tested: t, Squash: b.Squash()}
	if b.Squash() {
		bind, ok := a.squashBinding(c)
		if !ok {
			return refuse(CodeSquashTrailers, "partition step %s lost its trailers", short(c.id))
		}
		s.Head, s.PR = bind.Head, bind.PR
	} else {
		s.Head = c.parents[1]
	}
	if _, err := JudgeTested(a.j.in.Objects, b, s, a.j.merges); err != nil {
		var r *refusal
		if errors.As(err, &r) {
			return refuse(r.Code, "%s", r.Reason)
		}
		return err
	}
	return nil
}

// markedRev is the revision whose group mark counts for c: the candidate
// its Git-Plus-Tested trailer names, else c.
func (a *auditor) markedRev(c *commit) plumbing.Hash {
	t, found, err := a.j.testedOf(c)
	if err != nil || !found {
		return c.id
	}
	return t
}

// linkedRange reports whether the checked revisions of chain[i..e] stand
// on each other: each one's first parent is the one below's (a plain step
// stands on the step below by its first parent).
func (a *auditor) linkedRange(chain []*commit, i, e int) bool {
	for k := i; k < e; k++ {
		lo, hi := a.markedRev(chain[k]), a.markedRev(chain[k+1])
		if hi == chain[k+1].id {
			if lo != chain[k].id {
				return false
			}
			continue
		}
		c, err := a.j.commits.get(hi)
		if err != nil || len(c.parents) == 0 || c.parents[0] != lo {
			return false
		}
	}
	return true
}
