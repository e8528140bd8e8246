package queue

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hubrefs"
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
// event the fold ignores, the statistics equal a re-derivation from the
// fold's observable state alone: a queue.entered counts when folding the log
// up to it leaves an entry entered at it, a queue.left when it adds to Left,
// a queue.reset when it adds to Resets, a queue.candidate when it becomes
// its pull request's latest candidate.
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
			if s, err := Fold(l.evs, c.t); err == nil {
				ignored += len(s.Ignored)
				if s.Closed {
					closed++
				}
			}
		}
		since := int64(0)
		if rng.Intn(2) == 0 {
			since = day + int64(rng.Intn(int(at-day)+1))/86400*86400
		}
		got := ComputeStats(main, since, c.t, queues, nil)
		got.Thresholds = nil // a function of the figures compared
		want := statsFromPrefixes(t, c, main, since, queues)
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

// statsFromPrefixes is the counting figures of ComputeStats, each event's
// effect read from folding the log up to it and up to the event before.
func statsFromPrefixes(t *testing.T, c *cast, target string, since int64, queues map[string][]hubrefs.Event) Stats {
	t.Helper()
	st := Stats{Target: target, Queues: []string{}, Days: []StatsDay{}, EvictedByReason: map[string]int{}}
	days := map[string]*StatsDay{}
	day := func(sec int64) *StatsDay {
		k := time.Unix(sec, 0).UTC().Format("2006-01-02")
		if days[k] == nil {
			days[k] = &StatsDay{Day: k}
		}
		return days[k]
	}
	first := map[string]int64{}
	steps := map[string]map[string]bool{}
	landed := map[string]bool{}
	type landing struct {
		pr string
		at int64
	}
	var landings []landing
	ids := make([]string, 0, len(queues))
	for id := range queues {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		evs := queues[id]
		whole, err := Fold(evs, c.t)
		if err != nil {
			t.Fatalf("queue %s does not fold: %v", id, err)
		}
		if whole.Target != target {
			continue
		}
		st.Queues = append(st.Queues, id)
		before, _ := Fold(evs[:1], c.t)
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
						if f, ok := first[e.PR]; !ok || ev.Time < f {
							first[e.PR] = ev.Time
						}
						if ev.Time >= since {
							st.Entered++
							day(ev.Time).Entered++
						}
					}
				}
			case hubrefs.TypeQueueLeft:
				if len(after.Left) == len(before.Left) || ev.Time < since {
					break
				}
				l := after.Left[len(after.Left)-1]
				if l.Reason == ReasonLanded {
					st.Landed++
					day(ev.Time).Landed++
					landed[l.PR] = true
					landings = append(landings, landing{l.PR, ev.Time})
				} else {
					st.Evicted++
					st.EvictedByReason[l.Reason]++
					day(ev.Time).Evicted++
				}
			case hubrefs.TypeQueueReset:
				if len(after.Resets) > len(before.Resets) && ev.Time >= since {
					st.Resets++
				}
			case hubrefs.TypeQueueCandidate:
				var p hubrefs.QueueCandidate
				if err := ev.Unmarshal(&p); err != nil {
					t.Fatal(err)
				}
				if rec, ok := after.LatestCandidate(p.PR); ok && rec.Event == ev.ID {
					if steps[p.PR] == nil {
						steps[p.PR] = map[string]bool{}
					}
					steps[p.PR][p.Step] = true
				}
			}
			before = after
		}
	}
	var minutes []float64
	for _, l := range landings {
		minutes = append(minutes, float64(l.at-first[l.pr])/60)
	}
	sort.Float64s(minutes)
	st.MedianMinutes, st.P95Minutes = statsRound1(statsQuantile(minutes, 0.5)), statsRound1(statsQuantile(minutes, 0.95))
	for pr := range landed {
		st.CandidatesBuilt += len(steps[pr])
	}
	if n := len(landed); n > 0 {
		st.CandidatesPerPR = statsRound1(float64(st.CandidatesBuilt) / float64(n))
	}
	if st.Entered > 0 {
		st.EvictedRate = statsRound1(100 * float64(st.Evicted) / float64(st.Entered))
	}
	if n := st.Landed + st.EvictedByReason[ReasonFailed]; n > 0 {
		st.PassRate = statsRound1(100 * float64(st.Landed) / float64(n))
	}
	for _, d := range days {
		st.Days = append(st.Days, *d)
	}
	sort.Slice(st.Days, func(i, j int) bool { return st.Days[i].Day < st.Days[j].Day })
	return st
}
