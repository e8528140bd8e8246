package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
)

// TestHubEvents: strict payloads, linear logs and pr.merged only for what
// landed (docs/events.md, docs/trust.md).
func TestHubEvents(t *testing.T) {
	qID := "01900000-0000-7000-8000-0000000000bb"
	qRef := hubrefs.QueueRefPrefix + qID
	merged := func(w *world, rev, branch, commit plumbing.Hash, ref string) hubrefs.PRMerged {
		b := main
		if ref != "" {
			b = ref
		}
		return hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: rev.String(), Branch: b, Commit: commit.String(), Trust: w.refs[hubrefs.TrustRef].String()}
	}
	// alices builds a commit of alice's on parent with tree whose message
	// carries the squash trailers binding pull request p at head.
	alices := func(w *world, parent, tree plumbing.Hash, p *prq, head plumbing.Hash) plumbing.Hash {
		return w.storeRaw(plumbing.CommitObject, []byte(fmt.Sprintf("tree %s\nparent %s\nauthor alice <a@example.invalid> 1700000000 +0000\ncommitter alice <a@example.invalid> 1700000000 +0000\n\nalice's change\n\n%s: %s\n%s: %s\n",
			tree, parent, queue.TrailerPR, p.id, queue.TrailerHead, head)))
	}
	const squashRules = `{"protected":{"refs/heads/main":{"mergeMethod":"squash"}}}`
	appendOn := func(w *world, ref, who string, payload any) Update {
		old := w.refs[ref]
		return up(ref, old, w.eventOn([]plumbing.Hash{old}, who, payload))
	}
	cases := []struct {
		name  string
		rules string // "": main protected, merge method
		setup func(w *world) []Update
		want  []string // per update
		in    string
	}{
		{name: "pr.merged without the trust it was written under", want: []string{CodeMergedTrust}, in: "field trust", setup: func(w *world) []Update {
			h := w.commit(w.c0, "a.txt", "1\n")
			p := w.ready(h)
			w.refs[main] = h
			m := merged(w, h, plumbing.ZeroHash, h, "")
			m.Trust = ""
			return []Update{appendOn(w, p.ref, "queuer", m)}
		}},
		{name: "pr.merged written under an older trust tip", want: []string{CodeRefMoved}, in: "was written under", setup: func(w *world) []Update {
			h := w.commit(w.c0, "a.txt", "1\n")
			p := w.ready(h)
			w.refs[main] = h
			m := merged(w, h, plumbing.ZeroHash, h, "")
			w.event(hubrefs.TrustRef, "admin", w.memberAdded("mallory", "hub.pr"))
			return []Update{appendOn(w, p.ref, "queuer", m)}
		}},
		{name: "pr.merged naming a trust event that is no tip", want: []string{CodeRefMoved}, setup: func(w *world) []Update {
			h := w.commit(w.c0, "a.txt", "1\n")
			p := w.ready(h)
			w.refs[main] = h
			m := merged(w, h, plumbing.ZeroHash, h, "")
			m.Trust = h.String()
			return []Update{appendOn(w, p.ref, "queuer", m)}
		}},
		// Issue #35 item 1: trailers alone bind nothing. Bob's pull request
		// is open at hb; alice's reviewed pull request lands a commit whose
		// message binds bob's at hb (its tree even that of squashing hb).
		{name: "pr.merged naming a commit whose trailers alone bind it, on a merge branch", want: []string{CodeMergedNotLanded}, in: "mergeMethod merge", setup: func(w *world) []Update {
			hb := w.commit(w.c0, "b.txt", "bob\n")
			bob := w.ready(hb)
			ha := alices(w, w.c0, mergeTreeOf(w, w.c0, hb), bob, hb)
			w.ready(ha)
			w.refs[main] = ha
			return []Update{appendOn(w, bob.ref, "alice", merged(w, hb, plumbing.ZeroHash, ha, ""))}
		}},
		{name: "pr.merged naming a commit with the trailers but another tree, on a squash branch", rules: squashRules, want: []string{CodeMergedNotLanded}, in: "is not the merge", setup: func(w *world) []Update {
			hb := w.commit(w.c0, "b.txt", "bob\n")
			bob := w.ready(hb)
			other := w.commit(w.c0, "a.txt", "alice\n")
			ha := alices(w, w.c0, commitTreeOf(w, other), bob, hb)
			w.ready(ha)
			w.refs[main] = ha
			return []Update{appendOn(w, bob.ref, "alice", merged(w, hb, plumbing.ZeroHash, ha, ""))}
		}},
		{name: "pr.merged naming a squash step of the branch", rules: squashRules, want: []string{""}, setup: func(w *world) []Update {
			hb := w.commit(w.c0, "b.txt", "bob\n")
			bob := w.ready(hb)
			s := alices(w, w.c0, mergeTreeOf(w, w.c0, hb), bob, hb)
			w.refs[main] = s
			return []Update{appendOn(w, bob.ref, "alice", merged(w, hb, plumbing.ZeroHash, s, ""))}
		}},
		{name: "pr.merged naming an old head, nothing landed", want: []string{CodeMergedNotLanded}, in: "does not contain commit", setup: func(w *world) []Update {
			h1 := w.commit(w.c0, "a.txt", "1\n")
			p := w.ready(h1)
			h2 := w.commit(h1, "a.txt", "2\n")
			w.event(p.ref, "alice", hubrefs.PRUpdated{Base: w.base(hubrefs.TypePRUpdated), Head: h2.String()})
			return []Update{appendOn(w, p.ref, "queuer", merged(w, h1, plumbing.ZeroHash, h1, ""))}
		}},
		{name: "pr.merged pushed with the landing it records", want: []string{"", ""}, setup: func(w *world) []Update {
			h := w.commit(w.c0, "a.txt", "1\n")
			p := w.ready(h)
			return []Update{up(main, w.c0, h), appendOn(w, p.ref, "alice", merged(w, h, plumbing.ZeroHash, h, ""))}
		}},
		{name: "pr.merged after the landing", want: []string{""}, setup: func(w *world) []Update {
			h := w.commit(w.c0, "a.txt", "1\n")
			p := w.ready(h)
			after := w.commit(h, "b.txt", "2\n")
			w.refs[main] = after
			return []Update{appendOn(w, p.ref, "queuer", merged(w, h, plumbing.ZeroHash, after, ""))}
		}},
		{name: "pr.merged whose commit does not carry the revision", want: []string{CodeMergedNotLanded}, in: "does not contain revision", setup: func(w *world) []Update {
			h := w.commit(w.c0, "a.txt", "1\n")
			p := w.ready(h)
			other := w.commit(w.c0, "b.txt", "2\n")
			w.refs[main] = other
			return []Update{appendOn(w, p.ref, "queuer", merged(w, h, plumbing.ZeroHash, other, ""))}
		}},
		{name: "pr.merged naming a commit not in the repository", want: []string{CodeMergedNotLanded}, setup: func(w *world) []Update {
			h := w.commit(w.c0, "a.txt", "1\n")
			p := w.ready(h)
			return []Update{appendOn(w, p.ref, "queuer", merged(w, h, plumbing.ZeroHash, plumbing.NewHash("3333333333333333333333333333333333333333"), ""))}
		}},
		{name: "pr.merged on another branch than the base", want: []string{CodeMergedWrongBranch}, setup: func(w *world) []Update {
			h := w.commit(w.c0, "a.txt", "1\n")
			p := w.ready(h)
			w.refs["refs/heads/other"] = h
			return []Update{appendOn(w, p.ref, "queuer", merged(w, h, plumbing.ZeroHash, h, "refs/heads/other"))}
		}},
		{name: "queue.candidate whose second parent is not its head", want: []string{CodeHubMalformed}, in: "parents[1]", setup: func(w *world) []Update {
			w.event(qRef, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: qID, Target: main})
			h := w.commit(w.c0, "a.txt", "1\n")
			return []Update{appendOn(w, qRef, "queuer", hubrefs.QueueCandidate{Base: w.base(hubrefs.TypeQueueCandidate), PR: "01900000-0000-7000-8000-0000000000aa",
				Head: h.String(), Step: h.String(), Parents: []string{w.c0.String(), w.c0.String()}, Branch: "refs/heads/queue/main/x"})}
		}},
		{name: "queue.entered with an unknown priority", want: []string{CodeHubMalformed}, in: "priority", setup: func(w *world) []Update {
			w.event(qRef, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: qID, Target: main})
			return []Update{appendOn(w, qRef, "queuer", hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: "01900000-0000-7000-8000-0000000000aa",
				Head: w.c0.String(), BaseRef: main, Priority: "urgent"})}
		}},
		{name: "member.added with a key folded by encoding/json", want: []string{CodeHubMalformed}, in: "capſ", setup: func(w *world) []Update {
			old := w.refs[hubrefs.TrustRef]
			key := hubrefs.AuthorizedKey(w.keys["mallory"].PublicKey())
			msg := "member.added\n\n{\"type\":\"member.added\",\"repo\":\"" + repoID + "\",\"name\":\"mallory\",\"key\":\"" + key + "\",\"caps\":[\"hub.pr\"],\"capſ\":[\"repo.admin\"]}\n"
			return []Update{up(hubrefs.TrustRef, old, w.craft([]plumbing.Hash{old}, "admin", msg, true, false))}
		}},
		{name: "attack 3: a removed admin's fork joined back", want: []string{CodeHubNotLinear}, setup: func(w *world) []Update {
			e1 := w.event(hubrefs.TrustRef, "admin", w.memberAdded("mallory", "repo.admin"))
			r1 := w.event(hubrefs.TrustRef, "admin", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "mallory"})
			fork := w.eventOn([]plumbing.Hash{e1}, "mallory", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "admin"})
			join := w.eventOn([]plumbing.Hash{r1, fork}, "mallory", w.memberAdded("carol", "repo.admin"))
			return []Update{up(hubrefs.TrustRef, r1, join)}
		}},
		{name: "a fork written on an older trust event", want: []string{CodeHubRewind}, setup: func(w *world) []Update {
			e1 := w.event(hubrefs.TrustRef, "admin", w.memberAdded("mallory", "repo.admin"))
			r1 := w.event(hubrefs.TrustRef, "admin", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "mallory"})
			return []Update{up(hubrefs.TrustRef, r1, w.eventOn([]plumbing.Hash{e1}, "mallory", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "admin"}))}
		}},
		{name: "a chain of new events on the tip", want: []string{""}, setup: func(w *world) []Update {
			old := w.refs[hubrefs.TrustRef]
			a := w.eventOn([]plumbing.Hash{old}, "admin", w.memberAdded("mallory", "hub.pr"))
			b := w.eventOn([]plumbing.Hash{a}, "admin", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "mallory"})
			return []Update{up(hubrefs.TrustRef, old, b)}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rules := `{"protected":{"refs/heads/main":{}}}`
			if c.rules != "" {
				rules = c.rules
			}
			w := newWorld(t, rules)
			us := c.setup(w)
			vs := w.judge(us...)
			for i, v := range vs {
				if v.Code != c.want[i] {
					t.Fatalf("update %d (%s): code %q (%s), want %q", i, v.Update.Ref, v.Code, v.Reason, c.want[i])
				}
				if c.want[i] != "" && !strings.Contains(v.Reason, c.in) {
					t.Fatalf("reason %q does not mention %q", v.Reason, c.in)
				}
			}
		})
	}
}
