package trust

import (
	"errors"
	"testing"
)

// TestRequireKnownPusher: the top-level field is tri-state (absent, false,
// true), survives MarshalJSON, and anything but a boolean is refused.
func TestRequireKnownPusher(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:                           "absent",
		`{"requireKnownPusher":null}`:  "absent",
		`{"requireKnownPusher":false}`: "false",
		`{"requireKnownPusher":true}`:  "true",
	} {
		r, err := ParseRulesStrict([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got := "absent"
		if r.RequireKnownPusher != nil {
			got = map[bool]string{false: "false", true: "true"}[*r.RequireKnownPusher]
		}
		if got != want {
			t.Fatalf("%s: %s, want %s", in, got, want)
		}
		out, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseRulesStrict(out)
		if err != nil || (back.RequireKnownPusher == nil) != (r.RequireKnownPusher == nil) ||
			(r.RequireKnownPusher != nil && *back.RequireKnownPusher != *r.RequireKnownPusher) {
			t.Fatalf("%s: round trip through %s gave %v (%v)", in, out, back.RequireKnownPusher, err)
		}
	}
	for _, bad := range []string{`{"requireKnownPusher":"yes"}`, `{"requireKnownPusher":1}`} {
		if _, err := ParseRules([]byte(bad)); !errors.Is(err, ErrInvalidRules) {
			t.Errorf("%s: %v, want ErrInvalidRules", bad, err)
		}
	}
	if err := ValidCap(CapSourceTag); err != nil {
		t.Fatalf("source.tag: %v", err)
	}
}
