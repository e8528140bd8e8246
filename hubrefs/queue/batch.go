package queue

// Batch checks (docs/queue.md, "Batch checks"): with the target's
// checkEvery K > 1 the planner cuts the chain into groups of at most K
// steps, asks CI for each group's last step only, and lands a prefix the
// boundary accepts: every step vouched for by a green group end whose
// published queue.candidate marks it as such (docs/boundary.md). A red
// group end is searched aside, in trials on the target (aside.go), once
// every group below it is green. A red group of pull requests that trials
// cleared before is searched here, in the chain, by halving: the group's
// first half becomes a group of its own, whose end CI runs next; green →
// the culprit is in the second half, which is halved in turn; down to a red
// group of one, whose pull request alone is evicted. The innocent stay in
// the queue and the chain is rebuilt without the culprit.

// BatchFault names the batch-check rule a chain breaks (docs/boundary.md,
// "Batch checks").
type BatchFault int

const (
	// BatchOK: the chain keeps the check rule.
	BatchOK BatchFault = iota
	// BatchLastNotGreen: the chain's last step lacks its own green checks.
	BatchLastNotGreen
	// BatchTooLong: a step is marked as the end of a group longer than K.
	BatchTooLong
	// BatchEndNotGreen: a marked group end lacks its own green checks.
	BatchEndNotGreen
	// BatchUnvouched: a step lacks its own green checks and no green marked
	// group end above it in the chain vouches for it.
	BatchUnvouched
)

// BatchJudgement is JudgeBatch's answer: the fault, the step (0-based,
// chain order) it is found at, and that step's mark (Marked, with group
// size Size) when it has one.
type BatchJudgement struct {
	Fault  BatchFault
	Step   int
	Marked bool
	Size   int
}

// JudgeBatch is the one rule of required checks on a candidate chain
// under checkEvery k (docs/boundary.md, "Batch checks"): steps are the
// chain's candidate ids in order, green[i] whether step i has every
// required check success on itself (pr.State.ChecksOn), marks the queue
// that counts for the branch (its group marks, GroupEnd). A chain whose
// every step is green is accepted without reading a mark. Otherwise, under
// k ≤ 1 every step needs its own checks; under k > 1 the last step and
// every marked group end must be green, no mark may name a group longer
// than k, and every other step is green or lies within the group of a
// green marked end above it. The fault reported is the hook's: the last
// step first, then marks from the top down, then the lowest unvouched step.
// The boundary (policy) and the planner (batchLandable) both judge by it.
func JudgeBatch(steps []string, green []bool, marks *State, k int) BatchJudgement {
	return JudgeBatchLinked(steps, green, marks, k, nil)
}

// JudgeBatchLinked is JudgeBatch over a chain whose steps are checked at
// revisions that need not stand on each other: steps[i] is the revision
// whose checks and marks count for step i (the step itself, or the
// candidate a partition step was tested as: docs/boundary.md, "Partition
// steps"), and linked(i) reports whether steps[i] is the first parent of
// steps[i+1]. A green group end vouches for a step below it only through
// linked steps: a group is a run of one lane's candidates, each built on
// the one below, never steps of two lanes that happen to be pushed one
// on the other. nil linked: every step is linked (a candidate chain).
func JudgeBatchLinked(steps []string, green []bool, marks *State, k int, linked func(i int) bool) BatchJudgement {
	allGreen := true
	for _, g := range green {
		allGreen = allGreen && g
	}
	if allGreen {
		return BatchJudgement{Step: -1}
	}
	if k <= 1 {
		for i, g := range green {
			if !g {
				return BatchJudgement{Fault: BatchUnvouched, Step: i}
			}
		}
	}
	if marks == nil {
		marks = &State{}
	}
	last := len(steps) - 1
	if !green[last] {
		n, ok := marks.GroupEnd(steps[last])
		return BatchJudgement{Fault: BatchLastNotGreen, Step: last, Marked: ok, Size: n}
	}
	vouched := make([]bool, len(steps))
	for e := last; e >= 0; e-- {
		n, ok := marks.GroupEnd(steps[e])
		if !ok {
			continue
		}
		if n > k {
			return BatchJudgement{Fault: BatchTooLong, Step: e, Marked: true, Size: n}
		}
		if !green[e] {
			return BatchJudgement{Fault: BatchEndNotGreen, Step: e, Marked: true, Size: n}
		}
		for i := e - 1; i > e-n && i >= 0; i-- {
			if linked != nil && !linked(i) {
				break
			}
			vouched[i] = true
		}
	}
	for i, g := range green {
		if !g && !vouched[i] {
			return BatchJudgement{Fault: BatchUnvouched, Step: i}
		}
	}
	return BatchJudgement{Step: -1}
}

// batchLandable is how many steps from the start of chain the boundary
// accepts under checkEvery k: the longest prefix JudgeBatch accepts, judged
// with the queue's published marks, as policy judges it.
func batchLandable(chain []Step, q *State, k int) int {
	for j := len(chain); j >= 1; j-- {
		if Landable(chain[:j], q, k) {
			return j
		}
	}
	return 0
}

// Landable reports whether the boundary accepts moving the target to the
// last step of prefix (a prefix of a planned chain) under checkEvery k
// (Branch.Every), given the marks q publishes: JudgeBatch over the steps'
// own verdicts (green is Verdict == Green). Under k = 1 this is "every
// step green". The planner lands the longest landable prefix.
func Landable(prefix []Step, q *State, k int) bool {
	if len(prefix) == 0 {
		return false
	}
	steps := make([]string, len(prefix))
	green := make([]bool, len(prefix))
	for i, st := range prefix {
		steps[i], green[i] = st.Commit, st.Verdict == Green
	}
	return JudgeBatch(steps, green, q, k).Fault == BatchOK
}

// batchGroups assigns the groups of the steps past the landable prefix
// (GroupEnd, GroupSize; the prefix gets none) and returns the culprit to
// evict: the step of a red group of one when every group ahead of it has a
// green end; -1 when there is none yet. A red group of more than one with
// every group ahead green is returned as aside (its first and last step)
// when canAside allows, to be searched in trials (aside.go); aside is
// {-1, -1} otherwise. Else it is searched here by halving, and the steps
// past it are held: not grouped, not published (they will be rebuilt).
//
// pinned groups the whole chain, its landable prefix included, and keeps
// every group the chain was published with whose steps all stand in it as
// published (new steps form groups of their own after them): a chain that
// cannot land this pass (it lands after other chains still queued,
// lanes.go) keeps the marks that vouch for it instead of losing or
// reshaping them before it may land.
func batchGroups(chain []Step, q *State, k int, canAside func(lo, hi int) bool, pinned bool) (culprit int, aside [2]int) {
	aside = [2]int{-1, -1}
	for i := range chain {
		chain[i].GroupEnd, chain[i].GroupSize, chain[i].held = "", 0, false
	}
	var groups [][2]int
	start := batchLandable(chain, q, k)
	if pinned {
		start = 0
	}
	for s := start; s < len(chain); {
		e := min(s+k, len(chain)) - 1
		if pinned {
			if kept := keptGroup(chain, q, k, s); kept >= 0 {
				e = kept
			} else {
				for t := s + 1; t <= e; t++ {
					if keptGroup(chain, q, k, t) >= 0 {
						e = t - 1
						break
					}
				}
			}
		}
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
		below := true
		for _, g := range groups {
			below = below && chain[g[1]].Verdict == Green
		}
		if e > s && canAside != nil && canAside(s, e) {
			if below {
				return -1, [2]int{s, e}
			}
			// A group below has no verdict yet: if it turns red, this
			// one's red says nothing. Wait for it, holding the steps past
			// this group (built on a red step, they will be rebuilt).
			groups = append(groups, [2]int{s, e})
			for i := e + 1; i < len(chain); i++ {
				chain[i].held = true
			}
			break
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
	culprit = -1
	decided := false
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
	return culprit, aside
}

// keptGroup returns the last step of the group chain[s] begins as the
// queue published it — every step of it in the chain as published (its
// latest queue.candidate in the entry's episode, standing, naming the
// step, the group's end and size), at most k long — or -1.
func keptGroup(chain []Step, q *State, k, s int) int {
	rec := q.latestRec(chain[s].PR)
	if rec == nil || rec.GroupEnd == "" || rec.GroupSize < 1 || rec.GroupSize > k {
		return -1
	}
	e := s + rec.GroupSize - 1
	if e >= len(chain) || chain[e].Commit != rec.GroupEnd {
		return -1
	}
	member := func(i int) bool {
		r := q.latestRec(chain[i].PR)
		return r != nil && r.Invalidated.IsZero() && r.Step == chain[i].Commit && r.Seq > chain[i].enteredSeq &&
			r.GroupEnd == rec.GroupEnd && r.GroupSize == rec.GroupSize
	}
	if s > 0 && member(s-1) {
		return -1 // chain[s] is inside the group, not its first step
	}
	for i := s; i <= e; i++ {
		if !member(i) {
			return -1
		}
	}
	return e
}

// asked reports whether CI was asked to run the step rev of entry c: its
// latest queue.candidate names rev and is no group's inner step. Only then
// can checkTimeout's silence count against it.
func asked(q *State, c candidateEntry, rev string) bool {
	rec, ok := q.LatestCandidate(c.pr)
	return ok && rec.Step == rev && (rec.GroupEnd == "" || rec.GroupEnd == rec.Step)
}
