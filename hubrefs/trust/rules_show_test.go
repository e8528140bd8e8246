package trust

import (
	"strings"
	"testing"
)

// rules show prints "every default filled in": checkTimeout (empty: wait
// forever) and checkEvery (1) too, not only the fields a document named.
func TestRulesMarshalFillsCheckDefaults(t *testing.T) {
	r, err := ParseRulesStrict([]byte(`{"protected":{"refs/heads/main":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"checkTimeout":""`, `"checkEvery":1`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("rules with every default filled in: %s\nlacks %s", out, want)
		}
	}
}
