package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
)

const rulesSquash = `{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"queueCandidates":true,"queueDepth":3,"mergeMethod":"squash"}}}`

// squashOf writes the squash step of p's head onto prev as the queue
// builds it (queue.Squash over git's own merge-tree), with msg as its
// message when msg is not empty and tree as its tree when not zero.
func (w *world) squashOf(prev plumbing.Hash, p *prq, msg string, tree plumbing.Hash) plumbing.Hash {
	w.t.Helper()
	if tree.IsZero() {
		tree = plumbing.NewHash(strings.Fields(w.git("merge-tree", "--write-tree", prev.String(), p.head.String()))[0])
	}
	content := queue.Squash(prev, p.head, 1700000000, 1700000000, []byte("Ann <ann@example.com> 1700000000 +0000"), tree, p.id, main, "change")
	if msg != "" {
		i := strings.Index(string(content), "\n\n")
		content = append(content[:i+2:i+2], msg...)
	}
	return w.storeRaw(plumbing.CommitObject, content)
}

// TestSquashSteps: on a squash branch a chain of squash steps lands when
// each is a green, approved pull request's head squashed onto the step
// before with exactly the merged tree and the trailers naming both; every
// other shape is refused with its code.
func TestSquashSteps(t *testing.T) {
	trailers := func(p *prq) string {
		return fmt.Sprintf("Git-Plus-PR: %s\nGit-Plus-Head: %s\n", p.id, p.head)
	}
	for _, c := range []struct {
		name, rules, want, in string
		setup                 func(w *world) Update
	}{
		{"a green chain of two", rulesSquash, "", "", func(w *world) Update {
			p1 := w.open(w.commit(w.c0, "a", "a\n")).approve("bob")
			p2 := w.open(w.commit(w.c0, "b", "b\n")).approve("bob")
			s1 := w.squashOf(w.c0, p1, "", plumbing.ZeroHash)
			s2 := w.squashOf(s1, p2, "", plumbing.ZeroHash)
			p1.check("ci", s1, "success")
			p2.check("ci", s2, "success")
			return up(main, w.c0, s2)
		}},
		{"built by hand: another author, message and committer", rulesSquash, "", "", func(w *world) Update {
			p := w.open(w.commit(w.c0, "a", "a\n")).approve("bob")
			s := w.squashOf(w.c0, p, "Add a\n\nby hand\n\n"+trailers(p), plumbing.ZeroHash)
			p.check("ci", s, "success")
			return up(main, w.c0, s)
		}},
		{"checked at the head with the same tree", rulesSquash, "", "", func(w *world) Update {
			p := w.ready(w.commit(w.c0, "a", "a\n"))
			return up(main, w.c0, w.squashOf(w.c0, p, "", plumbing.ZeroHash))
		}},
		{"alone, checked at the head only, the tip moved (pr merge)", rulesSquash, "", "", func(w *world) Update {
			w.refs[main] = w.commit(w.c0, "m", "m\n")
			p := w.ready(w.commit(w.c0, "a", "a\n"))
			return up(main, w.refs[main], w.squashOf(w.refs[main], p, "", plumbing.ZeroHash))
		}},
		{"alone, checked nowhere", rulesSquash, CodeChecksMissing, "on head", func(w *world) Update {
			w.refs[main] = w.commit(w.c0, "m", "m\n")
			p := w.open(w.commit(w.c0, "a", "a\n")).approve("bob")
			return up(main, w.refs[main], w.squashOf(w.refs[main], p, "", plumbing.ZeroHash))
		}},
		{"alone, failed on the step, green at the head", rulesSquash, CodeChecksFailed, "squash step", func(w *world) Update {
			w.refs[main] = w.commit(w.c0, "m", "m\n")
			p := w.ready(w.commit(w.c0, "a", "a\n"))
			s := w.squashOf(w.refs[main], p, "", plumbing.ZeroHash)
			p.check("ci", s, "failure")
			return up(main, w.refs[main], s)
		}},
		{"alone, green at the head, a tree that adds one file", rulesSquash, CodeCandidateTree, "", func(w *world) Update {
			w.refs[main] = w.commit(w.c0, "m", "m\n")
			p := w.ready(w.commit(w.c0, "a", "a\n"))
			right := w.squashOf(w.refs[main], p, "", plumbing.ZeroHash)
			extra := w.commit(right, "evil", "x\n")
			return up(main, w.refs[main], w.squashOf(w.refs[main], p, "", w.treeOf(extra)))
		}},
		{"in a chain, checked at the head only, another tree", rulesSquash, CodeChecksMissing, "squash step", func(w *world) Update {
			w.refs[main] = w.commit(w.c0, "m", "m\n")
			p1 := w.ready(w.commit(w.c0, "a", "a\n"))
			p2 := w.open(w.commit(w.c0, "b", "b\n")).approve("bob")
			s1 := w.squashOf(w.refs[main], p1, "", plumbing.ZeroHash)
			s2 := w.squashOf(s1, p2, "", plumbing.ZeroHash)
			p2.check("ci", s2, "success")
			return up(main, w.refs[main], s2)
		}},
		{"a tree that adds one file", rulesSquash, CodeCandidateTree, "", func(w *world) Update {
			p := w.open(w.commit(w.c0, "a", "a\n")).approve("bob")
			right := w.squashOf(w.c0, p, "", plumbing.ZeroHash)
			extra := w.commit(right, "evil", "x\n")
			s := w.squashOf(w.c0, p, "", w.treeOf(extra))
			p.check("ci", s, "success")
			return up(main, w.c0, s)
		}},
		{"naming another pull request's head", rulesSquash, CodeSquashTrailers, "is the head of pull request", func(w *world) Update {
			pa := w.open(w.commit(w.c0, "a", "a\n")).approve("bob")
			pb := w.open(w.commit(w.c0, "b", "b\n")).approve("bob")
			s := w.squashOf(w.c0, pb, fmt.Sprintf("b\n\nGit-Plus-PR: %s\nGit-Plus-Head: %s\n", pa.id, pb.head), plumbing.ZeroHash)
			pa.check("ci", s, "success")
			pb.check("ci", s, "success")
			return up(main, w.c0, s)
		}},
		{"a second Git-Plus-Head", rulesSquash, CodeSquashTrailers, "appears 2 times", func(w *world) Update {
			p := w.open(w.commit(w.c0, "a", "a\n")).approve("bob")
			s := w.squashOf(w.c0, p, "a\n\n"+trailers(p)+"Git-Plus-Head: "+w.c0.String()+"\n", plumbing.ZeroHash)
			p.check("ci", s, "success")
			return up(main, w.c0, s)
		}},
		{"a trailer above the last paragraph", rulesSquash, CodeSquashTrailers, "outside the trailers", func(w *world) Update {
			p := w.open(w.commit(w.c0, "a", "a\n")).approve("bob")
			s := w.squashOf(w.c0, p, "a\n\nGit-Plus-PR: "+p.id+"\n\nGit-Plus-Head: "+p.head.String()+"\n", plumbing.ZeroHash)
			p.check("ci", s, "success")
			return up(main, w.c0, s)
		}},
		{"not approved", rulesSquash, CodeNotApproved, "", func(w *world) Update {
			p := w.open(w.commit(w.c0, "a", "a\n"))
			s := w.squashOf(w.c0, p, "", plumbing.ZeroHash)
			p.check("ci", s, "success")
			return up(main, w.c0, s)
		}},
		{"a stale head", rulesSquash, CodeNotAPRHead, "", func(w *world) Update {
			old := w.commit(w.c0, "a", "a\n")
			p := w.open(old).approve("bob")
			p.head = w.commit(w.c0, "a", "a2\n")
			w.event(p.ref, "alice", prUpdated(w, p.head))
			s := w.squashOf(w.c0, &prq{w: w, id: p.id, ref: p.ref, head: old}, "", plumbing.ZeroHash)
			p.check("ci", s, "success")
			return up(main, w.c0, s)
		}},
		{"the same pull request twice", rulesSquash, CodeDuplicatePR, "", func(w *world) Update {
			p := w.open(w.commit(w.c0, "a", "a\n")).approve("bob")
			s1 := w.squashOf(w.c0, p, "", plumbing.ZeroHash)
			s2 := w.squashOf(s1, p, "", plumbing.ZeroHash)
			p.check("ci", s1, "success").check("ci", s2, "success")
			return up(main, w.c0, s2)
		}},
		{"a merge step on a squash branch", rulesSquash, CodeCandidateParents, "takes squash steps", func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			p := w.open(h).approve("bob")
			c := w.merge(w.c0, h)
			p.check("ci", c, "success")
			return up(main, w.c0, c)
		}},
		{"two parents on a linear branch", rulesLinear, CodeNonlinear, "", func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			p := w.open(h).approve("bob")
			c := w.merge(w.c0, h)
			p.check("ci", c, "success")
			return up(main, w.c0, c)
		}},
		{"a squash step on a merge branch", rulesQueue, CodeNotAPRHead, "", func(w *world) Update {
			p := w.open(w.commit(w.c0, "a", "a\n")).approve("bob")
			s := w.squashOf(w.c0, p, "", plumbing.ZeroHash)
			p.check("ci", s, "success")
			return up(main, w.c0, s)
		}},
		{"a one-parent commit without trailers", rulesSquash, CodeNotAPRHead, "", func(w *world) Update {
			return up(main, w.c0, w.commit(w.c0, "a", "a\n"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, c.rules)
			v := w.judge1(c.setup(w))
			if v.Code != c.want || !strings.Contains(v.Reason, c.in) {
				t.Fatalf("code %q (%s), want %q naming %q", v.Code, v.Reason, c.want, c.in)
			}
		})
	}
}

func (w *world) treeOf(c plumbing.Hash) plumbing.Hash {
	w.t.Helper()
	return plumbing.NewHash(w.git("rev-parse", c.String()+"^{tree}"))
}

func prUpdated(w *world, head plumbing.Hash) hubrefs.PRUpdated {
	return hubrefs.PRUpdated{Base: w.base(hubrefs.TypePRUpdated), Head: head.String()}
}

// TestAuditSquash: verify --branch justifies squash landings the way the
// hook judged them (with or without their pr.merged), and finds a squash
// step whose tree was altered, one bound to a head that is not its pull
// request's, and a squash step on a branch taking merge steps.
func TestAuditSquash(t *testing.T) {
	audit := func(w *world) *AuditReport {
		t.Helper()
		rep, err := Audit(AuditInput{Objects: GoGitObjects(w.store), Refs: w.refs, Branch: main})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	merged := func(w *world, p *prq, commit plumbing.Hash) {
		w.event(p.ref, "queuer", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: p.head.String(), Branch: main, Commit: commit.String()})
	}
	w := newWorld(t, rulesSquash)
	p1 := w.open(w.commit(w.c0, "a", "a\n")).approve("bob")
	p2 := w.open(w.commit(w.c0, "b", "b\n")).approve("bob")
	s1 := w.squashOf(w.c0, p1, "", plumbing.ZeroHash)
	s2 := w.squashOf(s1, p2, "", plumbing.ZeroHash)
	p1.check("ci", s1, "success")
	p2.check("ci", s2, "success")
	if v := w.judge1(up(main, w.c0, s2)); !v.Accepted() {
		t.Fatalf("landing: %+v", v)
	}
	w.refs[main] = s2
	merged(w, p1, s1) // p2's pr.merged is missing: its records justify it
	rep := audit(w)
	if len(rep.Unjustified) != 0 || len(rep.Landings) != 2 || rep.Landings[0].Kind != LandingSquash || rep.Landings[1].Kind != LandingSquash ||
		rep.Landings[0].PR != p1.id || rep.Landings[1].PR != p2.id || !strings.HasPrefix(rep.Landings[0].Record, "pr.merged") || rep.Landings[1].Record != "records" {
		t.Fatalf("audit of two squash landings: %+v", rep)
	}
	if _, candidates, _, _ := rep.Counts(); candidates != 2 {
		t.Errorf("counts: %d candidate steps", candidates)
	}

	// Written around the boundary: a third step whose tree adds a file.
	p3 := w.open(w.commit(w.c0, "c", "c\n")).approve("bob")
	extra := w.commit(w.squashOf(s2, p3, "", plumbing.ZeroHash), "evil", "x\n")
	s3 := w.squashOf(s2, p3, "", w.treeOf(extra))
	p3.check("ci", s3, "success")
	w.refs[main] = s3
	if rep := audit(w); len(rep.Unjustified) != 1 || rep.Unjustified[0].Commit != s3 || rep.Unjustified[0].Code != CodeCandidateTree {
		t.Fatalf("altered squash step: %+v", rep.Unjustified)
	}

	// On a branch that took merge steps.
	w2 := newWorld(t, rulesQueue)
	q := w2.open(w2.commit(w2.c0, "a", "a\n")).approve("bob")
	s := w2.squashOf(w2.c0, q, "", plumbing.ZeroHash)
	q.check("ci", s, "success")
	w2.refs[main] = s
	if rep := audit(w2); len(rep.Unjustified) != 1 || rep.Unjustified[0].Code != CodeCandidateParents {
		t.Fatalf("squash step on a merge branch: %+v", rep.Unjustified)
	}
}

// TestSquashFacts: publishing squash steps on their candidate branches
// records their squash facts; the landing then merges nothing (it reads no
// head) and gives the verdicts it gives without them; a fact never stands
// in for the checks, and one for another head changes nothing.
func TestSquashFacts(t *testing.T) {
	w := newWorld(t, rulesSquash)
	h1, h2 := w.commit(w.c0, "a", "a\n"), w.commit(w.c0, "b", "b\n")
	p1, p2 := w.open(h1).approve("bob"), w.open(h2).approve("bob")
	s1 := w.squashOf(w.c0, p1, "", plumbing.ZeroHash)
	s2 := w.squashOf(s1, p2, "", plumbing.ZeroHash)
	p1.check("ci", s1, "success")
	p2.check("ci", s2, "success")
	branch := func(p *prq) string { return "refs/heads/queue/main/" + p.id }
	cache := &droppingCache{mapCache{m: map[plumbing.Hash][]byte{}}}
	objs := &counting{Objects: GoGitObjects(w.store), n: map[plumbing.Hash]int{}}
	judge := func(us ...Update) []Verdict {
		t.Helper()
		return Judge(Input{Objects: objs, Refs: w.refs, Updates: us, Cache: cache})
	}
	landing := up(main, w.c0, s2)
	if v := judge(landing); v[0].Code != "" || objs.total(h1, h2) == 0 {
		t.Fatalf("landing without facts: %+v, heads read %d times", v[0], objs.total(h1, h2))
	}
	for _, v := range judge(up(branch(p1), plumbing.ZeroHash, s1), up(branch(p2), plumbing.ZeroHash, s2)) {
		if v.Code != "" {
			t.Fatalf("publishing a squash step refused: %+v", v)
		}
	}
	for _, s := range []plumbing.Hash{s1, s2} {
		if _, ok := cache.m[SquashFactKey(s)]; !ok {
			t.Fatalf("no squash fact for %s after its branch was pushed", s)
		}
		if _, ok := cache.m[MergeFactKey(s)]; ok {
			t.Fatalf("a merge fact for squash step %s", s)
		}
	}
	w.refs[branch(p1)], w.refs[branch(p2)] = s1, s2
	objs.n = map[plumbing.Hash]int{}
	if v := judge(landing); v[0].Code != "" || objs.total(h1, h2) != 0 {
		t.Fatalf("landing with facts: %+v, heads read %d times", v[0], objs.total(h1, h2))
	}
	p2.check("ci", s2, "failure")
	if v := judge(landing); v[0].Code != CodeChecksFailed {
		t.Fatalf("landing with a failed check and squash facts: %+v", v[0])
	}
	p2.check("ci", s2, "success")
	// A fact of s2 naming another head is not believed: the landing merges.
	cache.m[SquashFactKey(s2)] = encodeSquashFact(s2, w.treeOf(s2), s1, h1)
	objs.n = map[plumbing.Hash]int{}
	if v := judge(landing); v[0].Code != "" || objs.total(h2) == 0 {
		t.Fatalf("a fact for another head: %+v, head read %d times", v[0], objs.total(h2))
	}
	// Moving a candidate branch drops the fact of the step it held.
	judge(up(branch(p1), s1, w.c0))
	if _, ok := cache.m[SquashFactKey(s1)]; ok {
		t.Fatal("the squash fact outlived its branch")
	}
}

// TestAuditMethodAndLinear: the audit refuses a merge step on a branch
// that took squash steps, and a two-parent landing on a linear branch.
func TestAuditMethodAndLinear(t *testing.T) {
	for _, c := range []struct{ rules, want string }{
		{`{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"queueCandidates":true,"mergeMethod":"squash"}}}`, CodeCandidateParents},
		{rulesLinear, CodeCandidateParents},
		{rulesQueue, ""},
	} {
		w := newWorld(t, c.rules)
		h := w.commit(w.c0, "a", "a\n")
		p := w.open(h).approve("bob")
		m := w.merge(w.c0, h)
		p.check("ci", m, "success")
		w.refs[main] = m
		rep, err := Audit(AuditInput{Objects: GoGitObjects(w.store), Refs: w.refs, Branch: main})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if len(rep.Unjustified) > 0 {
			got = rep.Unjustified[0].Code
		}
		if got != c.want {
			t.Errorf("%s: %+v, want %q", c.rules, rep.Unjustified, c.want)
		}
	}
	// A pull request head that is a merge, landed directly on a linear branch.
	w := newWorld(t, rulesLinear)
	a, b := w.commit(w.c0, "a", "a\n"), w.commit(w.c0, "b", "b\n")
	m := w.merge(a, b)
	w.ready(m)
	w.refs[main] = m
	rep, err := Audit(AuditInput{Objects: GoGitObjects(w.store), Refs: w.refs, Branch: main})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unjustified) == 0 || rep.Unjustified[len(rep.Unjustified)-1].Code != CodeNonlinear {
		t.Errorf("a merge head on a linear branch: %+v", rep.Unjustified)
	}
}
