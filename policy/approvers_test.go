package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

// TestWhoMustApprove: the hook's verdicts on approvers (members and teams
// as the trust state stands at the landing), the changes-requested veto
// and drafts, direct landings and queue candidates alike, with and without
// the fold cache (world.judge compares them).
func TestWhoMustApprove(t *testing.T) {
	team := func(w *world, members ...string) {
		w.event(hubrefs.TrustRef, "admin", hubrefs.TeamSet{Base: w.base(hubrefs.TypeTeamSet), Team: "rev", Members: append([]string{}, members...)})
	}
	changes := func(w *world, p *prq, who string) plumbing.Hash {
		return w.event(p.ref, who, hubrefs.Review{Base: w.base(hubrefs.TypeReviewSubmit), Head: p.head.String(), BaseRef: main, Verdict: "changes"})
	}
	dismiss := func(w *world, p *prq, review plumbing.Hash) {
		w.event(p.ref, "admin", hubrefs.ReviewDismissed{Base: w.base(hubrefs.TypeReviewDismiss), Review: review.String(), Reason: "overruled"})
	}
	mark := func(w *world, p *prq, typ string) { w.event(p.ref, "alice", hubrefs.Base{Type: typ, Repo: repoID}) }
	// bypassAs has who bypass p's current head; bypass has the admin do
	// it (repo.admin implies hub.bypass).
	bypassAs := func(w *world, p *prq, who string) {
		w.event(p.ref, who, hubrefs.PRBypassed{Base: w.base(hubrefs.TypePRBypassed), Head: p.head.String(), BaseRef: main, Reason: "hotfix"})
	}
	bypass := func(w *world, p *prq) { bypassAs(w, p, "admin") }
	const (
		approvers = `{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"approvers":["team:rev"]}}}`
		veto      = `{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"blockOnChangesRequested":true}}}`
		queued    = `{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"queueCandidates":true,"blockOnChangesRequested":true}}}`
	)
	for _, c := range []struct {
		name, rules, want, in string
		setup                 func(w *world) Update
	}{
		{"an approver's approval counts", approvers, "", "", func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			w.open(h).approve("carol").check("ci", h, "success")
			return up(main, w.c0, h)
		}},
		{"a reviewer outside the approvers does not count", approvers, CodeNotApproved, "from team:rev", func(w *world) Update {
			return up(main, w.c0, w.ready(w.commit(w.c0, "a", "a\n")).head)
		}},
		{"the team as it stands at the landing: changed after the approval", approvers, CodeNotApproved, "0 of 1", func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			w.open(h).approve("carol").check("ci", h, "success")
			team(w, "bob")
			return up(main, w.c0, h)
		}},
		{"the team as it stands at the landing: joined after the approval", approvers, "", "", func(w *world) Update {
			p := w.ready(w.commit(w.c0, "a", "a\n")) // bob approved
			team(w, "bob", "carol")
			return up(main, w.c0, p.head)
		}},
		{"a changes request without the veto rule only withdraws", rulesNoQueue, "", "", func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			p := w.open(h).approve("bob").check("ci", h, "success")
			changes(w, p, "carol")
			return up(main, w.c0, h)
		}},
		{"a veto blocks", veto, CodeChangesRequested, "carol", func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			p := w.open(h).approve("bob").check("ci", h, "success")
			changes(w, p, "carol")
			return up(main, w.c0, h)
		}},
		{"a veto on an older head still blocks", veto, CodeChangesRequested, "carol", func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			p := w.open(h)
			changes(w, p, "carol")
			h2 := w.commit(h, "a2", "b\n")
			w.event(p.ref, "alice", hubrefs.PRUpdated{Base: w.base(hubrefs.TypePRUpdated), Head: h2.String()})
			p.head = h2
			p.approve("bob").check("ci", h2, "success")
			return up(main, w.c0, h2)
		}},
		{"a dismissed veto does not", veto, "", "", func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			p := w.open(h).approve("bob").check("ci", h, "success")
			dismiss(w, p, changes(w, p, "carol"))
			return up(main, w.c0, h)
		}},
		{"nor one the reviewer reviewed again", veto, "", "", func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			p := w.open(h).approve("bob").check("ci", h, "success")
			changes(w, p, "carol")
			p.approve("carol")
			return up(main, w.c0, h)
		}},
		{"a draft cannot land", rulesNoQueue, CodePRDraft, "pr ready", func(w *world) Update {
			p := w.ready(w.commit(w.c0, "a", "a\n"))
			mark(w, p, hubrefs.TypePRDraft)
			return up(main, w.c0, p.head)
		}},
		{"ready again, it lands", rulesNoQueue, "", "", func(w *world) Update {
			p := w.ready(w.commit(w.c0, "a", "a\n"))
			mark(w, p, hubrefs.TypePRDraft)
			mark(w, p, hubrefs.TypePRReady)
			return up(main, w.c0, p.head)
		}},
		{"a draft's candidate cannot land", queued, CodePRDraft, "", func(w *world) Update {
			p := w.ready(w.commit(w.c0, "a", "a\n"))
			mark(w, p, hubrefs.TypePRDraft)
			c := w.merge(w.c0, p.head)
			p.check("ci", c, "success")
			return up(main, w.c0, c)
		}},
		{"a bypass lands an unapproved, unchecked, vetoed head", veto, "", "", func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			p := w.open(h)
			changes(w, p, "carol")
			bypass(w, p)
			return up(main, w.c0, h)
		}},
		{"a bypass by one who has lost hub.bypass does not", approvers, CodeNotApproved, "", func(w *world) Update {
			caps := func(c ...string) {
				m := w.memberAdded("bob", c...)
				m.Type = hubrefs.TypeMemberChanged
				w.event(hubrefs.TrustRef, "admin", m)
			}
			caps("hub.review", "hub.bypass")
			p := w.open(w.commit(w.c0, "a", "a\n"))
			bypassAs(w, p, "bob")
			caps("hub.review")
			return up(main, w.c0, p.head)
		}},
		{"a bypass names one head: after an update the new head is judged", rulesNoQueue, CodeNotApproved, "", func(w *world) Update {
			h := w.commit(w.c0, "a", "a\n")
			p := w.open(h)
			bypass(w, p)
			h2 := w.commit(h, "a2", "b\n")
			w.event(p.ref, "alice", hubrefs.PRUpdated{Base: w.base(hubrefs.TypePRUpdated), Head: h2.String()})
			p.head = h2
			p.check("ci", h2, "success")
			return up(main, w.c0, h2)
		}},
		{"allowBypass false", `{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"allowBypass":false}}}`, CodeNotApproved, "", func(w *world) Update {
			p := w.open(w.commit(w.c0, "a", "a\n"))
			bypass(w, p)
			return up(main, w.c0, p.head)
		}},
		{"a bypassed draft does not land", rulesNoQueue, CodePRDraft, "", func(w *world) Update {
			p := w.open(w.commit(w.c0, "a", "a\n"))
			bypass(w, p)
			mark(w, p, hubrefs.TypePRDraft)
			return up(main, w.c0, p.head)
		}},
		{"a bypass never lets a candidate land", queued, CodeNotApproved, "", func(w *world) Update {
			p := w.open(w.commit(w.c0, "a", "a\n"))
			bypass(w, p)
			c := w.merge(w.c0, p.head)
			p.check("ci", c, "success")
			return up(main, w.c0, c)
		}},
		{"nor a non-fast-forward", rulesNoQueue, CodeNonFastForward, "", func(w *world) Update {
			w.refs[main] = w.commit(w.c0, "other", "o\n")
			p := w.open(w.commit(w.c0, "a", "a\n"))
			bypass(w, p)
			return Update{Ref: main, Old: w.refs[main], New: p.head}
		}},
		{"a vetoed candidate cannot land", queued, CodeChangesRequested, "", func(w *world) Update {
			p := w.ready(w.commit(w.c0, "a", "a\n"))
			changes(w, p, "carol")
			c := w.merge(w.c0, p.head)
			p.check("ci", c, "success")
			return up(main, w.c0, c)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, "")
			team(w, "carol")
			w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(c.rules)})
			v := w.judge1(c.setup(w))
			if v.Code != c.want || !strings.Contains(v.Reason, c.in) {
				t.Fatalf("verdict [%s] %s; want [%s] containing %q", v.Code, v.Reason, c.want, c.in)
			}
		})
	}
}

// TestAuditWhoMustApprove: verify --branch (Audit) reaches the hook's
// verdicts on approvers, vetoes and drafts, judging a landing's teams as
// they stood when it landed (the trust state of its pr.merged), in every
// audit mode. A landing refused under that trust state is judged again
// under the current one (writers' clocks may be skewed, policy/audit.go):
// so a team joined after the landing justifies it, under "current".
func TestAuditWhoMustApprove(t *testing.T) {
	changes := func(w *world, p *prq, who string) plumbing.Hash {
		return w.event(p.ref, who, hubrefs.Review{Base: w.base(hubrefs.TypeReviewSubmit), Head: p.head.String(), BaseRef: main, Verdict: "changes"})
	}
	for _, c := range []struct {
		name      string
		setup     func(w *world, p *prq)
		teamAfter []string
		code      string // "" justified
		trust     string // justified under
	}{
		{"approved by the team as it stood", func(w *world, p *prq) { p.approve("carol") }, []string{"bob"}, "", "then"},
		{"approved by a non-approver", func(w *world, p *prq) { p.approve("bob") }, []string{"carol"}, CodeNotApproved, ""},
		{"approved by one who joined the team later", func(w *world, p *prq) { p.approve("bob") }, []string{"bob"}, "", "current"},
		{"vetoed", func(w *world, p *prq) { p.approve("carol"); changes(w, p, "bob") }, []string{"carol"}, CodeChangesRequested, ""},
		{"veto dismissed", func(w *world, p *prq) {
			p.approve("carol")
			id := changes(w, p, "bob")
			w.event(p.ref, "admin", hubrefs.ReviewDismissed{Base: w.base(hubrefs.TypeReviewDismiss), Review: id.String(), Reason: "overruled"})
		}, []string{"carol"}, "", "then"},
		{"a draft", func(w *world, p *prq) {
			p.approve("carol")
			w.event(p.ref, "alice", hubrefs.Base{Type: hubrefs.TypePRDraft, Repo: repoID})
		}, []string{"carol"}, CodePRDraft, ""},
		{"bypassed", func(w *world, p *prq) {
			changes(w, p, "bob")
			w.event(p.ref, "admin", hubrefs.PRBypassed{Base: w.base(hubrefs.TypePRBypassed), Head: p.head.String(), BaseRef: main, Reason: "hotfix"})
		}, []string{"carol"}, "", "then"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, "")
			team := func(members ...string) {
				w.event(hubrefs.TrustRef, "admin", hubrefs.TeamSet{Base: w.base(hubrefs.TypeTeamSet), Team: "rev", Members: members})
			}
			team("carol")
			w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet),
				Rules: json.RawMessage(`{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"approvers":["team:rev"],"blockOnChangesRequested":true}}}`)})
			h := w.commit(w.c0, "f", "x\n")
			p := w.open(h)
			c.setup(w, p)
			p.check("ci", h, "success").merged(h, h)
			team(c.teamAfter...)
			w.refs[main] = h
			rep, err := auditAll(t, w)
			if err != nil {
				t.Fatal(err)
			}
			if c.code == "" && len(rep.Landings) == 1 {
				// A bypassed landing says who and why; no other does.
				bp := rep.Landings[0].Bypass
				if want := c.name == "bypassed"; (bp != nil) != want || want && (bp.By != "admin" || bp.Reason != "hotfix" || bp.Event.IsZero()) {
					t.Fatalf("bypass %+v", bp)
				}
			}
			switch {
			case c.code == "" && (len(rep.Landings) != 1 || rep.Landings[0].Trust != c.trust || len(rep.Unjustified) != 0):
				t.Fatalf("want justified under trust %s: %+v", c.trust, rep)
			case c.code != "" && (len(rep.Unjustified) != 1 || rep.Unjustified[0].Code != c.code):
				t.Fatalf("want [%s]: %+v", c.code, rep)
			}
		})
	}
}
