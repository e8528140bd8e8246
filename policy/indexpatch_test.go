package policy

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// TestOpenIndexPatches: pull request pushes update the open index by
// patches (indexpatch.go), folded into a new base every maxIndexPatches
// (3 here). After every accepted push the index read back (base and
// patches) holds exactly the open pull requests at their current tips, and
// folded patches are dropped. Losing a patch (two hooks writing the same
// number) leaves the index behind, never wrong: every landing is judged as
// reading every ref judges it (lazyJudge checks each verdict).
func TestOpenIndexPatches(t *testing.T) {
	defer func(n int) { maxIndexPatches = n }(maxIndexPatches)
	maxIndexPatches = 3
	rng := rand.New(rand.NewSource(7))
	w := newWorld(t, rulesNoQueue)
	var ps []*prq
	for i := 0; i < 5; i++ {
		ps = append(ps, w.ready(w.commit(w.c0, "f", fmt.Sprint(i))))
	}
	cache := &dropCache{m: map[plumbing.Hash][]byte{}}
	lazyJudge(t, w, cache, up(main, w.c0, ps[0].head)) // no index yet: builds it
	trustTip := w.refs[hubrefs.TrustRef]
	closed := map[string]bool{}
	lost := 0
	for i := 0; i < 40; i++ {
		p := ps[rng.Intn(len(ps))]
		old := w.refs[p.ref]
		var ev plumbing.Hash
		switch k := rng.Intn(6); {
		case closed[p.ref]:
			continue
		case k == 0:
			ev = w.eventOn([]plumbing.Hash{old}, "alice", hubrefs.Base{Type: hubrefs.TypePRClosed, Repo: repoID})
		case k < 3:
			ev = w.eventOn([]plumbing.Hash{old}, "carol", hubrefs.Review{Base: w.base(hubrefs.TypeReviewSubmit), Head: p.head.String(), BaseRef: main, Verdict: "approve"})
		default:
			ev = w.eventOn([]plumbing.Hash{old}, "ci", hubrefs.Check{Base: w.base(hubrefs.TypeCheckCompleted), Name: "lint", Head: p.head.String(), Conclusion: "success"})
		}
		h, _ := (&judge{in: Input{Cache: cache}}).readIndexHead(trustTip)
		if v, _ := lazyJudge(t, w, cache, up(p.ref, old, ev)); !v[0].Accepted() {
			t.Fatalf("step %d: %+v", i, v[0])
		}
		w.refs[p.ref] = ev
		st, err := pr.Fold(mustLog(t, w, ev), mustTrust(t, w))
		if err != nil {
			t.Fatal(err)
		}
		if st.State != pr.Open {
			closed[p.ref] = true
		}
		if i%9 == 8 {
			// A lost patch: another hook wrote the same number.
			cache.Drop(indexPatchKey(trustTip, h.next))
			lost++
			for _, q := range ps {
				if !closed[q.ref] {
					lazyJudge(t, w, cache, up(main, w.c0, q.head))
				}
			}
			continue
		}
		idx, _, ok := readOpen(cache, trustTip)
		if !ok {
			t.Fatalf("step %d: no open index", i)
		}
		for _, q := range ps {
			s, in := idx[q.ref]
			if closed[q.ref] {
				if in {
					t.Fatalf("step %d: closed %s still in the open index", i, q.ref)
				}
				continue
			}
			if q == p && (!in || s.Tip != w.refs[q.ref]) {
				t.Fatalf("step %d: %s indexed at %s, its ref is at %s", i, q.ref, s.Tip, w.refs[q.ref])
			}
		}
		h2, _ := (&judge{in: Input{Cache: cache}}).readIndexHead(trustTip)
		for n := uint64(0); n < h2.base; n++ {
			if _, ok := cache.Get(indexPatchKey(trustTip, n)); ok {
				t.Fatalf("step %d: patch %d kept after the base moved to %d", i, n, h2.base)
			}
		}
	}
	for _, q := range ps {
		if closed[q.ref] {
			continue
		}
		v, src := lazyJudge(t, w, cache, up(main, w.c0, q.head))
		if !v[0].Accepted() {
			t.Fatalf("landing %s: %+v (%d listings)", q.ref, v[0], src.alls)
		}
	}
	if lost == 0 || len(closed) == 0 {
		t.Fatalf("the sequence lost %d patches and closed %d pull requests: not exercised", lost, len(closed))
	}
}

func mustTrust(t *testing.T, w *world) *trust.State {
	t.Helper()
	st, err := trust.Fold(mustLog(t, w, w.refs[hubrefs.TrustRef]))
	if err != nil {
		t.Fatal(err)
	}
	return st
}
