package policy

// The rules in force for a landing, as the audit derives them
// (docs/trust.md, "The rules in force"): by causality, never by a signer's
// clock.
//
// The trust log is linear, so its states are totally ordered: state k is
// the fold of its first k events (k = 1: repo.created alone). The hook
// judges every push under the trust log's tip at that push, and the trust
// only moves forward, so along the first-parent chain of a branch the
// trust each landing was judged under never goes back.
//
// A pr.merged names the trust tip it was written under (field trust), and
// the hook refuses one naming any other tip than the one at its push
// (hubmerged.go). Its commit was on the branch then (the hook checks that
// too), so that commit and every landing below it on the first-parent
// chain were judged under that trust or an older one: each record bounds
// from above the landings at and below its commit. hi(i), the tightest
// such bound of chain position i, is the least state named by a record at
// i or above (the current trust when none is). The audit judges the
// landing at i under hi(i): never under a state older than the one the
// hook used, whatever a signer wrote as a time; and no later than the
// first record written after it proves. A record's committer time is not
// read.
//
// Records written before the field existed (legacy) are judged, as before,
// under the longest prefix of the trust log not dated after them, but
// clamped: never under a state older than the one the landing below them
// was judged under (the trust of landings along the chain never goes
// back), nor newer than hi. A backdated or future-dated legacy record
// thus moves its own landing at most within those bounds.
//
// Either way, a landing refused under that state is judged again under the
// current trust (a landing the rules justify now stays justified; see
// atMerged), as before.

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// setEpochs sets, for every pr.merged of the branch, the trust state its
// landing is judged under first (m.then), or why it cannot be (m.thenErr):
// a record naming a trust tip that is no event of the trust log, or under
// which its signer held neither hub.queue nor source.push, was not judged
// by a hook and justifies nothing. chain is the first-parent chain, oldest
// first; chain[0] (Since, or the root) is not judged.
func (a *auditor) setEpochs(chain []*commit) {
	n := len(a.trustEvs)
	pos := make(map[plumbing.Hash]int, len(chain))
	for i, c := range chain[1:] {
		pos[c.id] = i + 1
	}
	at := make([][]*mergedRef, len(chain)+1)
	var off []*mergedRef // records naming a commit off the chain
	for _, p := range a.prs {
		for _, m := range p.merged {
			a.named(m)
			if i, ok := pos[plumbing.NewHash(m.rec.Commit)]; ok {
				at[i] = append(at[i], m)
			} else {
				off = append(off, m)
			}
		}
	}
	hi := make([]int, len(chain)+1)
	hi[len(chain)] = n
	for i := len(chain) - 1; i >= 1; i-- {
		hi[i] = hi[i+1]
		for _, m := range at[i] {
			if m.named > 0 && m.thenErr == nil {
				hi[i] = min(hi[i], m.named)
			}
		}
	}
	lo := 1
	for i := 1; i < len(chain); i++ {
		top := lo
		for _, m := range at[i] {
			if m.thenErr != nil {
				continue
			}
			k := hi[i]
			if m.named == 0 {
				k = max(lo, min(a.timeIndex(m.ev.Time), hi[i]))
			}
			m.then, m.thenErr = a.stateAt(k)
			top = max(top, k)
		}
		lo = top
	}
	// A record naming a commit off the chain bounds nothing on it; the
	// landing it names (one a later landing merged in, auditfrom.go) is
	// judged under the trust it names, or by its time when it names none.
	for _, m := range off {
		if m.thenErr != nil {
			continue
		}
		k := m.named
		if k == 0 {
			k = a.timeIndex(m.ev.Time)
		}
		m.then, m.thenErr = a.stateAt(k)
	}
}

// named sets m.named from the trust tip m names, checking it as the hook
// did: an event of the trust log, under which m's signer held hub.queue or
// source.push; else m.thenErr.
func (a *auditor) named(m *mergedRef) {
	if m.rec.Trust == "" {
		return
	}
	i, ok := a.trustIdx[plumbing.NewHash(m.rec.Trust)]
	if !ok {
		m.thenErr = refuse(CodePRInvalid, "pr.merged %s of pull request %s names %s at %s, an event this replica's trust log does not hold: no hook judged it (fetch refs/hub/*, or repair the record from a good replica)", short(m.ev.ID), m.p.ref[len(hubrefs.PRRefPrefix):], hubrefs.TrustRef, m.rec.Trust)
		return
	}
	m.named = i + 1
	st, err := a.stateAt(m.named)
	if err != nil {
		m.thenErr = err
		return
	}
	if m.ev.Signer == nil || !st.Has(m.ev.Signer, trust.CapQueue) && !st.Has(m.ev.Signer, trust.CapSourcePush) {
		m.thenErr = refuse(CodePRInvalid, "pr.merged %s of pull request %s was signed by a key that held neither %s nor %s under the trust it names (%s): no hook accepted it", short(m.ev.ID), m.p.ref[len(hubrefs.PRRefPrefix):], trust.CapQueue, trust.CapSourcePush, short(plumbing.NewHash(m.rec.Trust)))
	}
}

// timeIndex is how records older than the trust field picked their trust:
// the longest prefix of the trust log whose events are not dated after t
// (at least repo.created).
func (a *auditor) timeIndex(t int64) int {
	k := 0
	for k < len(a.trustEvs) && a.trustEvs[k].Time <= t {
		k++
	}
	return max(k, 1)
}

// stateAt is the trust state of the first k events of the trust log (the
// current trust for all of them), folded once.
func (a *auditor) stateAt(k int) (*trust.State, error) {
	if k >= len(a.trustEvs) {
		return a.now, nil
	}
	a.epochMu.Lock()
	defer a.epochMu.Unlock()
	if st, ok := a.epochs[k]; ok {
		return st, nil
	}
	st, err := trust.Fold(a.trustEvs[:k])
	if err != nil {
		return nil, fmt.Errorf("folding %s up to event %s: %w", hubrefs.TrustRef, a.trustEvs[k-1].ID, err)
	}
	a.epochs[k] = st
	return st, nil
}
