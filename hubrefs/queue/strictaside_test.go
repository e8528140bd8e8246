package queue

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// lanePass plans one pass of w as a strict queue (depth 4) on a branch
// with one partition, web, that every pull request's change lies in, and
// carries it out.
func (w *asideWorld) lanePass() Plan {
	w.t.Helper()
	for _, n := range w.names {
		st, err := pr.Fold(w.logs[n].evs, w.c.t)
		if err != nil {
			w.t.Fatal(err)
		}
		w.prs[prID(n)] = st
	}
	in := w.input(w.t, w.tip)
	in.Branch.QueueDepth = 4
	web, err := trust.NewPartition("web", []string{"web/**"}, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	in.Branch.Partitions = []trust.Partition{web}
	in.Changed = func(from, to plumbing.Hash) ([]string, error) { return []string{"web/" + to.String()[:8]}, nil }
	in.BuildTested = func(parent, head, tested plumbing.Hash, id string) (plumbing.Hash, []string, error) {
		return fakeStep(parent, head.String()), nil, nil
	}
	// One lane, so a candidate standing on another commit than the tip
	// holds other changes of the lane: its partition step is refused.
	in.Tested = func(prev, step, tested, head plumbing.Hash, id string) (string, string, error) {
		return "web", "its candidate stands on another commit of the lane", nil
	}
	p, err := PlanPass(in)
	if err != nil {
		w.t.Fatal(err)
	}
	if p.Land != nil {
		w.tip = plumbing.NewHash(p.Land.New)
		for _, l := range p.Land.Landed {
			w.contains[plumbing.NewHash(l.Head)] = true
		}
	}
	w.applyBatch(p)
	return p
}

// published returns what p publishes for pull request name.
func published(t *testing.T, p Plan, name string) Publish {
	t.Helper()
	for _, pb := range p.Publish {
		if pb.PR == prID(name) {
			return pb
		}
	}
	t.Fatalf("%s was not published: %+v", name, p.Publish)
	return Publish{}
}

// TestStrictAside: under strict checks on a branch with partitions, a red
// lane step whose follower, built on it, is red too is evicted on those two
// runs — its followers rebuilt without it in the same pass, and the steps
// above the follower left unpublished while the follower's verdict is
// awaited; a red step with nothing above it leaves the chain at once and is
// tried alone on the target, a trial of one citing its red run in its lane:
// a red trial evicts it, a green one puts it back behind the entries queued
// before its trial. A red step whose follower is green is run again in
// place, and evicted if red again (docs/queue.md, "A red strict step tried
// aside").
func TestStrictAside(t *testing.T) {
	t.Run("follower red", func(t *testing.T) {
		w := newAsideWorld(t, "a", "b", "c", "d", "e")
		p := w.lanePass()
		if chainStr(p) != "a=pending,b=pending,c=pending,d=pending" {
			t.Fatalf("pass 1 chain %s", chainStr(p))
		}
		w.ci(p, "a", pr.Success)
		w.ci(p, "b", pr.Failure) // b is broken
		p = w.lanePass()
		// a lands; b waits for c, built on it.
		if p.Land == nil || len(p.Land.Landed) != 1 || len(p.Evict) != 0 || chainStr(p) != "a=green,b=red,c=pending,d=pending" {
			t.Fatalf("pass 2: land %+v evict %+v chain %s", p.Land, p.Evict, chainStr(p))
		}
		// e, which has a place now, is built on d but not checked while b
		// is red and c pending.
		p = w.lanePass()
		if len(p.Evict) != 0 || chainStr(p) != "b=red,c=pending,d=pending,e=pending" {
			t.Fatalf("pass 2b: evict %+v chain %s", p.Evict, chainStr(p))
		}
		for _, pb := range p.Publish {
			if pb.PR == prID("e") {
				t.Fatalf("pass 2 publishes e above b's follower: %+v", pb)
			}
		}
		for _, wt := range p.Waiting {
			if wt.PR == prID("e") && !strings.Contains(wt.Reason, "not checked yet") {
				t.Fatalf("e waits: %q", wt.Reason)
			}
		}
		w.check(p.Chain[1].Commit, pr.Failure) // c, built on b, fails too
		p = w.lanePass()
		if evictions(p) != "b:failed" || !strings.Contains(p.Evict[0].Detail, "is red too") {
			t.Fatalf("pass 3 evicted %+v, want b on its red run and c's", p.Evict)
		}
		if !strings.Contains(p.Evict[0].Detail, prID("c")) {
			t.Fatalf("pass 3: b's eviction does not name c: %q", p.Evict[0].Detail)
		}
		if chainStr(p) != "c=pending,d=pending,e=pending" || p.Chain[0].Parent != w.tip.String() {
			t.Fatalf("pass 3 chain %s (c on %s), want c, d, e rebuilt on the tip %s", chainStr(p), p.Chain[0].Parent, w.tip)
		}
		if len(p.Publish) != 3 {
			t.Fatalf("pass 3 publishes %+v, want c, d and e rebuilt", p.Publish)
		}
	})
	for _, trial := range []string{pr.Failure, pr.Success} {
		t.Run("nothing above, trial "+trial, func(t *testing.T) {
			w := newAsideWorld(t, "a", "b")
			p := w.lanePass()
			w.ci(p, "a", pr.Success)
			w.ci(p, "b", pr.Failure) // red at the top of its lane

			// a lands; b is tried aside on the new tip; nobody is evicted.
			p = w.lanePass()
			if p.Land == nil || len(p.Land.Landed) != 1 || len(p.Evict) != 0 || chainStr(p) != "a=green" {
				t.Fatalf("pass 2: land %+v evict %+v chain %s", p.Land, p.Evict, chainStr(p))
			}
			tb := published(t, p, "b")
			if !tb.Trial || tb.GroupSize != 1 || tb.GroupEnd != tb.Step || tb.Parents[0] != w.tip.String() || tb.Partition != "web" || tb.Run == "" {
				t.Fatalf("pass 2: b published %+v, want a trial of one on the tip in lane web citing its red run", tb)
			}
			waits := 0
			for _, wt := range p.Waiting {
				if wt.PR != prID("b") {
					continue
				}
				waits++
				if !strings.Contains(wt.Reason, "aside from the chain in a trial of 1") || !strings.Contains(wt.Reason, "its step was red") {
					t.Fatalf("b waits: %q", wt.Reason)
				}
			}
			if waits != 1 {
				t.Fatalf("pass 2: b waits %d times, want once (its trial)", waits)
			}
			if again := w.lanePass(); again.Appends() != 0 {
				t.Fatalf("planning again appends %+v", again)
			}
			w.check(tb.Step, trial)
			p = w.lanePass()
			if trial == pr.Failure {
				if evictions(p) != "b:failed" || !strings.Contains(p.Evict[0].Detail, "a trial of it alone") {
					t.Fatalf("pass 3 evicted %+v, want b on its trial", p.Evict)
				}
				return
			}
			if len(p.Evict) != 0 || p.Land == nil || p.Land.Landed[0].PR != prID("b") {
				t.Fatalf("pass 3: evict %+v land %+v, want b's green trial on the tip landed", p.Evict, p.Land)
			}
		})
	}
	t.Run("follower green", func(t *testing.T) {
		w := newAsideWorld(t, "a", "b", "c")
		p := w.lanePass()
		w.ci(p, "a", pr.Failure) // a flake: b, built on a, passes
		w.ci(p, "b", pr.Success)
		first := published(t, p, "a")
		p = w.lanePass()
		ra := published(t, p, "a")
		if len(p.Evict) != 0 || ra.Step != first.Step || ra.Trial || ra.Run == "" || chainStr(p) != "a=red,b=green,c=pending" {
			t.Fatalf("pass 2: evict %+v, a published %+v, chain %s: want a run again in place citing its run", p.Evict, ra, chainStr(p))
		}
		w.check(ra.Step, pr.Failure) // red again: two red runs
		p = w.lanePass()
		if evictions(p) != "a:failed" {
			t.Fatalf("pass 3 evicted %+v, want a", p.Evict)
		}
	})
	t.Run("the step above in the lane's next chain", func(t *testing.T) {
		// stepAbove reads the standing candidate built on a step when the
		// step ends its chain (the lane's next chain, past a global entry).
		w := newAsideWorld(t, "a", "b")
		p := w.lanePass()
		w.ci(p, "b", pr.Failure)
		for _, n := range w.names {
			st, err := pr.Fold(w.logs[n].evs, w.c.t)
			if err != nil {
				t.Fatal(err)
			}
			w.prs[prID(n)] = st
		}
		in := w.input(t, w.tip)
		web, _ := trust.NewPartition("web", []string{"web/**"}, nil)
		in.Branch.Partitions = []trust.Partition{web}
		pl := &planner{in: in, q: in.Queue}
		a := p.Chain[0]
		got, ok := pl.stepAbove([]Step{a}, 0)
		if !ok || got.pr != prID("b") || got.step != p.Chain[1].Commit || got.verdict != Red {
			t.Fatalf("stepAbove(a) = %+v, %v; want b's red step %s", got, ok, p.Chain[1].Commit)
		}
		if _, ok := pl.stepAbove([]Step{p.Chain[1]}, 0); ok {
			t.Fatal("stepAbove(b) found a step built on b")
		}
		// A follower red by checkTimeout's silence is no evidence.
		silent := p.Chain[1]
		silent.Verdict, silent.timeout = Red, "no verdict within checkTimeout"
		if f, ok := pl.stepAbove([]Step{a, silent}, 0); ok {
			t.Fatalf("stepAbove(a) with a silent follower = %+v", f)
		}
		silent.timeout = ""
		if f, ok := pl.stepAbove([]Step{a, silent}, 0); !ok || f.verdict != Red {
			t.Fatalf("stepAbove(a) with a red follower = %+v, %v", f, ok)
		}
	})
}

// TestSearchStep: which steps check run runs once (queue.SearchStep).
func TestSearchStep(t *testing.T) {
	web, _ := trust.NewPartition("web", []string{"web/**"}, nil)
	lanes := trust.Branch{Partitions: []trust.Partition{web}}
	batch := lanes
	batch.CheckEvery = 4
	q := &State{ID: "q", Entries: []Entry{{PR: "p", Seq: 2}}}
	for _, tt := range []struct {
		name string
		rec  Recorded
		b    trust.Branch
		want string
	}{
		{"strict step, no partitions", Recorded{PR: "p", Step: "s", Seq: 3}, trust.Branch{}, ""},
		{"strict lane step", Recorded{PR: "p", Step: "s", Seq: 3, Partition: "web"}, lanes, "a strict step"},
		{"strict global step", Recorded{PR: "p", Step: "s", Seq: 3}, lanes, "a strict step"},
		{"run again in place", Recorded{PR: "p", Step: "s", Seq: 3, Run: "r"}, lanes, "a strict step"},
		{"cleared by a trial before", Recorded{PR: "p", Step: "s", Seq: 5, TrialSeq: 4}, lanes, ""},
		{"of an earlier entry", Recorded{PR: "p", Step: "s", Seq: 1}, lanes, ""},
		{"trial", Recorded{PR: "p", Step: "s", Seq: 3, Trial: true, GroupEnd: "s", GroupSize: 1, TrialSeq: 3}, lanes, "a trial of 1"},
		{"group end", Recorded{PR: "p", Step: "s", Seq: 3, GroupEnd: "s", GroupSize: 3}, batch, "the last step of a group of 3"},
		{"group of one", Recorded{PR: "p", Step: "s", Seq: 3, GroupEnd: "s", GroupSize: 1}, batch, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q.latest = map[string]*Recorded{"p": &tt.rec}
			got := SearchStep(q, tt.rec, tt.b)
			if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
				t.Errorf("SearchStep = %q, want %q…", got, tt.want)
			}
		})
	}
}
