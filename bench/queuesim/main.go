package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Row aggregates one discipline over the seeds.
type Row struct {
	Name          string
	RunsPerLanded float64 // mean over seeds of CI attempts / landed
	BrokenRuns    float64 // the same, counting only attempts on a candidate holding a broken pull request
	TrialRuns     float64 // the same, counting only attempts on trials (batch checks)
	Drain         float64 // mean, in T
	Ratio         float64 // mean over seeds of drain / the serial drain of that seed
	P50, P95      float64 // entry → landing, in T, over every landed pull request of every seed
	Landed        float64 // mean per seed
	Innocent      float64 // innocent evictions, % of pull requests
	Conflicts     float64 // mean per seed
	Removed       float64 // mean per seed: people taking out the red first entry
	Passes        float64 // mean runner wakes per seed
	Bad           int     // broken landed + unsettled, over all seeds: must be 0
}

// Compare runs every discipline on seeds 1..seeds of p, the first discipline
// being the serial baseline, on up to workers goroutines.
func Compare(p Params, seeds, workers int, ds []Discipline) ([]Row, error) {
	res := make([][]Result, len(ds))
	for i := range res {
		res[i] = make([]Result, seeds)
	}
	type job struct{ d, seed int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for w := 0; w < max(workers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				pp := p
				pp.Seed = uint64(j.seed + 1)
				r, err := Run(pp, ds[j.d])
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("%s, seed %d: %w", ds[j.d].Name(), pp.Seed, err)
				}
				res[j.d][j.seed] = r
				mu.Unlock()
			}
		}()
	}
	for seed := 0; seed < seeds; seed++ {
		for d := range ds {
			jobs <- job{d, seed}
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	rows := make([]Row, len(ds))
	for d := range ds {
		r := &rows[d]
		r.Name = ds[d].Name()
		var toLand []float64
		n := float64(seeds)
		for seed, x := range res[d] {
			r.RunsPerLanded += float64(x.Runs) / float64(max(x.Landed, 1)) / n
			r.BrokenRuns += float64(x.RunsBroken) / float64(max(x.Landed, 1)) / n
			r.TrialRuns += float64(x.RunsTrial) / float64(max(x.Landed, 1)) / n
			r.Drain += float64(x.Drain) / T / n
			r.Ratio += float64(x.Drain) / float64(max(res[0][seed].Drain, 1)) / n
			r.Landed += float64(x.Landed) / n
			r.Innocent += 100 * float64(x.Innocent) / float64(p.PRs) / n
			r.Conflicts += float64(x.Conflicts) / n
			r.Removed += float64(x.Removed) / n
			r.Passes += float64(x.Passes) / n
			r.Bad += x.LandedBroken + x.Unsettled
			for _, t := range x.ToLand {
				toLand = append(toLand, float64(t)/T)
			}
		}
		r.P50, r.P95 = quantile(toLand, 0.50), quantile(toLand, 0.95)
	}
	return rows, nil
}

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return ys[min(len(ys)-1, int(q*float64(len(ys))))]
}

// Table writes rows as markdown.
func Table(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| discipline | CI runs / landed PR | drain, T | drain / serial | entry → landing p50, p95 (T) | landed | innocent evictions | conflicts | taken out by hand | passes | of the runs / landed PR: on a broken stack | on trials |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %.2f | %.1f | %.3f | %.1f, %.1f | %.1f | %.2f %% | %.1f | %.2f | %.0f | %.2f | %.2f |\n",
			r.Name, r.RunsPerLanded, r.Drain, r.Ratio, r.P50, r.P95, r.Landed, r.Innocent, r.Conflicts, r.Removed, r.Passes, r.BrokenRuns, r.TrialRuns)
	}
}

// parseDisciplines reads a list like "serial,1-8,adaptive:8,batch:12/4":
// oracle (the scenario's floor: oracle.go), a depth or range of depths
// (strict), adaptive:CAP[/START], batch:DEPTH/K,
// squash:DEPTH (strict, squash steps), lanes:DEPTH[/K] (the layout's
// partitions in the rules, strict or batch checks: lanes.go).
func parseDisciplines(spec string) ([]Discipline, error) {
	var ds []Discipline
	atoi := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("-disciplines: %q is not a positive number", s)
		}
		return n, nil
	}
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "serial":
			ds = append(ds, Discipline{Depth: 1})
		case f == "oracle":
			ds = append(ds, Discipline{Oracle: true})
		case strings.HasPrefix(f, "adaptive:"):
			a, b, _ := strings.Cut(strings.TrimPrefix(f, "adaptive:"), "/")
			c, err := atoi(a)
			if err != nil {
				return nil, err
			}
			start := 1
			if b != "" {
				if start, err = atoi(b); err != nil {
					return nil, err
				}
			}
			ds = append(ds, Discipline{Depth: c, Adaptive: true, Start: start})
		case strings.HasPrefix(f, "squash:"):
			depth, err := atoi(strings.TrimPrefix(f, "squash:"))
			if err != nil {
				return nil, err
			}
			ds = append(ds, Discipline{Depth: depth, Squash: true})
		case strings.HasPrefix(f, "lanes:"):
			a, b, isBatch := strings.Cut(strings.TrimPrefix(f, "lanes:"), "/")
			depth, err := atoi(a)
			if err != nil {
				return nil, err
			}
			d := Discipline{Depth: depth, Lanes: true}
			if isBatch {
				if d.CheckEvery, err = atoi(b); err != nil {
					return nil, err
				}
			}
			ds = append(ds, d)
		case strings.HasPrefix(f, "batch:"):
			a, b, _ := strings.Cut(strings.TrimPrefix(f, "batch:"), "/")
			depth, err := atoi(a)
			if err != nil {
				return nil, err
			}
			k, err := atoi(b)
			if err != nil {
				return nil, err
			}
			ds = append(ds, Discipline{Depth: depth, CheckEvery: k})
		default:
			a, b, isRange := strings.Cut(f, "-")
			lo, err := atoi(a)
			if err != nil {
				return nil, err
			}
			hi := lo
			if isRange {
				if hi, err = atoi(b); err != nil {
					return nil, err
				}
			}
			for d := lo; d <= hi; d++ {
				ds = append(ds, Discipline{Depth: d})
			}
		}
	}
	if len(ds) == 0 || ds[0] != (Discipline{Depth: 1}) {
		return nil, fmt.Errorf("-disciplines: start with serial (the baseline drain / serial is measured against)")
	}
	return ds, nil
}

func main() {
	p := DefaultParams()
	flag.IntVar(&p.PRs, "prs", p.PRs, "pull requests")
	flag.Float64Var(&p.Broken, "broken", p.Broken, "fraction of pull requests broken")
	flag.IntVar(&p.Conflicts, "conflicts", p.Conflicts, "conflicting pairs (two pull requests editing the same line)")
	flag.Float64Var(&p.Gap, "gap", p.Gap, "mean time between arrivals, in T (0: all at once)")
	flaky := flag.String("flaky", "0,0.05", "probabilities that a CI attempt of a good candidate fails, one table each")
	flag.IntVar(&p.Retries, "retries", p.Retries, "check run --retries")
	flag.BoolVar(&p.RetryBelowRed, "retry-below-red", p.RetryBelowRed, "retry a failed candidate even above a red step (check run before the rule of docs/queue.md, \"Retries below a red step\")")
	flag.BoolVar(&p.RetrySearch, "retry-search", p.RetrySearch, "check run retries a search step (a batch group's last step, a trial, a strict step of a branch with partitions) like any candidate (by default it does not: the planner's search is their retry)")
	flag.BoolVar(&p.RetryTrialOne, "retry-trial-one", p.RetryTrialOne, "check run retries a trial of one pull request (by default it does not)")
	flag.BoolVar(&p.NoBelowWait, "no-below-wait", p.NoBelowWait, "check run --below-wait 0: retry at once unless a step below is already red")
	flag.BoolVar(&p.BelowWaitAlways, "below-wait-always", p.BelowWaitAlways, "check run --below-wait TIMEOUT: every candidate waits for a step below (by default only a batch group's last step does)")
	flag.Float64Var(&p.Sigma, "sigma", p.Sigma, "CI latency: lognormal, median T, this sigma")
	flag.Float64Var(&p.Hang, "hang", p.Hang, "probability that a CI attempt never reports")
	flag.Float64Var(&p.Timeout, "timeout", p.Timeout, "checkTimeout in T (0: none)")
	flag.Float64Var(&p.Reenter, "reenter", p.Reenter, "delay before an author re-enters a good pull request evicted, in T")
	flag.Float64Var(&p.Intervene, "intervene", p.Intervene, "delay before a person takes the red first entry out of a queue stopped on a red target, in T (0: never)")
	flag.IntVar(&p.Partitions, "partitions", p.Partitions, "lay the repository out in this many partitions, equal shares (lanes:DEPTH[/K] disciplines name them in the rules)")
	flag.Float64Var(&p.Global, "global", p.Global, "share of global pull requests (in no partition) when -partitions is set")
	seeds := flag.Int("seeds", 20, "seeds (1..seeds)")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "simulations run at once")
	spec := flag.String("disciplines", "serial,2-8,adaptive:8,adaptive:8/4,batch:6/6,batch:8/4,batch:8/8,batch:12/4,batch:12/6,batch:12/12,batch:16/8", "serial, oracle, depths (N or N-M), adaptive:CAP[/START], batch:DEPTH/K, squash:DEPTH, lanes:DEPTH[/K] (with -partitions)")
	flag.Parse()
	ds, err := parseDisciplines(*spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("Merge-queue simulation running the real planner: %d PRs, %.0f%% broken, %d conflicting pairs, arrivals every %.2f T on average, %d seeds.\n",
		p.PRs, 100*p.Broken, p.Conflicts, p.Gap, *seeds)
	fmt.Printf("CI: unlimited parallel runs, latency lognormal (median T, sigma %.2f), check run --retries %d, checkTimeout %.1f T, hung attempts %.1f%%.\n",
		p.Sigma, p.Retries, p.Timeout, 100*p.Hang)
	fmt.Printf("People: an author re-enters a good PR evicted after %.1f T; a person takes the red first entry out of a queue stopped on a red target after %.1f T.\n",
		p.Reenter, p.Intervene)
	if p.Partitions > 0 {
		fmt.Printf("Layout: %d partitions, equal shares; %.0f%% of pull requests global (lanes: disciplines name the partitions in the rules).\n", p.Partitions, 100*p.Global)
	}
	bad := false
	for _, f := range strings.Split(*flaky, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "-flaky: %v\n", err)
			os.Exit(2)
		}
		p.Flaky = x
		fmt.Printf("\n### %.0f%% flaky checks\n\n", 100*x)
		rows, err := Compare(p, *seeds, *workers, ds)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		Table(os.Stdout, rows)
		for _, r := range rows {
			if r.Bad > 0 {
				bad = true
				fmt.Fprintf(os.Stderr, "%s: %d broken pull requests landed or pull requests never settled\n", r.Name, r.Bad)
			}
		}
	}
	if bad {
		os.Exit(1)
	}
}
