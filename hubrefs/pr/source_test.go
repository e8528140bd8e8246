package pr

import (
	"errors"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

// TestSource: pr.opened's optional source branch is kept by the fold; a
// malformed one is refused like any malformed field; its absence is fine.
func TestSource(t *testing.T) {
	c := newCast(t)
	cases := []struct {
		name   string
		source any // nil: no field
		want   string
		err    error
	}{
		{"absent", nil, "", nil},
		{"branch", "refs/heads/feat", "refs/heads/feat", nil},
		{"not a ref", "feat", "", ErrMalformed},
		{"bad name", "refs/heads/a..b", "", ErrMalformed},
	}
	for _, tc := range cases {
		fields := []any{"id", prID, "base", main, "head", h1, "title", "Add x"}
		if tc.source != nil {
			fields = append(fields, "source", tc.source)
		}
		st, err := Fold([]hubrefs.Event{ev("o", "", c.alice, hubrefs.TypePROpened, fields...)}, c.t)
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: Fold error %v, want %v", tc.name, err, tc.err)
			continue
		}
		if err == nil && st.Source != tc.want {
			t.Errorf("%s: Source %q, want %q", tc.name, st.Source, tc.want)
		}
	}
}
