package trust

import "testing"

// TestCarryRequireKnownPusher: a rules document that does not name the
// field keeps the current value; one that names it (even null) wins.
func TestCarryRequireKnownPusher(t *testing.T) {
	on, off := true, false
	for _, c := range []struct {
		doc     string
		current *bool
		want    string
		carried bool
	}{
		{`{}`, &on, `{"requireKnownPusher":true}`, true},
		{`{ }`, &off, `{"requireKnownPusher":false}`, true},
		{`{"protected":{"refs/heads/main":{}}}`, &on, `{"requireKnownPusher":true,"protected":{"refs/heads/main":{}}}`, true},
		{`{"protected":{},"requireKnownPusher":false}`, &on, `{"protected":{},"requireKnownPusher":false}`, false},
		{`{"requireKnownPusher":null}`, &on, `{"requireKnownPusher":null}`, false},
		{`{"protected":{}}`, nil, `{"protected":{}}`, false},
	} {
		cur := DefaultRules()
		cur.RequireKnownPusher = c.current
		got, carried, err := CarryRequireKnownPusher([]byte(c.doc), cur)
		if err != nil || string(got) != c.want || carried != c.carried {
			t.Errorf("%s (current %v): got %s %v %v, want %s %v", c.doc, c.current, got, carried, err, c.want, c.carried)
			continue
		}
		r, err := ParseRulesStrict(got)
		if err != nil {
			t.Errorf("%s: the result %s does not parse: %v", c.doc, got, err)
		} else if c.carried && (r.RequireKnownPusher == nil || *r.RequireKnownPusher != *c.current) {
			t.Errorf("%s: the result %s parses to %v", c.doc, got, r.RequireKnownPusher)
		}
	}
}
