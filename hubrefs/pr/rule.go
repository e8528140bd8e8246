package pr

import (
	"fmt"
	"strings"

	"github.com/gitplus/gitplus/hubrefs/trust"
)

// The one rule of "does this pull request satisfy the branch's rules"
// (docs/architecture.md, "One rule in one place"). It has two halves, read
// by the hook (policy), the queue planner (hubrefs/queue), verify's audit
// (policy) and the web page (hooks/webview) alike:
//
//   - ReviewAt: the review half at a head — open, not a draft, the head is
//     the pull request's current head, enough approvals of that head for
//     the current base by the branch's approvers (any hub.review holder
//     without "approvers"; teams as the trust state given to the fold has
//     them), no unresolved thread when the branch requires them resolved,
//     no undismissed changes request when the branch blocks on them.
//   - ChecksOn: the check half at a tested revision — every required check
//     success at that revision (the head for a direct landing, the
//     candidate step for a chain).
//
// Both read only what a fold leaves judged against its trust state
// (Approvals, ApproverTeams, Vetoes, Draft, Checks, UnresolvedThreads), so a summary of a pull request
// (policy's index) is judged exactly as the full fold is.

// ReviewVerdict is the review half of the branch rules for one pull
// request at one head.
type ReviewVerdict struct {
	PR    string // the pull request's id
	State string // its state: Open, Closed or Merged
	Rev   string // the head judged
	Head  string // the pull request's current head
	Base  string // its current base
	// Approvals counts the approvals of Rev for Base (zero unless Rev is
	// the current head: moving the head stales every approval); Required
	// is the branch's requiredApprovals.
	Approvals, Required int
	// Unresolved counts the unresolved threads when the branch requires
	// resolved threads; zero otherwise.
	Unresolved int
	// Draft: the pull request is a draft, which never lands
	// (docs/events.md, "Drafts").
	Draft bool
	// Vetoes are the reviewers whose changes request blocks, when the
	// branch sets blockOnChangesRequested; nil otherwise.
	Vetoes []string
}

// IsHead reports whether the judged head is the pull request's current one.
func (v ReviewVerdict) IsHead() bool { return v.Rev == v.Head }

// Approved reports whether the judged head has its required approvals.
func (v ReviewVerdict) Approved() bool { return v.IsHead() && v.Approvals >= v.Required }

// OK reports whether the review half holds: open, the current head,
// approved, and no unresolved thread the branch forbids.
func (v ReviewVerdict) OK() bool {
	return v.State == Open && !v.Draft && v.Approved() && v.Unresolved == 0 && len(v.Vetoes) == 0
}

// Reasons says, one sentence each, what keeps the review half from holding
// (nil when it holds).
func (v ReviewVerdict) Reasons() []string {
	var reasons []string
	if v.State != Open {
		reasons = append(reasons, fmt.Sprintf("pull request %s is %s", v.PR, v.State))
	}
	if v.Draft {
		reasons = append(reasons, fmt.Sprintf("pull request %s is a draft (git+ pr ready %s)", v.PR, v.PR))
	}
	if !v.IsHead() {
		reasons = append(reasons, fmt.Sprintf("%s is not the head of pull request %s (its head is %s)", v.Rev, v.PR, v.Head))
	}
	if v.Approvals < v.Required {
		reasons = append(reasons, fmt.Sprintf("pull request %s has %d of %d required approvals of %s for %s", v.PR, v.Approvals, v.Required, v.Rev, v.Base))
	}
	if len(v.Vetoes) > 0 {
		reasons = append(reasons, fmt.Sprintf("pull request %s has changes requested by %s", v.PR, strings.Join(v.Vetoes, ", ")))
	}
	if v.Unresolved > 0 {
		reasons = append(reasons, fmt.Sprintf("pull request %s has %d unresolved threads", v.PR, v.Unresolved))
	}
	return reasons
}

// ReviewAt judges the review half of b's rules for the pull request at
// head rev, as the fold judged its approvals (against the trust state given
// to Fold or Rejudge).
func (s *State) ReviewAt(b trust.Branch, rev string) ReviewVerdict {
	v := ReviewVerdict{PR: s.ID, State: s.State, Rev: rev, Head: s.Head, Base: s.Base, Required: b.RequiredApprovals, Draft: s.Draft}
	if rev == s.Head {
		for _, name := range s.Approvals {
			if trust.Counts(b.Approvers, name, s.ApproverTeams[name]) {
				v.Approvals++
			}
		}
	}
	if b.RequireResolvedThreads {
		v.Unresolved = s.UnresolvedThreads
	}
	if b.BlockOnChangesRequested && len(s.Vetoes) > 0 {
		v.Vetoes = s.Vetoes
	}
	return v
}

// Satisfies reports whether the review half of b's rules holds at rev
// (ReviewAt), and if not, why. It does not look at checks (ChecksOn) nor at
// whether the base is the branch being landed on (the caller's).
func (s *State) Satisfies(b trust.Branch, rev string) (ok bool, reasons []string) {
	v := s.ReviewAt(b, rev)
	return v.OK(), v.Reasons()
}

// BypassAt reports the bypass that lets head rev land directly on the
// pull request's base whatever the review and check halves say
// (docs/trust.md, "An audited bypass"): the branch allows bypasses, the
// pull request is open and not a draft, rev is its current head, and a
// pr.bypassed by a current holder of hub.bypass names rev and the current
// base. The latest such bypass is returned. It never applies to a queue
// candidate: the caller asks only for a direct landing.
func (s *State) BypassAt(b trust.Branch, rev string) (Bypass, bool) {
	if b.ForbidBypass || s.State != Open || s.Draft || rev != s.Head {
		return Bypass{}, false
	}
	for i := len(s.Bypassed) - 1; i >= 0; i-- {
		if bp := s.Bypassed[i]; bp.Head == rev && bp.Base == s.Base {
			return bp, true
		}
	}
	return Bypass{}, false
}

// ChecksVerdict is the check half of the branch rules at one revision:
// each required check, in the rules' order, is passed (success), failed
// (failure) or missing (absent, or concluded otherwise: cancelled counts
// as not yet run).
type ChecksVerdict struct {
	Rev     string
	Passed  []string
	Failed  []string
	Missing []string
}

// Green reports whether every required check is success.
func (v ChecksVerdict) Green() bool { return len(v.Failed) == 0 && len(v.Missing) == 0 }

// ChecksOn judges b's required checks at revision rev: the latest
// conclusion of each from a current holder of hub.check:<name> — on a
// branch with requireSandbox, the latest among completions whose command
// ran confined (Confined; a completion without it counts as no run).
func (s *State) ChecksOn(b trust.Branch, rev string) ChecksVerdict {
	v := ChecksVerdict{Rev: rev}
	for _, name := range b.RequiredChecks {
		c, _ := s.Check(name, rev)
		if b.RequireSandbox {
			c = s.Confined[CheckKey{name, rev}]
		}
		switch c {
		case Success:
			v.Passed = append(v.Passed, name)
		case Failure:
			v.Failed = append(v.Failed, name)
		default:
			v.Missing = append(v.Missing, name)
		}
	}
	return v
}
