package queue

// Batch checks (docs/queue.md, "Batch checks"): with the target's
// checkEvery K > 1 the planner cuts the chain into groups of at most K
// steps, asks CI for each group's last step only, and lands a prefix the
// boundary accepts: every step vouched for by a green group end whose
// published queue.candidate marks it as such (docs/boundary.md). A red
// group end is searched by halving: the group's first half becomes a group
// of its own, whose end CI runs next; green → the culprit is in the second
// half, which is halved in turn; down to a red group of one, whose pull
// request alone is evicted. The innocent stay in the queue and the chain is
// rebuilt without the culprit.

// batchLandable is how many steps from the start of chain the boundary
// accepts under checkEvery k, judged as policy does it: the last step
// green itself; every step the queue's records mark as a group's last green
// itself, its group at most k long; every other step green itself or
// within the group of a green marked end in the prefix.
func batchLandable(chain []Step, q *State, k int) int {
	for j := len(chain); j >= 1; j-- {
		if chain[j-1].Verdict == Green && batchAccepts(chain[:j], q, k) {
			return j
		}
	}
	return 0
}

func batchAccepts(prefix []Step, q *State, k int) bool {
	covered := make([]bool, len(prefix))
	for e, st := range prefix {
		n, marked := q.GroupEnd(st.Commit)
		if !marked {
			continue
		}
		if n > k || st.Verdict != Green {
			return false
		}
		for i := e; i > e-n && i >= 0; i-- {
			covered[i] = true
		}
	}
	for i, st := range prefix {
		if !covered[i] && st.Verdict != Green {
			return false
		}
	}
	return true
}

// batchGroups assigns the groups of the steps past the landable prefix
// (GroupEnd, GroupSize; the prefix gets none) and returns the culprit to
// evict: the step of a red group of one when every group ahead of it has a
// green end; -1 when there is none yet. The steps past a red group under
// search are held: not grouped, not published (they will be rebuilt).
func batchGroups(chain []Step, q *State, k int) int {
	for i := range chain {
		chain[i].GroupEnd, chain[i].GroupSize, chain[i].held = "", 0, false
	}
	var groups [][2]int
	for s := batchLandable(chain, q, k); s < len(chain); {
		e := min(s+k, len(chain)) - 1
		for i := s; i <= e; i++ {
			if chain[i].Verdict == Red {
				e = i // a known red step ends the group: search it
				break
			}
		}
		if chain[e].Verdict != Red {
			groups = append(groups, [2]int{s, e})
			s = e + 1
			continue
		}
		// Halving: the first half [lo, m] is a group of its own. Green at
		// m puts the culprit past m; pending waits for CI at m.
		lo := s
		for lo < e {
			m := lo + (e-lo+1)/2 - 1
			groups = append(groups, [2]int{lo, m})
			lo = m + 1
			if chain[m].Verdict != Green {
				break
			}
		}
		groups = append(groups, [2]int{lo, e})
		// Every step past e holds the red one and is rebuilt once the
		// culprit leaves: CI is not asked for them meanwhile.
		for i := e + 1; i < len(chain); i++ {
			chain[i].held = true
		}
		break
	}
	culprit, decided := -1, false
	for _, g := range groups {
		end := chain[g[1]]
		for i := g[0]; i <= g[1]; i++ {
			chain[i].GroupEnd, chain[i].GroupSize = end.Commit, g[1]-g[0]+1
		}
		if decided || end.Verdict == Green {
			continue
		}
		decided = true
		if end.Verdict == Red && g[0] == g[1] {
			culprit = g[0]
		}
	}
	return culprit
}

// asked reports whether CI was asked to run the step rev of entry c: its
// latest queue.candidate names rev and is no group's inner step. Only then
// can checkTimeout's silence count against it.
func asked(q *State, c candidateEntry, rev string) bool {
	rec, ok := q.LatestCandidate(c.pr)
	return ok && rec.Step == rev && (rec.GroupEnd == "" || rec.GroupEnd == rec.Step)
}
