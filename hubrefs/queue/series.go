package queue

// The series of `git+ queue stats --json` that the page draws and
// `git+ serve`'s /metrics exports (docs/operating.md, "Metrics"): the depth
// of the queue after every entry and departure, every landing with its time
// to land and check runs, and the check runs of the queued pull requests by
// conclusion. They come from the same effects as the figures (stats.go), so
// a chart and a figure never disagree.

import (
	"sort"

	"github.com/gitplus/gitplus/hubrefs"
)

// StatsDepth is the number of entries in the queues of the target just
// after an entry began or left, at that event's time (unix seconds).
type StatsDepth struct {
	At    int64 `json:"at"`
	Depth int   `json:"depth"`
}

// StatsLanding is one landing: the pull request, when it landed (unix
// seconds), its time to land (from its first entry on the target, in
// seconds) and its check.completed events as written.
type StatsLanding struct {
	PR        string `json:"pr"`
	At        int64  `json:"at"`
	Seconds   int64  `json:"seconds"`
	CheckRuns int    `json:"checkRuns"`
}

// series computes the depth now (entries begun minus departures, over the
// target's queues: an entry of a closed queue counts until it leaves), the
// depth series (points at or after since), the
// landings (in time order) and the check runs of every pull request that
// entered the target's queue, by conclusion (events at or after since).
func series(since int64, effects []statsEffect, landings []statsEffect, firstEntered map[string]int64,
	prs map[string][]hubrefs.Event) (int, []StatsDepth, []StatsLanding, map[string]int) {
	moves := make([]statsEffect, 0, len(effects))
	for _, e := range effects {
		if e.typ == hubrefs.TypeQueueEntered || e.typ == hubrefs.TypeQueueLeft {
			moves = append(moves, e)
		}
	}
	sort.SliceStable(moves, func(i, j int) bool {
		if moves[i].at != moves[j].at {
			return moves[i].at < moves[j].at
		}
		return moves[i].typ == hubrefs.TypeQueueEntered && moves[j].typ != hubrefs.TypeQueueEntered
	})
	depths := []StatsDepth{}
	d := 0
	for _, e := range moves {
		if e.typ == hubrefs.TypeQueueEntered {
			d++
		} else if d > 0 {
			d--
		}
		if e.at >= since {
			depths = append(depths, StatsDepth{At: e.at, Depth: d})
		}
	}
	runs := func(id string) int {
		n := 0
		for _, ev := range prs[id] {
			if ev.Type == hubrefs.TypeCheckCompleted {
				n++
			}
		}
		return n
	}
	lands := []StatsLanding{}
	for _, l := range landings {
		if first, ok := firstEntered[l.pr]; ok {
			lands = append(lands, StatsLanding{PR: l.pr, At: l.at, Seconds: l.at - first, CheckRuns: runs(l.pr)})
		}
	}
	sort.SliceStable(lands, func(i, j int) bool {
		if lands[i].At != lands[j].At {
			return lands[i].At < lands[j].At
		}
		return lands[i].PR < lands[j].PR
	})
	byConclusion := map[string]int{}
	for id := range firstEntered {
		for _, ev := range prs[id] {
			var c hubrefs.Check
			if ev.Type != hubrefs.TypeCheckCompleted || ev.Time < since || ev.Unmarshal(&c) != nil {
				continue
			}
			byConclusion[c.Conclusion]++
		}
	}
	return d, depths, lands, byConclusion
}

// The health limits of time to land (docs/queue.md, "Stats"), for the
// page's charts and the alert rules to draw and test against.
const (
	HealthMedianMinutes = statsMedianMax
	HealthP95Minutes    = statsP95Max
)
