package trust

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestOwnersRules(t *testing.T) {
	r, err := ParseRulesStrict([]byte(`{"protected":{"refs/heads/main":{"owners":[{"paths":["docs/**","*.md"],"approvers":["team:docs"],"approvals":2},{"paths":["/go.mod"],"approvers":["bob"]}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	o := r.Protected["refs/heads/main"].Owners
	if len(o) != 2 || o[0].Approvals != 2 || o[1].Approvals != 1 || !o[0].Matches("docs/a/b.go") || !o[0].Matches("x/README.md") || o[1].Matches("x/go.mod") {
		t.Fatalf("owners %+v", o)
	}
	data, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseRulesStrict(data)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip %s: %v\n%+v", data, err, back)
	}
	for _, c := range []struct{ owners, in string }{
		{`[{"paths":[],"approvers":["bob"]}]`, "paths is empty"},
		{`[{"approvers":["bob"]}]`, "paths is empty"},
		{`[{"paths":["[ab]"],"approvers":["bob"]}]`, "character classes"},
		{`[{"paths":["a","a"],"approvers":["bob"]}]`, "twice"},
		{`[{"paths":["a"],"approvers":[]}]`, "approvers is empty"},
		{`[{"paths":["a"],"approvers":["team:"]}]`, "owners[0].approvers"},
		{`[{"paths":["a"],"approvers":["bob"],"approvals":0}]`, "approvals is 0"},
		{`[{"paths":["a"],"approvers":["bob"],"who":1}]`, "owners[0].who"},
		{`{"paths":["a"]}`, "want a list"},
	} {
		_, err := ParseRulesStrict([]byte(`{"protected":{"refs/heads/main":{"owners":` + c.owners + `}}}`))
		if err == nil || !strings.Contains(err.Error(), c.in) || !(errors.Is(err, ErrInvalidRules) || errors.Is(err, ErrUnknownField)) {
			t.Errorf("owners %s: %v, want an error containing %q", c.owners, err, c.in)
		}
	}
}

func TestBypassCap(t *testing.T) {
	for c, ok := range map[string]bool{"hub.bypass": true, "hub.bypass:refs/heads/main": true, "hub.bypass:refs/heads/release/*": true,
		"hub.bypass:main": false, "hub.bypass:": false, "hub.bypass:refs/heads/**": false} {
		if err := ValidCap(c); (err == nil) != ok {
			t.Errorf("ValidCap(%q) = %v, want ok=%v", c, err, ok)
		}
	}
	m := &Member{Name: "m", Caps: []string{"hub.bypass:refs/heads/release/*"}}
	for branch, want := range map[string]bool{"refs/heads/release/1": true, "refs/heads/main": false, "refs/heads/release/1/x": false} {
		if got := m.CanBypass(branch); got != want {
			t.Errorf("CanBypass(%s) = %v, want %v", branch, got, want)
		}
	}
	if !(&Member{Caps: []string{CapBypass}}).CanBypass("refs/heads/x") || !(&Member{Caps: []string{CapAdmin}}).CanBypass("refs/heads/x") {
		t.Error("hub.bypass and repo.admin bypass everywhere")
	}
}
