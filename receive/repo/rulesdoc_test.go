package repo

import (
	"strings"
	"testing"
)

// A rules document is checked whole before anything is written: a syntax
// error at its line and column, rules the hook refuses; a good one comes
// back compacted.
func TestRulesDocument(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"{\"protected\": {\n  \"refs/heads/main\": {},\n}}", "rules in f: line 2, column 24: a trailing comma before '}'"},
		{`{"protected": {"refs/heads/main": {"requiredApprovals": "two"}}}`, "rules in f: "},
		{`{"protectd": {}}`, "rules in f: "},
	} {
		if _, err := RulesDocument([]byte(tc.doc), "f"); err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.HasSuffix(err.Error(), "; nothing was written") {
			t.Errorf("%s: %v, want %q...", tc.doc, err, tc.want)
		}
	}
	doc, err := RulesDocument([]byte("{\n  \"protected\": {\"refs/heads/main\": {\"requiredApprovals\": 1}}\n}\n"), "f")
	if err != nil || string(doc) != `{"protected":{"refs/heads/main":{"requiredApprovals":1}}}` {
		t.Fatalf("%s %v", doc, err)
	}
}
