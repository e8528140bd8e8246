package install

import (
	"errors"
	"strings"
	"testing"
)

// hook check's status: 1 with a problem, 3 with warnings alone, 0
// otherwise, when it also says "ok".
func TestCheckReportExit(t *testing.T) {
	for _, tc := range []struct {
		problems, warnings []string
		code               int
		err                error
	}{
		{nil, nil, 0, nil},
		{nil, []string{"w"}, ExitWarnings, ErrWarnings},
		{[]string{"p"}, []string{"w"}, 1, ErrNotInPlace},
	} {
		r := &CheckReport{GitDir: "/r.git", Problems: tc.problems, Warnings: tc.warnings}
		code, err := r.Exit()
		if code != tc.code || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("%v %v: exit %d, %v", tc.problems, tc.warnings, code, err)
		}
		var b strings.Builder
		r.WriteText(&b)
		if ok := strings.Contains(b.String(), "ok: the boundary is in place"); ok != (code == 0) {
			t.Errorf("%v %v: %q", tc.problems, tc.warnings, b.String())
		}
		if len(tc.problems) > 0 && !strings.Contains(b.String(), "problem: p\n") || len(tc.warnings) > 0 && !strings.Contains(b.String(), "warning: w\n") {
			t.Errorf("%v %v: %q", tc.problems, tc.warnings, b.String())
		}
	}
}
