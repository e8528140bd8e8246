package policy

import (
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
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
	if len(c.m) != 3 {
		t.Fatalf("cache holds %d logs, want 3 (trust and two pull requests)", len(c.m))
	}
	o, _ = run(c)
	if n := o.total(trustTip, prTip, w.refs[q.ref]); n != 0 {
		t.Fatalf("second Judge read hub tips %d times despite the cache", n)
	}

	// An entry that does not describe its key is ignored and rebuilt.
	c.m[trustTip] = c.m[prTip]
	c.m[prTip] = []byte("garbage")
	o, _ = run(c)
	if n := o.total(trustTip, prTip); n != 2 {
		t.Fatalf("stale entries: hub tips read %d times, want 2", n)
	}
	if _, ok := decodeLog(trustTip, c.m[trustTip]); !ok {
		t.Fatal("the trust entry was not rebuilt")
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
		vs := w.judge(up(main, w.c0, p.head), up("refs/heads/topic", plumbing.ZeroHash, w.c0))
		if vs[0].Code != CodeMissingObject || !vs[1].Accepted() {
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
			got, err := newCommits(GoGitObjects(w.store)).introduced(c.new, c.old)
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
