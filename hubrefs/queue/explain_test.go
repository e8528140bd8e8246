package queue

import (
	"fmt"
	"testing"

	"github.com/gitplus/gitplus/hubrefs/pr"
)

// TestBelow: which failures a retry cannot mend. A chain of five steps on
// the target; each case gives the steps' group ends (batch) and the check's
// conclusions, and asks about the top step.
func TestBelow(t *testing.T) {
	step := func(i int) string { return hex(fmt.Sprint("step", i)) }
	target := hex("target")
	for _, tt := range []struct {
		name    string
		ends    map[int]int    // step → the step that ends its group (absent: checked on its own)
		conc    map[int]string // step → conclusion of the check
		invalid map[int]bool   // step's record invalidated by a reset
		replace map[int]bool   // its pull request's latest record names another step
		want    BelowVerdict
		at      int // the step reported (-1: none)
	}{
		{name: "all green below", conc: map[int]string{0: pr.Success, 1: pr.Success, 2: pr.Success, 3: pr.Success}, want: BelowClear, at: -1},
		{name: "nearest red wins", conc: map[int]string{0: pr.Failure, 1: pr.Success, 2: pr.Failure, 3: pr.Success}, want: BelowRed, at: 2},
		{name: "red under a running one", conc: map[int]string{0: pr.Failure, 1: pr.Success, 2: pr.Success}, want: BelowRed, at: 0},
		{name: "running below", conc: map[int]string{0: pr.Success, 1: pr.Success, 3: pr.Success}, want: BelowPending, at: 2},
		{name: "cancelled is no verdict", conc: map[int]string{0: pr.Success, 1: pr.Success, 2: pr.Cancelled, 3: pr.Success}, want: BelowPending, at: 2},
		{name: "nothing concluded below", conc: map[int]string{}, want: BelowPending, at: 3},
		// Batch: steps 0–1 end at 1, 2–3 end at 3; inner steps are not run.
		{name: "batch, group ends green", ends: map[int]int{0: 1, 2: 3}, conc: map[int]string{1: pr.Success, 3: pr.Success}, want: BelowClear, at: -1},
		{name: "batch, inner step's verdict not read", ends: map[int]int{0: 1, 2: 3}, conc: map[int]string{0: pr.Failure, 1: pr.Success, 2: pr.Failure, 3: pr.Success}, want: BelowClear, at: -1},
		{name: "batch, red group end", ends: map[int]int{0: 1, 2: 3}, conc: map[int]string{1: pr.Failure, 3: pr.Success}, want: BelowRed, at: 1},
		{name: "batch, group end running", ends: map[int]int{0: 1, 2: 3}, conc: map[int]string{1: pr.Success}, want: BelowPending, at: 3},
		// The walk stops at a step no standing record names.
		{name: "reset record stops the walk", conc: map[int]string{0: pr.Failure, 1: pr.Success, 3: pr.Success}, invalid: map[int]bool{2: true}, want: BelowClear, at: -1},
		{name: "rebuilt record stops the walk", conc: map[int]string{0: pr.Failure, 1: pr.Success, 3: pr.Success}, replace: map[int]bool{2: true}, want: BelowClear, at: -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := &State{latest: map[string]*Recorded{}, bases: map[string]string{}, marks: map[string]int{}}
			parent := target
			for i := 0; i < 5; i++ {
				rec := &Recorded{PR: fmt.Sprint("pr", i), Step: step(i), Parents: []string{parent, hex(fmt.Sprint("head", i))}}
				if e, ok := tt.ends[i]; ok {
					rec.GroupEnd, rec.GroupSize = step(e), 2
				}
				if tt.invalid[i] {
					rec.Invalidated = [20]byte{1}
				}
				if tt.replace[i] {
					rec = &Recorded{PR: rec.PR, Step: hex("elsewhere"), Parents: []string{target, rec.Parents[1]}}
				}
				q.latest[fmt.Sprint("pr", i)] = rec
				q.bases[step(i)] = parent
				parent = step(i)
			}
			conclusion := func(id, s string) (string, bool) {
				for i := 0; i < 5; i++ {
					if s == step(i) {
						if id != fmt.Sprint("pr", i) {
							t.Errorf("conclusion of step %d asked of %s", i, id)
						}
						c, ok := tt.conc[i]
						return c, ok
					}
				}
				t.Errorf("conclusion asked for %s, no step", s)
				return "", false
			}
			got, at := Below(q, step(4), conclusion)
			want := ""
			if tt.at >= 0 {
				want = step(tt.at)
			}
			if got != tt.want || at != want {
				t.Errorf("Below = %d at %s; want %d at %s", got, at, tt.want, want)
			}
		})
	}
	if v, at := Below(nil, step(0), nil); v != BelowClear || at != "" {
		t.Errorf("nil queue: %d %s", v, at)
	}
}
