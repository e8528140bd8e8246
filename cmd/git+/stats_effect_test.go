package main

import (
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

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
	st := computeQueueStats(target, 0, map[string][]hubrefs.Event{"q1": q}, nil)
	if st.Entered != 3 || st.Landed != 2 || st.Evicted != 1 || st.EvictedByReason["failed"] != 1 {
		t.Fatalf("entered %d landed %d evicted %d (%v); want 3, 2, 1 failed", st.Entered, st.Landed, st.Evicted, st.EvictedByReason)
	}
}
