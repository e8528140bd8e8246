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

// checkMerged admits a pr.merged only for what landed (docs/events.md): its
// branch is the pull request's base before the event, its commit is
// contained in that branch as it stands after the push, and its revision is
// contained in its commit. Without this any source.push or hub.queue holder
// could freeze someone else's pull request as merged at an old head.
func (j *judge) checkMerged(ref string, ev hubrefs.Event, before *pr.State) error {
	var p hubrefs.PRMerged
	if err := ev.Unmarshal(&p); err != nil {
		return refuse(CodeHubMalformed, "%s: event %s: %v", ref, ev.ID, err)
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
	if j.squashBinds(commit, before.ID, revision) { // squash.go: a squash step contains its head's change, not its commits
		return nil
	}
	return contains(commit, revision, fmt.Sprintf("commit %s does not contain revision %s", p.Commit, p.Revision))
}
