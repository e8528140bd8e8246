package pr

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

// TestPredecodeSameFold: a long log folds to the same state, or fails on
// the same event with the same error, whether its payloads are decoded on
// all CPUs ahead of the fold or one by one as it applies them; including a
// log with two bad events, where the first in causal order must be named.
func TestPredecodeSameFold(t *testing.T) {
	c := newCast(t)
	build := func(n int, bad ...int) []hubrefs.Event {
		evs := []hubrefs.Event{opened(c)}
		isBad := map[int]bool{}
		for _, b := range bad {
			isBad[b] = true
		}
		for i := 1; i < n; i++ {
			name := fmt.Sprint("e", i)
			switch {
			case isBad[i]:
				evs = append(evs, ev(name, "", c.bob, hubrefs.TypeReviewSubmit, "head", h1, "base", main, "verdict", "maybe"))
			case i%3 == 0:
				evs = append(evs, check(name, c.ci, "ci", h1, "success"))
			case i%3 == 1:
				evs = append(evs, review(name, c.bob, h1, main, "approve"))
			default:
				evs = append(evs, ev(name, "", c.alice, hubrefs.TypeThreadOpened, "thread", name))
			}
		}
		return chain(evs...)
	}
	defer func(v int) { parallelDecode = v }(parallelDecode)
	for _, tc := range []struct {
		name string
		evs  []hubrefs.Event
	}{
		{"clean", build(2000)},
		{"one bad", build(2000, 1500)},
		{"two bad", build(2000, 1900, 700)},
		{"bad early", build(2000, 3)},
	} {
		parallelDecode = 1 << 30
		want, wantErr := Fold(tc.evs, c.t)
		parallelDecode = 2
		if predecode(tc.evs, repoID) == nil {
			t.Skip("one CPU: nothing is decoded ahead")
		}
		got, gotErr := Fold(tc.evs, c.t)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%s: error %v, one by one %v", tc.name, gotErr, wantErr)
		}
		if (tc.name == "clean") != (wantErr == nil) {
			t.Fatalf("%s: error %v", tc.name, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: states differ", tc.name)
		}
	}
}
