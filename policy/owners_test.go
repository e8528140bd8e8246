package policy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

// ownersRules: *.md files need carol; ops needs two of alice (the opener
// of every pull request here) and carol, which only carol can give, so it
// is never met.
const ownersRules = `{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"queueCandidates":true,
	"owners":[{"paths":["*.md"],"approvers":["carol"]},{"paths":["/ops"],"approvers":["alice","carol"],"approvals":2}]}}}`

// TestPathOwners: the hook's verdicts on path owners (pr.State.OwnersAt),
// direct landings (judged by the diff from the branch's tip) and candidate
// steps (by the diff against the step below), with and without the fold
// cache (world.judge compares them).
func TestPathOwners(t *testing.T) {
	update := func(w *world, p *prq, h plumbing.Hash) {
		w.event(p.ref, "alice", hubrefs.PRUpdated{Base: w.base(hubrefs.TypePRUpdated), Head: h.String()})
		p.head = h
	}
	for _, c := range []struct {
		name, want, in string
		setup          func(w *world) Update
	}{
		{"an owned file, approved by a reviewer who is not its owner", CodeOwners, "owners[0] (*.md, matching guide.md) has 0 of 1 approvals from carol", func(w *world) Update {
			return up(main, w.c0, w.ready(w.commit(w.c0, "guide.md", "g\n")).head)
		}},
		{"an owned file, approved by its owner", "", "", func(w *world) Update {
			h := w.commit(w.c0, "guide.md", "g\n")
			w.open(h).approve("carol").check("ci", h, "success")
			return up(main, w.c0, h)
		}},
		{"no owned file", "", "", func(w *world) Update {
			return up(main, w.c0, w.ready(w.commit(w.c0, "main.go", "m\n")).head)
		}},
		{"an owned file in an earlier commit of the head", CodeOwners, "guide.md", func(w *world) Update {
			h1 := w.commit(w.c0, "guide.md", "g\n")
			return up(main, w.c0, w.ready(w.commit(h1, "main.go", "m\n")).head)
		}},
		{"two of the opener and one other", CodeOwners, "owners[1] (/ops, matching ops) has 1 of 2 approvals from alice, carol", func(w *world) Update {
			h := w.commit(w.c0, "ops", "o\n")
			w.open(h).approve("carol").check("ci", h, "success")
			return up(main, w.c0, h)
		}},
		{"an owner's approval of an earlier head", CodeOwners, "0 of 1", func(w *world) Update {
			h := w.commit(w.c0, "guide.md", "g\n")
			p := w.open(h).approve("carol")
			h2 := w.commit(h, "guide.md", "g2\n")
			update(w, p, h2)
			p.approve("bob").check("ci", h2, "success")
			return up(main, w.c0, h2)
		}},
		{"bypassed", "", "", func(w *world) Update {
			p := w.ready(w.commit(w.c0, "ops", "o\n"))
			w.event(p.ref, "admin", hubrefs.PRBypassed{Base: w.base(hubrefs.TypePRBypassed), Head: p.head.String(), BaseRef: main, Reason: "hotfix"})
			return up(main, w.c0, p.head)
		}},
		{"a candidate step touching an owned file", CodeOwners, "guide.md", func(w *world) Update {
			p := w.open(w.commit(w.c0, "guide.md", "g\n")).approve("bob")
			c := w.merge(w.c0, p.head)
			p.check("ci", c, "success")
			return up(main, w.c0, c)
		}},
		{"a candidate step approved by the owner", "", "", func(w *world) Update {
			p := w.open(w.commit(w.c0, "guide.md", "g\n")).approve("carol")
			c := w.merge(w.c0, p.head)
			p.check("ci", c, "success")
			return up(main, w.c0, c)
		}},
		{"a chain: the second step is judged by its own diff", CodeOwners, "guide.md", func(w *world) Update {
			p1 := w.open(w.commit(w.c0, "main.go", "m\n")).approve("bob")
			c1 := w.merge(w.c0, p1.head)
			p1.check("ci", c1, "success")
			p2 := w.open(w.commit(w.c0, "guide.md", "g\n")).approve("bob")
			c2 := w.merge(c1, p2.head)
			p2.check("ci", c2, "success")
			return up(main, w.c0, c2)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, ownersRules)
			v := w.judge1(c.setup(w))
			if v.Code != c.want || !strings.Contains(v.Reason, c.in) {
				t.Fatalf("verdict [%s] %s; want [%s] containing %q", v.Code, v.Reason, c.want, c.in)
			}
		})
	}
}

// TestAuditPathOwners: verify --branch judges path owners as the hook
// does: a direct landing by its diff from the tip below the commits it
// covers, a bypass justifying it.
func TestAuditPathOwners(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []string // the head's commits, one file each
		who   string
		code  string
		bp    bool
	}{
		{"owner approved", []string{"guide.md"}, "carol", "", false},
		{"no owner", []string{"guide.md"}, "bob", CodeOwners, false},
		{"owned file in a covered commit", []string{"guide.md", "main.go"}, "bob", CodeOwners, false},
		{"not owned", []string{"main.go", "x.go"}, "bob", "", false},
		{"bypassed", []string{"guide.md"}, "bob", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, "")
			w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(ownersRules)})
			h := w.c0
			for _, f := range c.files {
				h = w.commit(h, f, "x\n")
			}
			p := w.open(h).approve(c.who)
			if c.bp {
				w.event(p.ref, "admin", hubrefs.PRBypassed{Base: w.base(hubrefs.TypePRBypassed), Head: h.String(), BaseRef: main, Reason: "hotfix"})
			}
			p.check("ci", h, "success").merged(h, h)
			w.refs[main] = h
			rep, err := auditAll(t, w)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.code == "" && (len(rep.Landings) != 1 || len(rep.Unjustified) != 0 || (rep.Landings[0].Bypass != nil) != c.bp):
				t.Fatalf("want justified (bypass %v): %+v", c.bp, rep)
			case c.code != "" && (len(rep.Landings) != 0 || len(rep.Unjustified) != len(c.files) || rep.Unjustified[len(c.files)-1].Code != c.code):
				t.Fatalf("want [%s]: %+v", c.code, rep)
			}
		})
	}
}

// TestBypassPerBranch: hub.bypass:<pattern> lets its holder bypass (and the
// hook accept the pr.bypassed, and the bypassed landing) only for pull
// requests based on a branch the pattern matches.
func TestBypassPerBranch(t *testing.T) {
	for _, c := range []struct {
		cap, want string
	}{
		{"hub.bypass:refs/heads/m*", ""},
		{"hub.bypass:refs/heads/main", ""},
		{"hub.bypass", ""},
		{"hub.bypass:refs/heads/release/*", CodeMissingCapability},
	} {
		t.Run(c.cap, func(t *testing.T) {
			w := newWorld(t, rulesNoQueue)
			w.event(hubrefs.TrustRef, "admin", w.memberAdded("mallory", c.cap))
			p := w.open(w.commit(w.c0, "a", "a\n"))
			old := w.refs[p.ref]
			id := w.eventOn([]plumbing.Hash{old}, "mallory", hubrefs.PRBypassed{Base: w.base(hubrefs.TypePRBypassed), Head: p.head.String(), BaseRef: main, Reason: "hotfix"})
			if v := w.judge1(up(p.ref, old, id)); v.Code != c.want {
				t.Fatalf("pr.bypassed by a holder of %s: [%s] %s; want [%s]", c.cap, v.Code, v.Reason, c.want)
			}
			// Stored anyway (as if around the boundary): the landing is
			// bypassed only when the capability covers main.
			w.refs[p.ref] = id
			want := CodeNotApproved
			if c.want == "" {
				want = ""
			}
			if v := w.judge1(up(main, w.c0, p.head)); v.Code != want {
				t.Fatalf("landing: [%s] %s; want [%s]", v.Code, v.Reason, want)
			}
		})
	}
}

// TestChangedPathFacts: publishing candidates of a target with path
// owners records in each merge fact the files the step changes against
// its first parent; the landing then decodes none of the candidates' trees
// and gives the verdicts it gives without them (the owners' refusal
// included). A damaged trailer makes the fact a miss.
func TestChangedPathFacts(t *testing.T) {
	w := newWorld(t, ownersRules)
	h1, h2 := w.commit(w.c0, "main.go", "a\n"), w.commit(w.c0, "guide.md", "b\n")
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
	if v := judge(up(main, w.c0, c2)); v[0].Code != CodeOwners {
		t.Fatalf("landing without facts: %+v", v[0])
	}
	for _, v := range judge(up(branch(p1), plumbing.ZeroHash, c1), up(branch(p2), plumbing.ZeroHash, c2)) {
		if v.Code != "" {
			t.Fatalf("publishing a candidate branch refused: %+v", v)
		}
	}
	w.refs[branch(p1)], w.refs[branch(p2)] = c1, c2
	for c, want := range map[plumbing.Hash][]string{c1: {"main.go"}, c2: {"guide.md"}} {
		buf, ok := cache.m[MergeFactKey(c)]
		if !ok {
			t.Fatalf("no merge fact for %s", c)
		}
		fixed := len(factMagic) + 100
		paths, ok := readTrailer(buf[fixed:])
		if !ok || !slices.Equal(paths, want) {
			t.Fatalf("merge fact of %s carries %q (%v), want %q", c, paths, ok, want)
		}
		if _, ok := decodeFact(MergeFactKey(c), buf[:len(buf)-1]); ok {
			t.Fatal("a merge fact with a truncated trailer decoded")
		}
	}
	t1, t2 := treeOf(t, w, c1), treeOf(t, w, c2)
	objs.n = map[plumbing.Hash]int{}
	if v := judge(up(main, w.c0, c2)); v[0].Code != CodeOwners || !strings.Contains(v[0].Reason, "guide.md") {
		t.Fatalf("landing with facts: %+v", v[0])
	}
	if n := objs.total(t1, t2); n != 0 {
		t.Fatalf("the landing with changed paths in its merge facts decoded the candidates' trees %d times", n)
	}
	p2.approve("carol")
	if v := judge(up(main, w.c0, c2)); v[0].Code != "" {
		t.Fatalf("landing approved by the owner, with facts: %+v", v[0])
	}
}
