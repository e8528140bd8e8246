package queue

import (
	"fmt"
	"io"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Figures per lane (docs/queue.md, "Partitions and lanes"): on a target
// whose rules name partitions, Stats.Partitions holds the figures of each
// lane, computed as the whole's are (tally) over the pull requests of that
// lane alone. A pull request's lane is the partition its latest
// queue.candidate names (the runner's record of the lane it built the step
// in); one whose latest candidate names none was built in a chain on the
// tip as a global pull request ("global"), and one that never had a
// candidate is "unassigned" (queued behind a global one, or beyond the
// depth, or left before it was built). The lanes come in the rules' order,
// then global and unassigned, each only when it has a pull request.

// Lane names of pull requests in no partition's lane.
const (
	StatsGlobal     = trust.GlobalPartition
	StatsUnassigned = "unassigned"
)

// byPartition is Stats.Partitions (nil when the target's rules name no
// partitions).
func byPartition(target string, since int64, t *trust.State, effects []statsEffect, prs map[string][]hubrefs.Event) []Stats {
	b, ok := t.Rules.For(target)
	if !ok || len(b.Partitions) == 0 {
		return nil
	}
	lane := map[string]string{}
	for _, e := range effects {
		if e.typ == hubrefs.TypeQueueCandidate {
			lane[e.pr] = e.part
			if e.part == "" {
				lane[e.pr] = StatsGlobal
			}
		}
	}
	of := func(pr string) string {
		if l, ok := lane[pr]; ok {
			return l
		}
		return StatsUnassigned
	}
	names := make([]string, 0, len(b.Partitions)+2)
	for _, p := range b.Partitions {
		names = append(names, p.Name)
	}
	names = append(names, StatsGlobal, StatsUnassigned)
	var out []Stats
	for _, name := range names {
		var sub []statsEffect
		for _, e := range effects {
			if e.pr != "" && of(e.pr) == name {
				sub = append(sub, e)
			}
		}
		if len(sub) == 0 {
			continue
		}
		st := tally(target, since, sub, prs)
		st.Partition = name
		out = append(out, st)
	}
	return out
}

// writePartitions prints the figures per lane, one line each.
func (st Stats) writePartitions(w io.Writer) {
	if len(st.Partitions) == 0 {
		return
	}
	fmt.Fprintln(w, "per lane (partition):")
	for _, p := range st.Partitions {
		fmt.Fprintf(w, "  %-12s entered %d, landed %d, evicted %d; entered→landed median %.1f min, p95 %.1f min; check runs per landed pull request %.1f\n",
			p.Partition, p.Entered, p.Landed, p.Evicted, p.MedianMinutes, p.P95Minutes, p.CheckRunsPerPR)
	}
}
