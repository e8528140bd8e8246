package trust

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

func teamSet(name, parent string, signer key, team string, members ...string) hubrefs.Event {
	if members == nil {
		members = []string{}
	}
	return mk(name, strings.Fields(parent), signer, hubrefs.TypeTeamSet, map[string]any{"team": team, "members": members})
}

// TestTeams: team.set defines a team by its whole membership, by
// repo.admin only, of current members; member.removed takes the member out
// of every team; rules naming a team or member that does not exist are
// refused.
func TestTeams(t *testing.T) {
	alice, bob, carol := newKey(t), newKey(t), newKey(t)
	base := []hubrefs.Event{
		created("c", alice),
		added("b", "c", alice, "bob", bob, "hub.review"),
		added("k", "b", alice, "carol", carol, "hub.review"),
	}
	st, err := Fold(append(base[:3:3],
		teamSet("t1", "k", alice, "docs", "carol", "bob"),
		teamSet("t2", "t1", alice, "ops", "carol"),
		teamSet("t3", "t2", alice, "empty"),
		rulesSet("r", "t3", alice, `{"protected":{"refs/heads/main":{"approvers":["team:docs","alice"],"blockOnChangesRequested":true}}}`),
		removed("x", "r", alice, "carol"),
	))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"docs": {"bob"}, "ops": {}, "empty": {}}
	if !reflect.DeepEqual(st.Teams, want) {
		t.Errorf("teams %v, want %v", st.Teams, want)
	}
	if got := st.TeamsOf("bob"); !reflect.DeepEqual(got, []string{"docs"}) {
		t.Errorf("bob's teams %v", got)
	}
	b, _ := st.Rules.For("refs/heads/main")
	if !reflect.DeepEqual(b.Approvers, []string{"team:docs", "alice"}) || !b.BlockOnChangesRequested {
		t.Errorf("branch %+v", b)
	}
	if !Counts(b.Approvers, "bob", st.TeamsOf("bob")) || !Counts(b.Approvers, "alice", nil) || Counts(b.Approvers, "carol", []string{"ops"}) || !Counts(nil, "anyone", nil) {
		t.Error("Counts misjudges")
	}

	for _, c := range []struct {
		name string
		ev   hubrefs.Event
		want error
	}{
		{"not admin", teamSet("t", "k", bob, "docs", "bob"), ErrUnauthorized},
		{"unknown member", teamSet("t", "k", alice, "docs", "bob", "dave"), ErrNoMember},
		{"member twice", teamSet("t", "k", alice, "docs", "bob", "bob"), ErrMalformed},
		{"bad team name", teamSet("t", "k", alice, "-docs", "bob"), ErrMalformed},
		{"null members", mk("t", []string{"k"}, alice, hubrefs.TypeTeamSet, map[string]any{"team": "docs"}), ErrMalformed},
		{"unknown key", mk("t", []string{"k"}, alice, hubrefs.TypeTeamSet, map[string]any{"team": "docs", "members": []string{}, "lead": "bob"}), ErrMalformed},
		{"rules name an undefined team", rulesSet("t", "k", alice, `{"protected":{"refs/heads/main":{"approvers":["team:docs"]}}}`), ErrNoTeam},
		{"rules name an unknown member", rulesSet("t", "k", alice, `{"protected":{"refs/heads/main":{"approvers":["dave"]}}}`), ErrNoMember},
		{"rules with empty approvers", rulesSet("t", "k", alice, `{"protected":{"refs/heads/main":{"approvers":[]}}}`), ErrInvalidRules},
		{"rules with a bad principal", rulesSet("t", "k", alice, `{"protected":{"refs/heads/main":{"approvers":["team:"]}}}`), ErrInvalidRules},
		{"rules naming a principal twice", rulesSet("t", "k", alice, `{"protected":{"refs/heads/main":{"approvers":["bob","bob"]}}}`), ErrInvalidRules},
	} {
		_, err := Fold(append(base[:3:3], c.ev))
		if !errors.Is(err, c.want) || !errors.Is(err, ErrInvalidStored) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestTeamsApplyDoesNotShare: applying team.set or member.removed to a
// clone leaves the original's teams as they were.
func TestTeamsApplyDoesNotShare(t *testing.T) {
	alice, bob := newKey(t), newKey(t)
	st, err := Fold([]hubrefs.Event{created("c", alice), added("b", "c", alice, "bob", bob, "hub.review"), teamSet("t", "b", alice, "docs", "bob", "alice")})
	if err != nil {
		t.Fatal(err)
	}
	c := st.Clone()
	if err := c.Apply(removed("x", "t", alice, "bob")); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Teams["docs"], []string{"alice", "bob"}) || !reflect.DeepEqual(c.Teams["docs"], []string{"alice"}) {
		t.Errorf("original %v, clone %v", st.Teams, c.Teams)
	}
	sh := st.shallow()
	if err := sh.Apply(teamSet("t2", "t", alice, "docs", "alice")); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Teams["docs"], []string{"alice", "bob"}) {
		t.Errorf("original changed: %v", st.Teams)
	}
}

// TestAllowBypass: "allowBypass" defaults to true; false is held as
// ForbidBypass and survives a marshal round trip.
func TestAllowBypass(t *testing.T) {
	for doc, forbid := range map[string]bool{
		`{"protected":{"refs/heads/main":{}}}`:                    false,
		`{"protected":{"refs/heads/main":{"allowBypass":true}}}`:  false,
		`{"protected":{"refs/heads/main":{"allowBypass":false}}}`: true,
	} {
		r, err := ParseRulesStrict([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if r.Protected["refs/heads/main"].ForbidBypass != forbid {
			t.Errorf("%s: ForbidBypass %v", doc, !forbid)
		}
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseRulesStrict(b)
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Errorf("%s: round trip %s gives %+v (%v)", doc, b, again, err)
		}
	}
	if _, err := ParseRulesStrict([]byte(`{"protected":{"refs/heads/main":{"allowBypass":"no"}}}`)); !errors.Is(err, ErrInvalidRules) {
		t.Errorf("allowBypass \"no\": %v", err)
	}
}
