package policy

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func treeOf(t *testing.T, w *world, c plumbing.Hash) plumbing.Hash {
	t.Helper()
	cm, err := object.GetCommit(w.store, c)
	if err != nil {
		t.Fatal(err)
	}
	return cm.TreeHash
}

// TestMergeFacts: publishing candidates on their candidate branches records
// their merge facts; the landing then merges nothing and gives the verdicts
// it gives without them; facts that do not describe the candidate, or were
// never learned, change nothing.
func TestMergeFacts(t *testing.T) {
	w := newWorld(t, rulesQueue)
	h1, h2 := w.commit(w.c0, "a", "a\n"), w.commit(w.c0, "b", "b\n")
	p1, p2 := w.open(h1).approve("bob"), w.open(h2).approve("bob")
	c1 := w.merge(w.c0, h1)
	c2 := w.merge(c1, h2)
	p1.check("ci", c1, "success")
	p2.check("ci", c2, "success")
	branch := func(p *prq) string { return "refs/heads/queue/main/" + p.id }
	cache := &droppingCache{mapCache{m: map[plumbing.Hash][]byte{}}}
	objs := &counting{Objects: GoGitObjects(w.store), n: map[plumbing.Hash]int{}}
	judge := func(us ...Update) []Verdict {
		t.Helper()
		return Judge(Input{Objects: objs, Refs: w.refs, Updates: us, Cache: cache})
	}
	theirTrees := []plumbing.Hash{treeOf(t, w, h1), treeOf(t, w, h2)}
	landing := up(main, w.c0, c2)

	// Without facts the landing merges (it reads the heads' trees).
	if v := judge(landing); v[0].Code != "" {
		t.Fatalf("landing without facts: %+v", v[0])
	}
	if objs.total(theirTrees...) == 0 {
		t.Fatal("the landing without facts read no head tree: the test cannot tell merging from not")
	}

	// Publishing the two candidate branches: accepted, one fact each.
	vs := judge(up(branch(p1), plumbing.ZeroHash, c1), up(branch(p2), plumbing.ZeroHash, c2))
	for _, v := range vs {
		if v.Code != "" {
			t.Fatalf("publishing a candidate branch refused: %+v", v)
		}
	}
	for _, c := range []plumbing.Hash{c1, c2} {
		if _, ok := cache.m[MergeFactKey(c)]; !ok {
			t.Fatalf("no merge fact for candidate %s after its branch was pushed", c)
		}
	}
	w.refs[branch(p1)], w.refs[branch(p2)] = c1, c2

	// The landing now reads no head tree, and its verdict is the same.
	objs.n = map[plumbing.Hash]int{}
	if v := judge(landing); v[0].Code != "" {
		t.Fatalf("landing with facts: %+v", v[0])
	}
	if n := objs.total(theirTrees...); n != 0 {
		t.Fatalf("the landing with merge facts read the heads' trees %d times", n)
	}
	if n := objs.total(c1, c2); n != 0 {
		t.Fatalf("the landing with merge facts read the candidates %d times (the facts name their parents and trees)", n)
	}
	// Facts never stand in for rules 1, 2, 4, 5: a check withdrawn (a later
	// failure) refuses the landing with them as without them.
	p2.check("ci", c2, "failure")
	if v := judge(landing); v[0].Code != CodeChecksFailed {
		t.Fatalf("landing with a failed check and merge facts: %+v", v[0])
	}
	p2.check("ci", c2, "success")

	// A fact under c2's key that names another commit, or that is damaged,
	// is ignored: the landing merges again. (A well-formed fact of c2 is
	// believed whole, parents and tree: like every fold-cache entry it is
	// as trustworthy as the git directory, and only learnCandidate, after
	// merging, writes one.)
	h1, h2c := w.c0, h2
	for name, b := range map[string][]byte{
		"another commit": func() []byte {
			b := encodeFact(&commit{id: c1, tree: treeOf(t, w, c1), parents: []plumbing.Hash{h1, h1}})
			k := MergeFactKey(c2)
			copy(b[len(factMagic):], k[:])
			return b
		}(),
		"truncated": encodeFact(&commit{id: c2, tree: treeOf(t, w, c2), parents: []plumbing.Hash{c1, h2c}})[:len(factMagic)+70],
		// Version 2 facts were recorded before the object checks
		// (fsck.go): they vouch for the merge only.
		"version 2": append([]byte("gpmf\x02"), encodeFact(&commit{id: c2, tree: treeOf(t, w, c2), parents: []plumbing.Hash{c1, h2c}})[len(factMagic):]...),
		"version 1": append([]byte("gpmf\x01"), encodeFact(&commit{id: c2, tree: treeOf(t, w, c2), parents: []plumbing.Hash{c1, h2c}})[len(factMagic):len(factMagic)+60]...),
	} {
		cache.m[MergeFactKey(c2)] = b
		objs.n = map[plumbing.Hash]int{}
		if v := judge(landing); v[0].Code != "" {
			t.Fatalf("%s: %+v", name, v[0])
		}
		if objs.total(theirTrees[1]) == 0 {
			t.Fatalf("a fact entry (%s) was believed", name)
		}
	}
	cache.m[MergeFactKey(c2)] = encodeFact(&commit{id: c2, tree: treeOf(t, w, c2), parents: []plumbing.Hash{c1, h2c}})

	// Moving a candidate branch drops the old candidate's fact; deleting
	// one drops its fact too.
	c2b := w.merge(c1, h2) // a new commit (new time): the republished candidate
	if c2b == c2 {
		c2b = plumbing.NewHash(w.git("commit-tree", treeOf(t, w, c2).String(), "-p", c1.String(), "-p", h2.String(), "-m", "republished"))
	}
	if v := judge(up(branch(p2), c2, c2b)); v[0].Code != "" {
		t.Fatalf("moving a candidate branch: %+v", v[0])
	}
	if _, ok := cache.m[MergeFactKey(c2)]; ok {
		t.Fatal("the old candidate's fact was kept when its branch moved")
	}
	if _, ok := cache.m[MergeFactKey(c2b)]; !ok {
		t.Fatal("no fact for the republished candidate")
	}
	if v := judge(up(branch(p1), c1, plumbing.ZeroHash)); v[0].Code != "" {
		t.Fatalf("deleting a candidate branch: %+v", v[0])
	}
	if _, ok := cache.m[MergeFactKey(c1)]; ok {
		t.Fatal("a deleted candidate branch's fact was kept")
	}
}

// TestMergeFactsLearnedOnlyWhenTheyHold: a candidate branch push is never
// refused, and records a fact only for a clean merge to the candidate's own
// tree of an open pull request's head, on a target that takes candidates.
func TestMergeFactsLearnedOnlyWhenTheyHold(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules string
		ref   func(p *prq) string
		cand  func(w *world, p *prq) plumbing.Hash
		fact  bool
	}{
		{name: "clean candidate", rules: rulesQueue, fact: true},
		{name: "tree adds a file", rules: rulesQueue, cand: func(w *world, p *prq) plumbing.Hash {
			c := w.merge(w.c0, p.head)
			w.git("checkout", "-q", "--detach", c.String())
			extra := w.commit(c, "extra", "x\n")
			return plumbing.NewHash(w.git("commit-tree", treeOf(t, w, extra).String(), "-p", w.c0.String(), "-p", p.head.String(), "-m", "candidate"))
		}},
		{name: "second parent not an open head", rules: rulesQueue, cand: func(w *world, p *prq) plumbing.Hash {
			return w.merge(w.c0, w.commit(w.c0, "z", "z\n"))
		}},
		{name: "closed pull request", rules: rulesQueue, cand: func(w *world, p *prq) plumbing.Hash {
			p.close()
			return w.merge(w.c0, p.head)
		}},
		{name: "target takes no candidates", rules: rulesNoQueue},
		{name: "target requires provenance", rules: rulesProv},
		{name: "not a candidate branch", rules: rulesQueue, ref: func(p *prq) string { return "refs/heads/feature/" + p.id }},
		{name: "candidate branch of an unprotected target", rules: rulesQueue, ref: func(p *prq) string { return "refs/heads/queue/other/" + p.id }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.rules)
			p := w.open(w.commit(w.c0, "a", "a\n")).approve("bob")
			var c plumbing.Hash
			if tc.cand != nil {
				c = tc.cand(w, p)
			} else {
				c = w.merge(w.c0, p.head)
			}
			ref := "refs/heads/queue/main/" + p.id
			if tc.ref != nil {
				ref = tc.ref(p)
			}
			cache := &mapCache{m: map[plumbing.Hash][]byte{}}
			v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{up(ref, plumbing.ZeroHash, c)}, Cache: cache})
			if v[0].Code != "" {
				t.Fatalf("the candidate branch push was refused: %+v", v[0])
			}
			if _, ok := cache.m[MergeFactKey(c)]; ok != tc.fact {
				t.Fatalf("merge fact recorded: %v, want %v", ok, tc.fact)
			}
		})
	}
}

func TestCandidateTarget(t *testing.T) {
	for ref, want := range map[string]string{
		"refs/heads/queue/main/01900000-0000-7000-8000-000000000001":       "refs/heads/main",
		"refs/heads/queue/release/1.0/01900000-0000-7000-8000-00000000001": "refs/heads/release/1.0",
		"refs/heads/queue/main":  "",
		"refs/heads/queue/main/": "",
		"refs/heads/queue//x":    "",
		"refs/heads/main":        "",
		"refs/tags/queue/main/x": "",
	} {
		got, ok := candidateTarget(ref)
		if ok != (want != "") || got != want {
			t.Errorf("candidateTarget(%q) = %q, %v; want %q", ref, got, ok, want)
		}
	}
}

func FuzzDecodeFact(f *testing.F) {
	c := &commit{id: plumbing.NewHash("1111111111111111111111111111111111111111"), tree: plumbing.NewHash("2222222222222222222222222222222222222222"),
		parents: []plumbing.Hash{plumbing.NewHash("3333333333333333333333333333333333333333"), plumbing.NewHash("4444444444444444444444444444444444444444")}}
	key := MergeFactKey(c.id)
	f.Add(key[:], encodeFact(c))
	f.Add(key[:], []byte("gpmf\x02"))
	f.Fuzz(func(t *testing.T, keyb, data []byte) {
		var key plumbing.Hash
		copy(key[:], keyb)
		got, ok := decodeFact(key, data)
		if !ok {
			return
		}
		// What decodes is the fact of its own key, a two-parent commit, and
		// survives a round trip.
		if MergeFactKey(got.id) != key || len(got.parents) != 2 {
			t.Fatalf("decoded %+v under key %s", got, key)
		}
		again, ok := decodeFact(key, encodeFact(got))
		if !ok || again.id != got.id || again.tree != got.tree || again.parents[0] != got.parents[0] || again.parents[1] != got.parents[1] {
			t.Fatal("a decoded fact does not round-trip")
		}
	})
}

// TestFactsConsultedOnlyForCandidates: a direct landing of a pull request
// head many commits above the branch looks for a merge fact of the head
// only; its other commits are read, never looked up as candidates.
func TestFactsConsultedOnlyForCandidates(t *testing.T) {
	w := newWorld(t, rulesNoQueue)
	h := w.c0
	var line []plumbing.Hash
	for i := 0; i < 10; i++ {
		h = w.commit(h, "f", strings.Repeat("x", i+1))
		line = append(line, h)
	}
	w.ready(h)
	c := &countingCache{mapCache: mapCache{m: map[plumbing.Hash][]byte{}}}
	v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{up(main, w.c0, h)}, Cache: c})
	if !v[0].Accepted() {
		t.Fatalf("%+v", v[0])
	}
	if c.got[MergeFactKey(h)] != 1 {
		t.Fatalf("the landed head's merge fact was looked up %d times, want 1", c.got[MergeFactKey(h)])
	}
	for _, id := range line[:len(line)-1] {
		if c.got[MergeFactKey(id)] != 0 {
			t.Fatalf("commit %s below the head was looked up as a candidate", id)
		}
	}
}
