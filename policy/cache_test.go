package policy

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
)

type mapCache struct {
	mu   sync.Mutex
	m    map[plumbing.Hash][]byte
	gets int
}

func (c *mapCache) Get(k plumbing.Hash) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets++
	v, ok := c.m[k]
	return v, ok
}

func (c *mapCache) Put(k plumbing.Hash, v []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = v
}

// counting counts reads of each object.
type counting struct {
	Objects
	mu sync.Mutex
	n  map[plumbing.Hash]int
}

func (c *counting) count(h plumbing.Hash) {
	c.mu.Lock()
	c.n[h]++
	c.mu.Unlock()
}

func (c *counting) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	c.count(h)
	return c.Objects.EncodedObject(t, h)
}

func (c *counting) ReadObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	c.count(h)
	return c.Objects.ReadObject(h)
}

func (c *counting) total(ids ...plumbing.Hash) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, id := range ids {
		n += c.n[id]
	}
	return n
}

func TestFoldOnceAndCache(t *testing.T) {
	w := newWorld(t, rulesNoQueue)
	p := w.ready(w.commit(w.c0, "a", "a\n"))
	q := w.open(w.commit(w.c0, "b", "b\n"))
	trustTip, prTip := w.refs[hubrefs.TrustRef], w.refs[p.ref]
	updates := []Update{
		up(main, w.c0, p.head),
		up(main, w.c0, q.head),
		up("refs/heads/topic", plumbing.ZeroHash, q.head),
	}
	want := []string{"", CodeNotApproved, ""}
	run := func(c Cache) (*counting, []Verdict) {
		o := &counting{Objects: GoGitObjects(w.store), n: map[plumbing.Hash]int{}}
		vs := Judge(Input{Objects: o, Refs: w.refs, Updates: updates, Cache: c})
		for i, v := range vs {
			if v.Code != want[i] || v.Update != updates[i] {
				t.Fatalf("verdict %d: %+v, want code %q", i, v, want[i])
			}
		}
		return o, vs
	}

	// Without a cache: each hub log is read once per call, however many updates.
	o, _ := run(nil)
	if n := o.total(trustTip); n != 1 {
		t.Fatalf("trust tip read %d times in one Judge, want 1", n)
	}
	if n := o.total(prTip); n != 1 {
		t.Fatalf("pull request tip read %d times in one Judge, want 1", n)
	}

	// With a cache: the first call fills it, the second reads no event.
	c := &mapCache{m: map[plumbing.Hash][]byte{}}
	run(c)
	if len(c.m) != 7 {
		t.Fatalf("cache holds %d entries, want 7 (trust log and state, two pull requests, the pull request index, the open index and its head)", len(c.m))
	}
	if st, ok := decodeTrustState(trustTip, c.m[trustStateKey(trustTip)]); !ok || st.Tip != trustTip {
		t.Fatal("no trust state for the trust tip")
	}
	if _, ok := decodeIndex(trustTip, c.m[indexKey(trustTip)]); !ok {
		t.Fatal("no pull request index for the trust tip")
	}
	o, _ = run(c)
	if n := o.total(trustTip, prTip, w.refs[q.ref]); n != 0 {
		t.Fatalf("second Judge read hub tips %d times despite the cache", n)
	}

	// An entry that does not describe its key is ignored and rebuilt (the
	// index and the trust state are dropped too, so that both logs are
	// needed).
	c.m[trustTip] = c.m[prTip]
	c.m[prTip] = []byte("garbage")
	delete(c.m, indexKey(trustTip))
	delete(c.m, trustStateKey(trustTip))
	o, _ = run(c)
	if n := o.total(trustTip, prTip); n != 2 {
		t.Fatalf("stale entries: hub tips read %d times, want 2", n)
	}
	if _, ok := decodeLog(trustTip, c.m[trustTip]); !ok {
		t.Fatal("the trust entry was not rebuilt")
	}
	if _, ok := decodeLog(prTip, c.m[prTip]); !ok {
		t.Fatal("the pull request entry was not rebuilt")
	}
}

func TestMissingHubObjects(t *testing.T) {
	t.Run("trust tip", func(t *testing.T) {
		w := newWorld(t, rulesNoQueue)
		w.refs[hubrefs.TrustRef] = plumbing.NewHash("3333333333333333333333333333333333333333")
		v := w.judge1(up("refs/heads/topic", plumbing.ZeroHash, w.c0))
		if v.Code != CodeMissingObject {
			t.Fatalf("%+v", v)
		}
	})
	t.Run("pull request log", func(t *testing.T) {
		w := newWorld(t, rulesNoQueue)
		p := w.ready(w.commit(w.c0, "a", "a\n"))
		w.refs[hubrefs.PRRefPrefix+"01900000-0000-7000-8000-0000000000dd"] = plumbing.NewHash("4444444444444444444444444444444444444444")
		// The damaged log refuses what no readable pull request justifies;
		// an approved head lands.
		other := w.commit(w.c0, "b", "b\n")
		vs := w.judge(up(main, w.c0, other), up("refs/heads/topic", plumbing.ZeroHash, w.c0), up(main, w.c0, p.head))
		if vs[0].Code != CodeMissingObject || !vs[1].Accepted() || !vs[2].Accepted() {
			t.Fatalf("%+v", vs)
		}
	})
	t.Run("candidate merge base", func(t *testing.T) {
		w := newWorld(t, rulesQueue)
		h := w.commit(w.commit(w.c0, "x", "1\n"), "y", "2\n")
		p := w.open(h).approve("bob")
		c := w.merge(w.c0, h)
		p.check("ci", c, "success")
		// A store that lost h's parent: the merge base walk cannot finish.
		lost := plumbing.NewHash(w.git("rev-parse", h.String()+"^"))
		o := &hiding{Objects: GoGitObjects(w.store), hide: lost}
		v := Judge(Input{Objects: o, Refs: w.refs, Updates: []Update{up(main, w.c0, c)}})[0]
		if v.Code != CodeMissingObject {
			t.Fatalf("%+v", v)
		}
		v = w.judge1(up(main, w.c0, c))
		if !v.Accepted() {
			t.Fatalf("with every object: %+v", v)
		}
	})
}

type hiding struct {
	Objects
	hide plumbing.Hash
}

func (h *hiding) EncodedObject(t plumbing.ObjectType, id plumbing.Hash) (plumbing.EncodedObject, error) {
	if id == h.hide {
		return nil, plumbing.ErrObjectNotFound
	}
	return h.Objects.EncodedObject(t, id)
}

func (h *hiding) ReadObject(id plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	if id == h.hide {
		return GoGitObjects(emptyStore{}).ReadObject(id)
	}
	return h.Objects.ReadObject(id)
}

type emptyStore struct{ Objects }

func (emptyStore) EncodedObject(plumbing.ObjectType, plumbing.Hash) (plumbing.EncodedObject, error) {
	return nil, plumbing.ErrObjectNotFound
}

func TestIntroduced(t *testing.T) {
	w := newWorld(t, "")
	a := w.commit(w.c0, "a", "a\n")
	b := w.commit(a, "b", "b\n")
	x := w.commit(w.c0, "x", "x\n")
	y := w.commit(x, "y", "y\n")
	m := w.merge(b, y)
	cases := []struct {
		name     string
		new, old plumbing.Hash
		want     []plumbing.Hash
	}{
		{"merge of a side branch", m, b, []plumbing.Hash{m, x, y}},
		{"linear", b, w.c0, []plumbing.Hash{a, b}},
		{"nothing new", a, b, nil},
		{"creation", a, plumbing.ZeroHash, []plumbing.Hash{w.c0, a}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := newCommits(GoGitObjects(w.store), nil).introduced(c.new, c.old)
			if err != nil {
				t.Fatal(err)
			}
			set := map[plumbing.Hash]bool{}
			for _, g := range got {
				set[g.id] = true
			}
			if len(set) != len(c.want) {
				t.Fatalf("got %d commits, want %d", len(set), len(c.want))
			}
			for _, h := range c.want {
				if !set[h] {
					t.Fatalf("%s missing from %v", h, set)
				}
			}
		})
	}
}

func TestVerdictLine(t *testing.T) {
	v := Verdict{Update: Update{Ref: "refs/heads/main"}, Code: CodeNotApproved, Reason: "r"}
	if got := v.Line(); got != "git+: refused refs/heads/main: [not-approved] r" {
		t.Fatal(got)
	}
	if (Verdict{}).Line() != "" || !(Verdict{}).Accepted() {
		t.Fatal("an accepted verdict prints nothing")
	}
}

// TestPRIndex: with the pull request index, a warm judgement reads no pull
// request log, and an index entry whose ref has moved (here: the
// pull request was closed) is never used.
func TestPRIndex(t *testing.T) {
	w := newWorld(t, rulesNoQueue)
	p := w.ready(w.commit(w.c0, "a", "a\n"))
	others := []*prq{}
	for i := 0; i < 5; i++ {
		others = append(others, w.open(w.commit(w.c0, fmt.Sprintf("o%d", i), "o\n")))
	}
	trustTip := w.refs[hubrefs.TrustRef]
	judge := func(c Cache, want string) *counting {
		t.Helper()
		o := &counting{Objects: GoGitObjects(w.store), n: map[plumbing.Hash]int{}}
		vs := Judge(Input{Objects: o, Refs: w.refs, Updates: []Update{up(main, w.c0, p.head)}, Cache: c})
		if vs[0].Code != want {
			t.Fatalf("verdict %+v, want code %q", vs[0], want)
		}
		return o
	}
	c := &countingCache{mapCache: mapCache{m: map[plumbing.Hash][]byte{}}}
	judge(c, "") // fills the logs and the index
	idx, ok := decodeIndex(trustTip, c.m[indexKey(trustTip)])
	if !ok || len(idx) != 6 {
		t.Fatalf("index holds %d pull requests (ok %v), want 6", len(idx), ok)
	}
	if s := idx[p.ref]; s.State != pr.Open || s.Head != p.head.String() || s.Base != main || s.Tip != w.refs[p.ref] {
		t.Fatalf("index entry %+v does not summarize %s", s, p.ref)
	}

	// Warm: the trust state, the indexes (every ref read: the full one, and
	// the open one to see it is current) and a look for a merge fact of the
	// landed commit (it might be a candidate); no log, not even the
	// landed one's (its approvals and checks are in the index).
	c.got = map[plumbing.Hash]int{}
	judge(c, "")
	if len(c.got) != 5 || c.got[trustStateKey(trustTip)] != 1 || c.got[indexKey(trustTip)] != 1 || c.got[openIndexKey(trustTip)] != 1 || c.got[indexPatchKey(trustTip, 0)] != 1 || c.got[MergeFactKey(p.head)] != 1 {
		t.Fatalf("cache reads %v: want the trust state %s, the index %s, the open index %s, a look for its first patch and the landed commit's merge fact once each", c.got, trustStateKey(trustTip), indexKey(trustTip), openIndexKey(trustTip))
	}

	// Closing the pull request moves its ref: the indexed "open" summary
	// must not be used, so the landing is refused, and the index follows.
	p.close()
	judge(c, CodePRClosed)
	idx, _ = decodeIndex(trustTip, c.m[indexKey(trustTip)])
	if s := idx[p.ref]; s.State != pr.Closed || s.Tip != w.refs[p.ref] {
		t.Fatalf("index entry after closing: %+v", s)
	}

	// A damaged index reads as a miss: every pull request is summarized
	// again from its log, and the index is rewritten.
	c.m[indexKey(trustTip)] = []byte("gpix\x01garbage")
	c.got = map[plumbing.Hash]int{}
	judge(c, CodePRClosed)
	for _, q := range others {
		if c.got[w.refs[q.ref]] != 1 {
			t.Fatalf("with a damaged index, %s was read %d times, want 1", q.ref, c.got[w.refs[q.ref]])
		}
	}
	if _, ok := decodeIndex(trustTip, c.m[indexKey(trustTip)]); !ok {
		t.Fatal("a damaged index was not rewritten")
	}
}

// countingCache counts Gets per key.
type countingCache struct {
	mapCache
	got map[plumbing.Hash]int
}

func (c *countingCache) Get(k plumbing.Hash) ([]byte, bool) {
	c.mu.Lock()
	if c.got == nil {
		c.got = map[plumbing.Hash]int{}
	}
	c.got[k]++
	c.mu.Unlock()
	return c.mapCache.Get(k)
}

func FuzzDecodeIndex(f *testing.F) {
	t := plumbing.Hash{1, 2, 3}
	f.Add(t[:], encodeIndex(t, []prSummary{{Ref: "refs/hub/pr/x", Tip: plumbing.Hash{9}, ID: "x", State: "open", Base: "refs/heads/main", Head: "abc"}}))
	f.Add(t[:], encodeIndex(t, nil))
	f.Fuzz(func(tt *testing.T, tipb, data []byte) {
		var tip plumbing.Hash
		copy(tip[:], tipb)
		got, ok := decodeIndex(tip, data)
		if !ok {
			return
		}
		sums := make([]prSummary, 0, len(got))
		for _, s := range got {
			sums = append(sums, s)
		}
		again, ok := decodeIndex(tip, encodeIndex(tip, sums))
		if !ok || len(again) != len(got) {
			tt.Fatal("a decoded index does not round-trip")
		}
		for ref, s := range got {
			if !again[ref].equal(s) {
				tt.Fatalf("entry %s changed in a round trip", ref)
			}
		}
	})
}

// droppingCache is a mapCache that can delete entries (Dropper).
type droppingCache struct{ mapCache }

func (c *droppingCache) Drop(k plumbing.Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}

// TestCacheDropsOldTips: once an accepted push moves a hub ref, the entry for
// its old tip is dropped (the cache keeps one entry per ref, not one per
// tip ever seen), and a trust push also drops the old trust state's pull
// request index. A refused push drops nothing.
func TestCacheDropsOldTips(t *testing.T) {
	w := newWorld(t, rulesNoQueue)
	p := w.ready(w.commit(w.c0, "a", "a\n"))
	c := &droppingCache{mapCache{m: map[plumbing.Hash][]byte{}}}
	judge := func(u Update, want string) {
		t.Helper()
		v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}, Cache: c})
		if v[0].Code != want {
			t.Fatalf("verdict %+v, want code %q", v[0], want)
		}
	}
	trust0, pr0 := w.refs[hubrefs.TrustRef], w.refs[p.ref]
	judge(up(main, w.c0, p.head), "") // fills the logs and the index
	for _, k := range []plumbing.Hash{trust0, pr0, indexKey(trust0), trustStateKey(trust0)} {
		if _, ok := c.m[k]; !ok {
			t.Fatalf("entry %s missing after the first judgement", k)
		}
	}

	// A pull request event pushed: pr0's entry goes, the new tip's comes.
	pr1 := w.eventOn([]plumbing.Hash{pr0}, "bob", hubrefs.Review{Base: w.base(hubrefs.TypeReviewSubmit), Head: p.head.String(), BaseRef: main, Verdict: "comment"})
	judge(up(p.ref, pr0, pr1), "")
	if _, ok := c.m[pr0]; ok {
		t.Fatal("the old pull request tip's entry was kept")
	}
	if _, ok := c.m[pr1]; !ok {
		t.Fatal("the new pull request tip was not remembered")
	}

	// A refused push (an outsider's event) drops nothing.
	bad := w.eventOn([]plumbing.Hash{pr0}, "mallory", hubrefs.Review{Base: w.base(hubrefs.TypeReviewSubmit), Head: p.head.String(), BaseRef: main, Verdict: "approve"})
	w.refs[p.ref] = pr0
	c.m[pr0] = encodeLog(pr0, mustLog(t, w, pr0))
	judge(up(p.ref, pr0, bad), CodeNotMember)
	if _, ok := c.m[pr0]; !ok {
		t.Fatal("a refused push dropped the current tip's entry")
	}

	// A trust event pushed: the old trust tip and its index go.
	trust1 := w.eventOn([]plumbing.Hash{trust0}, "admin", w.memberAdded("mallory", "hub.pr"))
	judge(up(hubrefs.TrustRef, trust0, trust1), "")
	for _, k := range []plumbing.Hash{trust0, indexKey(trust0), trustStateKey(trust0)} {
		if _, ok := c.m[k]; ok {
			t.Fatalf("entry %s of the old trust state was kept", k)
		}
	}
}

func mustLog(t *testing.T, w *world, tip plumbing.Hash) []hubrefs.Event {
	t.Helper()
	evs, err := hubrefs.ReadLog(GoGitObjects(w.store), tip, storedCeilings)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func (s prSummary) equal(o prSummary) bool {
	return s.Ref == o.Ref && s.Tip == o.Tip && s.ID == o.ID && s.State == o.State && s.Base == o.Base && s.Head == o.Head &&
		s.Unresolved == o.Unresolved && slices.Equal(s.Approvals, o.Approvals) && slices.Equal(s.Checks, o.Checks)
}
