package main

// End-to-end tests of issue #14 parts B, C and E with stock git: strict
// payload keys (docs/events.md), linear hub logs (docs/trust.md) and
// pr.merged only for what landed.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

// members runs git+ member list --json against the origin and returns each
// member's capabilities.
func (w *e2e) members() map[string][]string {
	w.t.Helper()
	out := w.mustGP("", w.work, "", "--repo", w.origin, "member", "list", "--json")
	var ms []memberJSON
	if err := json.Unmarshal([]byte(out), &ms); err != nil {
		w.t.Fatalf("member list --json: %v\n%s", err, out)
	}
	got := map[string][]string{}
	for _, m := range ms {
		got[m.Name] = m.Caps
	}
	return got
}

func (w *e2e) fetchHub() {
	w.t.Helper()
	w.git(w.work, "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*")
}

// Attack 3: an admin adds mallory with repo.admin (E1) and removes her
// (R1). Mallory signs member.removed admin on E1, where she still was an
// admin, and a member.added m2 with repo.admin joining [R1, that fork].
func TestE2EHubevTrustFork(t *testing.T) {
	w := newE2E(t, map[string][]string{"bob": {"hub.pr"}}, "mallory", "m2")
	w.mustGP("admin", w.work, "", "--repo", w.origin, "member", "add", "mallory", "--key", w.keys["mallory"].Path+".pub", "--cap", "repo.admin")
	e1 := w.ref(hubrefs.TrustRef)
	w.mustGP("admin", w.work, "", "--repo", w.origin, "member", "remove", "mallory")
	r1 := w.ref(hubrefs.TrustRef)
	w.fetchHub()
	if _, ok := w.members()["mallory"]; ok {
		t.Fatal("mallory is still a member after member remove")
	}

	fork := w.writeEvent("mallory", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "admin"}, e1)
	m2 := hubrefs.AuthorizedKey(w.signer("m2").PublicKey())
	join := w.writeEvent("mallory", hubrefs.MemberAdded{Base: w.base(hubrefs.TypeMemberAdded), Name: "m2", Key: m2, Caps: []string{"repo.admin"}}, r1, fork)

	// The join descends from the tip (git sees a fast-forward): the hook
	// refuses it for joining.
	w.expectRefused(t, hubrefs.TrustRef, "hub-not-linear", "origin", join+":"+hubrefs.TrustRef)
	// The fork alone, forced: written on E1, not on the tip.
	w.expectRefused(t, hubrefs.TrustRef, "hub-rewind", "origin", "+"+fork+":"+hubrefs.TrustRef)
	// A second admin writing on the tip, as git+ writers do, is accepted.
	ok := w.writeEvent("admin", hubrefs.MemberAdded{Base: w.base(hubrefs.TypeMemberAdded), Name: "m2", Key: m2, Caps: []string{"hub.pr"}}, r1)
	w.expectAccepted(t, hubrefs.TrustRef, ok, "origin", ok+":"+hubrefs.TrustRef)

	got := w.members()
	if _, ok := got["mallory"]; ok {
		t.Fatalf("mallory came back: %v", got)
	}
	if strings.Join(got["m2"], ",") != "hub.pr" || strings.Join(got["admin"], ",") != "repo.admin" {
		t.Fatalf("members %v; want admin with repo.admin and m2 with hub.pr only", got)
	}
}

// Attack 7: an admin-signed member.added whose payload holds a key that
// encoding/json folds onto "caps" (ſ is s), and its cousins.
func TestE2EHubevStrictPayload(t *testing.T) {
	w := newE2E(t, map[string][]string{"bob": {"hub.pr"}}, "m2")
	w.fetchHub()
	tip := w.ref(hubrefs.TrustRef)
	m2 := hubrefs.AuthorizedKey(w.signer("m2").PublicKey())
	head := `{"type":"member.added","repo":"` + w.repoID + `","name":"m2","key":"` + m2 + `",`
	for _, tc := range []struct{ name, rest string }{
		{"unicode-folded key", `"caps":["hub.pr"],"capſ":["repo.admin"]}`},
		{"case-folded key", `"caps":["hub.pr"],"CAPS":["repo.admin"]}`},
		{"repeated key", `"caps":["hub.pr"],"caps":["repo.admin"]}`},
		{"unknown key", `"caps":["hub.pr"],"admin":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := w.writeRaw(w.rawEvent("admin", []string{tip}, "member.added\n\n"+head+tc.rest+"\n"))
			w.expectRefused(t, hubrefs.TrustRef, "hub-malformed", "origin", id+":"+hubrefs.TrustRef)
		})
	}
	if _, ok := w.members()["m2"]; ok {
		t.Fatal("m2 became a member")
	}
	// The same event with exact keys is accepted.
	id := w.writeRaw(w.rawEvent("admin", []string{tip}, "member.added\n\n"+head+`"caps":["hub.pr"]}`+"\n"))
	w.expectAccepted(t, hubrefs.TrustRef, id, "origin", id+":"+hubrefs.TrustRef)
	if caps := w.members()["m2"]; strings.Join(caps, ",") != "hub.pr" {
		t.Fatalf("m2 holds %v, want hub.pr", caps)
	}
}

// pr.merged only for what landed: a hub.queue holder naming an old head of
// someone else's pull request, with nothing landed, is refused; so is one
// that does not name the trust tip of the push; the same record pushed
// together with the landing it records is accepted.
func TestE2EHubevMergedOnlyLanded(t *testing.T) {
	w := newE2E(t, map[string][]string{"alice": {"hub.pr", "source.push"}, "q": {"hub.queue"}})
	main := w.commit(nil, map[string]string{"README": "hello\n"}, "root")
	w.expectAccepted(t, "refs/heads/main", main, "origin", main+":refs/heads/main")
	h1 := w.commit([]string{main}, map[string]string{"a.txt": "1\n"}, "one")
	h2 := w.commit([]string{h1}, map[string]string{"a.txt": "2\n"}, "two")
	if out, err := w.push("origin", h2+":refs/heads/feature"); err != nil {
		t.Fatalf("pushing the feature branch: %v\n%s", err, out)
	}
	p := w.localPR("alice", "refs/heads/main", h1).update("alice", h2)
	w.pushPRs(p)

	trustTip := w.ref(hubrefs.TrustRef)
	merged := func(rev, commit string) string {
		return w.writeEvent("q", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: rev, Branch: "refs/heads/main", Commit: commit, Trust: trustTip}, p.tip)
	}
	w.expectRefused(t, p.Ref(), "merged-not-landed", "origin", merged(h1, h1)+":"+p.Ref())
	// A branch that is not the pull request's base.
	other := w.writeEvent("q", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: h2, Branch: "refs/heads/feature", Commit: h2, Trust: trustTip}, p.tip)
	w.expectRefused(t, p.Ref(), "merged-wrong-branch", "origin", other+":"+p.Ref())
	// A record that does not name the trust it was written under, or names
	// an older one (docs/events.md, "pr.merged").
	legacy := w.writeEvent("q", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: h2, Branch: "refs/heads/main", Commit: h2}, p.tip)
	w.expectRefused(t, p.Ref(), "merged-trust", "origin", "--atomic", h2+":refs/heads/main", legacy+":"+p.Ref())
	old := w.writeEvent("q", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: h2, Branch: "refs/heads/main", Commit: h2,
		Trust: w.git(w.origin, "rev-parse", hubrefs.TrustRef+"~1")}, p.tip)
	w.expectRefused(t, p.Ref(), "ref-moved", "origin", "--atomic", h2+":refs/heads/main", old+":"+p.Ref())
	if state := w.prState(p.ID); state != "open" {
		t.Fatalf("pull request is %s after refused pr.merged, want open", state)
	}

	// Landing h2 on main and recording it in one atomic push.
	rec := merged(h2, h2)
	if out, err := w.push("--atomic", "origin", h2+":refs/heads/main", rec+":"+p.Ref()); err != nil {
		t.Fatalf("landing with its pr.merged: %v\n%s", err, out)
	}
	if w.ref("refs/heads/main") != h2 || w.ref(p.Ref()) != rec {
		t.Fatal("the landing and its record did not both land")
	}
	if state := w.prState(p.ID); state != "merged" {
		t.Fatalf("pull request is %s, want merged", state)
	}
}

// prState is the pull request's state as git+ pr show --json reports it.
func (w *e2e) prState(id string) string {
	w.t.Helper()
	out := w.mustGP("", w.work, "", "--repo", w.origin, "pr", "show", id, "--json")
	var v struct {
		State string `json:"state"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		w.t.Fatalf("pr show --json: %v\n%s", err, out)
	}
	return v.State
}
