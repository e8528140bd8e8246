package queue

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

var tip0 = plumbing.ComputeHash(plumbing.CommitObject, []byte("tip0"))

func branch() trust.Branch {
	b := trust.DefaultBranch()
	b.QueueCandidates = true
	return b
}

type world struct {
	c         *cast
	q         *log
	prs       map[string]*pr.State
	contains  map[plumbing.Hash]bool
	conflicts map[string][]string
	merges    int
}

func newWorld(t *testing.T, c *cast, entries []string, specs map[string]prSpec) *world {
	w := &world{c: c, q: &log{}, prs: map[string]*pr.State{}, contains: map[plumbing.Hash]bool{}, conflicts: map[string][]string{}}
	w.q.add(c.runner, hubrefs.TypeQueueOpened, "id", queueID, "target", main)
	for n, s := range specs {
		w.prs[prID(n)] = c.pr(t, n, s)
	}
	for _, n := range entries {
		w.q.add(c.runner, hubrefs.TypeQueueEntered, "pr", prID(n), "head", hex(specs[n].head), "base", main)
	}
	return w
}

func (w *world) input(t *testing.T, tip plumbing.Hash) PlanInput {
	st, err := Fold(w.q.evs, w.c.t)
	if err != nil {
		t.Fatal(err)
	}
	return PlanInput{Queue: st, PRs: w.prs, Trust: w.c.t, Branch: branch(), Tip: tip,
		Contains: func(tp, rev plumbing.Hash) bool { return rev == tp || w.contains[rev] },
		Merge: func(parent, head plumbing.Hash, id string) (plumbing.Hash, []string, error) {
			w.merges++
			if p := w.conflicts[nameOf(id)]; p != nil {
				return plumbing.ZeroHash, p, nil
			}
			return fakeStep(parent, head.String()), nil, nil
		}}
}

// apply appends to the queue log the events carrying out p (the landing
// succeeding), as the CLI would.
func (w *world) apply(p Plan) {
	r := w.c.runner
	for _, s := range p.Settle {
		w.q.add(r, hubrefs.TypeQueueLeft, "pr", s.PR, "head", s.Head, "reason", s.Reason)
	}
	for _, e := range p.Enter {
		w.q.add(r, hubrefs.TypeQueueEntered, "pr", e.PR, "head", e.Head, "base", e.Base)
	}
	if p.Land != nil {
		for _, l := range p.Land.Landed {
			w.q.add(r, hubrefs.TypeQueueLeft, "pr", l.PR, "head", l.Head, "reason", ReasonLanded)
		}
	}
	for _, e := range p.Evict {
		w.q.add(r, hubrefs.TypeQueueLeft, "pr", e.PR, "head", e.Head, "reason", e.Reason, "detail", e.Detail, "step", e.Step, "run", e.Run)
	}
	for _, pb := range p.Publish {
		fields := []any{"pr", pb.PR, "head", pb.Head, "step", pb.Step, "parents", pb.Parents, "branch", pb.Branch}
		if pb.Run != "" {
			fields = append(fields, "run", pb.Run)
		}
		w.q.add(r, hubrefs.TypeQueueCandidate, fields...)
	}
}

func chainStr(p Plan) string {
	var s []string
	for _, st := range p.Chain {
		s = append(s, nameOf(st.PR)+"="+st.Verdict)
	}
	return strings.Join(s, ",")
}

func TestPlanScenarios(t *testing.T) {
	c := newCast(t)
	ok := func(heads ...string) chk { return chk{step(tip0, heads...), pr.Success} }
	bad := func(heads ...string) chk { return chk{step(tip0, heads...), pr.Failure} }
	tests := []struct {
		name      string
		entries   []string
		prs       map[string]prSpec
		contains  []string // head names the target already holds
		conflicts map[string][]string
		depth     int
		auto      []string

		settle, enter, land, evict, publish, waiting, deleted string
		chain                                                 string
	}{
		{name: "all green lands all", entries: []string{"a", "b"},
			prs:   map[string]prSpec{"a": {head: "ha", checks: []chk{ok("ha")}}, "b": {head: "hb", checks: []chk{ok("ha", "hb")}}},
			chain: "a=green,b=green", land: "a,b", deleted: "a,b"},
		{name: "red at step 2 behind green: land 1, evict 2, rebuild suffix", entries: []string{"a", "b", "c"},
			prs: map[string]prSpec{"a": {head: "ha", checks: []chk{ok("ha")}}, "b": {head: "hb", checks: []chk{bad("ha", "hb")}},
				"c": {head: "hc", checks: []chk{ok("ha", "hb", "hc")}}},
			chain: "a=green,c=pending", land: "a", evict: "b:failed", publish: "c", waiting: "c", deleted: "a,b"},
		{name: "red at step 1: evict, rebuild the rest on the tip", entries: []string{"a", "b"},
			prs:   map[string]prSpec{"a": {head: "ha", checks: []chk{bad("ha")}}, "b": {head: "hb", checks: []chk{ok("hb")}}},
			chain: "b=green", land: "b", evict: "a:failed", deleted: "a,b"},
		{name: "red with pending ahead waits", entries: []string{"a", "b"},
			prs:   map[string]prSpec{"a": {head: "ha"}, "b": {head: "hb", checks: []chk{bad("ha", "hb")}}},
			chain: "a=pending,b=red", publish: "a,b", waiting: "a,b"},
		{name: "conflict predicted: left(conflict), chain goes on", entries: []string{"a", "b", "c"},
			prs:       map[string]prSpec{"a": {head: "ha"}, "b": {head: "hb"}, "c": {head: "hc"}},
			conflicts: map[string][]string{"b": {"x.go", "y/z.go"}},
			chain:     "a=pending,c=pending", evict: "b:conflict", publish: "a,c", waiting: "a,c", deleted: "b"},
		{name: "not-ready entry waits without holding others", entries: []string{"a", "b", "c"},
			prs: map[string]prSpec{"a": {head: "ha", checks: []chk{ok("ha")}}, "b": {head: "hb", unready: true},
				"c": {head: "hc", checks: []chk{ok("ha", "hc")}}},
			chain: "a=green,c=green", land: "a,c", waiting: "b", deleted: "a,c"},
		{name: "closed pull request is withdrawn", entries: []string{"a", "b"},
			prs:    map[string]prSpec{"a": {head: "ha", closed: true}, "b": {head: "hb"}},
			settle: "a:withdrawn", chain: "b=pending", publish: "b", waiting: "b", deleted: "a"},
		{name: "missing pull request is withdrawn", entries: []string{"a"},
			prs:    map[string]prSpec{},
			settle: "a:withdrawn", deleted: "a"},
		{name: "crash after swap: target holds the head → pr.merged + landed", entries: []string{"a", "b"},
			prs:      map[string]prSpec{"a": {head: "ha"}, "b": {head: "hb"}},
			contains: []string{"ha"},
			settle:   "a:landed+merged", chain: "b=pending", publish: "b", waiting: "b", deleted: "a"},
		{name: "crash after pr.merged: landed, no second pr.merged", entries: []string{"a"},
			prs:      map[string]prSpec{"a": {head: "ha", merged: true}},
			contains: []string{"ha"},
			settle:   "a:landed", deleted: "a"},
		{name: "target holds the entered head but the head moved → stale", entries: []string{"a"},
			prs:      map[string]prSpec{"a": {head: "ha", moved: "ha2"}},
			contains: []string{"ha"},
			settle:   "a:stale", deleted: "a"},
		{name: "head moved → stale", entries: []string{"a", "b"},
			prs:    map[string]prSpec{"a": {head: "ha", moved: "ha2"}, "b": {head: "hb"}},
			settle: "a:stale", chain: "b=pending", publish: "b", waiting: "b", deleted: "a"},
		{name: "base changed → stale", entries: []string{"a"},
			prs:    map[string]prSpec{"a": {head: "ha", base: "refs/heads/dev"}},
			settle: "a:stale", deleted: "a"},
		{name: "depth limit", entries: []string{"a", "b", "c"}, depth: 2,
			prs:   map[string]prSpec{"a": {head: "ha"}, "b": {head: "hb"}, "c": {head: "hc"}},
			chain: "a=pending,b=pending", publish: "a,b", waiting: "a,b,c"},
		{name: "cancelled is pending", entries: []string{"a"},
			prs:   map[string]prSpec{"a": {head: "ha", checks: []chk{{step(tip0, "ha"), pr.Cancelled}}}},
			chain: "a=pending", publish: "a", waiting: "a"},
		{name: "re-run after failure: newer success is green", entries: []string{"a"},
			prs:   map[string]prSpec{"a": {head: "ha", checks: []chk{bad("ha"), ok("ha")}}},
			chain: "a=green", land: "a", deleted: "a"},
		{name: "failure after success: red", entries: []string{"a"},
			prs:   map[string]prSpec{"a": {head: "ha", checks: []chk{ok("ha"), bad("ha")}}},
			chain: "", evict: "a:failed", deleted: "a"},
		{name: "checks on the pull request head do not count", entries: []string{"a"},
			prs:   map[string]prSpec{"a": {head: "ha", checks: []chk{{plumbing.NewHash(hex("ha")), pr.Success}}}},
			chain: "a=pending", publish: "a", waiting: "a"},
		{name: "auto-enter approved, skip unapproved and queued", entries: []string{"a"}, auto: []string{"a", "d", "e"},
			prs:   map[string]prSpec{"a": {head: "ha"}, "d": {head: "hd"}, "e": {head: "he", unready: true}},
			enter: "d", chain: "a=pending,d=pending", publish: "a,d", waiting: "a,d"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, c, tc.entries, tc.prs)
			for _, h := range tc.contains {
				w.contains[plumbing.NewHash(hex(h))] = true
			}
			w.conflicts = tc.conflicts
			in := w.input(t, tip0)
			in.Depth = tc.depth
			if tc.auto != nil {
				in.AutoEnter = true
				for _, n := range tc.auto {
					in.Approved = append(in.Approved, prID(n))
				}
			}
			p, err := PlanPass(in)
			if err != nil {
				t.Fatal(err)
			}
			var settle, enter, land, evict, publish, waiting []string
			for _, s := range p.Settle {
				x := nameOf(s.PR) + ":" + s.Reason
				if s.Merged != nil {
					x += "+merged"
					if s.Merged.Revision != s.Head || s.Merged.Branch != main {
						t.Errorf("pr.merged %+v", s.Merged)
					}
				}
				settle = append(settle, x)
			}
			for _, e := range p.Enter {
				enter = append(enter, nameOf(e.PR))
			}
			if p.Land != nil {
				for _, l := range p.Land.Landed {
					land = append(land, nameOf(l.PR))
				}
				if p.Land.Old != tip0.String() || p.Land.New != p.Land.Landed[len(p.Land.Landed)-1].Commit || p.Land.Ref != main {
					t.Errorf("land %+v", p.Land)
				}
			}
			for _, e := range p.Evict {
				evict = append(evict, nameOf(e.PR)+":"+e.Reason)
				if e.Reason == ReasonFailed && (!slices.Equal(e.Checks, []string{"ci"}) || !strings.Contains(e.Detail, "ci")) {
					t.Errorf("failed eviction names no check: %+v", e)
				}
				if e.Reason == ReasonConflict && (!slices.Equal(e.Paths, tc.conflicts[nameOf(e.PR)]) || !strings.Contains(e.Detail, "x.go")) {
					t.Errorf("conflict eviction names no path: %+v", e)
				}
			}
			for _, pb := range p.Publish {
				publish = append(publish, nameOf(pb.PR))
				if pb.Branch != "refs/heads/queue/main/"+pb.PR || len(pb.Parents) != 2 || pb.Parents[1] != pb.Head {
					t.Errorf("publish %+v", pb)
				}
			}
			for _, wt := range p.Waiting {
				waiting = append(waiting, nameOf(wt.PR))
			}
			// Every chain step is the candidate of its head on the step before.
			parent := tip0
			for _, st := range p.Chain {
				if st.Parent != parent.String() || st.Commit != fakeStep(parent, st.Head).String() {
					t.Errorf("step %s not built on %s", nameOf(st.PR), parent)
				}
				parent = plumbing.NewHash(st.Commit)
			}
			var deleted []string
			for _, d := range p.Delete {
				deleted = append(deleted, nameOf(strings.TrimPrefix(d, "refs/heads/queue/main/")))
			}
			slices.Sort(deleted)
			for _, x := range []struct{ what, got, want string }{
				{"settle", strings.Join(settle, ","), tc.settle}, {"enter", strings.Join(enter, ","), tc.enter},
				{"chain", chainStr(p), tc.chain}, {"land", strings.Join(land, ","), tc.land},
				{"evict", strings.Join(evict, ","), tc.evict}, {"publish", strings.Join(publish, ","), tc.publish},
				{"waiting", strings.Join(waiting, ","), tc.waiting}, {"delete", strings.Join(deleted, ","), tc.deleted},
			} {
				if x.got != x.want {
					t.Errorf("%s: got %q, want %q", x.what, x.got, x.want)
				}
			}
			if _, err := json.Marshal(p); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestPassIsIdempotent: carrying out a pass and planning again over the same
// state (no new checks) appends nothing; a landing converges.
func TestPassIsIdempotent(t *testing.T) {
	c := newCast(t)
	specs := map[string]prSpec{"a": {head: "ha", checks: []chk{{step(tip0, "ha"), pr.Success}}}, "b": {head: "hb"}, "c": {head: "hc"}}
	w := newWorld(t, c, []string{"a", "b", "c"}, specs)
	w.conflicts = map[string][]string{"c": {"f"}}
	p1, err := PlanPass(w.input(t, tip0))
	if err != nil {
		t.Fatal(err)
	}
	if p1.Land == nil || len(p1.Publish) != 1 || len(p1.Evict) != 1 || p1.Appends() != 4 {
		t.Fatalf("first pass: %+v (appends %d)", p1, p1.Appends())
	}
	w.apply(p1)
	tip1 := plumbing.NewHash(p1.Land.New)
	w.contains[plumbing.NewHash(hex("ha"))] = true
	w.prs[prID("a")] = c.pr(t, "a", prSpec{head: "ha", merged: true})
	p2, err := PlanPass(w.input(t, tip1))
	if err != nil {
		t.Fatal(err)
	}
	if p2.Appends() != 0 || len(p2.Delete) != 0 || chainStr(p2) != "b=pending" {
		t.Fatalf("second pass is not idle: %+v", p2)
	}
	raw, _ := json.Marshal(p2)
	if !strings.Contains(string(raw), `"publish":[]`) {
		t.Errorf("json: %s", raw)
	}
}

// TestResetLoop: the swap failed because the target moved; the caller appends
// queue.reset and plans again on the new tip, which republishes the chain.
func TestResetLoop(t *testing.T) {
	c := newCast(t)
	w := newWorld(t, c, []string{"a", "b"}, map[string]prSpec{"a": {head: "ha"}, "b": {head: "hb"}})
	p1, err := PlanPass(w.input(t, tip0))
	if err != nil {
		t.Fatal(err)
	}
	w.apply(p1)
	moved := plumbing.ComputeHash(plumbing.CommitObject, []byte("someone pushed"))
	before := w.input(t, moved).Queue
	if before.MovedUnder(tip0.String(), prID("a")) || !before.MovedUnder(moved.String(), prID("a")) || !before.MovedUnder(moved.String(), prID("b")) {
		t.Fatal("MovedUnder: the chain stands on tip0; only a move to another commit is outside the queue")
	}
	if before.MovedUnder(p1.Publish[0].Step, prID("b")) {
		t.Fatal("MovedUnder: a landing moves the target to a recorded step, inside the queue")
	}
	w.q.add(c.runner, hubrefs.TypeQueueReset, "tip", moved.String())
	in := w.input(t, moved)
	if in.Queue.MovedUnder(moved.String(), prID("a")) {
		t.Fatal("MovedUnder after the reset: the candidate is invalidated, nothing stands")
	}
	if rec, ok := in.Queue.LatestCandidate(prID("a")); !ok || rec.Invalidated.IsZero() {
		t.Fatalf("reset did not invalidate %+v", rec)
	}
	p2, err := PlanPass(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Publish) != 2 || p2.Publish[0].Parents[0] != moved.String() {
		t.Fatalf("rebuild on new tip: %+v", p2.Publish)
	}
	w.apply(p2)
	in3 := w.input(t, moved)
	if rec, _ := in3.Queue.LatestCandidate(prID("b")); !rec.Invalidated.IsZero() {
		t.Fatal("fresh candidate invalidated")
	}
	// A reset naming the tip the chain is built on invalidates nothing.
	w.q.add(c.runner, hubrefs.TypeQueueReset, "tip", moved.String())
	if p3, _ := PlanPass(w.input(t, moved)); p3.Appends() != 0 {
		t.Fatalf("third pass: %+v", p3)
	}
}

func TestPlanMergeErrorAndInput(t *testing.T) {
	c := newCast(t)
	w := newWorld(t, c, []string{"a"}, map[string]prSpec{"a": {head: "ha"}})
	in := w.input(t, tip0)
	boom := errors.New("boom")
	in.Merge = func(plumbing.Hash, plumbing.Hash, string) (plumbing.Hash, []string, error) {
		return plumbing.ZeroHash, nil, boom
	}
	if _, err := PlanPass(in); !errors.Is(err, ErrMerge) || !errors.Is(err, boom) {
		t.Errorf("merge error: %v", err)
	}
	in.Contains = nil
	if _, err := PlanPass(in); !errors.Is(err, ErrInput) {
		t.Errorf("nil Contains: %v", err)
	}
}

func TestPlanClosedQueueAndCeiling(t *testing.T) {
	c := newCast(t)
	w := newWorld(t, c, []string{"a"}, map[string]prSpec{"a": {head: "ha"}})
	w.q.add(c.runner, hubrefs.TypeQueueClosed)
	in := w.input(t, tip0)
	in.Ceiling = 4 // 3 events: 75%
	p, err := PlanPass(in)
	if err != nil {
		t.Fatal(err)
	}
	if p.Idle == "" || p.Appends() != 0 || len(p.Warnings) != 0 {
		t.Errorf("closed: %+v", p)
	}
	in.Ceiling = 3
	if p, _ := PlanPass(in); len(p.Warnings) != 1 {
		t.Errorf("no ceiling warning: %+v", p)
	}
}

// TestSettleRetargetedAfterLanding: an entry whose head the target holds
// leaves as landed, but pr.merged (which must name the pull request's base)
// is written only while the pull request is still based on the target.
func TestSettleRetargetedAfterLanding(t *testing.T) {
	c := newCast(t)
	w := newWorld(t, c, []string{"a"}, map[string]prSpec{"a": {head: "ha"}})
	w.contains[plumbing.NewHash(hex("ha"))] = true
	for _, base := range []string{main, "refs/heads/other"} {
		w.prs[prID("a")].Base = base
		p, err := PlanPass(w.input(t, tip0))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Settle) != 1 || p.Settle[0].Reason != ReasonLanded {
			t.Fatalf("base %s: settle %+v, want one landed", base, p.Settle)
		}
		if got := p.Settle[0].Merged != nil; got != (base == main) {
			t.Fatalf("base %s: pr.merged planned = %v", base, got)
		}
	}
}

// TestAutoEnterSkipsEvictedHead: --auto-enter does not enter again a pull
// request evicted at its current head; a new head enters.
func TestAutoEnterSkipsEvictedHead(t *testing.T) {
	c := newCast(t)
	for _, tc := range []struct {
		reason, evictedHead, head string
		enter                     bool
	}{
		{ReasonFailed, "ha", "ha", false},
		{ReasonConflict, "ha", "ha", false},
		{ReasonFailed, "ha", "ha2", true},
		{ReasonWithdrawn, "ha", "ha", true},
	} {
		w := newWorld(t, c, []string{"a"}, map[string]prSpec{"a": {head: tc.head}})
		// The entry left: as the runner records an eviction.
		w.q.add(c.runner, hubrefs.TypeQueueLeft, "pr", prID("a"), "head", hex(tc.head), "reason", tc.reason)
		if tc.evictedHead != tc.head {
			w.q.evs = w.q.evs[:len(w.q.evs)-1]
			w.q.add(c.runner, hubrefs.TypeQueueLeft, "pr", prID("a"), "head", hex(tc.head), "reason", ReasonWithdrawn)
			w.q.add(c.runner, hubrefs.TypeQueueEntered, "pr", prID("a"), "head", hex(tc.evictedHead), "base", main)
			w.q.add(c.runner, hubrefs.TypeQueueLeft, "pr", prID("a"), "head", hex(tc.evictedHead), "reason", tc.reason)
		}
		in := w.input(t, tip0)
		in.AutoEnter, in.Approved = true, []string{prID("a")}
		p, err := PlanPass(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(p.Enter) == 1; got != tc.enter {
			t.Fatalf("left %s at %s, head now %s: entered = %v, want %v", tc.reason, tc.evictedHead, tc.head, got, tc.enter)
		}
	}
}

// TestReenteredNotMovedUnder: a pull request evicted by a flaky check and
// entered again gets a fresh candidate on the same tip (a new episode). The
// republish replaces a standing record, but the target did not move: no
// queue.reset is due (the soak once recorded one here).
func TestReenteredNotMovedUnder(t *testing.T) {
	c := newCast(t)
	w := newWorld(t, c, []string{"a"}, map[string]prSpec{"a": {head: "ha"}})
	p1, err := PlanPass(w.input(t, tip0))
	if err != nil {
		t.Fatal(err)
	}
	w.apply(p1)
	w.q.add(c.runner, hubrefs.TypeQueueLeft, "pr", prID("a"), "head", hex("ha"), "reason", ReasonFailed, "step", p1.Publish[0].Step)
	w.q.add(c.runner, hubrefs.TypeQueueEntered, "pr", prID("a"), "head", hex("ha"), "base", main)
	in := w.input(t, tip0)
	p2, err := PlanPass(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Publish) != 1 || p2.Publish[0].Parents[0] != tip0.String() {
		t.Fatalf("re-entry republishes on tip0: %+v", p2.Publish)
	}
	if in.Queue.MovedUnder(tip0.String(), prID("a")) {
		t.Fatal("a republish on the same tip is not a move outside the queue")
	}
}

// TestEvictedAheadNotMovedUnder: the member ahead is evicted and the one
// behind is rebuilt on the tip below: a new step for the same head replaces
// a standing record, but the target did not move — the chain still stands on
// it (the first chain on a fresh repository, whose tip is no step, once got a
// spurious queue.reset here).
func TestEvictedAheadNotMovedUnder(t *testing.T) {
	c := newCast(t)
	w := newWorld(t, c, []string{"a", "b"}, map[string]prSpec{"a": {head: "ha"}, "b": {head: "hb"}})
	p1, err := PlanPass(w.input(t, tip0))
	if err != nil {
		t.Fatal(err)
	}
	w.apply(p1)
	w.q.add(c.runner, hubrefs.TypeQueueLeft, "pr", prID("a"), "head", hex("ha"), "reason", ReasonFailed, "step", p1.Publish[0].Step)
	in := w.input(t, tip0)
	p2, err := PlanPass(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Publish) != 1 || p2.Publish[0].PR != prID("b") || p2.Publish[0].Parents[0] != tip0.String() {
		t.Fatalf("b rebuilt on tip0: %+v", p2.Publish)
	}
	if rec, _ := in.Queue.LatestCandidate(prID("b")); rec.Step == p2.Publish[0].Step || !rec.Invalidated.IsZero() {
		t.Fatalf("b's new step must replace a standing record: %+v", rec)
	}
	if in.Queue.MovedUnder(tip0.String(), prID("b")) {
		t.Fatal("b's chain stood on tip0 through a's step: the target did not move")
	}
	if !in.Queue.MovedUnder(hex("elsewhere"), prID("b")) {
		t.Fatal("a tip that is no step and not the chain's base is a move outside the queue")
	}
}

// TestAutoEnterSkipsDraft: --auto-enter does not enter a draft, and a
// queued draft waits as not ready (docs/events.md, "Drafts").
func TestAutoEnterSkipsDraft(t *testing.T) {
	c := newCast(t)
	w := newWorld(t, c, []string{"b"}, map[string]prSpec{"a": {head: "ha"}, "b": {head: "hb"}})
	w.prs[prID("a")].Draft = true
	w.prs[prID("b")].Draft = true
	in := w.input(t, tip0)
	in.AutoEnter, in.Approved = true, []string{prID("a")}
	p, err := PlanPass(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Enter) != 0 || len(p.Chain) != 0 {
		t.Fatalf("a draft entered or was built: enter %+v, chain %+v", p.Enter, p.Chain)
	}
	if len(p.Waiting) != 1 || !strings.Contains(p.Waiting[0].Reason, "not ready") || !strings.Contains(p.Waiting[0].Reason, "draft") {
		t.Fatalf("waiting %+v, want the queued draft not ready", p.Waiting)
	}
}
