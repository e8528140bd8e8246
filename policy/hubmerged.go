package policy

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
)

// Refusal codes of hub logs added by issue #14 (README's table).
const (
	// CodeHubNotLinear: a hub ref's new events fork or join; every hub log
	// is one chain, each event's only parent the tip (docs/trust.md).
	CodeHubNotLinear = "hub-not-linear"
	// CodeMergedWrongBranch: pr.merged names a branch that is not the pull
	// request's base (docs/events.md).
	CodeMergedWrongBranch = "merged-wrong-branch"
	// CodeMergedNotLanded: pr.merged names a commit the branch does not
	// contain after the push, or a revision that commit does not contain
	// (docs/events.md).
	CodeMergedNotLanded = "merged-not-landed"
	// CodeMergedTrust: pr.merged does not name the trust tip it was written
	// under (docs/events.md, "pr.merged"; docs/trust.md, "The rules in
	// force"): a writer older than the field.
	CodeMergedTrust = "merged-trust"
)

// branchAfterPush is what ref will hold if the push is accepted: the new
// value if the push updates it (git applies every update or none once
// pre-receive has run, so a refusal elsewhere in the push voids it too),
// else its value before the push. Zero when it does not exist.
func (j *judge) branchAfterPush(ref string) (plumbing.Hash, error) {
	for _, u := range j.in.Updates {
		if u.Ref == ref {
			return u.New, nil
		}
	}
	if h, ok := j.in.Refs[ref]; ok {
		return h, nil
	}
	if j.in.PRRefs != nil {
		return j.in.PRRefs.Ref(ref)
	}
	return plumbing.ZeroHash, nil
}

// checkMerged admits a pr.merged only for what landed (docs/events.md),
// written under the trust log's tip at the push (field trust): its branch is the pull request's base before the event, its commit is
// contained in that branch as it stands after the push, and its revision is
// contained in its commit, or its commit is a squash step of the branch
// binding this pull request at the revision (squashstep.go). Without this any source.push or hub.queue holder
// could freeze someone else's pull request as merged at an old head.
func (j *judge) checkMerged(ref string, ev hubrefs.Event, before *pr.State) error {
	var p hubrefs.PRMerged
	if err := ev.Unmarshal(&p); err != nil {
		return refuse(CodeHubMalformed, "%s: event %s: %v", ref, ev.ID, err)
	}
	// The trust tip it was written under is the one the hook judges it
	// against: a causal bound on the rules of the landing it records, which
	// no clock can move (docs/trust.md, "The rules in force"). Another tip
	// is a writer that read the trust log before it moved: it re-reads and
	// appends again, as for any moved ref.
	if p.Trust == "" {
		return refuse(CodeMergedTrust, "%s: event %s (pr.merged) does not name the %s tip it was written under (field trust); a pr.merged names it since git+ records landings by causality: upgrade git+ and record it again", ref, ev.ID, hubrefs.TrustRef)
	}
	if tip := j.in.Refs[hubrefs.TrustRef]; p.Trust != tip.String() {
		return refuse(CodeRefMoved, "%s: event %s (pr.merged) was written under %s at %s, but it is at %s; fetch refs/hub/* and record it again", ref, ev.ID, hubrefs.TrustRef, short(plumbing.NewHash(p.Trust)), short(tip))
	}
	if before == nil || p.Branch != before.Base {
		base := ""
		if before != nil {
			base = before.Base
		}
		return refuse(CodeMergedWrongBranch, "%s: event %s (pr.merged) names %s, but the pull request's base is %s; record the merge on its base", ref, ev.ID, p.Branch, base)
	}
	tip, err := j.branchAfterPush(p.Branch)
	if err != nil {
		return &refusal{Code: CodeMissingObject, Reason: fmt.Sprintf("%s: reading %s: %v", ref, p.Branch, err), err: err}
	}
	if tip.IsZero() {
		return refuse(CodeMergedNotLanded, "%s: event %s (pr.merged) names %s, which does not exist; land the pull request first", ref, ev.ID, p.Branch)
	}
	contains := func(outer, inner plumbing.Hash, what string) error {
		ok, err := j.commits.isAncestor(inner, outer)
		if err != nil && !isMissing(err) {
			return &refusal{Code: CodeMissingObject, Reason: fmt.Sprintf("%s: event %s (pr.merged): %v", ref, ev.ID, err), err: err}
		}
		if err != nil || !ok {
			return refuse(CodeMergedNotLanded, "%s: event %s (pr.merged): %s; record pr.merged only for what landed (push the branch and the event together, or land first)", ref, ev.ID, what)
		}
		return nil
	}
	commit, revision := plumbing.NewHash(p.Commit), plumbing.NewHash(p.Revision)
	if err := contains(tip, commit, fmt.Sprintf("%s at %s does not contain commit %s", p.Branch, short(tip), p.Commit)); err != nil {
		return err
	}
	// A squash step contains its head's change, not its commits: the
	// exception holds for a commit that IS a squash step of the branch
	// under the rules in force, binding this pull request at revision
	// (squashstep.go), never for trailers alone.
	b, _ := j.rules.For(p.Branch)
	squash, err := j.isSquashStep(commit, b, before.ID, revision, true)
	if err != nil {
		return &refusal{Code: CodeMissingObject, Reason: fmt.Sprintf("%s: event %s (pr.merged): %v", ref, ev.ID, err), err: err}
	}
	if squash {
		return nil
	}
	what := fmt.Sprintf("commit %s does not contain revision %s", p.Commit, p.Revision)
	if c, err := j.commits.get(commit); err == nil && j.squashTip(c) {
		what += fmt.Sprintf(", and it is no squash step of %s binding pull request %s at that revision: %s", p.Branch, before.ID, j.squashNotStep(commit, b, before.ID, revision))
	}
	return contains(commit, revision, what)
}
