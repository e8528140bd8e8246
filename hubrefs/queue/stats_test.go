package queue

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// timed appends an event to l dated at (unix seconds).
func (l *log) timed(at int64, signer ssh.PublicKey, typ string, fields ...any) *log {
	l.add(signer, typ, fields...)
	l.evs[len(l.evs)-1].Time = at
	return l
}

// The statistics tests use the package's global event counter (helpers_test.go):
// they do not run in parallel.

func TestQueueStatsFigures(t *testing.T) {
	c := newCast(t)
	const day = 1767225600 // 2026-01-01 00:00 UTC
	q := &log{}
	q.timed(day, c.runner, hubrefs.TypeQueueOpened, "id", queueID, "target", main)
	candidate := func(id, head, s string, at int64) {
		q.timed(at, c.runner, hubrefs.TypeQueueCandidate, "pr", id, "head", head, "step", hex(s), "parents", []string{tip0.String(), head}, "branch", Branch(main, id))
	}
	left := func(id, head, reason string, at int64) {
		q.timed(at, c.runner, hubrefs.TypeQueueLeft, "pr", id, "head", head, "reason", reason)
	}
	prs := map[string][]hubrefs.Event{}
	// Ten pull requests: p0..p8 land after 10·(i+1) minutes, p9 is evicted
	// (failed), p1 was evicted once (conflict) and re-entered before landing.
	for i := 0; i < 10; i++ {
		name := fmt.Sprint(i)
		id, head := prID(name), hex("h"+name)
		in := int64(day + 3600*i)
		q.timed(in, c.runner, hubrefs.TypeQueueEntered, "pr", id, "head", head, "base", main)
		candidate(id, head, "s"+name, in+60)
		prs[id] = []hubrefs.Event{{Type: hubrefs.TypeCheckCompleted, Time: in + 120}}
		switch {
		case i == 9:
			left(id, head, ReasonFailed, in+300)
		case i == 1:
			left(id, head, ReasonConflict, in+60)
			q.timed(in+120, c.runner, hubrefs.TypeQueueEntered, "pr", id, "head", head, "base", main)
			candidate(id, head, "s2"+name, in+180)
			fallthrough
		default:
			left(id, head, ReasonLanded, in+int64(600*(i+1)))
		}
	}
	q.timed(day+7200, c.runner, hubrefs.TypeQueueReset, "tip", hex("t"))
	other := &log{}
	other.timed(day, c.runner, hubrefs.TypeQueueOpened, "id", prID("o"), "target", "refs/heads/dev")
	st := ComputeStats(main, 0, c.t, map[string][]hubrefs.Event{"q1": q.evs, "q2": other.evs}, prs)
	if len(st.Queues) != 1 || st.Entered != 11 || st.Landed != 9 || st.Evicted != 2 || st.Resets != 1 || len(st.Unfolded) != 0 {
		t.Fatalf("counts: %+v", st)
	}
	if st.EvictedByReason[ReasonFailed] != 1 || st.EvictedByReason[ReasonConflict] != 1 {
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
	if st := ComputeStats(main, day+86400, c.t, map[string][]hubrefs.Event{"q1": q.evs}, prs); st.Entered != 0 || st.Landed != 0 {
		t.Fatalf("since: %+v", st)
	}
}

// TestQueueStatsCountWhatTookEffect: what the fold ignores counts for
// nothing: a second queue.left of an entry that already left (a racing
// runner's duplicate), a queue.entered of a pull request already queued, a
// priority change, events by a signer without hub.queue and events after
// queue.closed; a re-entry after leaving is a new entry and counts. A queue
// log that does not fold is named, not counted.
func TestQueueStatsCountWhatTookEffect(t *testing.T) {
	c := newCast(t)
	a, b, x, y := prID("a"), prID("b"), prID("x"), prID("y")
	q := &log{}
	entered := func(signer ssh.PublicKey, id string, fields ...any) {
		q.add(signer, hubrefs.TypeQueueEntered, append([]any{"pr", id, "head", hex(id), "base", main}, fields...)...)
	}
	left := func(signer ssh.PublicKey, id, reason string) {
		q.add(signer, hubrefs.TypeQueueLeft, "pr", id, "head", hex(id), "reason", reason)
	}
	q.add(c.runner, hubrefs.TypeQueueOpened, "id", queueID, "target", main)
	entered(c.runner, a)
	entered(c.runner, a)                     // already queued: ignored
	entered(c.runner, a, "priority", "high") // a priority change: no new entry
	entered(c.runner, b)
	entered(c.outsider, x) // no hub.queue: ignored
	left(c.runner, a, ReasonLanded)
	left(c.runner, a, ReasonLanded) // not queued: ignored
	left(c.runner, a, ReasonLanded)
	left(c.runner, b, ReasonFailed)
	entered(c.runner, b) // re-entered: a new entry
	left(c.runner, b, ReasonLanded)
	left(c.runner, prID("c"), ReasonLanded) // never queued
	entered(c.runner, x)
	left(c.outsider, x, ReasonFailed) // no hub.queue: ignored
	q.add(c.runner, hubrefs.TypeQueueClosed)
	entered(c.runner, y) // closed: ignored
	broken := &log{}
	broken.add(c.outsider, hubrefs.TypeQueueOpened, "id", prID("q"), "target", main) // no root by a hub.queue holder
	st := ComputeStats(main, 0, c.t, map[string][]hubrefs.Event{"q1": q.evs, "q2": broken.evs}, nil)
	if st.Entered != 4 || st.Landed != 2 || st.Evicted != 1 || st.EvictedByReason[ReasonFailed] != 1 {
		t.Fatalf("entered %d landed %d evicted %d (%v); want 4, 2, 1 failed", st.Entered, st.Landed, st.Evicted, st.EvictedByReason)
	}
	if len(st.Queues) != 1 || len(st.Unfolded) != 1 {
		t.Fatalf("queues %v, unfolded %v: want q1 counted and q2 named", st.Queues, st.Unfolded)
	}
}

// TestQueueStatsFoldDifferential: on random queue logs, with every kind of
// event the fold ignores, what the statistics count equals a re-derivation
// from the fold's observable state alone: a queue.entered took effect when
// folding the log up to it leaves an entry entered at it, a queue.left when
// it adds to Left, a queue.reset when it adds to Resets, a queue.candidate
// when it becomes its pull request's latest candidate. The figures are the
// same tally of either.
func TestQueueStatsFoldDifferential(t *testing.T) {
	c := newCast(t)
	const day = 1767225600
	names := []string{"a", "b", "c", "d"}
	reasons := []string{ReasonLanded, ReasonLanded, ReasonFailed, ReasonConflict, ReasonStale, ReasonWithdrawn}
	var entered, landed, evicted, ignored, closed int // coverage of the generated logs
	for iter := 0; iter < 60; iter++ {
		rng := rand.New(rand.NewSource(int64(iter)))
		at := int64(day)
		tick := func() int64 { at += int64(rng.Intn(4 * 3600)); return at }
		signer := func() ssh.PublicKey {
			if rng.Intn(8) == 0 {
				return c.outsider
			}
			return c.runner
		}
		queues := map[string][]hubrefs.Event{}
		for qi, target := range []string{main, main, "refs/heads/dev"} {
			l := &log{}
			l.timed(tick(), c.runner, hubrefs.TypeQueueOpened, "id", prID(fmt.Sprint(qi)), "target", target)
			for n := rng.Intn(40); n > 0; n-- {
				id := prID(names[rng.Intn(len(names))])
				head := hex(id + fmt.Sprint(rng.Intn(2)))
				switch k := rng.Intn(60); {
				case k < 21:
					prio := []string{"", PriorityNormal, PriorityHigh}[rng.Intn(3)]
					fields := []any{"pr", id, "head", head, "base", target}
					if prio != "" {
						fields = append(fields, "priority", prio)
					}
					l.timed(tick(), signer(), hubrefs.TypeQueueEntered, fields...)
				case k < 42:
					l.timed(tick(), signer(), hubrefs.TypeQueueLeft, "pr", id, "head", head, "reason", reasons[rng.Intn(len(reasons))])
				case k < 54:
					l.timed(tick(), signer(), hubrefs.TypeQueueCandidate, "pr", id, "head", head, "step", hex(fmt.Sprint(rng.Intn(6))),
						"parents", []string{tip0.String(), head}, "branch", Branch(target, id))
				case k < 59:
					l.timed(tick(), signer(), hubrefs.TypeQueueReset, "tip", tip0.String())
				default:
					l.timed(tick(), signer(), hubrefs.TypeQueueClosed)
				}
			}
			queues[fmt.Sprint(qi)] = l.evs
		}
		since := int64(0)
		if rng.Intn(2) == 0 {
			since = day + int64(rng.Intn(int(at-day)+1))/86400*86400
		}
		var ids []string
		var all []statsEffect
		for _, id := range []string{"0", "1", "2"} {
			q, err := Fold(queues[id], c.t)
			if err != nil {
				t.Fatalf("queue %s does not fold: %v", id, err)
			}
			ignored += len(q.Ignored)
			if q.Closed {
				closed++
			}
			got, want := tookEffect(q, queues[id]), effectsFromPrefixes(t, c, queues[id])
			sortEffects(got)
			sortEffects(want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("iteration %d, queue %s: took effect\n%+v\nthe fold's prefixes say\n%+v", iter, id, got, want)
			}
			if q.Target == main {
				ids, all = append(ids, id), append(all, want...)
			}
		}
		got := ComputeStats(main, since, c.t, queues, nil)
		want := tally(main, since, all, nil)
		want.Queues = ids
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("iteration %d (since %d):\ngot  %+v\nwant %+v", iter, since, got, want)
		}
		entered, landed, evicted = entered+got.Entered, landed+got.Landed, evicted+got.Evicted
	}
	if entered == 0 || landed == 0 || evicted == 0 || ignored < 100 || closed == 0 {
		t.Fatalf("the generated logs miss a case: entered %d landed %d evicted %d ignored %d closed queues %d", entered, landed, evicted, ignored, closed)
	}
	t.Logf("entered %d, landed %d, evicted %d, ignored %d, closed queues %d", entered, landed, evicted, ignored, closed)
}

func sortEffects(es []statsEffect) {
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.at != b.at {
			return a.at < b.at
		}
		return fmt.Sprint(a) < fmt.Sprint(b)
	})
}

// effectsFromPrefixes is what took effect in evs, each event's effect read
// from folding the log up to it and up to the event before.
func effectsFromPrefixes(t *testing.T, c *cast, evs []hubrefs.Event) []statsEffect {
	t.Helper()
	var out []statsEffect
	before, err := Fold(evs[:1], c.t)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(evs); i++ {
		ev := evs[i]
		after, err := Fold(evs[:i+1], c.t)
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case hubrefs.TypeQueueEntered:
			for _, e := range after.Entries {
				if e.EnteredAt == ev.ID {
					out = append(out, statsEffect{typ: ev.Type, pr: e.PR, at: ev.Time})
				}
			}
		case hubrefs.TypeQueueLeft:
			if len(after.Left) > len(before.Left) {
				l := after.Left[len(after.Left)-1]
				out = append(out, statsEffect{typ: ev.Type, pr: l.PR, at: ev.Time, reason: l.Reason})
			}
		case hubrefs.TypeQueueReset:
			if len(after.Resets) > len(before.Resets) {
				out = append(out, statsEffect{typ: ev.Type, at: ev.Time})
			}
		case hubrefs.TypeQueueCandidate:
			var p hubrefs.QueueCandidate
			if err := ev.Unmarshal(&p); err != nil {
				t.Fatal(err)
			}
			if rec, ok := after.LatestCandidate(p.PR); ok && rec.Event == ev.ID {
				out = append(out, statsEffect{typ: ev.Type, pr: p.PR, at: ev.Time, step: p.Step})
			}
		}
		before = after
	}
	return out
}

// TestQueueStatsBypassed: queue stats count the pull requests landed on
// the target at a head a current holder of hub.bypass bypassed.
func TestQueueStatsBypassed(t *testing.T) {
	c := newCast(t)
	boss := newKey(t)
	tr := c.t.Clone()
	tr.Members["boss"] = trust.NewMember("boss", boss, "", []string{"hub.bypass"})
	const day = 1767225600
	land := func(signer ssh.PublicKey, base, landedOn string, at int64) []hubrefs.Event {
		l := &log{}
		l.timed(at, c.alice, hubrefs.TypePROpened, "id", prID(fmt.Sprint(at)), "base", base, "head", hex("h"), "title", "t")
		l.timed(at+1, signer, hubrefs.TypePRBypassed, "head", hex("h"), "base", base, "reason", "hotfix")
		l.timed(at+2, c.runner, hubrefs.TypePRMerged, "revision", hex("h"), "branch", landedOn, "commit", hex("h"))
		return l.evs
	}
	prs := map[string][]hubrefs.Event{
		"a": land(boss, main, main, day),                         // counts
		"b": land(c.bob, main, main, day+10),                     // bob holds no hub.bypass
		"c": land(boss, "refs/heads/dev", "refs/heads/dev", day), // another target
	}
	if st := ComputeStats(main, 0, tr, nil, prs); st.Bypassed != 1 {
		t.Fatalf("bypassed %d, want 1", st.Bypassed)
	}
	if st := ComputeStats(main, day+86400, tr, nil, prs); st.Bypassed != 0 {
		t.Fatalf("since the next day: bypassed %d, want 0", st.Bypassed)
	}
}
