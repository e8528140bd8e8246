package checkworker

// What there is to run (docs/queue.md, "Check workers"): the remote's
// candidate branches, and the heads of pull requests whose base requires
// the check without queue candidates (such a pull request lands directly,
// git+ pr merge, judged at its head).
//
// Decisions:
//   - One git ls-remote per look lists the candidate branches and the tips
//     of refs/hub/trust, refs/hub/pr/* and refs/hub/queue/*. Only when a
//     hub tip changed are the records fetched into a repository of the
//     worker's own (the "look" slot beside the job slots) and folded again:
//     the trust when its tip changed (then every pull request: the rules
//     may have changed), a pull request when its tip changed, the queues
//     when one of theirs did.
//   - Every candidate branch and head is "present" (a run of it is not
//     superseded); it is "needed" when needsRun says so (need.go).
//   - A head run is keyed by the pull request's ref: when the head moves,
//     or the pull request is no longer open, the run is superseded.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/clock"
	"github.com/gitplus/gitplus/receive/gitio"
	"github.com/gitplus/gitplus/receive/repo"
)

// scan is what the last look folded, by tip.
type scan struct {
	trustTip  plumbing.Hash
	t         *trust.State
	prs       map[string]prEntry // by pull request id
	queueTips map[string]plumbing.Hash
	queues    map[string]*queue.State
}

type prEntry struct {
	tip plumbing.Hash
	st  *pr.State
}

// look lists what is present and what of it needs a run, keyed by
// candidate branch or pull request ref.
func (w *worker) look(ctx context.Context) (present map[string]candidate, need map[string]bool, err error) {
	refs, err := gitio.LsRemote(ctx, w.o.GitDir, w.url, w.o.Env, CandidatePrefix+"*", hubrefs.PRRefPrefix+"*", hubrefs.QueueRefPrefix+"*", hubrefs.TrustRef)
	if err != nil {
		return nil, nil, err
	}
	if err := w.refold(refs); err != nil {
		return nil, nil, fmt.Errorf("reading the records: %w", err)
	}
	sc := w.scan
	present, need = map[string]candidate{}, map[string]bool{}
	for ref, h := range refs {
		rest, ok := strings.CutPrefix(ref, CandidatePrefix)
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '/')
		if i <= 0 {
			continue
		}
		c := candidate{branch: ref, pr: rest[i+1:], commit: h.String()}
		present[ref] = c
		if e, ok := sc.prs[c.pr]; ok && sc.t != nil {
			need[ref], _ = needsRun(sc.t, sc.queues, e.st, w.o.Name, c.commit)
		}
	}
	if w.o.NoHeads || sc.t == nil {
		return present, need, nil
	}
	for _, e := range sc.prs {
		if c := w.headRun(e.st, sc.t); c != nil {
			present[c.branch] = *c
			need[c.branch], _ = needsRun(sc.t, nil, e.st, w.o.Name, c.commit)
		}
	}
	return present, need, nil
}

// refold brings the scan up to the remote's hub tips in refs.
func (w *worker) refold(refs map[string]plumbing.Hash) error {
	if w.scan == nil {
		w.scan = &scan{prs: map[string]prEntry{}, queueTips: map[string]plumbing.Hash{}}
	}
	sc := w.scan
	trustTip := refs[hubrefs.TrustRef]
	prTips, queueTips := map[string]plumbing.Hash{}, map[string]plumbing.Hash{}
	for ref, h := range refs {
		if id, ok := strings.CutPrefix(ref, hubrefs.PRRefPrefix); ok {
			prTips[id] = h
		} else if id, ok := strings.CutPrefix(ref, hubrefs.QueueRefPrefix); ok {
			queueTips[id] = h
		}
	}
	queuesMoved := trustTip != sc.trustTip || len(queueTips) != len(sc.queueTips)
	for id, h := range queueTips {
		queuesMoved = queuesMoved || sc.queueTips[id] != h
	}
	prsMoved := trustTip != sc.trustTip || len(prTips) != len(sc.prs)
	for id, h := range prTips {
		prsMoved = prsMoved || sc.prs[id].tip != h
	}
	if trustTip.IsZero() || !queuesMoved && !prsMoved {
		return nil
	}
	look, err := w.slotNamed("look.git")
	if err != nil {
		return err
	}
	r, err := repo.Open(look, w.url)
	if err != nil {
		return err
	}
	defer r.Close()
	if trustTip != sc.trustTip || sc.t == nil {
		t, err := r.Trust()
		if err != nil {
			return err
		}
		sc.t, sc.trustTip, sc.prs = t, trustTip, map[string]prEntry{}
	}
	for id := range sc.prs {
		if _, ok := prTips[id]; !ok {
			delete(sc.prs, id)
		}
	}
	for id, tip := range prTips {
		if e, ok := sc.prs[id]; ok && e.tip == tip {
			continue
		}
		st, evs, err := r.PRState(id, sc.t)
		if err != nil {
			return fmt.Errorf("pull request %s: %w", id, err)
		}
		w.seen.See(evs, clock.Now())
		sc.prs[id] = prEntry{tip: tip, st: st}
	}
	if queuesMoved {
		sc.queues, sc.queueTips = queueStates(r, sc.t), queueTips
	}
	return nil
}

// headRun is the run at st's head the rules ask for, or nil.
func (w *worker) headRun(st *pr.State, t *trust.State) *candidate {
	if st.State != pr.Open || st.Head == "" {
		return nil
	}
	b, ok := t.Rules.For(st.Base)
	if !ok || b.QueueCandidates || !slices.Contains(b.RequiredChecks, w.o.Name) {
		return nil
	}
	return &candidate{branch: hubrefs.PRRefPrefix + st.ID, pr: st.ID, commit: st.Head, head: true}
}
