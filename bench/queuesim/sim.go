// Command queuesim is a discrete-event simulation of the merge queue that
// runs the real planner (hubrefs/queue.PlanPass) over real records: pull
// request and queue events folded by the real folds, candidate commits built
// by queue.BuildCandidate with mergetree in an in-memory object store. What
// it adds around the planner is what a deployment adds: arrivals over time,
// CI with a latency distribution, flaky checks retried as `git+ check run
// --retries` does, the checkTimeout, and the people who re-enter a pull
// request evicted by a flake or take a pull request out when the queue
// believes the target red. docs/queue.md ("The simulator") describes the
// model and its figures.
//
// The clock is simulated: nothing sleeps, and a run is a pure function of its
// parameters and seed.
package main

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// T is one median CI run, in simulated seconds; figures are reported in T.
const T = 600

// t0 is the simulated epoch (unix seconds); time 0 of a run.
const t0 = 1_750_000_000

// Params describe a scenario (drawn once per seed, the same for every
// discipline compared on it).
type Params struct {
	PRs       int     // pull requests
	Broken    float64 // fraction broken: exactly round(PRs*Broken), at random
	Conflicts int     // conflicting pairs (two pull requests editing one line)
	Gap       float64 // mean time between arrivals, in T (exponential); 0: all at once
	Flaky     float64 // probability that one CI attempt of a good candidate fails
	Retries   int     // `check run --retries`: attempts after a failed one
	// RetryBelowRed turns off check run's rule that a failure above a red
	// step is not retried (docs/queue.md, "Retries below a red step"): the
	// figures before that rule.
	RetryBelowRed bool
	// RetrySearch retries a search step (queue.SearchStep: a batch group's
	// last step of a group of more than one, a trial, a strict step of a
	// branch with partitions) like any candidate; by default check run
	// does not, since the planner's search tests it again (docs/queue.md,
	// "Searching a red group aside", "A red strict step tried aside").
	// RetryTrialOne still retries a trial of one pull request (whose red
	// evicts it).
	RetrySearch, RetryTrialOne bool
	// NoBelowWait is `check run --below-wait 0`: retry at once unless a
	// step below is already red. By default only the last step of a batch
	// group of more than one waits for a step below (the checkTimeout);
	// BelowWaitAlways makes every candidate wait (an explicit --below-wait).
	NoBelowWait, BelowWaitAlways bool
	Sigma                        float64 // CI latency is lognormal with median T and this sigma
	Hang                         float64 // probability that an attempt never reports (checkTimeout ends it)
	Timeout                      float64 // the rules' checkTimeout, in T (0: none)
	Reenter                      float64 // delay before an author re-enters a pull request evicted while good, in T
	Intervene                    float64 // delay before a person takes out the red first entry of a queue stopped on a red target, in T
	// Partitions lays the repository out in this many partitions and
	// Global is the share of global pull requests (lanes.go); 0: no
	// layout, every pull request's file at the root.
	Partitions int
	Global     float64
	Seed       uint64
}

// DefaultParams are the figures' parameters.
func DefaultParams() Params {
	return Params{PRs: 100, Broken: 0.10, Conflicts: 2, Gap: 0.1, Retries: 1, Sigma: 0.25, Timeout: 3, Reenter: 0.5, Intervene: 2}
}

// scenario is one seeded draw.
type scenario struct {
	broken []bool
	line   []int   // conflicting line of shared.txt, -1 for none
	arrive []int64 // seconds after t0, nondecreasing
	part   []int   // partition of each pull request, globalPart for global (lanes.go)
}

func newScenario(p Params) scenario {
	r := rand.New(rand.NewPCG(p.Seed, 0x5eed))
	s := scenario{broken: make([]bool, p.PRs), line: make([]int, p.PRs), arrive: make([]int64, p.PRs)}
	perm := r.Perm(p.PRs)
	nb := int(float64(p.PRs)*p.Broken + 0.5)
	for _, i := range perm[:nb] {
		s.broken[i] = true
	}
	for i := range s.line {
		s.line[i] = -1
	}
	// Conflicting pairs among the good pull requests (a broken one would
	// be evicted anyway).
	var good []int
	for _, i := range perm[nb:] {
		good = append(good, i)
	}
	for k := 0; k < p.Conflicts && 2*k+1 < len(good); k++ {
		s.line[good[2*k]], s.line[good[2*k+1]] = k*sharedGap, k*sharedGap
	}
	var t float64
	for i := range s.arrive {
		if i > 0 && p.Gap > 0 {
			t += r.ExpFloat64() * p.Gap * T
		}
		s.arrive[i] = int64(t)
	}
	drawPartitions(p, &s) // lanes.go: a stream of its own
	return s
}

// Discipline is how the queue is run: the rules' queueDepth, the depth the
// runner passes to the planner (fixed or adaptive), and checkEvery.
type Discipline struct {
	Depth      int  // queueDepth; the cap when Adaptive
	Adaptive   bool // grow the depth by one per landed pull request, halve it per eviction
	Start      int  // adaptive: the first depth (default 1)
	CheckEvery int  // batch checks (0 or 1: strict); needs batchSupport
	// Squash: the rules say mergeMethod squash, and the runner builds
	// squash steps (queue.BuildSquash) instead of merge steps
	// (docs/queue.md, "Squash steps in the simulator").
	Squash bool
	// Lanes: the rules name the layout's partitions (Params.Partitions),
	// a lane each (lanes.go).
	Lanes bool
	// Oracle: no queue, the scenario's floor (oracle.go).
	Oracle bool
}

func (d Discipline) Name() string {
	if d.Oracle {
		return "oracle: each PR settled one CI run after it arrives"
	}
	s := fmt.Sprintf("strict, depth %d", d.Depth)
	if d.Depth == 1 && !d.Adaptive {
		s = "serial (strict, depth 1)"
	}
	if d.Adaptive {
		s = fmt.Sprintf("adaptive, start %d, cap %d", max(d.Start, 1), d.Depth)
	}
	if d.CheckEvery > 1 {
		s = fmt.Sprintf("batch, depth %d, checkEvery %d", d.Depth, d.CheckEvery)
		if d.Adaptive {
			s = fmt.Sprintf("batch, adaptive, start %d, cap %d, checkEvery %d", max(d.Start, 1), d.Depth, d.CheckEvery)
		}
	}
	if d.Squash {
		s += ", squash"
	}
	if d.Lanes {
		s = "lanes, " + s
	}
	return s
}

// Result is one discipline on one scenario.
type Result struct {
	Landed        int
	LandedBroken  int // must be 0
	EvictedBroken int // broken pull requests evicted (each once, for good)
	Conflicts     int // conflict evictions (for good)
	Innocent      int // evictions (failed) of a good pull request: flakes, timeouts
	Removed       int // people taking the red first entry out of a stopped queue
	Unsettled     int // neither landed nor evicted for good at the end: must be 0
	Runs          int // CI attempts
	RunsBroken    int // of them, on candidates holding a broken pull request (they fail)
	RunsTrial     int // of them, on trials (batch checks: a red group searched aside)
	Passes        int // runner wakes
	Plans         int // plans made (PlanPass calls)
	Drain         int64
	ToLand        []int64 // per landed pull request: first entry → landing, seconds
}

// event kinds of the simulation.
const (
	evArrive = iota
	evCIDone
	evAttempt // a CI attempt ended without success; check run decides on a retry
	evWake    // checkTimeout ran out for a candidate: the runner runs
	evReenter // the author enters again
	evInspect // a person looks at a stopped queue
)

type event struct {
	at   int64
	seq  int // FIFO among equal times
	kind int
	pr   int
	step string
	ok   bool
	runs int
	bad  bool  // evAttempt: the candidate holds a broken pull request
	wait int64 // evAttempt: when check run stops waiting for a step below
	poll int64 // evAttempt: how often it looks meanwhile
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// sim is one run.
type sim struct {
	p     Params
	d     Discipline
	sc    scenario
	rng   *rand.Rand
	repo  *repo
	trust *trust.State
	br    trust.Branch
	seq   int64
	q     *queueLog
	prs   []*pullRequest
	byID  map[string]*pr.State
	tip   plumbing.Hash
	anc   map[plumbing.Hash]bool // commits the target holds
	steps map[string]int         // candidate step → the pull request it merges
	part  map[string]string      // candidate step → the lane it was published in
	first map[string]string      // candidate step → its first parent
	merge map[[3]string]mergeRes // memo across passes (the merge is a pure function)

	events   eventHeap
	evn      int
	now      int64
	inflight map[string]int64 // pull request + step → until when a CI run holds its lease
	depth    int              // adaptive: the depth passed to the planner
	entered  map[int]int64    // first entry time
	done     map[int]bool     // landed or evicted for good
	inspect  bool             // an inspection is scheduled
	woken    []published      // candidates published this pass: CI wakes on each once the pass is over
	res      Result
}

// published is a queue.candidate appended by the pass under way.
type published struct {
	pr   int
	step string
}

type mergeRes struct {
	step      plumbing.Hash
	conflicts []string
}

// Run simulates discipline d on the scenario of p.
func Run(p Params, d Discipline) (Result, error) {
	return run(p, d, newScenario(p))
}

func run(p Params, d Discipline, sc scenario) (Result, error) {
	if d.Oracle {
		return oracle(sc), nil
	}
	if d.Depth < 1 {
		return Result{}, fmt.Errorf("depth %d: use 1 or more", d.Depth)
	}
	if d.CheckEvery > d.Depth {
		// The rules refuse it too (checkEvery at most queueDepth).
		return Result{}, fmt.Errorf("checkEvery %d above queue depth %d: a group never fills", d.CheckEvery, d.Depth)
	}
	s := &sim{p: p, d: d, sc: sc, rng: rand.New(rand.NewPCG(p.Seed, 0xc1)),
		anc: map[plumbing.Hash]bool{}, steps: map[string]int{}, part: map[string]string{}, first: map[string]string{}, merge: map[[3]string]mergeRes{},
		byID: map[string]*pr.State{}, inflight: map[string]int64{}, entered: map[int]int64{}, done: map[int]bool{}}
	s.repo = newRepo(s.sc.line, s.sc.part, p.Partitions, t0)
	s.br = trust.DefaultBranch()
	s.br.QueueCandidates = true
	s.br.QueueDepth = d.Depth
	s.br.CheckTimeout = timeDur(p.Timeout)
	setCheckEvery(&s.br, d.CheckEvery)
	if d.Squash {
		s.br.MergeMethod = trust.MergeMethodSquash
	}
	if d.Lanes {
		if p.Partitions < 1 {
			return Result{}, fmt.Errorf("%s: lanes need a layout of partitions (-partitions K)", d.Name())
		}
		setPartitions(&s.br, p.Partitions)
	}
	s.trust = newTrust(s.br)
	s.q = newQueueLog(&s.seq, t0)
	s.tip = s.repo.base
	s.anc[s.tip] = true
	s.depth = d.Depth
	if d.Adaptive {
		s.depth = max(d.Start, 1)
	}
	s.prs = make([]*pullRequest, len(sc.arrive))
	for i, at := range s.sc.arrive {
		s.schedule(event{at: at, kind: evArrive, pr: i})
	}
	for s.events.Len() > 0 {
		e := heap.Pop(&s.events).(event)
		s.now = e.at
		wake := s.handle(e)
		// Everything that happens at one instant is one wake.
		for s.events.Len() > 0 && s.events[0].at == s.now {
			wake = s.handle(heap.Pop(&s.events).(event)) || wake
		}
		if wake {
			if err := s.pass(); err != nil {
				return s.res, err
			}
		}
	}
	for i := range s.prs {
		if !s.done[i] {
			s.res.Unsettled++
		}
	}
	s.res.Drain -= s.sc.arrive[0]
	return s.res, nil
}

// timeDur is a duration of inT units of T.
func timeDur(inT float64) time.Duration {
	return time.Duration(inT * T * float64(time.Second))
}

func (s *sim) schedule(e event) {
	s.evn++
	e.seq = s.evn
	heap.Push(&s.events, e)
}

func (s *sim) at() int64 { return t0 + s.now }

// handle applies one event; wake says whether the runner runs after it.
func (s *sim) handle(e event) bool {
	switch e.kind {
	case evArrive:
		s.prs[e.pr] = openPR(s.trust, &s.seq, e.pr, s.repo.heads[e.pr], s.at())
		s.byID[prID(e.pr)] = s.prs[e.pr].state
		s.entered[e.pr] = s.now
		s.enter(e.pr)
		return true
	case evCIDone:
		return s.record(e)
	case evAttempt:
		return s.retry(e)
	case evWake:
		return true
	case evReenter:
		if !s.done[e.pr] && s.prs[e.pr].state.State == pr.Open {
			if _, queued := s.q.fold(s.trust).Active(prID(e.pr)); !queued {
				s.enter(e.pr)
				return true
			}
		}
	case evInspect:
		s.inspect = false
		return s.intervene()
	}
	return false
}

func attempts(n int) int {
	if n <= 1 {
		return 0
	}
	return n
}

// enter is a person's `git+ queue enter`.
func (s *sim) enter(i int) {
	s.q.add(people.runner, hubrefs.TypeQueueEntered, hubrefs.QueueEntered{Base: base(hubrefs.TypeQueueEntered), PR: prID(i),
		Head: s.repo.heads[i].String(), BaseRef: target}, s.at())
}

// pass is one `git+ queue run`: plan, carry the plan out, plan again until a
// plan appends nothing (receive/queuerun's rounds, without git).
func (s *sim) pass() error {
	s.res.Passes++
	for round := 0; round < 40; round++ {
		qs := s.q.fold(s.trust)
		in := queue.PlanInput{
			Queue: qs, PRs: s.byID, Trust: s.trust, Branch: s.br, Tip: s.tip,
			Contains: s.contains, Merge: s.build, Depth: s.depth, Now: s.at(),
		}
		s.laneInput(&in) // lanes.go
		plan, err := queue.PlanPass(in)
		s.res.Plans++
		if err != nil {
			return err
		}
		if plan.TargetRed != "" && !s.inspect && s.p.Intervene > 0 {
			s.inspect = true
			s.schedule(event{at: s.now + int64(s.p.Intervene*T), kind: evInspect})
		}
		if plan.Appends() == 0 {
			s.wakeCI()
			return nil
		}
		s.carry(plan)
	}
	return fmt.Errorf("queue pass at %.2fT: still finding work after 40 rounds", float64(s.now)/T)
}

// build is PlanInput.Merge: queue.BuildCandidate in the memory store,
// memoised across passes.
func (s *sim) build(parent, head plumbing.Hash, id string) (plumbing.Hash, []string, error) {
	k := [3]string{parent.String(), head.String(), id}
	if r, ok := s.merge[k]; ok {
		return r.step, r.conflicts, nil
	}
	build := queue.BuildCandidate
	if s.d.Squash {
		build = queue.BuildSquash
	}
	step, conflicts, err := build(s.repo.store, s.repo.store, parent, head, id, target, s.byID[id].Title)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	var paths []string
	for _, c := range conflicts {
		paths = append(paths, c.Path)
	}
	s.merge[k] = mergeRes{step, paths}
	if len(paths) == 0 {
		// A lane may be built on a global entry's candidate before it is
		// published (brokenBelow walks it).
		s.steps[step.String()], s.first[step.String()] = prIndex(id), parent.String()
	}
	return step, paths, nil
}

func (s *sim) contains(tip, rev plumbing.Hash) bool {
	if tip != s.tip {
		panic("contains asked about another tip than the target's")
	}
	return s.anc[rev]
}

// carry applies a plan as one atomic phase would.
func (s *sim) carry(plan queue.Plan) {
	now := s.at()
	left := func(id, head, reason, detail, step, run string) {
		s.q.add(people.runner, hubrefs.TypeQueueLeft, hubrefs.QueueLeft{Base: base(hubrefs.TypeQueueLeft), PR: id, Head: head,
			Reason: reason, Detail: detail, Step: step, Run: run}, now)
	}
	merged := func(id string, m queue.Merged) {
		s.prs[prIndex(id)].add(s.trust, people.runner, hubrefs.TypePRMerged, hubrefs.PRMerged{Base: base(hubrefs.TypePRMerged),
			Revision: m.Revision, Branch: m.Branch, Commit: m.Commit}, now)
	}
	for _, x := range plan.Settle {
		if x.Merged != nil {
			merged(x.PR, *x.Merged)
		}
		left(x.PR, x.Head, x.Reason, x.Detail, "", "")
	}
	for _, x := range plan.Enter {
		s.q.add(people.runner, hubrefs.TypeQueueEntered, hubrefs.QueueEntered{Base: base(hubrefs.TypeQueueEntered), PR: x.PR, Head: x.Head, BaseRef: x.Base}, now)
	}
	if l := plan.Land; l != nil {
		s.moveTip(plumbing.NewHash(l.New))
		for _, x := range l.Landed {
			merged(x.PR, queue.Merged{Revision: x.Head, Branch: l.Ref, Commit: x.Commit})
			left(x.PR, x.Head, queue.ReasonLanded, "landed as "+x.Commit, "", "")
			i := prIndex(x.PR)
			s.done[i] = true
			s.res.Landed++
			if s.sc.broken[i] {
				s.res.LandedBroken++
			}
			s.res.ToLand = append(s.res.ToLand, s.now-s.entered[i])
			s.res.Drain = s.now
			if s.d.Adaptive {
				s.depth = min(s.depth+1, s.d.Depth)
			}
		}
	}
	for _, x := range plan.Evict {
		left(x.PR, x.Head, x.Reason, x.Detail, x.Step, x.Run)
		i := prIndex(x.PR)
		switch {
		case x.Reason == queue.ReasonConflict:
			s.res.Conflicts++
			s.settle(i)
		case s.sc.broken[i]:
			s.res.EvictedBroken++
			s.settle(i)
		default:
			s.res.Innocent++
			s.schedule(event{at: s.now + int64(s.p.Reenter*T), kind: evReenter, pr: i})
		}
		if s.d.Adaptive && x.Reason == queue.ReasonFailed {
			s.depth = max(s.depth/2, 1)
		}
	}
	for _, x := range plan.Publish {
		s.q.add(people.runner, hubrefs.TypeQueueCandidate, candidateEvent(x), now)
		s.steps[x.Step] = prIndex(x.PR)
		s.part[x.Step] = x.Partition
		s.first[x.Step] = x.Parents[0]
		s.woken = append(s.woken, published{prIndex(x.PR), x.Step})
		if s.p.Timeout > 0 {
			s.schedule(event{at: s.now + int64(s.p.Timeout*T) + 1, kind: evWake})
		}
	}
}

func (s *sim) settle(i int) {
	s.done[i] = true
	s.res.Drain = s.now
}

// moveTip lands: the target moves to tip, and holds everything below it.
func (s *sim) moveTip(tip plumbing.Hash) {
	stack := []plumbing.Hash{tip}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s.anc[h] {
			continue
		}
		s.anc[h] = true
		stack = append(stack, s.repo.parents(h)...)
	}
	s.tip = tip
}

// wakeCI is the CI wake rule on queue.candidate, for every candidate the
// pass published, in order: each job reads the queue as the pass left it
// (a pass takes no simulated time, and a job starts after the push that
// woke it) and runs `check run` on its step, which runs nothing on a step
// inside a batch group (ciSkips) or one whose lease is held (startCI).
func (s *sim) wakeCI() {
	if len(s.woken) == 0 {
		return
	}
	qs := s.q.fold(s.trust)
	for _, w := range s.woken {
		if !ciSkips(qs, prID(w.pr), w.step) {
			s.startCI(w.pr, w.step)
		}
	}
	s.woken = s.woken[:0]
}

// brokenBelow reports whether the candidate step holds a broken pull
// request: its own, or one of the steps below it down to the target —
// one its lane's checks see (breaks, lanes.go).
func (s *sim) brokenBelow(step string) bool {
	part := s.part[step]
	for {
		i, ok := s.steps[step]
		if !ok {
			if !s.anc[plumbing.NewHash(step)] {
				panic("CI asked to run " + step + ", built on a step never published")
			}
			return false // the target: nothing broken ever lands
		}
		if s.breaks(i, part) {
			return true
		}
		step = s.first[step]
	}
}

// startCI is the CI wake rule on queue.candidate running `git+ check run
// --retries R`: nothing when a run of that candidate is going (the lease),
// else attempts until one passes or R+1 failed. A run that hangs holds the
// lease until it expires. A broken candidate fails every attempt; a good
// one fails an attempt with probability Flaky. Between attempts check run
// reads the steps below (retry): a red one ends the run at once, one
// without a verdict is waited for.
func (s *sim) startCI(i int, step string) {
	k := prID(i) + step
	if until, ok := s.inflight[k]; ok && s.now < until {
		return
	}
	// The lease of `check run` without --timeout: 30 minutes (docs/queue.md).
	s.inflight[k] = s.now + 30*60
	s.attempt(event{pr: i, step: step, bad: s.brokenBelow(step)})
}

// attempt starts attempt e.runs+1 of a check run.
func (s *sim) attempt(e event) {
	e.runs++
	s.res.Runs++
	if e.bad {
		s.res.RunsBroken++
	}
	if rec, ok := s.q.fold(s.trust).LatestCandidate(prID(e.pr)); ok && rec.Step == e.step && rec.Trial {
		s.res.RunsTrial++
	}
	if s.p.Hang > 0 && s.rng.Float64() < s.p.Hang {
		return // never reports; the lease stays (checkTimeout evicts)
	}
	e.at, e.kind = s.now+int64(math.Exp(s.rng.NormFloat64()*s.p.Sigma)*T), evAttempt
	e.ok = !e.bad && !(s.p.Flaky > 0 && s.rng.Float64() < s.p.Flaky)
	if e.ok || e.runs > s.retries(e) {
		e.kind = evCIDone
	}
	e.wait = 0
	s.schedule(e)
}

// retries is check run's --retries for the candidate of e: none for a
// search step (queue.SearchStep: a batch group's last step of a group of
// more than one, a trial, a strict step of a branch with partitions that
// is tried aside when red; the planner's search is their retry), unless
// the parameters say otherwise.
func (s *sim) retries(e event) int {
	if s.p.RetrySearch || s.p.Retries == 0 {
		return s.p.Retries
	}
	qs := s.q.fold(s.trust)
	rec, ok := qs.LatestCandidate(prID(e.pr))
	if !ok || rec.Step != e.step {
		return s.p.Retries
	}
	if rec.Trial && rec.GroupSize == 1 && s.p.RetryTrialOne {
		return s.p.Retries
	}
	if queue.SearchStep(qs, rec, s.br) != "" {
		return 0
	}
	return s.p.Retries
}

// retry is check run after a failed attempt with retries left
// (receive/checkrun, queue.Below): a red step below → record the failure
// now; a step below without a verdict → look again in a while, within the
// wait (checkTimeout, or 10 minutes, for a batch group's last step; none
// for others by default); otherwise the next attempt. It returns true when
// it recorded.
func (s *sim) retry(e event) bool {
	if s.p.RetryBelowRed {
		s.attempt(e)
		return false
	}
	qs := s.q.fold(s.trust)
	if e.wait == 0 {
		// check run decides how long it may wait on its first look.
		rec, ok := qs.LatestCandidate(prID(e.pr))
		grouped := ok && rec.Step == e.step && rec.GroupEnd == rec.Step && rec.GroupSize > 1
		wait := int64(10 * 60)
		if s.p.Timeout > 0 {
			wait = int64(s.p.Timeout * T)
		}
		if s.p.NoBelowWait || !(grouped || s.p.BelowWaitAlways) {
			wait = 0
		}
		e.wait, e.poll = s.now+wait, max(min(5, wait/10), 1)
	}
	v, _ := queue.Below(qs, e.step, func(id, step string) (string, bool) {
		return s.byID[id].Check("ci", step)
	})
	switch {
	case v == queue.BelowRed:
		return s.record(e)
	case v == queue.BelowPending && s.now < e.wait:
		e.at = s.now + e.poll
		s.schedule(e)
		return false
	}
	s.attempt(e)
	return false
}

// record is check run's check.completed.
func (s *sim) record(e event) bool {
	delete(s.inflight, prID(e.pr)+e.step)
	conclusion := pr.Success
	if !e.ok {
		conclusion = pr.Failure
	}
	s.prs[e.pr].add(s.trust, people.ci, hubrefs.TypeCheckCompleted, hubrefs.Check{Base: base(hubrefs.TypeCheckCompleted), Name: "ci", Head: e.step,
		Conclusion: conclusion, Attempts: attempts(e.runs)}, s.at())
	return true
}

// intervene is a person looking at a queue that stopped on a red target:
// if it still has, they take the red first entry out (`git+ queue leave`).
// A broken one is gone for good; a good one (a flake) is entered again
// later by its author.
func (s *sim) intervene() bool {
	qs := s.q.fold(s.trust)
	in := queue.PlanInput{Queue: qs, PRs: s.byID, Trust: s.trust, Branch: s.br, Tip: s.tip,
		Contains: s.contains, Merge: s.build, Depth: s.depth, Now: s.at()}
	s.laneInput(&in)
	plan, err := queue.PlanPass(in)
	if err != nil || plan.TargetRed == "" || len(plan.Chain) == 0 {
		return false
	}
	st := plan.Chain[0]
	i := prIndex(st.PR)
	s.q.add(people.runner, hubrefs.TypeQueueLeft, hubrefs.QueueLeft{Base: base(hubrefs.TypeQueueLeft), PR: st.PR, Head: st.Head,
		Reason: queue.ReasonWithdrawn, Detail: "taken out by hand: the queue stopped on a red target"}, s.at())
	s.res.Removed++
	if s.sc.broken[i] {
		s.res.EvictedBroken++
		s.settle(i)
	} else {
		s.schedule(event{at: s.now + int64(s.p.Reenter*T), kind: evReenter, pr: i})
	}
	return true
}
