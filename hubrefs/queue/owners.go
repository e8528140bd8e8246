package queue

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/pr"
)

// ownersWait judges the path owners of a built step (docs/trust.md, "Path
// owners") by the one rule, pr.State.OwnersAt, over the step's diff
// against the step below it — what the hook judges the step by. An entry
// whose owners are not met waits, like one not approved, and the chain is
// built without it: the planner lands exactly what the hook accepts. why
// is "" when the step may stay.
func ownersWait(in PlanInput, c candidateEntry, parent, step plumbing.Hash) (why string, err error) {
	if len(in.Branch.Owners) == 0 || c.p == nil {
		return "", nil
	}
	if in.Changed == nil {
		return "", fmt.Errorf("%w: the branch has path owners but the plan has no Changed function", ErrMerge)
	}
	changed, err := in.Changed(parent, step)
	if err != nil {
		return "", fmt.Errorf("%w: the files pull request %s changes onto %s: %w", ErrMerge, c.pr, parent, err)
	}
	unmet := pr.OwnersUnmet(c.p.OwnersAt(in.Branch, c.head, changed))
	if len(unmet) == 0 {
		return "", nil
	}
	parts := make([]string, len(unmet))
	for i, n := range unmet {
		parts[i] = n.String()
	}
	return "not ready: " + strings.Join(parts, "; "), nil
}
