package policy

import (
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
	// Facts never stand in for rules 1, 2, 4, 5: a check withdrawn (a later
	// failure) refuses the landing with them as without them.
	p2.check("ci", c2, "failure")
	if v := judge(landing); v[0].Code != CodeChecksFailed {
		t.Fatalf("landing with a failed check and merge facts: %+v", v[0])
	}
	p2.check("ci", c2, "success")

	// A fact that names another commit or tree under c2's key is ignored.
	for name, forged := range map[string]*commit{
		"another commit": {id: c1, tree: treeOf(t, w, c2)},
		"another tree":   {id: c2, tree: treeOf(t, w, c1)},
	} {
		b := encodeFact(forged)
		copy(b[len(factMagic):], func() []byte { k := MergeFactKey(c2); return k[:] }())
		cache.m[MergeFactKey(c2)] = b
		objs.n = map[plumbing.Hash]int{}
		if v := judge(landing); v[0].Code != "" {
			t.Fatalf("%s: %+v", name, v[0])
		}
		if objs.total(theirTrees[1]) == 0 {
			t.Fatalf("a fact for %s was believed", name)
		}
	}

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
	c := &commit{id: plumbing.NewHash("1111111111111111111111111111111111111111"), tree: plumbing.NewHash("2222222222222222222222222222222222222222")}
	key := MergeFactKey(c.id)
	f.Add(key[:], encodeFact(c))
	f.Add(key[:], []byte("gpmf\x01"))
	f.Fuzz(func(t *testing.T, keyb, data []byte) {
		var key plumbing.Hash
		copy(key[:], keyb)
		id, tree, ok := decodeFact(key, data)
		if !ok {
			return
		}
		// What decodes is the fact of its own key and survives a round trip.
		if MergeFactKey(id) != key {
			t.Fatalf("decoded a fact for %s under key %s", id, key)
		}
		if id2, tree2, ok := decodeFact(key, encodeFact(&commit{id: id, tree: tree})); !ok || id2 != id || tree2 != tree {
			t.Fatal("a decoded fact does not round-trip")
		}
	})
}
