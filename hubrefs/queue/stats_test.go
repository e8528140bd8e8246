package queue

import (
	"fmt"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

// statsEvent builds a decoded event for ComputeStats.
func statsEvent(t *testing.T, payload any, at int64) hubrefs.Event {
	t.Helper()
	typ, body, err := hubrefs.MarshalPayload(payload)
	if err != nil {
		t.Fatal(err)
	}
	return hubrefs.Event{Type: typ, Payload: body, Time: at}
}

func TestQueueStatsFigures(t *testing.T) {
	t.Parallel()
	b := func(typ string) hubrefs.Base { return hubrefs.Base{Type: typ, Repo: "r"} }
	const day = 1767225600 // 2026-01-01 00:00 UTC
	const target = "refs/heads/main"
	q := []hubrefs.Event{statsEvent(t, hubrefs.QueueOpened{Base: b(hubrefs.TypeQueueOpened), ID: "q1", Target: target}, day)}
	add := func(p any, at int64) { q = append(q, statsEvent(t, p, at)) }
	prs := map[string][]hubrefs.Event{}
	// Ten pull requests: p0..p8 land after 10·(i+1) minutes, p9 is evicted
	// (failed), p1 was evicted once (conflict) and re-entered before landing.
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("p%d", i)
		in := int64(day + 3600*i)
		add(hubrefs.QueueEntered{Base: b(hubrefs.TypeQueueEntered), PR: id, Head: "h", BaseRef: target}, in)
		add(hubrefs.QueueCandidate{Base: b(hubrefs.TypeQueueCandidate), PR: id, Head: "h", Step: "s" + id}, in+60)
		prs[id] = []hubrefs.Event{statsEvent(t, hubrefs.Check{Base: b(hubrefs.TypeCheckCompleted), Name: "ci", Head: "s" + id, Conclusion: "success"}, in+120)}
		switch {
		case i == 9:
			add(hubrefs.QueueLeft{Base: b(hubrefs.TypeQueueLeft), PR: id, Head: "h", Reason: "failed"}, in+300)
		case i == 1:
			add(hubrefs.QueueLeft{Base: b(hubrefs.TypeQueueLeft), PR: id, Head: "h", Reason: "conflict"}, in+60)
			add(hubrefs.QueueEntered{Base: b(hubrefs.TypeQueueEntered), PR: id, Head: "h", BaseRef: target}, in+120)
			add(hubrefs.QueueCandidate{Base: b(hubrefs.TypeQueueCandidate), PR: id, Head: "h", Step: "s2" + id}, in+180)
			fallthrough
		default:
			add(hubrefs.QueueLeft{Base: b(hubrefs.TypeQueueLeft), PR: id, Head: "h", Reason: "landed"}, in+int64(600*(i+1)))
		}
	}
	add(hubrefs.QueueReset{Base: b(hubrefs.TypeQueueReset), Tip: "t"}, day+7200)
	other := []hubrefs.Event{statsEvent(t, hubrefs.QueueOpened{Base: b(hubrefs.TypeQueueOpened), ID: "q2", Target: "refs/heads/dev"}, day)}
	st := ComputeStats(target, 0, map[string][]hubrefs.Event{"q1": q, "q2": other}, prs)
	if len(st.Queues) != 1 || st.Entered != 11 || st.Landed != 9 || st.Evicted != 2 || st.Resets != 1 {
		t.Fatalf("counts: %+v", st)
	}
	if st.EvictedByReason["failed"] != 1 || st.EvictedByReason["conflict"] != 1 {
		t.Fatalf("evictions by reason: %v", st.EvictedByReason)
	}
	// Minutes: 10, 20, ..., 90; median (nearest rank) 50, p95 90.
	if st.MedianMinutes != 50 || st.P95Minutes != 90 {
		t.Fatalf("median %v p95 %v, want 50 and 90", st.MedianMinutes, st.P95Minutes)
	}
	if st.CandidatesBuilt != 10 || st.CandidatesPerPR != 1.1 || st.CheckRunsPerPR != 1 || st.PassRate != 90 {
		t.Fatalf("per landed PR: %+v", st)
	}
	if len(st.Days) != 1 || st.Days[0].Day != "2026-01-01" || st.Days[0].Entered != 11 {
		t.Fatalf("days: %+v", st.Days)
	}
	okAt := map[string]bool{}
	for _, th := range st.Thresholds {
		okAt[th.Figure] = th.OK
	}
	if okAt["entered→landed median (min)"] || okAt["entered→landed p95 (min)"] || okAt["evicted (% of entries)"] || !okAt["candidate pass rate (%)"] {
		t.Fatalf("thresholds: %+v", st.Thresholds)
	}
	// --since the next day counts nothing.
	if st := ComputeStats(target, day+86400, map[string][]hubrefs.Event{"q1": q}, prs); st.Entered != 0 || st.Landed != 0 {
		t.Fatalf("since: %+v", st)
	}
}

// TestQueueStatsCountWhatTookEffect: a second queue.left of an entry that
// already left (a racing runner's duplicate) and a queue.entered of a pull
// request already queued count for nothing, as the fold ignores them; a
// re-entry after leaving is a new episode and counts.
func TestQueueStatsCountWhatTookEffect(t *testing.T) {
	const target = "refs/heads/main"
	b := func(typ string) hubrefs.Base { return hubrefs.Base{Type: typ, Repo: "r"} }
	at := int64(1_700_000_000)
	ev := func(p any) hubrefs.Event { at += 60; return statsEvent(t, p, at) }
	entered := func(pr string) hubrefs.Event {
		return ev(hubrefs.QueueEntered{Base: b(hubrefs.TypeQueueEntered), PR: pr, Head: "h" + pr, BaseRef: target})
	}
	left := func(pr, reason string) hubrefs.Event {
		return ev(hubrefs.QueueLeft{Base: b(hubrefs.TypeQueueLeft), PR: pr, Head: "h" + pr, Reason: reason})
	}
	q := []hubrefs.Event{
		ev(hubrefs.QueueOpened{Base: b(hubrefs.TypeQueueOpened), ID: "q1", Target: target}),
		entered("a"), entered("a"), // duplicate entry: ignored
		entered("b"),
		left("a", "landed"), left("a", "landed"), left("a", "landed"), // one episode, one landing
		left("b", "failed"),
		entered("b"), left("b", "landed"), // re-entered: a new episode
		left("c", "landed"), // never queued
	}
	st := ComputeStats(target, 0, map[string][]hubrefs.Event{"q1": q}, nil)
	if st.Entered != 3 || st.Landed != 2 || st.Evicted != 1 || st.EvictedByReason["failed"] != 1 {
		t.Fatalf("entered %d landed %d evicted %d (%v); want 3, 2, 1 failed", st.Entered, st.Landed, st.Evicted, st.EvictedByReason)
	}
}
