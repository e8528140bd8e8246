package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

func TestHub(t *testing.T) {
	type tc struct {
		name  string
		rules string
		setup func(w *world) Update
		want  string
		in    string
	}
	prID := "01900000-0000-7000-8000-0000000000aa"
	prRef := hubrefs.PRRefPrefix + prID
	qID := "01900000-0000-7000-8000-0000000000bb"
	qRef := hubrefs.QueueRefPrefix + qID
	opened := func(w *world, id string) hubrefs.PROpened {
		return hubrefs.PROpened{Base: w.base(hubrefs.TypePROpened), ID: id, BaseRef: main, Head: w.c0.String(), Title: "t"}
	}
	// newPR pushes a fresh pull request ref whose root is signed by who.
	newPR := func(w *world, who string, p any) Update {
		return up(prRef, plumbing.ZeroHash, w.eventOn(nil, who, p))
	}
	// appendPR pushes one event on an existing pull request.
	appendPR := func(w *world, who string, p any) Update {
		root := w.eventOn(nil, "alice", opened(w, prID))
		w.refs[prRef] = root
		return up(prRef, root, w.eventOn([]plumbing.Hash{root}, who, p))
	}
	review := func(w *world) hubrefs.Review {
		return hubrefs.Review{Base: w.base(hubrefs.TypeReviewSubmit), Head: w.c0.String(), BaseRef: main, Verdict: "approve"}
	}
	cases := []tc{
		{name: "open a pull request", setup: func(w *world) Update { return newPR(w, "alice", opened(w, prID)) }},
		{name: "review a pull request", setup: func(w *world) Update { return appendPR(w, "bob", review(w)) }},
		{name: "join of two branches", want: CodeHubNotLinear, in: "joins 2 parents", setup: func(w *world) Update {
			root := w.eventOn(nil, "alice", opened(w, prID))
			w.refs[prRef] = root
			a := w.eventOn([]plumbing.Hash{root}, "bob", review(w))
			b := w.eventOn([]plumbing.Hash{root}, "ci", hubrefs.Check{Base: w.base(hubrefs.TypeCheckCompleted), Name: "ci", Head: w.c0.String(), Conclusion: "success"})
			j := w.eventOn([]plumbing.Hash{a, b}, "carol", hubrefs.Review{Base: w.base(hubrefs.TypeReviewSubmit), Head: w.c0.String(), BaseRef: main, Verdict: "comment"})
			return up(prRef, root, j)
		}},
		{name: "no trust", want: CodeNoTrust, in: "git+ init", setup: func(w *world) Update {
			delete(w.refs, hubrefs.TrustRef)
			return newPR(w, "alice", opened(w, prID))
		}},
		{name: "delete", want: CodeHubDelete, setup: func(w *world) Update {
			u := appendPR(w, "bob", review(w))
			return up(prRef, u.Old, plumbing.ZeroHash)
		}},
		{name: "rewind", want: CodeHubRewind, setup: func(w *world) Update {
			u := appendPR(w, "bob", review(w))
			w.refs[prRef] = u.New
			return up(prRef, u.New, u.Old)
		}},
		{name: "rewrite", want: CodeHubRewind, setup: func(w *world) Update {
			u := appendPR(w, "bob", review(w))
			w.refs[prRef] = u.New
			return up(prRef, u.New, w.eventOn([]plumbing.Hash{u.Old}, "carol", review(w)))
		}},
		{name: "malformed payload", want: CodeHubMalformed, in: "head", setup: func(w *world) Update {
			return appendPR(w, "alice", hubrefs.PRUpdated{Base: w.base(hubrefs.TypePRUpdated), Head: "not-a-commit"})
		}},
		{name: "event of another namespace", want: CodeHubMalformed, setup: func(w *world) Update {
			return appendPR(w, "queuer", hubrefs.QueueReset{Base: w.base(hubrefs.TypeQueueReset), Tip: w.c0.String()})
		}},
		{name: "unknown type", want: CodeHubUnknownType, setup: func(w *world) Update {
			u := appendPR(w, "bob", review(w))
			return up(prRef, u.Old, w.craft([]plumbing.Hash{u.Old}, "bob", "pr.frobbed\n\n{\"type\":\"pr.frobbed\",\"repo\":\""+repoID+"\"}\n", true, false))
		}},
		{name: "unsigned", want: CodeUnsigned, setup: func(w *world) Update {
			u := appendPR(w, "bob", review(w))
			return up(prRef, u.Old, w.craft([]plumbing.Hash{u.Old}, "bob", "pr.closed\n\n{\"type\":\"pr.closed\",\"repo\":\""+repoID+"\"}\n", false, false))
		}},
		{name: "bad signature", want: CodeBadSignature, setup: func(w *world) Update {
			u := appendPR(w, "bob", review(w))
			return up(prRef, u.Old, w.craft([]plumbing.Hash{u.Old}, "alice", "pr.closed\n\n{\"type\":\"pr.closed\",\"repo\":\""+repoID+"\"}\n", true, true))
		}},
		{name: "events-per-ref ceiling", rules: `{"ceilings":{"eventsPerRef":2}}`, want: CodeHubCeiling, in: "2", setup: func(w *world) Update {
			u := appendPR(w, "bob", review(w))
			return up(prRef, u.Old, w.eventOn([]plumbing.Hash{u.New}, "carol", review(w)))
		}},
		{name: "payload ceiling", rules: `{"ceilings":{"eventBytes":300}}`, want: CodeHubCeiling, setup: func(w *world) Update {
			p := opened(w, prID)
			p.Body = strings.Repeat("x", 400)
			return newPR(w, "alice", p)
		}},
		{name: "oversized object", rules: `{"ceilings":{"eventBytes":1}}`, want: CodeHubCeiling, in: "larger", setup: func(w *world) Update {
			u := appendPR(w, "bob", review(w))
			big := w.craft([]plumbing.Hash{u.Old}, "bob", "pr.closed\n\n{\"type\":\"pr.closed\",\"repo\":\""+repoID+"\",\"x\":\""+strings.Repeat("y", 70<<10)+"\"}\n", true, false)
			return up(prRef, u.Old, big)
		}},
		{name: "not a member", want: CodeNotMember, setup: func(w *world) Update { return appendPR(w, "mallory", review(w)) }},
		{name: "missing capability", want: CodeMissingCapability, setup: func(w *world) Update { return newPR(w, "bob", opened(w, prID)) }},
		{name: "check without its capability", want: CodeMissingCapability, setup: func(w *world) Update {
			return appendPR(w, "ci", hubrefs.Check{Base: w.base(hubrefs.TypeCheckCompleted), Name: "deploy", Head: w.c0.String(), Conclusion: "success"})
		}},
		{name: "self-approval", want: CodeMissingCapability, setup: func(w *world) Update {
			w.event(hubrefs.TrustRef, "admin", hubrefs.MemberAdded{Base: w.base(hubrefs.TypeMemberChanged), Name: "alice", Key: hubrefs.AuthorizedKey(w.keys["alice"].PublicKey()), Caps: []string{"hub.pr", "hub.review"}})
			return appendPR(w, "alice", review(w))
		}},
		{name: "wrong repo", want: CodeWrongRepo, setup: func(w *world) Update {
			p := opened(w, prID)
			p.Repo = otherID
			return newPR(w, "alice", p)
		}},
		{name: "parent is a source commit", want: CodeForeignParent, in: "source commit", setup: func(w *world) Update {
			u := appendPR(w, "bob", review(w))
			return up(prRef, u.Old, w.eventOn([]plumbing.Hash{w.c0}, "carol", review(w)))
		}},
		{name: "parent is an event of another ref", want: CodeForeignParent, setup: func(w *world) Update {
			other := w.open(w.c0)
			u := appendPR(w, "bob", review(w))
			return up(prRef, u.Old, w.eventOn([]plumbing.Hash{w.refs[other.ref]}, "carol", review(w)))
		}},
		{name: "root of the wrong type", want: CodeHubRoot, setup: func(w *world) Update { return newPR(w, "bob", review(w)) }},
		{name: "second trust root", want: CodeHubRoot, setup: func(w *world) Update {
			return up(hubrefs.TrustRef, plumbing.ZeroHash, w.eventOn(nil, "admin", hubrefs.RepoCreated{Base: w.base(hubrefs.TypeRepoCreated), Name: "x",
				Admin: hubrefs.Admin{Name: "admin", Key: hubrefs.AuthorizedKey(w.keys["admin"].PublicKey())}}))
		}},
		{name: "ref name differs from the id", want: CodeRefName, setup: func(w *world) Update {
			u := newPR(w, "alice", opened(w, "01900000-0000-7000-8000-0000000000cc"))
			return u
		}},
		{name: "unknown namespace", want: CodeHubNamespace, setup: func(w *world) Update {
			return up("refs/hub/notes/x", plumbing.ZeroHash, w.eventOn(nil, "alice", opened(w, prID)))
		}},
		{name: "event that does not fit the state", want: CodeHubInvalid, setup: func(w *world) Update {
			return appendPR(w, "alice", hubrefs.PRUpdated{Base: w.base(hubrefs.TypePRUpdated), Head: w.c0.String()})
		}},
		{name: "missing event", want: CodeMissingObject, in: "2222222222222222222222222222222222222222", setup: func(w *world) Update {
			return up(prRef, plumbing.ZeroHash, plumbing.NewHash("2222222222222222222222222222222222222222"))
		}},
		{name: "trust: admin adds a member", setup: func(w *world) Update {
			old := w.refs[hubrefs.TrustRef]
			return up(hubrefs.TrustRef, old, w.eventOn([]plumbing.Hash{old}, "admin", w.memberAdded("mallory", "hub.pr")))
		}},
		{name: "trust: non-admin adds a member", want: CodeMissingCapability, setup: func(w *world) Update {
			old := w.refs[hubrefs.TrustRef]
			return up(hubrefs.TrustRef, old, w.eventOn([]plumbing.Hash{old}, "alice", w.memberAdded("mallory", "hub.pr")))
		}},
		{name: "trust: a fork joined back", want: CodeHubNotLinear, setup: func(w *world) Update {
			old := w.refs[hubrefs.TrustRef]
			a := w.eventOn([]plumbing.Hash{old}, "admin", w.memberAdded("mallory", "repo.admin"))
			b := w.eventOn([]plumbing.Hash{old}, "mallory", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "bob"})
			return up(hubrefs.TrustRef, old, w.eventOn([]plumbing.Hash{a, b}, "admin", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "carol"}))
		}},
		{name: "trust: rules.set with bad rules", want: CodeHubMalformed, setup: func(w *world) Update {
			old := w.refs[hubrefs.TrustRef]
			return up(hubrefs.TrustRef, old, w.eventOn([]plumbing.Hash{old}, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(`{"protected":{"main":{}}}`)}))
		}},
		{name: "queue: open a queue", setup: func(w *world) Update {
			return up(qRef, plumbing.ZeroHash, w.eventOn(nil, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: qID, Target: main}))
		}},
		{name: "queue: needs hub.queue", want: CodeMissingCapability, setup: func(w *world) Update {
			return up(qRef, plumbing.ZeroHash, w.eventOn(nil, "alice", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: qID, Target: main}))
		}},
		{name: "queue: ref name", want: CodeRefName, setup: func(w *world) Update {
			return up(qRef, plumbing.ZeroHash, w.eventOn(nil, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: prID, Target: main}))
		}},
		{name: "queue: root type", want: CodeHubRoot, setup: func(w *world) Update {
			return up(qRef, plumbing.ZeroHash, w.eventOn(nil, "queuer", hubrefs.QueueReset{Base: w.base(hubrefs.TypeQueueReset), Tip: w.c0.String()}))
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
			if c.want != "" && !strings.Contains(v.Reason, c.in) {
				t.Fatalf("reason %q does not mention %q", v.Reason, c.in)
			}
		})
	}
}
