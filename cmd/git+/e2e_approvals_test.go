package main

// Who must approve (docs/trust.md "Teams", "Who counts", "Vetoes";
// docs/events.md "Drafts"): teams, approvers, the changes-requested veto
// and drafts, end to end with stock git.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hooks/webview"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/repo"
)

// TestTeamsE2E: team set and list through the CLI; the hook refuses a
// team.set signed by a member without repo.admin; removing a member takes
// it out of every team.
func TestTeamsE2E(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"ann": {"hub.review"}, "bob": {"hub.review"}})
	w.mustGP("admin", w.work, "", "team", "set", "docs", "bob", "ann")
	w.mustGP("admin", w.work, "", "team", "set", "ops", "ann")
	w.mustGP("admin", w.work, "", "team", "set", "empty")
	var got []repo.TeamView
	if err := json.Unmarshal([]byte(w.mustGP("", w.work, "", "team", "list", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	want := []repo.TeamView{{Team: "docs", Members: []string{"ann", "bob"}}, {Team: "empty", Members: []string{}}, {Team: "ops", Members: []string{"ann"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("team list --json = %+v, want %+v", got, want)
	}
	if out, errOut, code := w.gp("admin", w.work, "", "team", "set", "docs", "nobody"); code == 0 || !strings.Contains(errOut, `"nobody"`) {
		t.Fatalf("team set of an unknown member: exit %d\n%s%s", code, out, errOut)
	}

	// The hook judges team.set like every trust event: repo.admin only.
	w.git(w.work, "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*")
	ev := w.writeEvent("bob", hubrefs.TeamSet{Base: w.base(hubrefs.TypeTeamSet), Team: "docs", Members: []string{"bob"}}, w.ref(hubrefs.TrustRef))
	w.expectRefused(t, hubrefs.TrustRef, "missing-capability", "origin", ev+":"+hubrefs.TrustRef)

	w.mustGP("admin", w.work, "", "member", "remove", "ann")
	text := w.mustGP("", w.work, "", "team", "list")
	if !strings.Contains(text, "docs") || strings.Contains(text, "ann") || !strings.Contains(text, "(nobody)") {
		t.Fatalf("after removing ann, team list:\n%s", text)
	}
}

// TestWhoMustApproveE2E: approvers naming a team, judged as the team
// stands at the landing; the changes-requested veto, at any head, until the
// reviewer reviews again or a hub.bypass holder dismisses it; drafts, which
// neither enter a queue nor land until ready. Landings are stock git
// pushes of the head onto main; the hook's refusal codes are checked.
func TestWhoMustApproveE2E(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{
		"dev":  {"source.push", "hub.pr", "hub.queue"},
		"ann":  {"hub.review"},
		"bob":  {"hub.review"},
		"lead": {"hub.review", "hub.bypass"},
		"solo": {"hub.review"},
		"ci":   {"hub.check:ci"},
	})
	const main = "refs/heads/main"
	root := w.commit(nil, map[string]string{"README": "hello\n"}, "root")
	w.expectAccepted(t, main, root, "origin", root+":"+main)
	w.mustGP("admin", w.work, "", "team", "set", "rev", "ann")
	rules := `{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"approvers":["team:rev"],"blockOnChangesRequested":true}}}`
	w.mustGP("admin", w.work, rules, "rules", "set", "-")
	// A team no team.set defined is refused when the rules are set.
	if _, errOut, code := w.gp("admin", w.work, `{"protected":{"refs/heads/main":{"approvers":["team:nobody"]}}}`, "rules", "set", "-"); code == 0 || !strings.Contains(errOut, "team set nobody") {
		t.Fatalf("rules naming an undefined team: exit %d\n%s", code, errOut)
	}

	n := 0
	// open opens a pull request of a new head on main's tip, pushed to a
	// branch, with ci green at it.
	open := func(extra ...string) (id, head string) {
		t.Helper()
		n++
		head = w.commit([]string{w.ref(main)}, map[string]string{fmt.Sprintf("f%d.txt", n): "x\n"}, fmt.Sprintf("change %d", n))
		w.git(w.work, "push", "-q", "origin", fmt.Sprintf("%s:refs/heads/topic%d", head, n))
		id = e2eLastLine(w.mustGP("dev", w.work, "", append([]string{"pr", "open", "--base", "main", "--head", head, "--title", "change"}, extra...)...))
		w.mustGP("ci", w.work, "", "pr", "check", id, "--name", "ci", "--rev", head, "--conclusion", "success")
		return id, head
	}
	review := func(who, id, verdict string) { w.mustGP(who, w.work, "", "pr", "review", id, verdict) }
	land := func(head, code string) { t.Helper(); w.expectLanding(t, main, head, code) }

	t.Run("only the approvers count", func(t *testing.T) {
		id, head := open()
		review("bob", id, "--approve")
		land(head, "not-approved")
		review("ann", id, "--approve")
		land(head, "")
	})

	t.Run("a team change after the approval is judged as the team stands at the landing", func(t *testing.T) {
		id, head := open()
		review("ann", id, "--approve")
		w.mustGP("admin", w.work, "", "team", "set", "rev", "bob")
		land(head, "not-approved")
		w.mustGP("admin", w.work, "", "team", "set", "rev", "ann", "bob")
		land(head, "")
	})

	t.Run("a veto blocks whatever the head until dismissed", func(t *testing.T) {
		id, head := open()
		review("bob", id, "--request-changes")
		head2 := w.commit([]string{head}, map[string]string{"fix.txt": "fix\n"}, "fix")
		w.git(w.work, "push", "-q", "origin", fmt.Sprintf("%s:refs/heads/topic%d", head2, n))
		w.mustGP("dev", w.work, "", "pr", "update", id, "--head", head2)
		w.mustGP("ci", w.work, "", "pr", "check", id, "--name", "ci", "--rev", head2, "--conclusion", "success")
		review("ann", id, "--approve")
		land(head2, "changes-requested")

		var view repo.PRView
		if err := json.Unmarshal([]byte(w.mustGP("", w.work, "", "pr", "show", id, "--json")), &view); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(view.ChangesRequested, []string{"bob"}) {
			t.Fatalf("pr show: changesRequested %v", view.ChangesRequested)
		}
		event := ""
		for _, r := range view.Reviews {
			if r.Verdict == "changes" {
				event = r.Event
			}
		}
		// Without hub.bypass, no dismissal; nothing written.
		if _, errOut, code := w.gp("solo", w.work, "", "pr", "dismiss", id, "--review", event[:10], "--reason", "fixed"); code != 1 || !strings.Contains(errOut, "hub.bypass") {
			t.Fatalf("dismiss without hub.bypass: exit %d\n%s", code, errOut)
		}
		land(head2, "changes-requested")
		w.mustGP("lead", w.work, "", "pr", "dismiss", id, "--review", event[:10], "--reason", "fixed in "+head2[:7])
		land(head2, "")
	})

	t.Run("a veto lifts when its reviewer reviews again", func(t *testing.T) {
		id, head := open()
		review("ann", id, "--approve")
		review("bob", id, "--request-changes")
		land(head, "changes-requested")
		review("bob", id, "--comment") // a comment carries no verdict
		land(head, "changes-requested")
		review("bob", id, "--approve")
		land(head, "")
	})

	t.Run("a draft neither enters a queue nor lands until ready", func(t *testing.T) {
		w.mustGP("dev", w.work, "", "queue", "open", "--target", "main")
		id, head := open("--draft")
		review("ann", id, "--approve")
		if _, errOut, code := w.gp("dev", w.work, "", "queue", "enter", id); code != 1 || !strings.Contains(errOut, "draft") {
			t.Fatalf("queue enter of a draft: exit %d\n%s", code, errOut)
		}
		land(head, "pr-draft")
		// Only the opener (or an admin) marks it ready: the hook refuses
		// ann's pr.ready.
		w.git(w.work, "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*")
		ref := hubrefs.PRRefPrefix + id
		ev := w.writeEvent("ann", w.base(hubrefs.TypePRReady), w.ref(ref))
		w.expectRefused(t, ref, "missing-capability", "origin", ev+":"+ref)
		w.mustGP("dev", w.work, "", "pr", "ready", id)
		w.mustGP("dev", w.work, "", "pr", "draft", id)
		land(head, "pr-draft")
		w.mustGP("dev", w.work, "", "pr", "ready", id)
		land(head, "")
	})
}

// TestBypassE2E: an audited bypass (docs/trust.md, "An audited bypass"):
// pr bypass lets pr merge land a head whatever reviews, checks and vetoes
// say; verify --branch lists it (exit 0, --strict 1). Refused: a bypass by
// a member whose hub.bypass was removed, a head other than the one named
// (the pull request updated after the bypass), a branch with allowBypass
// false.
func TestBypassE2E(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{
		"dev":  {"source.push", "hub.pr", "hub.queue"},
		"ann":  {"hub.review"},
		"boss": {"hub.review", "hub.bypass"},
		"ci":   {"hub.check:ci"},
	})
	const main, release = "refs/heads/main", "refs/heads/release"
	root := w.commit(nil, map[string]string{"README": "hello\n"}, "root")
	w.expectAccepted(t, main, root, "origin", root+":"+main, root+":"+release)
	w.mustGP("admin", w.work, `{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"blockOnChangesRequested":true},"refs/heads/release":{"allowBypass":false}}}`, "rules", "set", "-")

	n := 0
	open := func(base string) (id, head string) {
		t.Helper()
		n++
		head = w.commit([]string{w.ref(base)}, map[string]string{fmt.Sprintf("f%d.txt", n): "x\n"}, fmt.Sprintf("change %d", n))
		w.git(w.work, "push", "-q", "origin", fmt.Sprintf("%s:refs/heads/topic%d", head, n))
		id = e2eLastLine(w.mustGP("dev", w.work, "", "pr", "open", "--base", strings.TrimPrefix(base, "refs/heads/"), "--head", head, "--title", "change"))
		return id, head
	}
	refused := func(ref, head, code string) { t.Helper(); w.expectLanding(t, ref, head, code) }

	// Unapproved, unchecked, vetoed: refused, then bypassed and landed.
	id, head := open(main)
	w.mustGP("ann", w.work, "", "pr", "review", id, "--request-changes")
	refused(main, head, "not-approved")
	if _, errOut, code := w.gp("ann", w.work, "", "pr", "bypass", id, "--reason", "mine"); code != 1 || !strings.Contains(errOut, "hub.bypass") {
		t.Fatalf("bypass without hub.bypass: exit %d\n%s", code, errOut)
	}
	w.mustGP("boss", w.work, "", "pr", "bypass", id, "--reason", "prod is down")
	w.mustGP("dev", w.work, "", "pr", "merge", id, "--remote", "origin")
	if w.ref(main) != head {
		t.Fatalf("after pr merge of a bypassed head: main = %s, want %s", w.ref(main), head)
	}
	// verify --branch lists it, who and why, and exits 0; --strict 1.
	out, errOut, code := w.gp("", w.origin, "", "verify", "--branch", "main")
	if code != 0 || !strings.Contains(out, "bypassed "+head+": pull request "+id+" landed by a bypass of boss") || !strings.Contains(out, "prod is down") || !strings.Contains(out, "1 bypassed") {
		t.Fatalf("verify --branch: exit %d\n%s%s", code, out, errOut)
	}
	if _, _, code := w.gp("", w.origin, "", "verify", "--branch", "main", "--strict"); code != 1 {
		t.Fatalf("verify --branch --strict with a bypassed landing: exit %d, want 1", code)
	}
	var doc receive.AuditJSON
	if err := json.Unmarshal([]byte(w.mustGP("", w.origin, "", "verify", "--branch", "main", "--json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Bypassed != 1 || !doc.OK || len(doc.Records) != 1 || doc.Records[0].Bypass == nil || doc.Records[0].Bypass.By != "boss" {
		t.Fatalf("verify --json: %+v", doc)
	}
	// queue stats and the page count it.
	var stats queue.Stats
	if err := json.Unmarshal([]byte(w.mustGP("", w.origin, "", "queue", "stats", "--target", "main", "--json")), &stats); err != nil {
		t.Fatal(err)
	}
	if stats.Bypassed != 1 {
		t.Fatalf("queue stats: bypassed %d, want 1", stats.Bypassed)
	}
	snap, err := webview.Load(w.origin)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Bypassed != 1 || len(snap.Landings) != 1 || snap.Landings[0].PRs[0].Bypass != "boss: prod is down" {
		t.Fatalf("page: bypassed %d, landings %+v", snap.Bypassed, snap.Landings)
	}

	// A bypass names one head: the pull request updated after it is judged
	// by the rules.
	id2, head2 := open(main)
	w.mustGP("boss", w.work, "", "pr", "bypass", id2, "--reason", "urgent")
	head2b := w.commit([]string{head2}, map[string]string{"more.txt": "more\n"}, "more")
	w.git(w.work, "push", "-q", "origin", fmt.Sprintf("%s:refs/heads/topic%d", head2b, n))
	w.mustGP("dev", w.work, "", "pr", "update", id2, "--head", head2b)
	refused(main, head2b, "not-approved")

	// A branch that forbids bypasses.
	id3, head3 := open(release)
	w.mustGP("boss", w.work, "", "pr", "bypass", id3, "--reason", "urgent")
	refused(release, head3, "not-approved")

	// A bypass whose author has since lost hub.bypass.
	id4, head4 := open(main)
	w.mustGP("boss", w.work, "", "pr", "bypass", id4, "--reason", "urgent")
	w.mustGP("admin", w.work, "", "member", "change", "boss", "--remove-cap", "hub.bypass")
	refused(main, head4, "not-approved")
}
