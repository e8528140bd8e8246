package checkworker

// Checks on pull request heads (docs/queue.md, "Check workers"): when the
// rules of a pull request's base require the worker's check and the base
// takes no queue candidates, the pull request lands directly (git+ pr merge)
// and the check is judged at its head, so the worker runs it there.
//
// Decisions:
//   - The pull requests are read in a repository of the worker's own (the
//     "look" slot beside the job slots), fetched only when the remote's
//     trust tip or a pull request's tip changed (git ls-remote tells), and
//     a pull request is folded again only when its tip changed (every one
//     when the trust tip did: the rules may have changed).
//   - Such a run is keyed by the pull request's ref: when the head moves,
//     or the pull request is no longer open, the run is cancelled as a
//     superseded candidate is.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/repo"
)

type headScan struct {
	trustTip plumbing.Hash
	t        *trust.State
	prs      map[string]headEntry // by pull request id
}

type headEntry struct {
	tip plumbing.Hash
	c   *candidate // nil: no run wanted at its head
}

// heads returns the head runs wanted, keyed by pull request ref, given the
// remote's refs under refs/hub/ (pull requests and trust).
func (w *worker) heads(ctx context.Context, refs map[string]plumbing.Hash) (map[string]candidate, error) {
	if w.scan == nil {
		w.scan = &headScan{prs: map[string]headEntry{}}
	}
	sc := w.scan
	trustTip := refs[hubrefs.TrustRef]
	changed := trustTip != sc.trustTip
	tips := map[string]plumbing.Hash{}
	for ref, h := range refs {
		if id, ok := strings.CutPrefix(ref, hubrefs.PRRefPrefix); ok {
			tips[id] = h
			if e, ok := sc.prs[id]; !ok || e.tip != h {
				changed = true
			}
		}
	}
	if len(tips) != len(sc.prs) {
		changed = true
	}
	if changed && !trustTip.IsZero() {
		look, err := w.slotNamed("look.git")
		if err != nil {
			return nil, err
		}
		r, err := repo.Open(look, w.url)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		if trustTip != sc.trustTip || sc.t == nil {
			t, err := r.Trust()
			if err != nil {
				return nil, err
			}
			sc.t, sc.trustTip, sc.prs = t, trustTip, map[string]headEntry{}
		}
		for id := range sc.prs {
			if _, ok := tips[id]; !ok {
				delete(sc.prs, id)
			}
		}
		for id, tip := range tips {
			if e, ok := sc.prs[id]; ok && e.tip == tip {
				continue
			}
			st, _, err := r.PRState(id, sc.t)
			if err != nil {
				return nil, fmt.Errorf("pull request %s: %w", id, err)
			}
			sc.prs[id] = headEntry{tip: tip, c: w.headWanted(st, sc.t)}
		}
	}
	out := map[string]candidate{}
	for _, e := range sc.prs {
		if e.c != nil {
			out[e.c.branch] = *e.c
		}
	}
	return out, nil
}

// headWanted is the run wanted at st's head, or nil.
func (w *worker) headWanted(st *pr.State, t *trust.State) *candidate {
	if st.State != pr.Open || st.Head == "" {
		return nil
	}
	b, ok := t.Rules.For(st.Base)
	if !ok || b.QueueCandidates || !slices.Contains(b.RequiredChecks, w.o.Name) {
		return nil
	}
	if got, ok := st.Check(w.o.Name, st.Head); ok && got != pr.Cancelled {
		return nil
	}
	return &candidate{branch: hubrefs.PRRefPrefix + st.ID, pr: st.ID, commit: st.Head, head: true}
}
