package jsonpos

import (
	"encoding/json"
	"strings"
	"testing"
)

// A trailing comma is named as one, at the comma's line and column.
func TestLocateJSONErrorTrailingComma(t *testing.T) {
	for _, tc := range []struct {
		doc, want string
	}{
		{"{\n  \"protected\": {\n    \"refs/heads/main\": {\"requiredApprovals\": 1},\n  }\n}\n", "line 3, column 48: a trailing comma before '}'"},
		{`{"requiredChecks": ["ci",]}`, "line 1, column 25: a trailing comma before ']'"},
	} {
		var v any
		err := LocateJSONError([]byte(tc.doc), json.Unmarshal([]byte(tc.doc), &v))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v\nwant it to say %q", tc.doc, err, tc.want)
		}
	}
	// Not every '}' after an error is a comma's fault.
	var v any
	doc := `{"a" 1}`
	if err := LocateJSONError([]byte(doc), json.Unmarshal([]byte(doc), &v)); strings.Contains(err.Error(), "comma") {
		t.Errorf("%q: %v names a comma", doc, err)
	}
}
