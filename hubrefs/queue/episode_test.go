package queue

import (
	"strings"
	"testing"
	"time"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
)

func evictStr(p Plan) string {
	var s []string
	for _, e := range p.Evict {
		s = append(s, nameOf(e.PR)+":"+e.Reason)
	}
	return strings.Join(s, ",")
}

func publishStr(p Plan) string {
	var s []string
	for _, x := range p.Publish {
		s = append(s, nameOf(x.PR))
	}
	return strings.Join(s, ",")
}

// TestFreshVerdictAfterReentry: a flaky failure evicts a pull request; when
// it enters again, the run that evicted it does not evict it again: its
// candidate (the same commit) is announced again, pending, for CI to run
// anew. A new failing run evicts it; a new success lands it.
func TestFreshVerdictAfterReentry(t *testing.T) {
	c := newCast(t)
	c1 := step(tip0, "ha")
	bad := chk{c1, pr.Failure}
	w := newWorld(t, c, []string{"a"}, map[string]prSpec{"a": {head: "ha", checks: []chk{bad}}})
	p1, err := PlanPass(w.input(t, tip0))
	if err != nil {
		t.Fatal(err)
	}
	if evictStr(p1) != "a:failed" || p1.Evict[0].Run == "" || !strings.Contains(p1.Evict[0].Detail, "run "+p1.Evict[0].Run) {
		t.Fatalf("first plan: %+v", p1.Evict)
	}
	w.apply(p1)
	w.q.add(c.runner, hubrefs.TypeQueueEntered, "pr", prID("a"), "head", hex("ha"), "base", main)
	p2, err := PlanPass(w.input(t, tip0))
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Evict) != 0 || chainStr(p2) != "a=pending" || publishStr(p2) != "a" || p2.Publish[0].Step != c1.String() {
		t.Fatalf("after re-entry: evict %q chain %q publish %q, want no eviction, a pending and re-announced at %s", evictStr(p2), chainStr(p2), publishStr(p2), c1)
	}
	w.apply(p2)
	if p, _ := PlanPass(w.input(t, tip0)); p.Appends() != 0 {
		t.Fatalf("a pass after the re-announcement appends %d", p.Appends())
	}
	// A new run fails: evicted again, naming the new run.
	w.prs[prID("a")] = c.pr(t, "a", prSpec{head: "ha", checks: []chk{bad, bad}})
	p3, _ := PlanPass(w.input(t, tip0))
	if evictStr(p3) != "a:failed" || p3.Evict[0].Run == p1.Evict[0].Run {
		t.Fatalf("a new failing run: %+v", p3.Evict)
	}
	// A new run succeeds instead: it lands.
	w.prs[prID("a")] = c.pr(t, "a", prSpec{head: "ha", checks: []chk{bad, {c1, pr.Success}}})
	if p4, _ := PlanPass(w.input(t, tip0)); p4.Land == nil || len(p4.Evict) != 0 {
		t.Fatalf("a new successful run: %+v", p4)
	}
}

// TestCheckTimeout: with checkTimeout, a candidate whose required check has
// not concluded that long after its queue.candidate is evicted as failed,
// naming the check and the timeout; not before, and never without Now.
func TestCheckTimeout(t *testing.T) {
	c := newCast(t)
	w := newWorld(t, c, []string{"a", "b"}, map[string]prSpec{"a": {head: "ha"}, "b": {head: "hb"}})
	in := w.input(t, tip0)
	p1, _ := PlanPass(in)
	w.apply(p1)
	in = w.input(t, tip0)
	in.Branch.CheckTimeout = 10 * time.Minute
	rec, _ := in.Queue.LatestCandidate(prID("a"))
	for _, tc := range []struct {
		now   int64
		evict string
	}{{0, ""}, {rec.Time + 599, ""}, {rec.Time + 600, "a:failed"}} {
		in.Now = tc.now
		p, err := PlanPass(in)
		if err != nil {
			t.Fatal(err)
		}
		if evictStr(p) != tc.evict {
			t.Fatalf("now %d (candidate at %d): evicted %q, want %q", tc.now, rec.Time, evictStr(p), tc.evict)
		}
		if tc.evict != "" && (!strings.Contains(p.Evict[0].Detail, "ci") || !strings.Contains(p.Evict[0].Detail, "10m0s")) {
			t.Fatalf("detail %q names neither the check nor the timeout", p.Evict[0].Detail)
		}
		if tc.evict != "" && (chainStr(p) != "b=pending" || publishStr(p) != "b") {
			t.Fatalf("after the timeout eviction: chain %q publish %q", chainStr(p), publishStr(p))
		}
	}
}

// TestRedTarget: when different pull requests keep failing as the first
// candidate on the same tip, the queue stops evicting after
// RedTargetEvictions of them and says the target looks red; it re-runs the
// red first candidate once (citing the failed run) and, when that fails
// too, waits; once the target moves, evictions resume.
func TestRedTarget(t *testing.T) {
	c := newCast(t)
	bad := func(h string) chk { return chk{step(tip0, h), pr.Failure} }
	specs := map[string]prSpec{"a": {head: "ha", checks: []chk{bad("ha")}}, "b": {head: "hb", checks: []chk{bad("hb")}},
		"c": {head: "hc", checks: []chk{bad("hc")}}, "d": {head: "hd"}}
	w := newWorld(t, c, []string{"a", "b", "c", "d"}, specs)
	// The candidates were published on tip0 (so the log knows their parents).
	p0 := Plan{}
	for _, n := range []string{"a", "b", "c"} {
		st := step(tip0, "h"+n)
		p0.Publish = append(p0.Publish, Publish{PR: prID(n), Head: hex("h" + n), Step: st.String(), Parents: []string{tip0.String(), hex("h" + n)}, Branch: Branch(main, prID(n))})
	}
	w.apply(p0)
	p1, err := PlanPass(w.input(t, tip0))
	if err != nil {
		t.Fatal(err)
	}
	if evictStr(p1) != "a:failed,b:failed" || p1.TargetRed == "" || !strings.HasPrefix(chainStr(p1), "c=red") {
		t.Fatalf("red target: evicted %q, targetRed %q, chain %q", evictStr(p1), p1.TargetRed, chainStr(p1))
	}
	// It heals once: c, the red first candidate, is published again citing
	// its failed run, so CI runs it once more.
	healing := 0
	for _, pb := range p1.Publish {
		if pb.Run != "" && pb.PR == prID("c") {
			healing++
		}
	}
	if p1.Heal == "" || healing != 1 {
		t.Fatalf("red target: heal %q, publish %+v; want c published again citing its run", p1.Heal, p1.Publish)
	}
	w.apply(p1)
	if p, _ := PlanPass(w.input(t, tip0)); len(p.Evict) != 0 || p.TargetRed != "" || p.Heal != "" || !strings.HasPrefix(chainStr(p), "c=pending") {
		t.Fatalf("while c runs again: evicted %q, targetRed %q, heal %q, publish %+v, chain %q", evictStr(p), p.TargetRed, p.Heal, p.Publish, chainStr(p))
	}
	// The re-run fails too: now the queue waits for a person.
	w.prs[prID("c")] = c.pr(t, "c", prSpec{head: "hc", checks: []chk{bad("hc"), bad("hc")}})
	p2, _ := PlanPass(w.input(t, tip0))
	if len(p2.Evict) != 0 || p2.TargetRed == "" || p2.Heal != "" {
		t.Fatalf("after the re-run failed: evicted %q, targetRed %q, heal %q, publish %+v", evictStr(p2), p2.TargetRed, p2.Heal, p2.Publish)
	}
	for _, pb := range p2.Publish {
		if pb.PR == prID("c") {
			t.Fatalf("c published again after its re-run failed: %+v", pb)
		}
	}
	// The target moves (a fix landed directly): c's old verdict is at the
	// old chain; its new candidate is pending, nothing is evicted, the
	// target is no longer red.
	tip1 := step(tip0, "fix")
	if p, _ := PlanPass(w.input(t, tip1)); p.TargetRed != "" || len(p.Evict) != 0 {
		t.Fatalf("after the target moved: targetRed %q, evicted %q", p.TargetRed, evictStr(p))
	}
}
