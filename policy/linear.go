package policy

import (
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// CodeNonlinear: requireLinearHistory, and a commit the landing adds has
// more than one parent (docs/boundary.md, "Linear history").
const CodeNonlinear = "nonlinear"

// landingFlags and landingOf carry trust.Landing in the flags byte of the
// trust state's cache entry (truststate.go).
func landingFlags(l trust.Landing) byte {
	var f byte
	if l.RequireLinearHistory {
		f |= flagLinearHistory
	}
	if l.Squash() {
		f |= flagSquash
	}
	return f
}

// landingFlags2 is the second flags byte: bit 0 deleteSourceBranch.
func landingFlags2(l trust.Landing) byte {
	if l.DeleteSourceBranch {
		return flag2DeleteSourceBranch
	}
	return 0
}

func landingOf(f, f2 byte) trust.Landing {
	var l trust.Landing
	l.DeleteSourceBranch = f2&flag2DeleteSourceBranch != 0
	l.RequireLinearHistory = f&flagLinearHistory != 0
	if f&flagSquash != 0 {
		l.MergeMethod = trust.MergeMethodSquash
	}
	return l
}

// linearTip is the cheap half of requireLinearHistory, judged before any
// walk: the new tip itself has at most one parent.
func linearTip(u Update, b trust.Branch, tip *commit) error {
	if b.RequireLinearHistory && len(tip.parents) > 1 {
		return refuse(CodeNonlinear, "%s requires linear history (requireLinearHistory), but %s has %d parents; land a squash (mergeMethod squash) or rebase the pull request onto %s", u.Ref, short(tip.id), len(tip.parents), u.Ref)
	}
	return nil
}

// linear is the rule requireLinearHistory: every commit u adds to the
// branch has at most one parent. It walks what the landing introduces, so
// it runs only once the landing is otherwise justified (docs/boundary.md,
// "Bounded work").
func (j *judge) linear(u Update, b trust.Branch) error {
	if !b.RequireLinearHistory {
		return nil
	}
	cs, err := j.commits.introduced(u.New, u.Old)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if len(c.parents) > 1 {
			return refuse(CodeNonlinear, "%s requires linear history (requireLinearHistory), but the landing adds %s, which has %d parents; rebase the pull request onto %s (no merge commits) and push again", u.Ref, short(c.id), len(c.parents), u.Ref)
		}
	}
	return nil
}
