package policy

import (
	"encoding/json"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

// TestAuditRulesByCausality (issue #35 item 2): which trust judges a
// landing is derived from the records' causal order, never from a time a
// signer wrote (docs/trust.md, "The rules in force").
func TestAuditRulesByCausality(t *testing.T) {
	const one = `{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":[]}}}`
	const two = `{"protected":{"refs/heads/main":{"requiredApprovals":2,"requiredChecks":[]}}}`
	// record writes a pr.merged at the given time (0: now), naming the
	// trust tip (or none: a record older than the field).
	record := func(w *world, p *prq, landed plumbing.Hash, at int64, named bool) {
		m := hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: p.head.String(), Branch: main, Commit: landed.String()}
		if named {
			m.Trust = w.refs[hubrefs.TrustRef].String()
		}
		if at != 0 {
			saved := w.clock
			w.clock = at - 1
			defer func() { w.clock = saved }()
		}
		w.event(p.ref, "queuer", m)
	}
	created := func(w *world) int64 {
		evs := mustLog(t, w, w.refs[hubrefs.TrustRef])
		return evs[0].Time
	}
	audit := func(w *world) *AuditReport {
		t.Helper()
		rep, err := auditAll(t, w)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	unjustified := func(rep *AuditReport, c plumbing.Hash) string {
		for _, f := range rep.Unjustified {
			if f.Commit == c {
				return f.Code
			}
		}
		return ""
	}

	t.Run("an unreviewed landing with a backdated record", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			named bool
			back  bool
			want  string
		}{
			{"named trust, dated before repo.created", true, true, CodeNotApproved},
			{"named trust, truly dated", true, false, CodeNotApproved},
			// Older than the field, at the bottom of the chain: nothing
			// causal bounds it, so its time still picks (the hook refuses
			// such a record now: merged-trust).
			{"no trust named, dated before repo.created", false, true, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				w := newWorld(t, one)
				x := w.commit(w.c0, "x.txt", "unreviewed\n")
				p := w.open(x)   // never approved
				w.refs[main] = x // around the hook
				at := int64(0)
				if c.back {
					at = created(w) - 1
				}
				record(w, p, x, at, c.named)
				if got := unjustified(audit(w), x); got != c.want {
					t.Fatalf("finding on the landing: %q, want %q", got, c.want)
				}
			})
		}
	})

	t.Run("a backdated record older than the field, above a landing", func(t *testing.T) {
		// Landings along the chain are never judged under older trust than
		// the one below them: the honest landing below pins it.
		w := newWorld(t, one)
		h := w.commit(w.c0, "h.txt", "reviewed\n")
		ph := w.ready(h)
		w.refs[main] = h
		record(w, ph, h, 0, false)
		x := w.commit(h, "x.txt", "unreviewed\n")
		px := w.open(x)
		w.refs[main] = x
		record(w, px, x, created(w)-1, false)
		rep := audit(w)
		if got := unjustified(rep, x); got != CodeNotApproved {
			t.Fatalf("finding on the backdated landing: %q, want %q\n%+v", got, CodeNotApproved, rep)
		}
		if got := unjustified(rep, h); got != "" {
			t.Fatalf("the honest landing is flagged [%s]", got)
		}
	})

	t.Run("a landing recorded in the second of a later rules set", func(t *testing.T) {
		for _, named := range []bool{true, false} {
			w := newWorld(t, one)
			h := w.commit(w.c0, "h.txt", "one approval\n")
			p := w.ready(h)
			w.refs[main] = h
			record(w, p, h, 0, named)
			// The rules tighten in the same second as the record.
			saved := w.clock
			w.clock--
			w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(two)})
			w.clock = saved
			got := unjustified(audit(w), h)
			if named && got != "" {
				t.Fatalf("a landing whose record names the trust before the rules tightened is flagged [%s]", got)
			}
			if !named && got != CodeNotApproved {
				// The record older than the field is judged by its time,
				// as before: the same second reads as after the rules.
				t.Fatalf("without the trust named: finding %q, want %q (the time rule, kept for old records)", got, CodeNotApproved)
			}
		}
	})

	t.Run("a record dated in the future changes nothing", func(t *testing.T) {
		w := newWorld(t, one)
		h := w.commit(w.c0, "h.txt", "one approval\n")
		p := w.ready(h)
		w.refs[main] = h
		record(w, p, h, 4102444800, true) // 2100
		w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(two)})
		if rep := audit(w); len(rep.Unjustified) != 0 || rep.Landings[0].Trust != "then" {
			t.Fatalf("%+v", rep)
		}
	})

	t.Run("a record above bounds a landing recorded late", func(t *testing.T) {
		// h1 lands, then h2; h2's record is written, the rules tighten,
		// and only then h1's record (naming the tighter trust): h1 landed
		// before h2's record, so no later than its trust.
		w := newWorld(t, one)
		h1 := w.commit(w.c0, "a.txt", "1\n")
		p1 := w.ready(h1)
		h2 := w.commit(h1, "b.txt", "2\n")
		p2 := w.ready(h2)
		w.refs[main] = h2
		record(w, p2, h2, 0, true)
		w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(two)})
		record(w, p1, h1, 0, true)
		rep := audit(w)
		if len(rep.Unjustified) != 0 || len(rep.Landings) != 2 || rep.Landings[0].Trust != "then" {
			t.Fatalf("%+v", rep)
		}
	})

	t.Run("a record naming trust no hook saw", func(t *testing.T) {
		w := newWorld(t, one)
		h := w.commit(w.c0, "h.txt", "reviewed\n")
		p := w.ready(h)
		w.refs[main] = h
		m := hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: h.String(), Branch: main, Commit: h.String(), Trust: h.String()}
		w.event(p.ref, "queuer", m)
		if got := unjustified(audit(w), h); got != CodePRInvalid {
			t.Fatalf("finding %q, want %q", got, CodePRInvalid)
		}
	})
}
