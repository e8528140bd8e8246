package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Disciplines returns the disciplines compared, serial first (the baseline).
func Disciplines(batch int) []Discipline {
	return []Discipline{
		Batch{B: 1, Depth: 1, Label: "serial (one PR on the tip at a time)"},
		Exact{Start: 1, Cap: 1},
		Exact{Start: 2, Cap: 2},
		Exact{Start: 4, Cap: 4},
		Exact{Start: 8, Cap: 8},
		Exact{Start: 1, Cap: 8, Adaptive: true},
		Exact{Start: 2, Cap: 8, Adaptive: true},
		Batch{B: batch, Depth: 1},
		Batch{B: batch, Depth: 2},
	}
}

// Sweep returns further settings, to find where the goal is reachable.
func Sweep() []Discipline {
	var ds []Discipline
	for _, d := range []int{3, 5, 6, 12, 16} {
		ds = append(ds, Exact{Start: d, Cap: d})
	}
	for _, c := range []int{4, 16} {
		ds = append(ds, Exact{Start: 1, Cap: c, Adaptive: true})
	}
	for _, b := range []int{4, 16, 32} {
		for _, d := range []int{1, 2} {
			ds = append(ds, Batch{B: b, Depth: d})
		}
	}
	return ds
}

// Row aggregates one discipline over many seeds.
type Row struct {
	Name                        string
	RunsPerLanded, RunsP95      float64
	Passes                      float64
	Drain, DrainP95             float64 // units of T
	Ratio, RatioP95             float64 // drain / serial drain, per seed
	Landed, Evicted             float64
	MeetsGoal                   bool
	LandedBroken, Unsettled     int // over all seeds; must be 0
	runsPerLanded, drain, ratio []float64
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func p95(xs []float64) float64 {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return ys[(len(ys)*95+99)/100-1]
}

// Compare runs every discipline on seeds 1..seeds of p and aggregates.
func Compare(p Params, seeds int, ds []Discipline) []Row {
	rows := make([]Row, len(ds))
	for i, d := range ds {
		rows[i].Name = d.Name()
	}
	for seed := 1; seed <= seeds; seed++ {
		p.Seed = uint64(seed)
		s := NewScenario(p)
		var serial float64
		for i, d := range ds {
			r := d.Run(s)
			drain := float64(r.Drain) / float64(Tick)
			if i == 0 {
				serial = drain
			}
			row := &rows[i]
			row.runsPerLanded = append(row.runsPerLanded, float64(r.Runs)/float64(max(1, r.Landed)))
			row.drain = append(row.drain, drain)
			row.ratio = append(row.ratio, drain/serial)
			row.Passes += float64(r.Passes) / float64(seeds)
			row.Landed += float64(r.Landed) / float64(seeds)
			row.Evicted += float64(r.Evicted) / float64(seeds)
			row.LandedBroken += r.LandedBroken
			row.Unsettled += p.PRs - r.Landed - r.Evicted
		}
	}
	for i := range rows {
		r := &rows[i]
		r.RunsPerLanded, r.RunsP95 = mean(r.runsPerLanded), p95(r.runsPerLanded)
		r.Drain, r.DrainP95 = mean(r.drain), p95(r.drain)
		r.Ratio, r.RatioP95 = mean(r.ratio), p95(r.ratio)
		r.MeetsGoal = r.RunsPerLanded <= 1.3 && r.Ratio <= 0.25
	}
	return rows
}

// Table writes rows as markdown.
func Table(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| discipline | CI runs / landed PR (mean, p95) | passes | drain, T (mean, p95) | drain / serial (mean, p95) | landed | evicted | goal |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		goal := ""
		if r.MeetsGoal {
			goal = "**yes**"
		}
		fmt.Fprintf(w, "| %s | %.3f, %.3f | %.1f | %.1f, %.1f | %.3f, %.3f | %.1f | %.1f | %s |\n",
			r.Name, r.RunsPerLanded, r.RunsP95, r.Passes, r.Drain, r.DrainP95, r.Ratio, r.RatioP95, r.Landed, r.Evicted, goal)
	}
}

func main() {
	prs := flag.Int("prs", 100, "pull requests")
	broken := flag.Float64("broken", 0.10, "fraction of PRs broken")
	seeds := flag.Int("seeds", 200, "seeds averaged over (1..seeds)")
	batch := flag.Int("batch", 8, "batch size B for batch-and-halve")
	gap := flag.Float64("gap", 0.25, "mean time between arrivals (units of T) for the spread-arrival table; 0 skips it")
	sweep := flag.Bool("sweep", false, "also try fixed depths 1..16, adaptive caps 4..16, batch sizes 4..32")
	flag.Parse()

	fmt.Printf("Merge-queue simulation: %d PRs, %.0f%% broken (exactly %d, random positions), %d seeds.\n",
		*prs, *broken*100, int(float64(*prs)**broken+0.5), *seeds)
	fmt.Println("CI run = T, unlimited parallel CI, green PRs never fail (no flakes, no conflicts).")
	fmt.Println("Goal: CI runs / landed PR <= 1.3 and drain <= 0.25x serial (means).")
	cases := []float64{0}
	if *gap > 0 {
		cases = append(cases, *gap)
	}
	bad := false
	for _, g := range cases {
		fmt.Println()
		if g == 0 {
			fmt.Println("### All PRs enqueued at time 0")
		} else {
			fmt.Printf("### Arrivals spread out: exponential gaps, mean %.2f T (drain measured from the first arrival)\n", g)
		}
		fmt.Println()
		ds := Disciplines(*batch)
		if *sweep {
			ds = append(ds, Sweep()...)
		}
		rows := Compare(Params{PRs: *prs, Broken: *broken, Gap: g}, *seeds, ds)
		Table(os.Stdout, rows)
		var meets []string
		for _, r := range rows {
			if r.MeetsGoal {
				meets = append(meets, r.Name)
			}
			if r.LandedBroken > 0 || r.Unsettled > 0 {
				bad = true
			}
		}
		fmt.Println()
		if len(meets) == 0 {
			fmt.Println("Meets the goal: none.")
		} else {
			fmt.Printf("Meets the goal: %s.\n", strings.Join(meets, "; "))
		}
	}
	if bad {
		fmt.Fprintln(os.Stderr, "invariant broken: a broken PR landed or a PR never settled")
		os.Exit(1)
	}
}
