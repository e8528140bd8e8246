package queue

// The queue's statistics, `git+ queue stats` (docs/queue.md, "Stats"): how
// the queue for a target did, by day (UTC), from the events alone. Pure: the
// caller reads the logs and the trust state.
//
// Decisions:
//   - Sources: every queue ref whose fold names the target (closed queues
//     too: they are history), and every pull request ref. Nothing is fetched
//     from CI and nothing is kept between runs: the events are the record. A
//     queue log that does not fold is listed in Unfolded and counts nothing.
//   - Only what the fold took counts: each queue log is folded (Fold, against
//     the trust state the caller gives, as queue run and the hook fold it)
//     and the figures are read from the state: entries are State.Began,
//     departures State.Left, resets State.Resets, candidates the
//     queue.candidate events the fold did not ignore. A duplicate
//     queue.entered, a queue.left of a pull request not queued, an event
//     after queue.closed or by a signer without hub.queue counts for nothing,
//     exactly as the fold ignores it (docs/queue.md, "Stats").
//   - Times are event committer times: fine for statistics, never trusted for
//     policy.
//   - entered: entries begun; landed: departures with reason landed; per day
//     of their event's time. entered→landed: per landed entry, from the pull
//     request's first entry on the target (past evictions and re-entries) to
//     its landing, in minutes.
//   - evicted: departures with reason failed, conflict, stale or withdrawn,
//     over entries. "candidate pass rate": landed over (landed + failed), the
//     analogue of docs/queue.md's batches passed.
//   - candidates per landed PR: distinct candidate steps recorded for the
//     landed pull requests; check runs per landed PR: their check.completed
//     events (head or candidate) as written, both divided by landed.
//   - --since DATE (YYYY-MM-DD, UTC) counts events from that day on.
//   - bypassed: pull requests landed on the target at a head a pr.bypassed
//     by a current holder of hub.bypass named (docs/trust.md, "An audited
//     bypass"); printed only when there is one.
//   - Thresholds (docs/queue.md, "Stats", for why they are fixed): median ≤
//     30 min, p95 ≤ 60 min, evicted ≤ 5%, candidate pass rate ≥ 80%.

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
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
	Target          string         `json:"target"`
	Queues          []string       `json:"queues"`
	Unfolded        []string       `json:"unfolded,omitempty"` // "id: why", queue logs that do not fold
	Since           string         `json:"since,omitempty"`
	Days            []StatsDay     `json:"days"`
	Entered         int            `json:"entered"`
	Landed          int            `json:"landed"`
	MedianMinutes   float64        `json:"medianMinutes"`
	P95Minutes      float64        `json:"p95Minutes"`
	Evicted         int            `json:"evicted"`
	EvictedByReason map[string]int `json:"evictedByReason"`
	EvictedRate     float64        `json:"evictedRate"`
	PassRate        float64        `json:"candidatePassRate"`
	CandidatesBuilt int            `json:"candidatesBuilt"`
	CandidatesPerPR float64        `json:"candidatesPerLandedPR"`
	CheckRunsPerPR  float64        `json:"checkRunsPerLandedPR"`
	Resets          int            `json:"resets"`
	// Bypassed: pull requests landed on the target (a pr.merged at or after
	// since) at a head a pr.bypassed named before, by a current holder of
	// hub.bypass (docs/trust.md, "An audited bypass"). Direct landings,
	// outside the queue; verify --branch says which the bypass justified.
	Bypassed   int              `json:"bypassed"`
	Thresholds []StatsThreshold `json:"thresholds"`
	// The series the page draws and /metrics exports (series.go).
	Depth                 int            `json:"depth"`
	DepthSeries           []StatsDepth   `json:"depthSeries"`
	Landings              []StatsLanding `json:"landings"`
	CheckRunsByConclusion map[string]int `json:"checkRunsByConclusion"`
	// Partition and Partitions: on a target whose rules name partitions,
	// the same figures per lane (statspart.go); Partition names the lane
	// of one of them.
	Partition  string  `json:"partition,omitempty"`
	Partitions []Stats `json:"partitions,omitempty"`
}

// Health thresholds (docs/queue.md, "Stats": fixed on purpose).
const (
	statsMedianMax  = 30 // minutes, entered→landed at the median
	statsP95Max     = 60 // minutes, at the 95th percentile
	statsEvictedMax = 5  // percent of entries
	statsPassMin    = 80 // percent of candidates landed rather than failed
)

// ComputeStats is the figures from the queue logs (by id) folded against t,
// and the pull request logs (by id), counting events at or after since
// (unix; 0 all).
func ComputeStats(target string, since int64, t *trust.State, queues, prs map[string][]hubrefs.Event) Stats {
	var counted, unfolded []string
	var effects []statsEffect
	ids := make([]string, 0, len(queues))
	for id := range queues {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		q, err := Fold(queues[id], t)
		if err != nil {
			unfolded = append(unfolded, id+": "+err.Error())
			continue
		}
		if q.Target == target {
			counted = append(counted, id)
			effects = append(effects, tookEffect(q, queues[id])...)
		}
	}
	st := tally(target, since, effects, prs)
	st.Queues, st.Unfolded = append(st.Queues, counted...), unfolded
	st.Bypassed = bypassedLandings(target, since, t, prs)
	st.Partitions = byPartition(target, since, t, effects, prs) // statspart.go
	return st
}

// bypassedLandings counts Stats.Bypassed.
func bypassedLandings(target string, since int64, t *trust.State, prs map[string][]hubrefs.Event) int {
	n := 0
	for _, evs := range prs {
		named := map[string]bool{}
		for _, ev := range evs {
			switch ev.Type {
			case hubrefs.TypePRBypassed:
				var v hubrefs.PRBypassed
				if ev.PayloadInto(&v) == nil && v.BaseRef == target && t.CanBypass(ev.Signer, target) {
					named[v.Head] = true
				}
			case hubrefs.TypePRMerged:
				var v hubrefs.PRMerged
				if ev.PayloadInto(&v) == nil && v.Branch == target && ev.Time >= since && named[v.Revision] {
					n++
					named = map[string]bool{} // one landing per pull request counts once
				}
			}
		}
	}
	return n
}

// statsEffect is one event of a queue log that took effect, as the figures
// count it.
type statsEffect struct {
	typ    string // hubrefs.TypeQueueEntered (an entry begun), TypeQueueLeft, TypeQueueReset or TypeQueueCandidate
	pr     string
	at     int64  // the event's time
	reason string // queue.left
	step   string // queue.candidate
	part   string // queue.candidate: its lane (partition)
}

// tookEffect reads from q, the fold of evs, the events that took effect:
// the fold decides, the figures only count.
func tookEffect(q *State, evs []hubrefs.Event) []statsEffect {
	at := make(map[plumbing.Hash]int64, len(evs))
	for _, ev := range evs {
		at[ev.ID] = ev.Time
	}
	var out []statsEffect
	for _, e := range q.Began {
		out = append(out, statsEffect{typ: hubrefs.TypeQueueEntered, pr: e.PR, at: at[e.EnteredAt]})
	}
	for _, l := range q.Left {
		out = append(out, statsEffect{typ: hubrefs.TypeQueueLeft, pr: l.PR, at: at[l.Event], reason: l.Reason})
	}
	for _, r := range q.Resets {
		out = append(out, statsEffect{typ: hubrefs.TypeQueueReset, at: at[r.Event]})
	}
	ignored := make(map[plumbing.Hash]bool, len(q.Ignored))
	for _, ig := range q.Ignored {
		ignored[ig.Event] = true
	}
	for _, ev := range evs {
		var e hubrefs.QueueCandidate
		if ev.Type == hubrefs.TypeQueueCandidate && !ignored[ev.ID] && ev.Unmarshal(&e) == nil {
			out = append(out, statsEffect{typ: hubrefs.TypeQueueCandidate, pr: e.PR, at: ev.Time, step: e.Step, part: e.Partition})
		}
	}
	return out
}

// tally is the figures of effects (in any order) and the pull request logs,
// counting effects at or after since; Queues is left empty.
func tally(target string, since int64, effects []statsEffect, prs map[string][]hubrefs.Event) Stats {
	st := Stats{Target: target, Queues: []string{}, Days: []StatsDay{}, EvictedByReason: map[string]int{}, Thresholds: []StatsThreshold{}}
	days := map[string]*StatsDay{}
	day := func(sec int64) *StatsDay {
		k := time.Unix(sec, 0).UTC().Format("2006-01-02")
		if days[k] == nil {
			days[k] = &StatsDay{Day: k}
		}
		return days[k]
	}
	firstEntered := map[string]int64{}
	landedPRs := map[string]bool{}
	candidates := map[string]map[string]bool{} // pr → steps
	var landings []statsEffect
	for _, e := range effects {
		switch e.typ {
		case hubrefs.TypeQueueEntered:
			if first, ok := firstEntered[e.pr]; !ok || e.at < first {
				firstEntered[e.pr] = e.at
			}
			if e.at >= since {
				st.Entered++
				day(e.at).Entered++
			}
		case hubrefs.TypeQueueLeft:
			switch {
			case e.at < since:
			case e.reason == ReasonLanded:
				st.Landed++
				day(e.at).Landed++
				landedPRs[e.pr] = true
				landings = append(landings, e)
			default:
				st.Evicted++
				st.EvictedByReason[e.reason]++
				day(e.at).Evicted++
			}
		case hubrefs.TypeQueueReset:
			if e.at >= since {
				st.Resets++
			}
		case hubrefs.TypeQueueCandidate:
			if candidates[e.pr] == nil {
				candidates[e.pr] = map[string]bool{}
			}
			candidates[e.pr][e.step] = true
		}
	}
	var minutes []float64
	for _, l := range landings {
		if first, ok := firstEntered[l.pr]; ok {
			minutes = append(minutes, float64(l.at-first)/60)
		}
	}
	st.Depth, st.DepthSeries, st.Landings, st.CheckRunsByConclusion = series(since, effects, landings, firstEntered, prs)
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
	if n := st.Landed + st.EvictedByReason[ReasonFailed]; n > 0 {
		st.PassRate = statsRound1(100 * float64(st.Landed) / float64(n))
	}
	for _, d := range days {
		st.Days = append(st.Days, *d)
	}
	sort.Slice(st.Days, func(i, j int) bool { return st.Days[i].Day < st.Days[j].Day })
	has := len(minutes) > 0
	st.Thresholds = []StatsThreshold{
		{"entered→landed median (min)", st.MedianMinutes, fmt.Sprintf("≤ %d", statsMedianMax), has && st.MedianMinutes <= statsMedianMax},
		{"entered→landed p95 (min)", st.P95Minutes, fmt.Sprintf("≤ %d", statsP95Max), has && st.P95Minutes <= statsP95Max},
		{"evicted (% of entries)", st.EvictedRate, fmt.Sprintf("≤ %d (a few percent)", statsEvictedMax), st.EvictedRate <= statsEvictedMax},
		{"candidate pass rate (%)", st.PassRate, fmt.Sprintf("≥ %d", statsPassMin), st.Landed > 0 && st.PassRate >= statsPassMin},
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
	if st.Bypassed > 0 {
		fmt.Fprintf(w, "bypassed: %d pull request(s) landed on %s by pr bypass, outside the queue (git+ verify --branch lists who and why)\n", st.Bypassed, st.Target)
	}
	for _, u := range st.Unfolded {
		fmt.Fprintf(w, "not counted: queue %s\n", u)
	}
	st.writePartitions(w) // statspart.go
	fmt.Fprintf(w, "health (docs/queue.md: healthy queues land in under %d min at the median and %d at p95, eject a few percent, pass over %d%%):\n",
		statsMedianMax, statsP95Max, statsPassMin)
	for _, t := range st.Thresholds {
		mark := "ok"
		if !t.OK {
			mark = "OUTSIDE"
		}
		fmt.Fprintf(w, "  %-30s %8.1f  want %-22s %s\n", t.Figure, t.Value, t.Limit, mark)
	}
}
