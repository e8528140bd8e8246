package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

const (
	rulesQueue   = `{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"queueCandidates":true,"queueDepth":3,"requireResolvedThreads":true}}}`
	rulesNoQueue = `{"protected":{"refs/heads/main":{"requiredChecks":["ci"]}}}`
	rulesFF      = `{"protected":{"refs/heads/main":{"requirePullRequest":false}}}`
	rulesProv    = `{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"requireProvenance":true,"queueCandidates":true}}}`
	rulesFFProv  = `{"protected":{"refs/heads/main":{"requirePullRequest":false,"requireProvenance":true}}}`
)

func up(ref string, old, new plumbing.Hash) Update { return Update{Ref: ref, Old: old, New: new} }

func TestBranch(t *testing.T) {
	type tc struct {
		name  string
		rules string
		setup func(w *world) Update
		want  string // "" = accepted
		in    string // substring of the reason
	}
	three := func(w *world, mutate func(w *world, hs []plumbing.Hash, ps []*prq) plumbing.Hash) Update {
		var hs []plumbing.Hash
		var ps []*prq
		for i := 0; i < 3; i++ {
			h := w.commit(w.c0, "f"+string(rune('a'+i)), "x\n")
			hs = append(hs, h)
			ps = append(ps, w.open(h).approve("bob"))
		}
		return up(main, w.c0, mutate(w, hs, ps))
	}
	chain := func(w *world, hs []plumbing.Hash, ps []*prq) plumbing.Hash {
		c := w.c0
		for i, h := range hs {
			c = w.merge(c, h)
			ps[i].check("ci", c, "success")
		}
		return c
	}
	cases := []tc{
		{name: "unprotected branch passes", rules: rulesQueue, setup: func(w *world) Update {
			return up("refs/heads/topic", plumbing.ZeroHash, w.commit(w.c0, "t", "t\n"))
		}},
		{name: "protected delete", rules: rulesQueue, want: CodeProtectedDelete, setup: func(w *world) Update {
			return up(main, w.c0, plumbing.ZeroHash)
		}},
		{name: "non-fast-forward", rules: rulesQueue, want: CodeNonFastForward, setup: func(w *world) Update {
			a := w.commit(w.c0, "a", "a\n")
			w.refs[main] = a
			b := w.ready(w.commit(w.c0, "b", "b\n")).head
			return up(main, a, b)
		}},
		{name: "stale old value", rules: rulesQueue, want: CodeRefMoved, setup: func(w *world) Update {
			return up(main, w.commit(w.c0, "a", "a\n"), w.c0)
		}},
		{name: "no pull request needed: fast-forward", rules: rulesFF, setup: func(w *world) Update {
			return up(main, w.c0, w.commit(w.commit(w.c0, "a", "a\n"), "b", "b\n"))
		}},
		{name: "fast-forward reaching the tip through a second parent only", rules: rulesFF, setup: func(w *world) Update {
			other := w.commit(w.commit(plumbing.ZeroHash, "o", "o\n"), "p", "p\n")
			w.git("checkout", "-q", "--detach", other.String())
			w.git("merge", "-q", "--no-ff", "--allow-unrelated-histories", "-m", "merge main in", w.c0.String())
			return up(main, w.c0, w.head())
		}},
		{name: "non-fast-forward past the first-parent probe", rules: rulesFF, want: CodeNonFastForward, setup: func(w *world) Update {
			c := w.commit(plumbing.ZeroHash, "r", "r\n")
			for i := 0; i < firstParentProbe+2; i++ {
				c = w.commit(c, "r", fmt.Sprintf("%d\n", i))
			}
			return up(main, w.c0, c)
		}},
		{name: "direct landing of an approved, checked head", rules: rulesNoQueue, setup: func(w *world) Update {
			return up(main, w.c0, w.ready(w.commit(w.c0, "a", "a\n")).head)
		}},
		{name: "direct landing creates the branch", rules: rulesNoQueue, setup: func(w *world) Update {
			delete(w.refs, main)
			return up(main, plumbing.ZeroHash, w.ready(w.commit(w.c0, "a", "a\n")).head)
		}},
		{name: "not approved", rules: rulesNoQueue, want: CodeNotApproved, in: "0 of 1 required approvals", setup: func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			w.open(h).check("ci", h, "success")
			return up(main, w.c0, h)
		}},
		{name: "approval of an older head does not count", rules: rulesNoQueue, want: CodeNotApproved, setup: func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			p := w.ready(h)
			h2 := w.commit(h, "a2", "a\n")
			w.event(p.ref, "alice", hubrefs.PRUpdated{Base: w.base(hubrefs.TypePRUpdated), Head: h2.String()})
			p.head = h2
			p.check("ci", h2, "success")
			return up(main, w.c0, h2)
		}},
		{name: "a removed reviewer's approval stops counting", rules: rulesNoQueue, want: CodeNotApproved, setup: func(w *world) Update {
			p := w.ready(w.commit(w.c0, "a", "a\n"))
			w.event(hubrefs.TrustRef, "admin", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "bob"})
			return up(main, w.c0, p.head)
		}},
		{name: "unresolved threads", rules: rulesQueue, want: CodeUnresolvedThreads, setup: func(w *world) Update {
			p := w.ready(w.commit(w.c0, "a", "a\n"))
			w.event(p.ref, "bob", hubrefs.Thread{Base: w.base(hubrefs.TypeThreadOpened), Thread: "t1"})
			return up(main, w.c0, p.head)
		}},
		{name: "checks missing", rules: rulesNoQueue, want: CodeChecksMissing, in: "ci", setup: func(w *world) Update {
			return up(main, w.c0, w.open(w.commit(w.c0, "a", "a\n")).approve("bob").head)
		}},
		{name: "checks failed", rules: rulesNoQueue, want: CodeChecksFailed, setup: func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			w.open(h).approve("bob").check("ci", h, "failure")
			return up(main, w.c0, h)
		}},
		{name: "check from a non-holder does not count", rules: rulesNoQueue, want: CodeChecksMissing, setup: func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			p := w.open(h).approve("bob")
			// carol holds no hub.check:ci: write the event bypassing the boundary.
			w.event(p.ref, "carol", hubrefs.Check{Base: w.base(hubrefs.TypeCheckCompleted), Name: "ci", Head: h.String(), Conclusion: "success"})
			return up(main, w.c0, h)
		}},
		{name: "not a pull request head", rules: rulesNoQueue, want: CodeNotAPRHead, setup: func(w *world) Update {
			return up(main, w.c0, w.commit(w.c0, "a", "a\n"))
		}},
		{name: "closed pull request", rules: rulesNoQueue, want: CodePRClosed, setup: func(w *world) Update {
			return up(main, w.c0, w.ready(w.commit(w.c0, "a", "a\n")).close().head)
		}},
		{name: "pull request based elsewhere", rules: rulesNoQueue, want: CodeNotAPRHead, setup: func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			w.ready(h)
			w.refs["refs/heads/other"] = w.c0
			return up(main, w.c0, w.commit(w.c0, "b", "b\n"))
		}},
		{name: "missing commit", rules: rulesNoQueue, want: CodeMissingObject, in: "1111111111111111111111111111111111111111", setup: func(w *world) Update {
			return up(main, w.c0, plumbing.NewHash("1111111111111111111111111111111111111111"))
		}},
		{name: "candidate chain of three built with git merge", rules: rulesQueue, setup: func(w *world) Update {
			return three(w, chain)
		}},
		{name: "candidates off", rules: rulesNoQueue, want: CodeCandidatesOff, setup: func(w *world) Update {
			return three(w, chain)
		}},
		{name: "chain longer than queueDepth", rules: rulesQueue, want: CodeChainTooDeep, in: "3", setup: func(w *world) Update {
			return three(w, func(w *world, hs []plumbing.Hash, ps []*prq) plumbing.Hash {
				c := chain(w, hs, ps)
				h := w.commit(w.c0, "fd", "x\n")
				p := w.open(h).approve("bob")
				c = w.merge(c, h)
				p.check("ci", c, "success")
				return c
			})
		}},
		{name: "swapped parents", rules: rulesQueue, want: CodeCandidateParents, setup: func(w *world) Update {
			return three(w, func(w *world, hs []plumbing.Hash, ps []*prq) plumbing.Hash {
				good := w.merge(w.c0, hs[0])
				tree := w.git("rev-parse", good.String()+"^{tree}")
				c := plumbing.NewHash(w.git("commit-tree", tree, "-p", hs[0].String(), "-p", w.c0.String(), "-m", "swapped"))
				ps[0].check("ci", c, "success")
				return c
			})
		}},
		{name: "three parents", rules: rulesQueue, want: CodeCandidateParents, setup: func(w *world) Update {
			return three(w, func(w *world, hs []plumbing.Hash, ps []*prq) plumbing.Hash {
				c := w.merge(w.c0, hs[0], hs[1])
				ps[0].check("ci", c, "success")
				ps[1].check("ci", c, "success")
				return c
			})
		}},
		{name: "tree adds a file", rules: rulesQueue, want: CodeCandidateTree, setup: func(w *world) Update {
			return three(w, func(w *world, hs []plumbing.Hash, ps []*prq) plumbing.Hash {
				c1 := w.merge(w.c0, hs[0])
				ps[0].check("ci", c1, "success")
				w.write("smuggled", "evil\n")
				w.git("add", "-A")
				w.git("commit", "-q", "--amend", "-m", "candidate")
				bad := w.head()
				ps[0].check("ci", bad, "success")
				c2 := w.merge(bad, hs[1])
				ps[1].check("ci", c2, "success")
				return c2
			})
		}},
		{name: "second parent not a pull request head", rules: rulesQueue, want: CodeNotAPRHead, in: "step 2", setup: func(w *world) Update {
			return three(w, func(w *world, hs []plumbing.Hash, ps []*prq) plumbing.Hash {
				c := chain(w, hs[:1], ps[:1])
				return w.merge(c, w.commit(w.c0, "zz", "z\n"))
			})
		}},
		{name: "closed pull request in a chain", rules: rulesQueue, want: CodePRClosed, setup: func(w *world) Update {
			return three(w, func(w *world, hs []plumbing.Hash, ps []*prq) plumbing.Hash {
				c := chain(w, hs, ps)
				ps[1].close()
				return c
			})
		}},
		{name: "checks only on the pull request head", rules: rulesQueue, want: CodeChecksMissing, in: "candidate", setup: func(w *world) Update {
			return three(w, func(w *world, hs []plumbing.Hash, ps []*prq) plumbing.Hash {
				c := w.c0
				for i, h := range hs {
					ps[i].check("ci", h, "success")
					c = w.merge(c, h)
				}
				return c
			})
		}},
		{name: "unapproved pull request in a chain", rules: rulesQueue, want: CodeNotApproved, setup: func(w *world) Update {
			return three(w, func(w *world, hs []plumbing.Hash, ps []*prq) plumbing.Hash {
				h := w.commit(w.c0, "u", "u\n")
				p := w.open(h)
				c := chain(w, hs[:2], ps[:2])
				c = w.merge(c, h)
				p.check("ci", c, "success")
				return c
			})
		}},
		{name: "duplicate pull request", rules: rulesQueue, want: CodeDuplicatePR, setup: func(w *world) Update {
			return three(w, func(w *world, hs []plumbing.Hash, ps []*prq) plumbing.Hash {
				c1 := w.merge(w.c0, hs[0])
				ps[0].check("ci", c1, "success")
				// A hand-made second step naming the same head again.
				w.git("checkout", "-q", "--detach", c1.String())
				w.git("commit", "-q", "--allow-empty", "-m", "again")
				tree := w.git("rev-parse", "HEAD^{tree}")
				c2 := plumbing.NewHash(w.git("commit-tree", tree, "-p", c1.String(), "-p", hs[0].String(), "-m", "dup"))
				ps[0].check("ci", c2, "success")
				return c2
			})
		}},
		{name: "candidate conflict", rules: rulesQueue, want: CodeCandidateConflict, in: "README", setup: func(w *world) Update {
			h1 := w.commit(w.c0, "README", "one\n")
			h2 := w.commit(w.c0, "README", "two\n")
			p1, p2 := w.open(h1).approve("bob"), w.open(h2).approve("bob")
			c1 := w.merge(w.c0, h1)
			p1.check("ci", c1, "success")
			// Resolve the conflict by hand: ours.
			c2 := plumbing.NewHash(w.git("commit-tree", w.git("rev-parse", c1.String()+"^{tree}"), "-p", c1.String(), "-p", h2.String(), "-m", "resolved"))
			p2.check("ci", c2, "success")
			return up(main, w.c0, c2)
		}},
		{name: "provenance branch takes no candidates", rules: rulesProv, want: CodeProvenance, in: "candidates", setup: func(w *world) Update {
			return three(w, chain)
		}},
		{name: "provenance: unsigned head", rules: rulesProv, want: CodeProvenance, in: "not signed", setup: func(w *world) Update {
			return up(main, w.c0, w.ready(w.commit(w.c0, "a", "a\n")).head)
		}},
		{name: "provenance: signed by a member without source.push", rules: rulesProv, want: CodeProvenance, in: "source.push", setup: func(w *world) Update {
			return up(main, w.c0, w.ready(w.signCommit(w.commit(w.c0, "a", "a\n"), "bob")).head)
		}},
		{name: "provenance: signed by a non-member", rules: rulesFFProv, want: CodeProvenance, in: "not a member", setup: func(w *world) Update {
			return up(main, w.c0, w.signCommit(w.commit(w.c0, "a", "a\n"), "mallory"))
		}},
		{name: "provenance: every introduced commit signed", rules: rulesProv, setup: func(w *world) Update {
			a := w.signCommit(w.commit(w.c0, "a", "a\n"), "alice")
			return up(main, w.c0, w.ready(w.signCommit(w.commit(a, "b", "b\n"), "alice")).head)
		}},
		{name: "provenance: one unsigned commit below a signed head", rules: rulesFFProv, want: CodeProvenance, setup: func(w *world) Update {
			a := w.commit(w.c0, "a", "a\n")
			return up(main, w.c0, w.signCommit(w.commit(a, "b", "b\n"), "alice"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, c.rules)
			u := c.setup(w)
			v := w.judge1(u)
			if v.Code != c.want {
				t.Fatalf("code %q (%s), want %q", v.Code, v.Reason, c.want)
			}
			if v.Accepted() != (c.want == "") || v.Update != u {
				t.Fatalf("verdict %+v inconsistent", v)
			}
			if c.want != "" && !strings.Contains(v.Reason, c.in) {
				t.Fatalf("reason %q does not mention %q", v.Reason, c.in)
			}
		})
	}
}
