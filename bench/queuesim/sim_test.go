package main

import (
	"reflect"
	"strings"
	"testing"
)

// quiet is a scenario without chance: CI takes exactly T, never flakes or
// hangs, no retries, everyone arrives at once.
func quiet() Params {
	p := DefaultParams()
	p.Gap, p.Sigma, p.Retries, p.Flaky, p.Conflicts, p.Broken = 0, 0, 0, 0, 0, 0
	return p
}

// hand is a hand-made scenario: n pull requests arriving at once, the given
// ones broken, pairs conflicting.
func hand(n int, broken []int, pairs ...[2]int) scenario {
	s := scenario{broken: make([]bool, n), line: make([]int, n), arrive: make([]int64, n)}
	for i := range s.line {
		s.line[i] = -1
	}
	for _, b := range broken {
		s.broken[b] = true
	}
	for k, pr := range pairs {
		s.line[pr[0]], s.line[pr[1]] = k*sharedGap, k*sharedGap
	}
	return s
}

func mustRun(t *testing.T, p Params, d Discipline, sc scenario) Result {
	t.Helper()
	r, err := run(p, d, sc)
	if err != nil {
		t.Fatal(err)
	}
	if r.LandedBroken != 0 || r.Unsettled != 0 {
		t.Fatalf("%s: %d broken landed, %d never settled: %+v", d.Name(), r.LandedBroken, r.Unsettled, r)
	}
	return r
}

// Without chance the queue is arithmetic: a chain of depth d lands d pull
// requests every T, one CI run each (the model the figures and the
// earlier re-implementation used, which the real planner must reproduce).
func TestQuietChainIsArithmetic(t *testing.T) {
	for _, tc := range []struct{ n, depth, drainT int }{{12, 1, 12}, {12, 4, 3}, {12, 8, 2}, {7, 3, 3}} {
		r := mustRun(t, quiet(), Discipline{Depth: tc.depth}, hand(tc.n, nil))
		if r.Landed != tc.n || r.Runs != tc.n || r.Drain != int64(tc.drainT*T) {
			t.Errorf("n %d depth %d: landed %d runs %d drain %.2fT; want %d, %d, %dT", tc.n, tc.depth, r.Landed, r.Runs, float64(r.Drain)/T, tc.n, tc.n, tc.drainT)
		}
	}
}

// A broken pull request: the green prefix ahead of it lands, it is evicted,
// and every step built on it runs again on the rebuilt chain.
func TestBrokenEvictedAndSuffixRerun(t *testing.T) {
	// Depth 4, pull request 1 broken: t=T lands #0, evicts #1, rebuilds #2,
	// #3 (run again) and adds #4, #5; t=2T lands them.
	r := mustRun(t, quiet(), Discipline{Depth: 4}, hand(6, []int{1}))
	// The runs on #1, #2, #3 at t=0 hold the broken one.
	if r.Landed != 5 || r.EvictedBroken != 1 || r.Innocent != 0 || r.Runs != 4+4 || r.RunsBroken != 3 || r.Drain != 2*T {
		t.Errorf("got %+v", r)
	}
}

// Two pull requests editing the same line: the planner predicts the
// conflict when chaining the second onto the first and evicts it; the
// first lands. Nothing runs for the evicted one.
func TestConflictingPair(t *testing.T) {
	r := mustRun(t, quiet(), Discipline{Depth: 4}, hand(3, nil, [2]int{0, 2}))
	if r.Landed != 2 || r.Conflicts != 1 || r.Runs != 2 || r.Drain != T {
		t.Errorf("got %+v", r)
	}
	// The first of the pair broken: the second no longer conflicts once
	// the first is evicted, and lands.
	r = mustRun(t, quiet(), Discipline{Depth: 1}, hand(2, []int{0}, [2]int{0, 1}))
	if r.Landed != 1 || r.Conflicts != 0 || r.EvictedBroken != 1 {
		t.Errorf("first of the pair broken: %+v", r)
	}
}

// Three broken pull requests in a row at the front: after two different
// ones failed as the first candidate on one tip the queue believes the
// target red and stops evicting (docs/queue.md); a person takes the third
// out, and the queue drains.
func TestRedTargetNeedsAPerson(t *testing.T) {
	p := quiet()
	r := mustRun(t, p, Discipline{Depth: 1}, hand(5, []int{0, 1, 2}))
	if r.Landed != 2 || r.EvictedBroken != 3 || r.Removed != 1 {
		t.Errorf("got %+v", r)
	}
	p.Intervene = 0 // nobody looks: the queue stays stopped
	r, err := run(p, Discipline{Depth: 1}, hand(5, []int{0, 1, 2}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Unsettled != 3 || r.Landed != 0 {
		t.Errorf("nobody looking: %+v", r)
	}
}

// A CI run that never reports is ended by checkTimeout: the good pull
// request is evicted (an innocent eviction), its author enters it again,
// and the fresh run lands it.
func TestCheckTimeoutEvictsAndReentryLands(t *testing.T) {
	p := quiet()
	p.Hang, p.Seed = 0.4, 3
	var innocent int
	for seed := uint64(1); seed <= 5; seed++ {
		p.Seed = seed
		r := mustRun(t, p, Discipline{Depth: 2}, hand(6, nil))
		if r.Landed != 6 {
			t.Errorf("seed %d: %+v", seed, r)
		}
		innocent += r.Innocent
	}
	if innocent == 0 {
		t.Error("no run hung in five seeds at 40 %: the timeout path was not exercised")
	}
}

// Flaky checks with retries: never a broken landing, everyone settles,
// the same seed gives the same result, for every discipline.
func TestRandomScenariosKeepInvariants(t *testing.T) {
	p := DefaultParams()
	p.PRs, p.Flaky, p.Hang, p.Conflicts = 30, 0.2, 0.02, 3
	for _, d := range []Discipline{{Depth: 1}, {Depth: 5}, {Depth: 8, Adaptive: true}, {Depth: 8, CheckEvery: 4}} {
		for seed := uint64(1); seed <= 3; seed++ {
			p.Seed = seed
			a, err := Run(p, d)
			if err != nil {
				t.Fatal(err)
			}
			if a.LandedBroken != 0 || a.Unsettled != 0 || a.Landed+a.EvictedBroken+a.Conflicts != p.PRs {
				t.Fatalf("%s seed %d: %+v", d.Name(), seed, a)
			}
			b, _ := Run(p, d)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s seed %d: two runs differ:\n%+v\n%+v", d.Name(), seed, a, b)
			}
		}
	}
}

func TestParseDisciplines(t *testing.T) {
	ds, err := parseDisciplines("serial,oracle,2-3,adaptive:8,adaptive:6/2,batch:12/4,squash:8")
	if err != nil {
		t.Fatal(err)
	}
	want := []Discipline{{Depth: 1}, {Oracle: true}, {Depth: 2}, {Depth: 3}, {Depth: 8, Adaptive: true, Start: 1}, {Depth: 6, Adaptive: true, Start: 2}, {Depth: 12, CheckEvery: 4}, {Depth: 8, Squash: true}}
	if !reflect.DeepEqual(ds, want) {
		t.Fatalf("got %+v", ds)
	}
	for _, bad := range []string{"4,serial", "x", "batch:8", "0-3"} {
		if _, err := parseDisciplines(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Batch checks without chance: CI runs the group ends only, a green end
// lands its whole group, and a red one is searched aside, in trials of its
// halves on the target, down to the broken pull request, which alone is
// evicted (the planner's own drain test, hubrefs/queue TestBatchDrain,
// counts the same runs).
func TestBatchQuiet(t *testing.T) {
	for _, tc := range []struct {
		name         string
		n, depth, k  int
		broken       []int
		landed, runs int
		brokenRuns   int // runs on a candidate holding the broken one
		drainT       float64
	}{
		{"two groups of 4, all good", 8, 8, 4, nil, 8, 2, 0, 1},
		{"one group of 8, all good", 8, 8, 8, nil, 8, 1, 0, 1},
		// Red end (T); trials 0–1 and 2–3 on the tip: 0–1 green lands as
		// it is (2T), 2–3 red; trials 2 and 3 on the new tip: 2 red,
		// evicted, 3 green lands as it is (3T).
		{"groups of 4, the 3rd broken", 4, 4, 4, []int{2}, 3, 5, 3, 3},
		// Red end; trials 0–1 red, 2–3 green and landed (2T); trials 0
		// and 1 on the new tip: 0 red, evicted, 1 lands (3T).
		{"groups of 4, the 1st broken", 4, 4, 4, []int{0}, 3, 5, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRun(t, quiet(), Discipline{Depth: tc.depth, CheckEvery: tc.k}, hand(tc.n, tc.broken))
			if r.Landed != tc.landed || r.EvictedBroken != len(tc.broken) || r.Innocent != 0 || r.Runs != tc.runs || r.RunsBroken != tc.brokenRuns || r.Drain != int64(tc.drainT*T) {
				t.Errorf("landed %d, evicted %d broken, %d innocent, %d runs (%d on the broken one), drain %.2fT; want %d, %d, 0, %d (%d), %.2fT",
					r.Landed, r.EvictedBroken, r.Innocent, r.Runs, r.RunsBroken, float64(r.Drain)/T, tc.landed, len(tc.broken), tc.runs, tc.brokenRuns, tc.drainT)
			}
		})
	}
}

// On a fixed random scenario (10 % broken, 5 % flaky, retries, conflicts,
// arrivals over time) a batch discipline lands every good pull request,
// evicts every broken one, and spends fewer CI runs than strict rule 5 at
// the same depth.
func TestBatchSavesRunsOverStrict(t *testing.T) {
	p := DefaultParams()
	p.PRs, p.Flaky, p.Seed = 60, 0.05, 7
	sc := newScenario(p)
	nbroken := 0
	for _, b := range sc.broken {
		if b {
			nbroken++
		}
	}
	strict := mustRun(t, p, Discipline{Depth: 8}, sc)
	batched := mustRun(t, p, Discipline{Depth: 8, CheckEvery: 4}, sc)
	for _, r := range []struct {
		name string
		r    Result
	}{{"strict", strict}, {"batch", batched}} {
		if r.r.EvictedBroken != nbroken || r.r.Landed+r.r.Conflicts != p.PRs-nbroken || r.r.Conflicts != p.Conflicts {
			t.Errorf("%s: landed %d, %d conflicts, evicted %d broken of %d: %+v", r.name, r.r.Landed, r.r.Conflicts, r.r.EvictedBroken, nbroken, r.r)
		}
	}
	if batched.Runs >= strict.Runs {
		t.Errorf("batch (depth 8, checkEvery 4) used %d CI runs, strict depth 8 %d: no saving", batched.Runs, strict.Runs)
	}
	t.Logf("CI runs: strict %d, batch %d; drain %.1fT, %.1fT", strict.Runs, batched.Runs, float64(strict.Drain)/T, float64(batched.Drain)/T)
}

// A failure above a red step is not retried (docs/queue.md, "Retries below
// a red step"), --retries 1, CI taking exactly T.
//
// Strict depth 4, the first of four broken: the first candidate fails twice;
// the three above it fail once at the same instant. By default they retry at
// once (a strict candidate does not wait: 2 + 6 + 3 runs, the three rebuilt
// on the tip passing); told to wait (--below-wait), they wait for the first
// one's verdict and record their failure without a second run: 2 + 3 + 3.
//
// Batch depth 8 in groups of 4, the first of eight broken: by default
// check run retries no group end of more than one (the planner's search
// is their retry, docs/queue.md "Searching a red group aside"), so the rule
// saves nothing there; retried as other candidates (-retry-search), the
// second group's end fails once and waits for the first's (a group end
// waits by default), which is red, so it is not run again.
func TestNoRetryAboveRed(t *testing.T) {
	for _, tc := range []struct {
		name           string
		d              Discipline
		n              int
		always         bool
		runs, retrying int
	}{
		{"strict, default: no wait", Discipline{Depth: 4}, 4, false, 11, 11},
		{"strict, --below-wait", Discipline{Depth: 4}, 4, true, 8, 11},
		{"batch, default: group ends not retried", Discipline{Depth: 8, CheckEvery: 4}, 8, false, 9, 9},
		{"batch, -retry-search: the group end waits", Discipline{Depth: 8, CheckEvery: 4}, 8, false, 11, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := quiet()
			p.Retries, p.BelowWaitAlways = 1, tc.always
			p.RetrySearch = strings.Contains(tc.name, "-retry-search")
			sc := hand(tc.n, []int{0})
			with := mustRun(t, p, tc.d, sc)
			p.RetryBelowRed = true
			without := mustRun(t, p, tc.d, sc)
			if with.Runs != tc.runs || without.Runs != tc.retrying || with.Drain != without.Drain || with.Landed != tc.n-1 || with.Innocent != 0 {
				t.Errorf("runs %d (retrying above red: %d), drain %.2fT (%.2fT), landed %d, innocent %d; want %d (%d), the same drain, %d, 0",
					with.Runs, without.Runs, float64(with.Drain)/T, float64(without.Drain)/T, with.Landed, with.Innocent, tc.runs, tc.retrying, tc.n-1)
			}
		})
	}
}

// TestSquashSameAsMerge: squash steps have the merge steps' trees, so the
// same scenarios give the same CI runs, evictions, landings and drain
// under either merge method (docs/queue.md, "Squash steps in the
// simulator"), with and without batch checks.
func TestSquashSameAsMerge(t *testing.T) {
	p := DefaultParams()
	p.PRs, p.Flaky, p.Hang, p.Conflicts = 30, 0.2, 0.02, 3
	for _, d := range []Discipline{{Depth: 1}, {Depth: 6}, {Depth: 8, CheckEvery: 4}} {
		for seed := uint64(1); seed <= 2; seed++ {
			p.Seed = seed
			merge, err := Run(p, d)
			if err != nil {
				t.Fatal(err)
			}
			sq := d
			sq.Squash = true
			squash, err := Run(p, sq)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(merge, squash) {
				t.Errorf("%s seed %d: merge\n%+v\nsquash\n%+v", d.Name(), seed, merge, squash)
			}
			if squash.Landed == 0 || squash.Runs == 0 {
				t.Errorf("%s seed %d: nothing happened: %+v", sq.Name(), seed, squash)
			}
		}
	}
}

// TestLanesKeepInvariants: partitioned queues (lanes, global entries,
// strict and batch checks, four partitions and one) never land a broken
// pull request and settle everyone, the same seed giving the same result.
// Seed 17 of batch lanes at depth 4 once stalled for good: a group end
// that joined a larger group kept its mark of a group of one, which
// vouched for none of the steps before it.
func TestLanesKeepInvariants(t *testing.T) {
	p := DefaultParams()
	p.Flaky, p.Global = 0.05, 0.1
	for _, c := range []struct {
		k     int
		d     Discipline
		seeds []uint64
	}{
		{4, Discipline{Depth: 4, CheckEvery: 4, Lanes: true}, []uint64{17}},
		{4, Discipline{Depth: 8, Lanes: true}, []uint64{1}},
		// Seeds on which a global entry splitting the lanes' chains once
		// split one again behind the next global entry and stalled.
		{4, Discipline{Depth: 6, Lanes: true}, []uint64{26, 38}},
		{1, Discipline{Depth: 6, CheckEvery: 6, Lanes: true}, []uint64{2}},
	} {
		p.Partitions = c.k
		for _, seed := range c.seeds {
			p.Seed = seed
			a, err := Run(p, c.d)
			if err != nil {
				t.Fatal(err)
			}
			if a.LandedBroken != 0 || a.Unsettled != 0 || a.Landed+a.EvictedBroken+a.Conflicts != p.PRs {
				t.Fatalf("k=%d %s seed %d: %+v", c.k, c.d.Name(), seed, a)
			}
			b, _ := Run(p, c.d)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("k=%d %s seed %d: two runs differ", c.k, c.d.Name(), seed)
			}
		}
	}
}

// TestOracle: the floor of a scenario is each pull request settled one CI
// run after it arrives (the second of a conflicting pair at once, unrun),
// and with CI taking exactly T no planner beats its drain (with lognormal
// runs a lucky seed may: the oracle's run is the median, T).
func TestOracle(t *testing.T) {
	sc := hand(4, []int{1}, [2]int{0, 3})
	sc.arrive = []int64{100, 100 + T/2, 100 + 3*T, 100 + 5*T}
	r := oracle(sc)
	// #0 lands at 100+T, #1 evicted at 100+1.5T, #2 lands at 100+4T, #3
	// (conflicts with #0) evicted at 100+5T: drain 5T from the first arrival.
	if r.Landed != 2 || r.EvictedBroken != 1 || r.Conflicts != 1 || r.Runs != 3 || r.RunsBroken != 1 || r.Drain != 5*T || !reflect.DeepEqual(r.ToLand, []int64{T, T}) {
		t.Errorf("got %+v", r)
	}
	p := DefaultParams()
	p.PRs, p.Flaky, p.Sigma = 30, 0.05, 0
	for _, gap := range []float64{0, 0.1} {
		p.Gap = gap
		for seed := uint64(1); seed <= 2; seed++ {
			p.Seed = seed
			o, err := Run(p, Discipline{Oracle: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range []Discipline{{Depth: 8}, {Depth: 6, CheckEvery: 6}} {
				x, err := Run(p, d)
				if err != nil {
					t.Fatal(err)
				}
				if x.Drain < o.Drain || x.Landed != o.Landed {
					t.Errorf("gap %.1f seed %d: %s drained in %.2fT landing %d, the oracle %.2fT landing %d", gap, seed, d.Name(), float64(x.Drain)/T, x.Landed, float64(o.Drain)/T, o.Landed)
				}
			}
		}
	}
}
