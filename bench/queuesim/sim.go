// Package main is a discrete-event simulation of merge-queue disciplines
// (issue "The merge queue", item 6): the git+ exact-candidate queue of
// docs/queue.md at fixed and adaptive depth, a serial queue, and docs/queue.md's
// batch-and-halve queue.
//
// Model assumptions, shared by every discipline:
//   - A PR is broken or not, decided once per seed. A candidate (or batch)
//     fails iff it contains a broken PR. Green PRs never fail: no flakes, no
//     semantic conflicts between two green PRs, no textual conflicts.
//   - One CI run takes exactly T (= Tick time units); CI capacity is
//     unlimited, so every published candidate runs at once, in parallel.
//     A run that has started is never cancelled and always counts.
//   - A pass takes no time. A pass runs whenever something happens (an
//     arrival or a CI run finishing), as the wake rules of docs/operating.md do.
package main

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
)

// Tick is the number of clock units in one CI run (T). Integer time keeps the
// simulation exact; results are reported in units of T.
const Tick int64 = 1000

// Params describes one scenario.
type Params struct {
	PRs    int     // pull requests
	Broken float64 // fraction broken; exactly round(PRs*Broken) are, at random positions
	Gap    float64 // mean time between arrivals in units of T (exponential); 0 = all at time 0
	Seed   uint64
}

// Scenario is one seeded draw: which PRs are broken and when each arrives.
type Scenario struct {
	Broken []bool
	Arrive []int64 // nondecreasing; Arrive[0] == 0
}

// NewScenario draws a scenario deterministically from p.Seed.
func NewScenario(p Params) Scenario {
	r := rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15))
	s := Scenario{Broken: make([]bool, p.PRs), Arrive: make([]int64, p.PRs)}
	nb := int(float64(p.PRs)*p.Broken + 0.5)
	for _, i := range r.Perm(p.PRs)[:nb] {
		s.Broken[i] = true
	}
	var t float64
	for i := range s.Arrive {
		if i > 0 && p.Gap > 0 {
			t += r.ExpFloat64() * p.Gap
		}
		s.Arrive[i] = int64(t * float64(Tick))
	}
	return s
}

// Result is what one discipline did on one scenario.
type Result struct {
	Landed, Evicted int
	LandedBroken    int   // broken PRs that landed: must be 0
	Runs            int   // CI runs started
	Passes          int   // distinct wake times at which a pass changed something
	Drain           int64 // time of the last landing or eviction, in ticks
}

// Discipline is one queue policy.
type Discipline interface {
	Name() string
	Run(s Scenario) Result
}

// int64 min-heap of CI finish times.
type timeHeap []int64

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *timeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// engine is the event loop shared by the disciplines: it admits arrivals,
// calls pass at every event time, and advances to the next arrival or CI
// finish. pass reports whether it landed or evicted anything (then it is
// called again at the same time, since rebuilt work may reuse finished
// results) and whether it changed anything at all.
type engine struct {
	s       Scenario
	next    int // next PR to arrive
	settled int
	fin     timeHeap
	res     Result
}

func (e *engine) startRun(t int64) {
	e.res.Runs++
	heap.Push(&e.fin, t+Tick)
}

func (e *engine) land(pr int, t int64) {
	e.settled++
	e.res.Landed++
	if e.s.Broken[pr] {
		e.res.LandedBroken++
	}
	e.res.Drain = t
}

func (e *engine) evict(t int64) {
	e.settled++
	e.res.Evicted++
	e.res.Drain = t
}

// loop runs the simulation. admit is called for each arriving PR; pass(t)
// returns (settledSomething, changedSomething).
func (e *engine) loop(admit func(pr int), pass func(t int64) (bool, bool)) Result {
	n := len(e.s.Broken)
	t := int64(0)
	for e.settled < n {
		for e.next < n && e.s.Arrive[e.next] <= t {
			admit(e.next)
			e.next++
		}
		for len(e.fin) > 0 && e.fin[0] <= t {
			heap.Pop(&e.fin)
		}
		changedAny := false
		for {
			settledNow, changed := pass(t)
			changedAny = changedAny || changed
			if !settledNow {
				break
			}
		}
		if changedAny {
			e.res.Passes++
		}
		if e.settled == n {
			break
		}
		nt := int64(-1)
		if e.next < n {
			nt = e.s.Arrive[e.next]
		}
		if len(e.fin) > 0 && (nt < 0 || e.fin[0] < nt) {
			nt = e.fin[0]
		}
		if nt < 0 {
			panic(fmt.Sprintf("queue stuck at t=%d with %d/%d settled", t, e.settled, n))
		}
		t = nt
	}
	return e.res
}

// ---------------------------------------------------------------------------
// git+ exact-candidate queue (docs/queue.md).

// Exact is the git+ queue. Each pass builds the chain C_1..C_w over the head
// of the queue from the target tip, C_i = candidate(C_{i-1}, H_i); lands the
// longest green prefix in one swap; evicts the newest entry of the first red
// candidate once everything ahead of it is green (docs/queue.md); and
// publishes (starts one CI run for) every chain step whose id has no run yet.
// A candidate's id is a pure function of its parents, so a result recorded
// against an id holds in every later pass that builds the same id: after a
// landing the candidates behind the landed prefix keep their ids and their
// results; after an eviction every candidate behind the culprit is new.
//
// Fixed depth: Start = Cap = d. Adaptive (Zuul-style window): w starts at
// Start, grows by 1 after each pass that landed something and saw no red,
// halves (rounding down, at least 1) on an eviction, never exceeds Cap
// (queueDepth).
type Exact struct {
	Start, Cap int
	Adaptive   bool
}

func (x Exact) Name() string {
	if x.Adaptive {
		return fmt.Sprintf("git+ adaptive (start %d, cap %d)", x.Start, x.Cap)
	}
	return fmt.Sprintf("git+ exact d=%d", x.Cap)
}

type candRun struct {
	finish int64
	red    bool
}

// mix derives a candidate id from its first parent's id and the PR merged.
func mix(parent uint64, pr int) uint64 {
	h := parent ^ (uint64(pr)+1)*0x9e3779b97f4a7c15
	h ^= h >> 31
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 29
	return h
}

func (x Exact) Run(s Scenario) Result {
	e := &engine{s: s}
	var queue []int
	tip := uint64(0x243f6a8885a308d3) // C_0
	runs := map[uint64]candRun{}
	w := x.Start
	pass := func(t int64) (bool, bool) {
		// Verdicts of the chain as it stands.
		n := min(w, len(queue))
		ids := make([]uint64, n)
		reds := make([]bool, n)
		id, red := tip, false
		for i := 0; i < n; i++ {
			id, red = mix(id, queue[i]), red || s.Broken[queue[i]]
			ids[i], reds[i] = id, red
		}
		j := 0 // longest green prefix
		for j < n {
			r, ok := runs[ids[j]]
			if !ok || r.finish > t || r.red {
				break
			}
			j++
		}
		for _, pr := range queue[:j] {
			e.land(pr, t)
		}
		if j > 0 {
			tip = ids[j-1]
			queue = queue[j:]
		}
		evicted := false
		if j < n {
			if r, ok := runs[ids[j]]; ok && r.finish <= t && r.red {
				if !s.Broken[queue[0]] {
					panic("culprit is not broken") // no flakes: cannot happen
				}
				e.evict(t)
				queue = queue[1:]
				evicted = true
			}
		}
		if x.Adaptive {
			switch {
			case evicted:
				w = max(1, w/2)
			case j > 0:
				w = min(x.Cap, w+1)
			}
		}
		// Build and publish.
		published := 0
		id, red = tip, false
		for i := 0; i < min(w, len(queue)); i++ {
			id, red = mix(id, queue[i]), red || s.Broken[queue[i]]
			if _, ok := runs[id]; !ok {
				runs[id] = candRun{finish: t + Tick, red: red}
				e.startRun(t)
				published++
			}
		}
		settled := j > 0 || evicted
		return settled, settled || published > 0
	}
	return e.loop(func(pr int) { queue = append(queue, pr) }, pass)
}

// ---------------------------------------------------------------------------
// docs/queue.md's batch-and-halve queue.

// Batch is docs/queue.md's queue: up to B waiting PRs (queue order) are stacked on
// the branch and checked by one CI run. With Depth 2 the next batch is built
// on the tip of the one being checked and checked as if it will pass (never
// more than one ahead); it lands right after the one under it, and is dropped
// (its PRs wait again) if that one fails. A failed batch of one ejects its PR.
// A failed larger batch makes its PRs suspects, and no batch runs ahead while
// there are suspects: the first half of the suspects (rounded up) runs alone
// as the next batch; a half that passes lands and the rest stay suspects; a
// half that fails becomes the suspects and the rest wait again, in queue
// order; one suspect left after a landing is ejected without running. Only one
// culprit is ejected per bisection; other broken PRs are found by later
// batches. B=1, Depth=1 is the serial queue.
type Batch struct {
	B, Depth int
	Label    string
}

func (b Batch) Name() string {
	if b.Label != "" {
		return b.Label
	}
	return fmt.Sprintf("batch-and-halve B=%d depth %d", b.B, b.Depth)
}

type flight struct {
	prs    []int
	finish int64
	red    bool
	halves bool // a halving batch: its PRs are the head of the suspects
}

func (b Batch) Run(s Scenario) Result {
	e := &engine{s: s}
	var waiting, suspects []int // both in queue order
	var flights []flight
	waitAgain := func(prs []int) { // merge back in queue (arrival) order
		out := make([]int, 0, len(prs)+len(waiting))
		i, k := 0, 0
		for i < len(prs) || k < len(waiting) {
			if k == len(waiting) || i < len(prs) && prs[i] < waiting[k] {
				out = append(out, prs[i])
				i++
			} else {
				out = append(out, waiting[k])
				k++
			}
		}
		waiting = out
	}
	redOf := func(prs []int) bool {
		for _, pr := range prs {
			if s.Broken[pr] {
				return true
			}
		}
		return false
	}
	start := func(prs []int, t int64, halves bool) {
		flights = append(flights, flight{prs: prs, finish: t + Tick, red: redOf(prs), halves: halves})
		e.startRun(t)
	}
	pass := func(t int64) (bool, bool) {
		settled, changed := false, false
		for len(flights) > 0 && flights[0].finish <= t {
			f := flights[0]
			flights = flights[1:]
			settled = true
			if !f.red {
				for _, pr := range f.prs {
					e.land(pr, t)
				}
				if f.halves {
					suspects = suspects[len(f.prs):]
					if len(suspects) == 1 { // the tree that failed: eject unrun
						e.evict(t)
						suspects = nil
					}
				}
				continue
			}
			// Red: drop every batch built on top of it.
			for _, g := range flights {
				waitAgain(g.prs)
			}
			flights = nil
			if f.halves {
				waitAgain(suspects[len(f.prs):])
			}
			if len(f.prs) == 1 {
				e.evict(t)
				suspects = nil
			} else {
				suspects = f.prs
			}
		}
		switch {
		case len(suspects) > 0:
			if len(flights) == 0 {
				start(suspects[:(len(suspects)+1)/2], t, true)
				changed = true
			}
		default:
			for len(flights) < b.Depth && len(waiting) > 0 {
				k := min(b.B, len(waiting))
				start(waiting[:k:k], t, false)
				waiting = waiting[k:]
				changed = true
			}
		}
		return settled, settled || changed
	}
	return e.loop(func(pr int) { waiting = append(waiting, pr) }, pass)
}
