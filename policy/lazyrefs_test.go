package policy

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

// lazyJudge judges us with the pull request refs read on demand from w's
// refs, through cache, and checks the verdicts against a judgement that
// reads every ref and has no cache.
func lazyJudge(t *testing.T, w *world, cache Cache, us ...Update) ([]Verdict, *refSource) {
	t.Helper()
	src := &refSource{m: w.refs}
	got := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refsWithoutPRs(us), Updates: us, Cache: cache, PRRefs: src})
	want := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: us})
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("update %d: on demand %+v, reading every ref %+v", i, got[i], want[i])
		}
	}
	return got, src
}

// indexed is a world with one ready pull request whose landing has been
// judged once, with pull request refs on demand: the cache holds its
// indexes.
func indexed(t *testing.T) (*world, *prq, *mapCache) {
	t.Helper()
	w := newWorld(t, rulesNoQueue)
	p := w.ready(w.commit(w.c0, "a", "a\n"))
	cache := &mapCache{m: map[plumbing.Hash][]byte{}}
	lazyJudge(t, w, cache, up(main, w.c0, p.head))
	return w, p, cache
}

// TestPRRefsOnDemand: with a current pull request index a landing reads
// only the refs of the pull requests it names; an index that a moved or a
// new pull request made stale still gives the verdicts of reading every ref.
func TestPRRefsOnDemand(t *testing.T) {
	t.Run("direct landing reads one ref", func(t *testing.T) {
		w := newWorld(t, rulesNoQueue)
		var ps []*prq
		for i := 0; i < 5; i++ {
			ps = append(ps, w.ready(w.commit(w.c0, "f", strings.Repeat("x", i+1))))
		}
		cache := &mapCache{m: map[plumbing.Hash][]byte{}}
		lazyJudge(t, w, cache, up(main, w.c0, ps[0].head)) // no index yet: every ref
		ps[1].close()                                      // a closed pull request is not in the open index
		lazyJudge(t, w, cache, up(main, w.c0, ps[1].head))
		trustTip := w.refs[hubrefs.TrustRef]
		open, _, ok := readOpen(cache, trustTip)
		if _, closed := open[ps[1].ref]; !ok || len(open) != 4 || closed {
			t.Fatalf("open index %v (ok %v): want the 4 open pull requests", open, ok)
		}
		counted := &countingCache{mapCache: mapCache{m: cache.m}}
		counted.got = map[plumbing.Hash]int{}
		v, src := lazyJudge(t, w, counted, up(main, w.c0, ps[3].head))
		if !v[0].Accepted() || src.refs != 1 || src.alls != 0 {
			t.Fatalf("verdict %+v; read %d refs and %d listings, want 1 and 0", v[0], src.refs, src.alls)
		}
		if len(counted.got) != 4 || counted.got[openIndexKey(trustTip)] != 1 || counted.got[indexPatchKey(trustTip, 0)] != 1 || counted.got[trustStateKey(trustTip)] != 1 || counted.got[MergeFactKey(ps[3].head)] != 1 {
			t.Fatalf("cache reads %v: want the trust state, the open index and a look for its first patch, and a look for the landed commit's merge fact only", counted.got)
		}
	})
	t.Run("candidate chain reads one ref a step", func(t *testing.T) {
		w := newWorld(t, rulesQueue)
		c := w.c0
		for i := 0; i < 3; i++ {
			h := w.commit(w.c0, "f"+string(rune('a'+i)), "x\n")
			p := w.open(h).approve("bob")
			c = w.merge(c, h)
			p.check("ci", c, "success")
		}
		up3 := up(main, w.c0, c)
		w.ready(w.commit(w.c0, "other", "o\n")) // not in the chain
		cache := &mapCache{m: map[plumbing.Hash][]byte{}}
		lazyJudge(t, w, cache, up3)
		v, src := lazyJudge(t, w, cache, up3)
		// One listing: the queue refs, to know whether the branch's queue
		// is paused (policy/pause.go); no pull request listing.
		if !v[0].Accepted() || src.refs != 3 || src.alls != 1 {
			t.Fatalf("verdict %+v; read %d refs and %d listings, want 3 and 1", v[0], src.refs, src.alls)
		}
	})
	t.Run("pull request closed since the index", func(t *testing.T) {
		w, p, cache := indexed(t)
		p.close()
		v, src := lazyJudge(t, w, cache, up(main, w.c0, p.head))
		if v[0].Code != CodePRClosed || src.alls != 1 {
			t.Fatalf("verdict %+v after %d listings; want %s after reading every ref", v[0], src.alls, CodePRClosed)
		}
	})
	t.Run("pull request opened since the index", func(t *testing.T) {
		w, _, cache := indexed(t)
		q := w.ready(w.commit(w.c0, "b", "b\n"))
		v, src := lazyJudge(t, w, cache, up(main, w.c0, q.head))
		if !v[0].Accepted() || src.alls != 1 {
			t.Fatalf("verdict %+v after %d listings; want accepted after reading every ref", v[0], src.alls)
		}
	})
	t.Run("an accepted pull request push keeps the index current", func(t *testing.T) {
		w := newWorld(t, rulesNoQueue)
		h := w.commit(w.c0, "a", "a\n")
		p := w.open(h).approve("bob")
		w.ready(w.commit(w.c0, "b", "b\n"))
		cache := &mapCache{m: map[plumbing.Hash][]byte{}}
		lazyJudge(t, w, cache, up(main, w.c0, h)) // builds the index: checks missing
		// ci records its check: a hub push, judged with the same cache.
		old := w.refs[p.ref]
		ev := w.eventOn([]plumbing.Hash{old}, "ci", hubrefs.Check{Base: w.base(hubrefs.TypeCheckCompleted), Name: "ci", Head: h.String(), Conclusion: "success"})
		bad := w.eventOn([]plumbing.Hash{old}, "mallory", hubrefs.Check{Base: w.base(hubrefs.TypeCheckCompleted), Name: "ci", Head: h.String(), Conclusion: "success"})
		// In a push that git refuses as a whole, nothing is re-indexed.
		v, _ := lazyJudge(t, w, cache, up(p.ref, old, ev), up("refs/hub/pr/"+strings.Repeat("0", 8), plumbing.ZeroHash, bad))
		if !v[0].Accepted() || v[1].Accepted() {
			t.Fatalf("%+v", v)
		}
		trustTip := w.refs[hubrefs.TrustRef]
		if idx, _, _ := readOpen(cache, trustTip); idx[p.ref].Tip != old {
			t.Fatalf("a refused push re-indexed %s", p.ref)
		}
		if v, _ := lazyJudge(t, w, cache, up(p.ref, old, ev)); !v[0].Accepted() {
			t.Fatalf("%+v", v)
		}
		w.refs[p.ref] = ev
		v, src := lazyJudge(t, w, cache, up(main, w.c0, h))
		if !v[0].Accepted() || src.refs != 1 || src.alls != 0 {
			t.Fatalf("verdict %+v; read %d refs and %d listings, want 1 and 0", v[0], src.refs, src.alls)
		}
		// Closing it, pushed: it leaves the open index.
		closed := w.eventOn([]plumbing.Hash{ev}, "alice", hubrefs.Base{Type: hubrefs.TypePRClosed, Repo: repoID})
		if v, _ := lazyJudge(t, w, cache, up(p.ref, ev, closed)); !v[0].Accepted() {
			t.Fatalf("%+v", v)
		}
		if idx, _, _ := readOpen(cache, trustTip); len(idx) != 1 {
			t.Fatalf("open index after closing %s: %v", p.ref, idx)
		}
	})
	t.Run("an open index entry no ref holds is repaired by the fallback", func(t *testing.T) {
		w, p, cache := indexed(t)
		// As if a push accepted here had then failed in git: the open index
		// names a tip the ref never moved to.
		trustTip := w.refs[hubrefs.TrustRef]
		open, next, _ := readOpen(cache, trustTip)
		s := open[p.ref]
		s.Tip = plumbing.NewHash("9999999999999999999999999999999999999999")
		cache.m[openIndexKey(trustTip)] = encodeOpenIndex(trustTip, next, []prSummary{s})
		if v, src := lazyJudge(t, w, cache, up(main, w.c0, p.head)); !v[0].Accepted() || src.alls != 1 {
			t.Fatalf("verdict %+v after %d listings; want accepted after reading every ref", v[0], src.alls)
		}
		if v, src := lazyJudge(t, w, cache, up(main, w.c0, p.head)); !v[0].Accepted() || src.refs != 1 || src.alls != 0 {
			t.Fatalf("after the repair: verdict %+v, %d refs and %d listings read, want 1 and 0", v[0], src.refs, src.alls)
		}
	})
	t.Run("refusals that do not depend on pull requests are not judged twice", func(t *testing.T) {
		w, _, cache := indexed(t)
		v, src := lazyJudge(t, w, cache, up(main, w.c0, plumbing.ZeroHash))
		if v[0].Code != CodeProtectedDelete || src.alls != 0 {
			t.Fatalf("verdict %+v after %d listings", v[0], src.alls)
		}
	})
}

// readOpen reads the open index of trust tip t from c, patches applied.
func readOpen(c Cache, t plumbing.Hash) (map[string]prSummary, uint64, bool) {
	return (&judge{in: Input{Cache: c}}).readOpenIndex(t)
}
