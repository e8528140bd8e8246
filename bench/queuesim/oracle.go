package main

// The oracle (docs/queue.md, "The simulator"): the floor of a scenario,
// computed from its arrivals, not run by a planner. Each pull request is
// settled exactly one CI run (T) after it arrives: a good one lands, a
// broken one is evicted, nothing is run for nothing, nothing waits for
// anything else; the second of a conflicting pair is evicted when it
// arrives, unrun. Its drain (the last arrival + T, from the first arrival)
// is what no queue can beat on that scenario, whatever it runs; its runs
// (one per pull request CI settles) are strict checks' floor without
// retries — `check run --retries 1` runs a broken pull request twice.

// oracle is the oracle's result on scenario sc.
func oracle(sc scenario) Result {
	var r Result
	seen := map[int]bool{} // conflicting lines whose first pull request came
	for i, at := range sc.arrive {
		settled := at + T
		if l := sc.line[i]; l >= 0 && seen[l] {
			r.Conflicts++
			settled = at
		} else {
			if l >= 0 {
				seen[l] = true
			}
			r.Runs++
			if sc.broken[i] {
				r.RunsBroken++
				r.EvictedBroken++
			} else {
				r.Landed++
				r.ToLand = append(r.ToLand, T)
			}
		}
		r.Drain = max(r.Drain, settled)
	}
	if len(sc.arrive) > 0 {
		r.Drain -= sc.arrive[0]
	}
	return r
}
