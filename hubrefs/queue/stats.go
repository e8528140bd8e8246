package queue

// The queue's statistics, `git+ queue stats` (docs/queue.md, "Stats"): how
// the queue for a target did, by day (UTC), from the events alone. Pure: the
// caller reads the logs.
//
// Decisions:
//   - Sources: every queue ref whose queue.opened names the target (closed
//     queues too: they are history), and every pull request ref. Nothing is
//     fetched from CI and nothing is kept between runs: the events are the
//     record.
//   - Times are event committer times: fine for statistics, never trusted for
//     policy. Events are counted as written (no trust filtering): a stray
//     event from a removed key skews a figure, it authorizes nothing.
//   - Only events that took effect count (docs/queue.md, "Stats"): a
//     queue.entered of a pull request already queued, or a queue.left of one
//     not queued (a runner that raced another and lost, in the days before
//     compare-and-swap phases), is skipped as the fold skips it.
//   - entered: queue.entered events; landed: queue.left(landed) events; per
//     day of their own time. entered→landed: per landed entry, from the pull
//     request's first queue.entered on the target (past evictions and
//     re-entries) to its queue.left(landed), in minutes.
//   - evicted: queue.left with reason failed, conflict, stale or withdrawn,
//     over entries. "candidate pass rate": landed over (landed + failed), the
//     analogue of docs/queue.md's batches passed.
//   - candidates per landed PR: distinct queue.candidate steps recorded for
//     the landed pull requests; check runs per landed PR: their
//     check.completed events (head or candidate), both divided by landed.
//   - --since DATE (YYYY-MM-DD, UTC) counts events from that day on.
//   - Thresholds (docs/queue.md): median ≤ 30 min, p95 ≤ 60 min, evicted ≤ 5%,
//     candidate pass rate ≥ 80%.

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/gitplus/gitplus/hubrefs"
)

// StatsDay is one day's counts (UTC).
type StatsDay struct {
	Day     string `json:"day"`
	Entered int    `json:"entered"`
	Landed  int    `json:"landed"`
	Evicted int    `json:"evicted"`
}

// StatsThreshold is one figure against docs/queue.md's health limit.
type StatsThreshold struct {
	Figure string  `json:"figure"`
	Value  float64 `json:"value"`
	Limit  string  `json:"limit"`
	OK     bool    `json:"ok"`
}

// Stats is how the queue for a target did (see the decisions above).
type Stats struct {
	Target          string           `json:"target"`
	Queues          []string         `json:"queues"`
	Since           string           `json:"since,omitempty"`
	Days            []StatsDay       `json:"days"`
	Entered         int              `json:"entered"`
	Landed          int              `json:"landed"`
	MedianMinutes   float64          `json:"medianMinutes"`
	P95Minutes      float64          `json:"p95Minutes"`
	Evicted         int              `json:"evicted"`
	EvictedByReason map[string]int   `json:"evictedByReason"`
	EvictedRate     float64          `json:"evictedRate"`
	PassRate        float64          `json:"candidatePassRate"`
	CandidatesBuilt int              `json:"candidatesBuilt"`
	CandidatesPerPR float64          `json:"candidatesPerLandedPR"`
	CheckRunsPerPR  float64          `json:"checkRunsPerLandedPR"`
	Resets          int              `json:"resets"`
	Thresholds      []StatsThreshold `json:"thresholds"`
}

// ComputeStats is the figures from the queue logs (by id) and
// pull request logs (by id), counting events at or after since (unix; 0 all).
func ComputeStats(target string, since int64, queues, prs map[string][]hubrefs.Event) Stats {
	st := Stats{Target: target, Queues: []string{}, Days: []StatsDay{}, EvictedByReason: map[string]int{}, Thresholds: []StatsThreshold{}}
	days := map[string]*StatsDay{}
	day := func(t int64) *StatsDay {
		k := time.Unix(t, 0).UTC().Format("2006-01-02")
		if days[k] == nil {
			days[k] = &StatsDay{Day: k}
		}
		return days[k]
	}
	firstEntered := map[string]int64{}
	landedPRs := map[string]bool{}
	candidates := map[string]map[string]bool{} // pr → steps
	var minutes []float64
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
		if len(evs) == 0 || evs[0].Type != hubrefs.TypeQueueOpened {
			continue
		}
		var open hubrefs.QueueOpened
		if evs[0].Unmarshal(&open) != nil || open.Target != target {
			continue
		}
		st.Queues = append(st.Queues, id)
		active := map[string]bool{}
		for _, ev := range evs {
			switch ev.Type {
			case hubrefs.TypeQueueEntered:
				var e hubrefs.QueueEntered
				if ev.Unmarshal(&e) != nil || active[e.PR] {
					continue
				}
				active[e.PR] = true
				if t, ok := firstEntered[e.PR]; !ok || ev.Time < t {
					firstEntered[e.PR] = ev.Time
				}
				if ev.Time >= since {
					st.Entered++
					day(ev.Time).Entered++
				}
			case hubrefs.TypeQueueCandidate:
				var e hubrefs.QueueCandidate
				if ev.Unmarshal(&e) != nil {
					continue
				}
				if candidates[e.PR] == nil {
					candidates[e.PR] = map[string]bool{}
				}
				candidates[e.PR][e.Step] = true
			case hubrefs.TypeQueueLeft:
				var e hubrefs.QueueLeft
				if ev.Unmarshal(&e) != nil || !active[e.PR] {
					continue
				}
				active[e.PR] = false
				if ev.Time < since {
					continue
				}
				if e.Reason == "landed" {
					st.Landed++
					day(ev.Time).Landed++
					landedPRs[e.PR] = true
					landings = append(landings, landing{e.PR, ev.Time})
					continue
				}
				st.Evicted++
				st.EvictedByReason[e.Reason]++
				day(ev.Time).Evicted++
			case hubrefs.TypeQueueReset:
				if ev.Time >= since {
					st.Resets++
				}
			}
		}
	}
	for _, l := range landings {
		if t, ok := firstEntered[l.pr]; ok {
			minutes = append(minutes, float64(l.at-t)/60)
		}
	}
	sort.Float64s(minutes)
	st.MedianMinutes, st.P95Minutes = statsRound1(statsQuantile(minutes, 0.5)), statsRound1(statsQuantile(minutes, 0.95))
	checkRuns := 0
	for id := range landedPRs {
		st.CandidatesBuilt += len(candidates[id])
		for _, ev := range prs[id] {
			if ev.Type == hubrefs.TypeCheckCompleted {
				checkRuns++
			}
		}
	}
	if st.Landed > 0 {
		st.CandidatesPerPR = statsRound1(float64(st.CandidatesBuilt) / float64(len(landedPRs)))
		st.CheckRunsPerPR = statsRound1(float64(checkRuns) / float64(len(landedPRs)))
	}
	if st.Entered > 0 {
		st.EvictedRate = statsRound1(100 * float64(st.Evicted) / float64(st.Entered))
	}
	if n := st.Landed + st.EvictedByReason["failed"]; n > 0 {
		st.PassRate = statsRound1(100 * float64(st.Landed) / float64(n))
	}
	for _, d := range days {
		st.Days = append(st.Days, *d)
	}
	sort.Slice(st.Days, func(i, j int) bool { return st.Days[i].Day < st.Days[j].Day })
	has := len(minutes) > 0
	st.Thresholds = []StatsThreshold{
		{"entered→landed median (min)", st.MedianMinutes, "≤ 30", has && st.MedianMinutes <= 30},
		{"entered→landed p95 (min)", st.P95Minutes, "≤ 60", has && st.P95Minutes <= 60},
		{"evicted (% of entries)", st.EvictedRate, "≤ 5 (a few percent)", st.EvictedRate <= 5},
		{"candidate pass rate (%)", st.PassRate, "≥ 80", st.Landed > 0 && st.PassRate >= 80},
	}
	return st
}

// statsQuantile is the nearest-rank quantile of sorted xs (0 when empty).
func statsQuantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	if i < 0 {
		i = 0
	}
	return xs[i]
}

func statsRound1(x float64) float64 { return math.Round(x*10) / 10 }

// WriteText prints st as `git+ queue stats` does.
func (st Stats) WriteText(w io.Writer) {
	fmt.Fprintf(w, "queue stats for %s (%d queue(s))", st.Target, len(st.Queues))
	if st.Since != "" {
		fmt.Fprintf(w, " since %s", st.Since)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-10s  %7s  %6s  %7s\n", "day (UTC)", "entered", "landed", "evicted")
	for _, d := range st.Days {
		fmt.Fprintf(w, "%-10s  %7d  %6d  %7d\n", d.Day, d.Entered, d.Landed, d.Evicted)
	}
	fmt.Fprintf(w, "%-10s  %7d  %6d  %7d\n", "total", st.Entered, st.Landed, st.Evicted)
	fmt.Fprintf(w, "entered→landed: median %.1f min, p95 %.1f min\n", st.MedianMinutes, st.P95Minutes)
	var reasons []string
	for r, n := range st.EvictedByReason {
		reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
	}
	sort.Strings(reasons)
	fmt.Fprintf(w, "evicted: %d of %d entries (%.1f%%)", st.Evicted, st.Entered, st.EvictedRate)
	if len(reasons) > 0 {
		fmt.Fprintf(w, ": %s", strings.Join(reasons, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "candidates built: %d (%.1f per landed pull request); check runs per landed pull request: %.1f; resets: %d\n",
		st.CandidatesBuilt, st.CandidatesPerPR, st.CheckRunsPerPR, st.Resets)
	fmt.Fprintln(w, "health (docs/queue.md: healthy queues land in under 30 min at the median and 60 at p95, eject a few percent, pass over 80%):")
	for _, t := range st.Thresholds {
		mark := "ok"
		if !t.OK {
			mark = "OUTSIDE"
		}
		fmt.Fprintf(w, "  %-30s %8.1f  want %-22s %s\n", t.Figure, t.Value, t.Limit, mark)
	}
}
