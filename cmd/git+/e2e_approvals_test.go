package main

// Who must approve (docs/trust.md "Teams", "Who counts", "Vetoes";
// docs/events.md "Drafts"): teams, approvers, the changes-requested veto
// and drafts, end to end with stock git.

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
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
