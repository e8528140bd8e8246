package queue

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

// TestPrevalidateSameFold: a long queue log folds to the same state, or
// fails on the same event with the same error, whether its payloads are
// validated on all CPUs ahead of the fold or one at a time; entries enter
// and leave (the active set), and two bad events: the first is named.
func TestPrevalidateSameFold(t *testing.T) {
	c := newCast(t)
	build := func(n int, bad ...int) []hubrefs.Event {
		isBad := map[int]bool{}
		for _, b := range bad {
			isBad[b] = true
		}
		l := &log{}
		l.add(c.runner, hubrefs.TypeQueueOpened, "id", prID("q"), "target", "refs/heads/main")
		for i := 1; i < n; i++ {
			p := prID(fmt.Sprint("p", i/2))
			switch {
			case isBad[i]:
				l.add(c.runner, hubrefs.TypeQueueEntered, "pr", p, "head", "not-a-commit", "base", "refs/heads/main")
			case i%2 == 1:
				l.add(c.runner, hubrefs.TypeQueueEntered, "pr", p, "head", hex(p), "base", "refs/heads/main")
			case i%4 == 0:
				l.add(c.runner, hubrefs.TypeQueueLeft, "pr", prID(fmt.Sprint("p", i/2-1)), "head", hex(p), "reason", ReasonWithdrawn)
			default:
				l.add(c.outsider, hubrefs.TypeQueueEntered, "pr", p, "head", hex(p), "base", "refs/heads/main")
			}
		}
		return l.evs
	}
	defer func(v int) { parallelValidate = v }(parallelValidate)
	for _, tc := range []struct {
		name string
		evs  []hubrefs.Event
	}{
		{"clean", build(3000)},
		{"one bad", build(3000, 2001)},
		{"two bad", build(3000, 2501, 901)},
	} {
		parallelValidate = 1 << 30
		want, wantErr := Fold(tc.evs, c.t)
		parallelValidate = 2
		if prevalidate(tc.evs) == nil {
			t.Skip("one CPU: nothing is validated ahead")
		}
		got, gotErr := Fold(tc.evs, c.t)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%s: error %v, one at a time %v", tc.name, gotErr, wantErr)
		}
		if (tc.name == "clean") != (wantErr == nil) {
			t.Fatalf("%s: error %v", tc.name, wantErr)
		}
		if wantErr == nil {
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: states differ", tc.name)
			}
			if len(got.Entries) == 0 || len(got.Left) == 0 || len(got.Ignored) == 0 {
				t.Fatalf("%s: %d entries, %d left, %d ignored: the log tests nothing", tc.name, len(got.Entries), len(got.Left), len(got.Ignored))
			}
		}
	}
}
