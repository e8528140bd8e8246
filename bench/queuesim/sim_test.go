package main

import "testing"

// scenario builds a hand-made scenario: n PRs, the given ones broken, arrival
// times in units of T (nil = all at 0).
func scenario(n int, broken []int, arrive []float64) Scenario {
	s := Scenario{Broken: make([]bool, n), Arrive: make([]int64, n)}
	for _, b := range broken {
		s.Broken[b] = true
	}
	for i, a := range arrive {
		s.Arrive[i] = int64(a * float64(Tick))
	}
	return s
}

func check(t *testing.T, name string, r Result, landed, evicted, runs int, drainT float64) {
	t.Helper()
	if r.Landed != landed || r.Evicted != evicted || r.Runs != runs || r.Drain != int64(drainT*float64(Tick)) {
		t.Errorf("%s: got landed %d evicted %d runs %d drain %.3fT; want %d %d %d %.3fT",
			name, r.Landed, r.Evicted, r.Runs, float64(r.Drain)/float64(Tick), landed, evicted, runs, drainT)
	}
}

func TestSerialNoBrokenIsOneRunPerPRAndNT(t *testing.T) {
	s := NewScenario(Params{PRs: 50, Broken: 0, Seed: 7})
	for _, d := range []Discipline{Batch{B: 1, Depth: 1}, Exact{Start: 1, Cap: 1}} {
		check(t, d.Name(), d.Run(s), 50, 0, 50, 50)
	}
}

func TestSerialWithBrokenStillOneRunPerPR(t *testing.T) {
	s := NewScenario(Params{PRs: 100, Broken: 0.1, Seed: 3})
	for _, d := range []Discipline{Batch{B: 1, Depth: 1}, Exact{Start: 1, Cap: 1}} {
		check(t, d.Name(), d.Run(s), 90, 10, 100, 100)
	}
}

func TestExactDepthAllGreen(t *testing.T) {
	s := scenario(20, nil, nil)
	check(t, "d=8", Exact{Start: 8, Cap: 8}.Run(s), 20, 0, 20, 3) // 8+8+4
	check(t, "d=4", Exact{Start: 4, Cap: 4}.Run(s), 20, 0, 20, 5)
}

// Land the green prefix, evict the newest entry of the first red candidate,
// rebuild (and re-run) the suffix behind it.
func TestExactEvictionRebuildsSuffix(t *testing.T) {
	s := scenario(8, []int{1}, nil)
	// t=0: C(0) C(0,1) C(0,1,2) C(0,1,2,3): 4 runs.
	// t=1: land 0, evict 1, rebuild 2..5 on the new tip: 4 new runs.
	// t=2: land 2..5, publish 6, 7: 2 runs. t=3: land 6, 7.
	check(t, "d=4", Exact{Start: 4, Cap: 4}.Run(s), 7, 1, 10, 3)
}

// A candidate that stays valid across passes keeps its result: PR 4 arrives
// at 0.5T and is built on C_4 while C_1..C_4 run; when they land at 1T its
// candidate is still the same commit, so it is not run again.
func TestExactCandidateResultsSurviveLanding(t *testing.T) {
	s := scenario(5, nil, []float64{0, 0, 0, 0, 0.5})
	check(t, "d=8", Exact{Start: 8, Cap: 8}.Run(s), 5, 0, 5, 1.5)
}

func TestAdaptiveWindowGrowsOnGreen(t *testing.T) {
	s := scenario(15, nil, nil)
	// windows 1, 2, 3, 4, 5 land 15 PRs in 5 passes.
	check(t, "adaptive", Exact{Start: 1, Cap: 8, Adaptive: true}.Run(s), 15, 0, 15, 5)
	// capped: 1+2+...+8 = 36, then 8 per pass.
	check(t, "adaptive cap", Exact{Start: 1, Cap: 8, Adaptive: true}.Run(scenario(44, nil, nil)), 44, 0, 44, 9)
}

func TestAdaptiveWindowHalvesOnRed(t *testing.T) {
	// t0 w=4: runs 0..3 (4). t1: PR 0 lands, PR 1 evicted, w=2: runs 2,3 (6).
	// t2: land 2,3, w=3: runs 4,5,6 (9). t3: land all.
	s := scenario(7, []int{1}, nil)
	check(t, "adaptive", Exact{Start: 4, Cap: 8, Adaptive: true}.Run(s), 6, 1, 9, 3)
}

func TestBatchAndHalve(t *testing.T) {
	s := scenario(8, []int{5}, nil)
	// t0: batch 0..7 red (1). t1: halve: 0..3 (2). t2: green, land; suspects
	// 4..7: run 4,5 (3). t3: red; 6,7 wait again; run 4 (4). t4: green, land;
	// suspect 5 alone is ejected unrun; batch 6,7 (5). t5: land.
	check(t, "B=8 depth 1", Batch{B: 8, Depth: 1}.Run(s), 7, 1, 5, 5)
	// All green, depth 2: batches 0..7 and 8..15 in parallel, then 16..19.
	check(t, "B=8 depth 2", Batch{B: 8, Depth: 2}.Run(scenario(20, nil, nil)), 20, 0, 3, 2)
}

// Whatever the discipline and scenario: no broken PR lands, every PR lands or
// is evicted, exactly the broken ones are evicted (there are no flakes), and
// results are deterministic.
func TestInvariants(t *testing.T) {
	for _, p := range []Params{
		{PRs: 100, Broken: 0.1},
		{PRs: 100, Broken: 0.3},
		{PRs: 60, Broken: 0.5, Gap: 0.3},
		{PRs: 100, Broken: 0.1, Gap: 2},
		{PRs: 37, Broken: 1},
	} {
		for seed := uint64(1); seed <= 30; seed++ {
			p.Seed = seed
			s := NewScenario(p)
			nb := 0
			for _, b := range s.Broken {
				if b {
					nb++
				}
			}
			for _, d := range append(Disciplines(8), Batch{B: 5, Depth: 2}, Exact{Start: 3, Cap: 5, Adaptive: true}) {
				r := d.Run(s)
				if r.LandedBroken != 0 || r.Landed+r.Evicted != p.PRs || r.Evicted != nb {
					t.Fatalf("%s %+v: landed %d (broken %d) evicted %d, want %d evicted of %d",
						d.Name(), p, r.Landed, r.LandedBroken, r.Evicted, nb, p.PRs)
				}
				if r2 := d.Run(s); r2 != r {
					t.Fatalf("%s %+v: not deterministic: %+v vs %+v", d.Name(), p, r, r2)
				}
			}
		}
	}
}
