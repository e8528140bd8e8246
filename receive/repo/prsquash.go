package repo

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/gitio"
	"github.com/gitplus/gitplus/receive/gitobj"
)

// mergeSquash is Merge on a branch whose rules say "mergeMethod":
// "squash" (docs/queue.md, "Step shapes"): the landing is the squash step
// of the head onto the base's tip old (queue.BuildSquash, the queue's own
// pure function), pushed with old as the expected old value, and
// pr.merged records revision = head, commit = the step (the hub side and
// verify --branch accept it because the step's trailers bind the head).
// The hook judges a step landing alone as a direct landing of the head:
// the required checks on the head (or on the step), the head need not be
// rebased on the tip, the tree recomputed (docs/boundary.md, "A squash
// step landing alone"). A tip that already is this pull request's squash
// step of head (a crash before pr.merged) is not pushed again.
func (s *Signing) mergeSquash(st *pr.State, res *Merged, old plumbing.Hash) (*Merged, error) {
	r, id, base, head := s.Repo, st.ID, res.Branch, res.Head
	if _, err := Git(r.GitDir, "cat-file", "-e", old.String()+"^{commit}"); err != nil {
		// A clone may not hold the base's tip: fetch it (the objects only).
		_, _ = Git(r.GitDir, "fetch", "-q", r.Remote, base)
	}
	for _, rev := range []plumbing.Hash{old, head} {
		if _, err := Git(r.GitDir, "cat-file", "-e", rev.String()+"^{commit}"); err != nil {
			return nil, fmt.Errorf("pull request %s: %s is not in %s: fetch %s and the pull request's head (e.g. `git fetch %s`) and try again", id, rev, r.GitDir, base, r.Remote)
		}
	}
	store, err := gitio.OpenStore(r.GitDir, gitio.QuarantineEnv{})
	if err != nil {
		return nil, fmt.Errorf("opening the objects of %s: %w", r.GitDir, err)
	}
	defer store.Close()
	objs := receive.Objects{Store: store}
	step := old
	if !squashes(objs, old, id, head) {
		built, conflicts, err := queue.BuildSquash(objs, objs, old, head, id, base, st.Title)
		if err != nil {
			return nil, fmt.Errorf("pull request %s: squashing %s onto %s: %w", id, head, old, err)
		}
		if len(conflicts) > 0 {
			var paths []string
			for _, c := range conflicts {
				paths = append(paths, c.Path)
			}
			return nil, fmt.Errorf("pull request %s: %s conflicts with %s at %v: rebase the pull request onto %s and push its head again", id, head, base, paths, base)
		}
		step = built
		if err := s.pushLanding(id, base, old, step, fmt.Sprintf("the squash step %s of %s", step, head)); err != nil {
			return nil, err
		}
		res.Pushed = true
	}
	res.Squash = step
	if !mergedRecorded(st, st.Head, base) {
		payload := hubrefs.PRMerged{Base: s.base(hubrefs.TypePRMerged), Revision: st.Head, Branch: base, Commit: step.String()}
		if _, err := s.appendMerged(id, payload); err != nil { // merged.go
			return nil, fmt.Errorf("pull request %s landed on %s as %s but recording pr.merged failed (run `git+ pr merge %s` again to record it): %w", id, base, step, id, err)
		}
	}
	if !res.Pushed {
		res.Result = "base already held its squash step; recorded pr.merged"
	}
	return res, nil
}

// squashes reports whether commit c is the squash step of pull request
// prID at head (its trailers bind them).
func squashes(objs receive.Objects, c plumbing.Hash, prID string, head plumbing.Hash) bool {
	typ, raw, err := objs.ReadObject(c)
	if err != nil || typ != plumbing.CommitObject {
		return false
	}
	pc, err := gitobj.ParseCommit(raw)
	if err != nil || len(pc.Parents) != 1 {
		return false
	}
	b, found, err := queue.SquashTrailers(pc.Message)
	return found && err == nil && b.PR == prID && b.Head == head
}
