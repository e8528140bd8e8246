package webview

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/gitio"
)

// previewOwners sets, for every open pull request whose base has path
// owners, the entries its head triggers and how each stands (the one
// rule, pr.State.OwnersAt), previewed from the head's diff against its
// merge base with the base branch (docs/trust.md, "Path owners"): what pr
// show, the page and queue show say. The hook judges each landing's own
// diff (from the branch's tip, or the step below a candidate), which is
// the same set unless the base has since changed the same files. The base
// branch is read from this repository: on a clone, its own (possibly
// stale) branch; without it there is no preview, and OwnersNote says so.
func (s *Snapshot) previewOwners(gitDir string, store *gitio.Store) {
	var tips map[string]plumbing.Hash
	var tipsErr error
	objs := receive.Objects{Store: store}
	for _, p := range s.PRList {
		if p.State.State != pr.Open {
			continue
		}
		b, ok := s.Trust.Rules.For(p.Base)
		if !ok || len(b.Owners) == 0 {
			continue
		}
		if tips == nil && tipsErr == nil {
			tips, tipsErr = gitio.ReadRefsUnder(gitDir, []string{"refs/heads/"}, nil)
		}
		if tipsErr != nil {
			p.OwnersNote = fmt.Sprintf("no preview: listing the branches: %v", tipsErr)
			continue
		}
		head := plumbing.NewHash(p.Head)
		tip, ok := tips[p.Base]
		if !ok {
			p.OwnersNote = fmt.Sprintf("no preview: %s is not in this repository (fetch it, or ask the server's page)", p.Base)
			continue
		}
		from, err := mergetree.MergeBase(objs, head, tip)
		switch {
		case errors.Is(err, mergetree.ErrUnrelated):
			p.OwnersNote = fmt.Sprintf("no preview: %s shares no history with %s", p.Head[:12], p.Base)
			continue
		case err != nil:
			p.OwnersNote = fmt.Sprintf("no preview: %v", err)
			continue
		}
		changed, err := policy.ChangedFiles(objs, from, head)
		if err != nil {
			p.OwnersNote = fmt.Sprintf("no preview: %v", err)
			continue
		}
		p.Owners = p.State.OwnersAt(b, p.Head, changed)
	}
}

// ownersWaiting says which previewed owners entries of p are not met ("":
// none).
func ownersWaiting(p *PR) string {
	unmet := pr.OwnersUnmet(p.Owners)
	parts := make([]string, len(unmet))
	for i, n := range unmet {
		parts[i] = n.String()
	}
	return strings.Join(parts, "; ")
}
