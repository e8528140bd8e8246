package pr

import (
	"fmt"
	"strings"

	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Path owners (docs/trust.md, "Path owners"), the one rule
// (docs/architecture.md, "One rule in one place"): every entry of a
// branch's "owners" whose paths match a file the landing changes needs its
// approvals of the pull request's current head, for its current base, from
// distinct members among the entry's approvers. Approvals are what the
// fold judged (Approvals: one per member, never the opener's, only of the
// current head and base), matched against the entry's approvers with the
// approvers' teams as the fold's trust state has them. The caller names the
// files the landing changes: each step's tree diff against its first parent
// for a candidate step, the diff from the branch's previous tip for a
// direct landing (policy computes both from the object store; the page,
// pr show and queue show preview with the diff against the merge base).

// OwnerNeed is how one triggered owners entry stands.
type OwnerNeed struct {
	Entry     int         // its index in the branch's owners
	Owner     trust.Owner // the entry
	Approvals int         // counted approvals by its approvers
	Matched   string      // the first changed file it matched
}

// Met reports whether the entry has its approvals.
func (n OwnerNeed) Met() bool { return n.Approvals >= n.Owner.Approvals }

// String says what the entry still needs, or that it is met.
func (n OwnerNeed) String() string {
	if n.Met() {
		return fmt.Sprintf("owners[%d] (%s): %d of %d approvals from %s, met", n.Entry, n.Owner.Name(), n.Approvals, n.Owner.Approvals, strings.Join(n.Owner.Approvers, ", "))
	}
	return fmt.Sprintf("owners[%d] (%s, matching %s) has %d of %d approvals from %s", n.Entry, n.Owner.Name(), n.Matched, n.Approvals, n.Owner.Approvals, strings.Join(n.Owner.Approvers, ", "))
}

// OwnersAt judges b's owners for landing head rev of the pull request when
// the landing changes the files changed: every entry it triggers, in the
// rules' order, with its counted approvals (zero unless rev is the current
// head: moving the head stales every approval).
func (s *State) OwnersAt(b trust.Branch, rev string, changed []string) []OwnerNeed {
	if len(b.Owners) == 0 {
		return nil
	}
	split := make([][]string, len(changed)) // each path split once, not once per glob
	for i, p := range changed {
		split[i] = strings.Split(p, "/")
	}
	var out []OwnerNeed
	for i, o := range b.Owners {
		matched := ""
		for k, p := range changed {
			if o.MatchesSplit(split[k]) {
				matched = p
				break
			}
		}
		if matched == "" {
			continue
		}
		n := OwnerNeed{Entry: i, Owner: o, Matched: matched}
		if rev == s.Head {
			for _, name := range s.Approvals {
				if trust.Counts(o.Approvers, name, s.ApproverTeams[name]) {
					n.Approvals++
				}
			}
		}
		out = append(out, n)
	}
	return out
}

// OwnersUnmet returns the entries of needs that are not met.
func OwnersUnmet(needs []OwnerNeed) []OwnerNeed {
	var out []OwnerNeed
	for _, n := range needs {
		if !n.Met() {
			out = append(out, n)
		}
	}
	return out
}
