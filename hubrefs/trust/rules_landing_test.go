package trust

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestLandingRules(t *testing.T) {
	r, err := ParseRulesStrict([]byte(`{"protected":{"refs/heads/main":{"mergeMethod":"squash","requireLinearHistory":true},"refs/heads/dev":{"mergeMethod":"merge"},"refs/heads/x":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if b := r.Protected["refs/heads/main"]; !b.Squash() || !b.RequireLinearHistory || b.Method() != MergeMethodSquash {
		t.Errorf("main: %+v", b.Landing)
	}
	if !reflect.DeepEqual(r.Protected["refs/heads/dev"], r.Protected["refs/heads/x"]) || r.Protected["refs/heads/x"].Method() != MergeMethodMerge {
		t.Errorf("an explicit merge differs from the default: %+v %+v", r.Protected["refs/heads/dev"], r.Protected["refs/heads/x"])
	}
	out, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseRulesStrict(out)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip of %s: %v %+v", out, err, back)
	}
	for _, c := range []struct{ doc, want string }{
		{`{"protected":{"refs/heads/main":{"requireLinearHistory":true}}}`, "requireLinearHistory is true but rules.protected[\"refs/heads/main\"].mergeMethod is \"merge\""},
		{`{"protected":{"refs/heads/main":{"requireLinearHistory":true,"mergeMethod":"merge"}}}`, "mergeMethod"},
		{`{"protected":{"refs/heads/main":{"mergeMethod":"rebase"}}}`, `mergeMethod "rebase"`},
		{`{"protected":{"refs/heads/main":{"requireLinearHistory":"yes"}}}`, "requireLinearHistory"},
	} {
		for _, parse := range []func([]byte) (Rules, error){ParseRulesStrict, ParseRules} {
			_, err := parse([]byte(c.doc))
			if !errors.Is(err, ErrInvalidRules) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want ErrInvalidRules naming %q", c.doc, err, c.want)
			}
		}
	}
	bad := Rules{Protected: map[string]Branch{"refs/heads/main": {RequirePullRequest: true, QueueDepth: 1, Landing: Landing{RequireLinearHistory: true}}}, Ceilings: DefaultCeilings()}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "requireLinearHistory") || !strings.Contains(err.Error(), "mergeMethod") {
		t.Errorf("Validate: %v, want a refusal naming both fields", err)
	}
}
