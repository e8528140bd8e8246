package queue

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Verdicts of a chain step.
const (
	Green   = "green"
	Red     = "red"
	Pending = "pending"
)

// PlanInput is everything one pass is decided from.
type PlanInput struct {
	// Queue is the queue that counts for the target (SelectQueue).
	Queue *State
	// PRs holds the pull requests by id: every one an active entry names
	// (in whatever state: one absent is withdrawn) and the Approved ones.
	PRs map[string]*pr.State
	// Trust is the trust state current now; Branch the target's protection.
	Trust  *trust.State
	Branch trust.Branch
	// Tip is C_0, what the target holds now.
	Tip plumbing.Hash
	// Contains reports whether rev is an ancestor of tip or equal to it.
	Contains func(tip, rev plumbing.Hash) bool
	// Merge builds (and stores) the candidate of head onto parent for pull
	// request prID, as BuildCandidate does; conflicts are the paths in
	// conflict (then step is ignored). An error stops the pass.
	Merge func(parent, head plumbing.Hash, prID string) (step plumbing.Hash, conflicts []string, err error)
	// Changed lists the files that differ between two commits' trees
	// (policy.ChangedFiles): a step's path owners are judged by its diff
	// against the step below (owners.go), and an entry's partition by the
	// files its candidate on the tip changes (lanes.go). Needed only when
	// Branch has owners or partitions.
	Changed func(from, to plumbing.Hash) ([]string, error)
	// BuildTested builds the partition step of head onto parent for pull
	// request prID, tested as the candidate tested (queue.BuildTested);
	// Tested judges one by the boundary's rule (policy.TestedVerdict): the
	// partition it lands in, or refused, why it cannot land. Needed only
	// when Branch has partitions (lanes.go).
	BuildTested func(parent, head, tested plumbing.Hash, prID string) (step plumbing.Hash, conflicts []string, err error)
	Tested      func(prev, step, tested, head plumbing.Hash, prID string) (partition, refused string, err error)
	// Depth bounds the chain; zero or negative means Branch.QueueDepth (or 8).
	Depth int
	// AutoEnter enters Approved pull requests that are not queued;
	// Approved lists candidates for it, oldest first.
	AutoEnter bool
	Approved  []string
	// Ceiling is the events-per-ref ceiling (zero: the default).
	Ceiling int
	// Now is the time of the pass (unix seconds), passed in by the runner so
	// the planner stays pure; zero turns Branch.CheckTimeout off.
	Now int64
	// Clock, when set, is given the range of Now over which this plan is
	// the same (ClockRange): the runner's memo of an idle pass is valid
	// only inside it (docs/scale.md, "The idle pass memo").
	Clock *ClockRange
}

// ClockRange is a range of PlanInput.Now, [From, Until) in unix seconds,
// over which every comparison a PlanPass made with Now gives the answer it
// gave at the Now it was called with. Now is read in one place only (the
// checkTimeout silence of a pending step, silent), so a plan is a function
// of its other inputs and of those answers: PlanPass with the same other
// inputs and any Now in the range returns the same plan.
type ClockRange struct{ From, Until int64 }

// clockSpan bounds the range a plan reports (about 34 years either side of
// Now), so that every Now in it keeps silent's arithmetic free of overflow.
const clockSpan = 1 << 30

// start sets the widest range for now.
func (c *ClockRange) start(now int64) {
	c.From, c.Until = now, now+1
	if now > math.MinInt64+clockSpan {
		c.From = now - clockSpan
	}
	if now < math.MaxInt64-clockSpan {
		c.Until = now + clockSpan
	}
}

// pin narrows the range to now alone: the answer was not worked out for
// any other Now.
func (c *ClockRange) pin(now int64) {
	c.From, c.Until = max(c.From, now), min(c.Until, now+1)
}

// Merged is a pr.merged to append to a pull request.
type Merged struct {
	Revision string `json:"revision"`
	Branch   string `json:"branch"`
	Commit   string `json:"commit"`
}

// Settle is an entry that leaves before the chain is built: append pr.merged
// (when Merged is set) to the pull request, then queue.left.
type Settle struct {
	PR     string  `json:"pr"`
	Head   string  `json:"head"`
	Reason string  `json:"reason"` // landed, stale, withdrawn
	Detail string  `json:"detail,omitempty"`
	Merged *Merged `json:"merged,omitempty"`
}

// Enter is a queue.entered to append (auto-enter).
type Enter struct {
	PR   string `json:"pr"`
	Head string `json:"head"`
	Base string `json:"base"`
}

// Step is one candidate of the final chain, in order.
type Step struct {
	PR      string   `json:"pr"`
	Head    string   `json:"head"`
	Parent  string   `json:"parent"` // C_{i-1}
	Commit  string   `json:"commit"` // C_i
	Verdict string   `json:"verdict"`
	Failed  []string `json:"failed,omitempty"`  // required checks that failed at C_i
	Missing []string `json:"missing,omitempty"` // required checks not yet success (pending)
	// GroupEnd and GroupSize: the batch group of the step under checkEvery
	// > 1 (docs/queue.md, "Batch checks"); empty for a step checked alone.
	GroupEnd  string `json:"groupEnd,omitempty"`
	GroupSize int    `json:"groupSize,omitempty"`
	// Partition: the lane the step is in, on a branch with partitions
	// (docs/queue.md, "Partitions and lanes"); empty for a global pull
	// request's step, or without partitions. Behind: the step lands only
	// after entries ahead of it in the queue that are in other chains
	// (another lane's, a global entry's) and have not landed.
	Partition string `json:"partition,omitempty"`
	Behind    bool   `json:"behind,omitempty"`

	run        string // the check.completed event that made it red
	timeout    string // why silence made it red (checkTimeout), if it did
	held       bool   // batch checks: behind a red group under search, not published
	enteredSeq int    // fold position of the entry's queue.entered
	wide       bool   // checked whole though in a lane: its group holds a global step (lanes.go)
	note       string // why a red strict step waits (strictaside.go)
	evidence   string // why a red strict step is evicted beyond its own run (strictaside.go)
}

// Landed is one pull request carried by the landing.
type Landed struct {
	PR     string `json:"pr"`
	Head   string `json:"head"`
	Commit string `json:"commit"` // C_i
}

// Land is the one compare-and-swap push of the target from Old (C_0) to New
// (C_j), expected old value Old. After it succeeds: for each of Landed,
// pr.merged{revision Head, branch Ref, commit Commit} and queue.left(landed).
type Land struct {
	Ref    string   `json:"ref"`
	Old    string   `json:"old"`
	New    string   `json:"new"`
	Landed []Landed `json:"landed"`
}

// Evict is an entry removed from the chain: queue.left with Reason
// (failed or conflict) and Detail.
type Evict struct {
	PR     string   `json:"pr"`
	Head   string   `json:"head"`
	Reason string   `json:"reason"`
	Detail string   `json:"detail"`
	Checks []string `json:"checks,omitempty"` // failed checks (failed)
	Paths  []string `json:"paths,omitempty"`  // conflicted paths (conflict)
	Step   string   `json:"step,omitempty"`   // the red candidate (failed)
	Run    string   `json:"run,omitempty"`    // the check.completed event that made it red (failed)
}

// Publish is a candidate to publish: force-push Step to Branch, then append
// queue.candidate{pr, head, step, parents, branch}.
type Publish struct {
	PR      string   `json:"pr"`
	Head    string   `json:"head"`
	Step    string   `json:"step"`
	Parents []string `json:"parents"`
	Branch  string   `json:"branch"`
	// GroupEnd and GroupSize go into queue.candidate (batch checks).
	GroupEnd  string `json:"groupEnd,omitempty"`
	GroupSize int    `json:"groupSize,omitempty"`
	// Trial: the step is in a trial aside from the chain (queue.candidate
	// trial; docs/queue.md, "Searching a red group aside"); Run the
	// check.completed that made the group red, which the trial cites.
	Trial bool   `json:"trial,omitempty"`
	Run   string `json:"run,omitempty"`
	// Partition goes into queue.candidate: the lane the step was built in.
	Partition string `json:"partition,omitempty"`
}

// Wait is an entry that stays queued without action this pass, and why.
type Wait struct {
	PR     string `json:"pr"`
	Head   string `json:"head"`
	Reason string `json:"reason"`
}

// Plan is one pass decided: the actions in the order the caller carries them
// out (Settle, Enter, Land, Evict, Publish, Delete), plus the report.
type Plan struct {
	Queue    string    `json:"queue"`
	Target   string    `json:"target"`
	Tip      string    `json:"tip"`
	Idle     string    `json:"idle,omitempty"` // why there is nothing to do at all
	Settle   []Settle  `json:"settle"`
	Enter    []Enter   `json:"enter"`
	Chain    []Step    `json:"chain"`
	Land     *Land     `json:"land,omitempty"`
	Evict    []Evict   `json:"evict"`
	Publish  []Publish `json:"publish"`
	Delete   []string  `json:"delete"` // candidate branches to delete
	Waiting  []Wait    `json:"waiting"`
	Warnings []string  `json:"warnings"`
	// TargetRed says why the queue believes the target itself is broken
	// and stopped evicting (docs/queue.md, "A red target"); empty otherwise.
	TargetRed string `json:"targetRed,omitempty"`
	// Heal says that this plan publishes the red first candidate again,
	// citing its failed run, so CI runs it once more before the queue
	// waits for a person (docs/queue.md, "A red target"); empty otherwise.
	Heal string `json:"heal,omitempty"`
}

// Appends counts the events carrying out p appends (queue and pull request
// refs together). Zero means the pass changes no record.
func (p Plan) Appends() int {
	n := len(p.Enter) + len(p.Evict) + len(p.Publish)
	for _, s := range p.Settle {
		n++
		if s.Merged != nil {
			n++
		}
	}
	if p.Land != nil {
		n += 2 * len(p.Land.Landed)
	}
	return n
}

// candidateEntry is an entry the chain may carry.
type candidateEntry struct {
	pr, head string
	p        *pr.State
	seq      int    // the fold position of its queue.entered (max for one entered by this plan)
	prio     string // its priority class
	global   bool   // a global entry in the one lane of a branch with one partition (lanes.go)
}

// mres is a candidate built: its step, or the paths in conflict.
type mres struct {
	step      plumbing.Hash
	conflicts []string
}

// PlanPass decides one pass (docs/queue.md steps 2–8) purely from in. See the
// package doc for the rules and for the caller's loop.
func PlanPass(in PlanInput) (Plan, error) {
	if in.Queue == nil || in.Trust == nil || in.Contains == nil || in.Merge == nil {
		return Plan{}, fmt.Errorf("%w: queue, trust, Contains and Merge are required", ErrInput)
	}
	if in.Clock != nil {
		in.Clock.start(in.Now)
	}
	q := in.Queue
	out := Plan{Queue: q.ID, Target: q.Target, Tip: in.Tip.String(),
		Settle: []Settle{}, Enter: []Enter{}, Chain: []Step{}, Evict: []Evict{},
		Publish: []Publish{}, Delete: []string{}, Waiting: []Wait{}, Warnings: []string{}}
	if CeilingWarning(q.Count, in.Ceiling) {
		c := in.Ceiling
		if c <= 0 {
			c = trust.DefaultEventsPerRef
		}
		out.Warnings = append(out.Warnings, fmt.Sprintf("queue %s holds %d of %d events: close it (git+ queue close) and open a fresh one", q.ID, q.Count, c))
	}
	if q.Closed {
		out.Idle = "queue " + q.ID + " is closed"
		return out, nil
	}
	if q.Paused.On() {
		// Paused (pause.go): nothing is built, landed, settled or evicted;
		// the entries keep their places for the resume.
		out.Idle = "queue " + q.ID + " is " + q.Paused.Line()
		return out, nil
	}
	depth := in.Depth
	if depth <= 0 {
		depth = in.Branch.QueueDepth
	}
	if depth <= 0 {
		depth = trust.DefaultQueueDepth
	}
	every := in.Branch.Every()
	deleted := map[string]bool{}
	del := func(prID string) {
		b := Branch(q.Target, prID)
		if !deleted[b] {
			deleted[b] = true
			out.Delete = append(out.Delete, b)
		}
	}

	// 2. Settle. (Slices are sized up front: a queue may hold 10,000
	// entries, docs/scale.md.)
	live := make([]candidateEntry, 0, len(q.Entries))
	for _, e := range q.Entries {
		s, ok := settle(in, e)
		if ok {
			out.Settle = append(out.Settle, s)
			del(e.PR)
			continue
		}
		live = append(live, candidateEntry{pr: e.PR, head: e.Head, p: in.PRs[e.PR], seq: e.Seq, prio: e.Priority})
	}
	if in.AutoEnter {
		for _, id := range in.Approved {
			if _, queued := q.Active(id); queued {
				continue
			}
			p := in.PRs[id]
			if p == nil || p.State != pr.Open || p.Base != q.Target || containsRev(in, p.Head) {
				continue
			}
			if evictedAt(q, id, p.Head) {
				continue // evicted at this head: a person re-enters it, not a wake
			}
			if ok, _ := p.Satisfies(in.Branch, p.Head); !ok {
				continue
			}
			dup := false
			for _, l := range live {
				dup = dup || l.pr == id
			}
			if dup {
				continue
			}
			out.Enter = append(out.Enter, Enter{PR: id, Head: p.Head, Base: p.Base})
			live = append(live, candidateEntry{pr: id, head: p.Head, p: p, seq: int(^uint(0) >> 1)})
		}
	}

	// 3. Ready entries; the others wait and hold nobody up.
	ready := make([]candidateEntry, 0, len(live))
	out.Waiting = make([]Wait, 0, len(live))
	for _, c := range live {
		if ok, reasons := c.p.Satisfies(in.Branch, c.head); !ok {
			out.Waiting = append(out.Waiting, Wait{PR: c.pr, Head: c.head, Reason: "not ready: " + strings.Join(reasons, "; ")})
			continue
		}
		ready = append(ready, c)
	}

	pl := &planner{in: in, q: q, out: &out, depth: depth, every: every, del: del,
		memo: map[mkey]mres{}, firstRed: map[plumbing.Hash][]string{}, strictAside: StrictAside(in.Branch)}
	// Batch checks: red groups searched aside, in trials on the target
	// (aside.go): the standing trials are judged first, and every red group
	// set aside by this pass or trial found red is tried (again) in halves.
	// Strict checks on a branch with partitions: a red step tried alone
	// aside (strictaside.go), its trial judged the same way.
	if every > 1 || pl.strictAside {
		var trials []*trialSet
		ready, trials = splitAside(q, ready)
		fr := pl.firstRed[in.Tip]
		ready, pl.toTrial = judgeTrials(in, &out, trials, ready, &fr, del)
		pl.firstRed[in.Tip] = fr
		requeue(q, ready)
	}

	// 3–6. Build each chain, judge, evict the culprit, rebuild; until no
	// eviction. A branch without partitions has one chain on the tip; one
	// with partitions a lane per partition (lanes.go).
	var chains []*chainPlan
	if len(in.Branch.Partitions) == 0 {
		c := &chainPlan{base: in.Tip}
		var err error
		if c.steps, c.beyond, err = pl.build(in.Tip, ready, "", depth, false, false); err != nil {
			return Plan{}, err
		}
		chains = append(chains, c)
	} else {
		var err error
		if chains, err = pl.lanes(ready); err != nil {
			return Plan{}, err
		}
	}

	// 5. Land the longest prefix the boundary accepts (Landable: every step
	// green; under batch checks, as the published group marks vouch): one
	// chain on the tip lands its prefix as it is; lanes each land theirs,
	// on the tip the lanes before them in this landing left (lanes.go).
	if len(in.Branch.Partitions) == 0 {
		c := chains[0]
		c.landed = batchLandable(c.steps, q, every)
		if j := c.landed; j > 0 {
			l := &Land{Ref: q.Target, Old: in.Tip.String(), New: c.steps[j-1].Commit}
			for _, st := range c.steps[:j] {
				l.Landed = append(l.Landed, Landed{PR: st.PR, Head: st.Head, Commit: st.Commit})
				del(st.PR)
			}
			out.Land = l
		}
	} else if err := pl.landLanes(chains); err != nil {
		return Plan{}, err
	}

	for _, c := range chains {
		for _, a := range c.after {
			if a.landed < len(a.steps) {
				for i := range c.steps {
					c.steps[i].Behind = true
				}
			}
		}
		out.Chain = append(out.Chain, c.steps...)
	}

	// Trials are built on the tip the landing leaves.
	if len(pl.toTrial) > 0 {
		base := in.Tip
		if out.Land != nil {
			base = plumbing.NewHash(out.Land.New)
		}
		if err := publishTrials(in, &out, base, pl.toTrial, pl.merge, del); err != nil {
			return Plan{}, err
		}
	}

	// Report what waits in each chain.
	for _, c := range chains {
		chain, j := c.steps, c.landed
		for i, st := range chain[j:] {
			why := "checks pending at " + st.Commit + ": " + strings.Join(st.Missing, ", ")
			if st.held {
				why = "behind a red group whose culprit is being searched (checkEvery " + fmt.Sprint(every) + "); rebuilt once it leaves"
			} else if st.GroupEnd != "" && st.GroupEnd != st.Commit && st.Verdict != Red {
				why = fmt.Sprintf("checks pending at its group's last step %s (a group of %d, checkEvery %d)", st.GroupEnd, st.GroupSize, every)
			} else if st.Verdict == Green && st.GroupEnd != "" {
				why = "green; lands once the marks of its group are published"
			}
			if st.Verdict == Red {
				why = "red at " + st.Commit + " (" + strings.Join(st.Failed, ", ") + "), waiting for the verdict of a candidate ahead"
			}
			if st.note != "" {
				why = st.note
			}
			if pl.strictAside && aboveEvidence(chain[j:], i) {
				why = "not checked yet: a step below it is red and the verdict of the step built on that one decides (docs/queue.md, \"A red strict step tried aside\")"
			}
			if len(st.Missing) == 0 && st.Verdict != Red && i > 0 {
				why = "waiting for " + chain[j+i-1].PR + " ahead"
			}
			if st.Verdict == Green && c.stopped != "" && i == 0 {
				why = c.stopped
			}
			if i == 0 && len(st.Missing) == 0 && st.Verdict != Red && c.stopped == "" {
				for _, a := range c.after {
					if a.landed < len(a.steps) {
						why = "green; lands once the entries it is built on have landed"
					}
				}
			}
			if c.global != "" {
				why = "global (" + c.global + "), on everything ahead of it: " + why
			}
			out.Waiting = append(out.Waiting, Wait{PR: st.PR, Head: st.Head, Reason: laneWhy(c.lane, why)})
		}
		beyondWhy := laneWhy(c.lane, fmt.Sprintf("beyond the queue depth (%d)", depth))
		for _, e := range c.beyond {
			out.Waiting = append(out.Waiting, Wait{PR: e.pr, Head: e.head, Reason: beyondWhy})
		}
		out.Waiting = append(out.Waiting, c.behind...)
	}

	// 7. Publish the steps not landing whose record does not name them.
	// A global entry's step is published (and so checked) only once the
	// lanes it stands on are green: until then what it is built on may
	// still change, and a check of it would be spent for nothing
	// (lanes.go); the lanes behind it are built on it all the same.
	for _, c := range chains {
		if c.global != "" && !pl.lanesGreen(c) {
			continue
		}
		for k, st := range c.steps[c.landed:] {
			if st.held || (pl.strictAside && aboveEvidence(c.steps[c.landed:], k)) {
				continue
			}
			parents := StepParents(in.Branch.Squash(), st.Parent, st.Head) // squash.go
			if h, ok := pl.heals[st.PR]; ok {
				out.Publish = append(out.Publish, h)
				continue
			}
			if announces(q.latestRec(st.PR), st) {
				continue
			}
			if rec, ok := q.LatestCandidate(st.PR); ok && every > 1 && st.Verdict != Pending && st.GroupEnd == st.Commit &&
				rec.Invalidated.IsZero() && rec.Step == st.Commit && rec.Head == st.Head && rec.Seq > st.enteredSeq && rec.GroupEnd == rec.Step &&
				rec.GroupSize >= st.GroupSize {
				// Batch checks: a group end whose checks concluded keeps its
				// record when its group shrinks (halving): announcing it again
				// would make CI run it again for nothing. (A group that grew
				// needs its end's new mark, or it would not vouch for the
				// steps that joined it.)
				continue
			}
			scope := st.Partition
			if st.wide {
				scope = ""
			}
			out.Publish = append(out.Publish, Publish{PR: st.PR, Head: st.Head, Step: st.Commit, Parents: parents, Branch: Branch(q.Target, st.PR),
				GroupEnd: st.GroupEnd, GroupSize: st.GroupSize, Partition: scope})
		}
	}
	if len(out.Chain) == 0 && len(out.Settle) == 0 && len(out.Enter) == 0 && len(out.Evict) == 0 && len(out.Waiting) == 0 {
		out.Idle = "no entries in queue " + q.ID
	}
	return out, nil
}

// chainPlan is one chain of the pass: the one chain on the tip, or a
// partition's lane (lanes.go).
type chainPlan struct {
	lane   string        // the partition ("" for a chain on the tip of a branch without partitions, or a global one)
	base   plumbing.Hash // what the chain is built on
	steps  []Step
	beyond []candidateEntry // ready entries past the depth
	landed int              // how many steps from the start land in this pass
	// stopped says why a green prefix of a lane does not land (its
	// partition step would be refused); behind lists the entries waiting
	// behind a global entry (lanes.go).
	stopped string
	behind  []Wait
	// after: the chains that land before this one (lanes.go): it lands
	// only when each of them lands whole; on: the chains it is built on
	// (a red step of it may be their doing). global says why the chain's
	// one entry is global ("" for a lane).
	after, on []*chainPlan
	global    string
}

// allGreen reports whether every step of c may land: all green, or under
// batch checks landable as a whole.
func (c *chainPlan) allGreen(q *State, every int) bool {
	if len(c.steps) == 0 {
		return true
	}
	return batchLandable(c.steps, q, every) == len(c.steps)
}

// laneWhy prefixes a waiting reason with the lane it is in.
func laneWhy(lane, why string) string {
	if lane == "" {
		return why
	}
	return "lane " + lane + ": " + why
}

// mkey memoises a merge within a pass.
type mkey struct{ parent, head, pr string }

// planner is one PlanPass under way: the chains are built by build, each
// on its own base.
type planner struct {
	in           PlanInput
	q            *State
	out          *Plan
	depth, every int
	del          func(string)
	memo         map[mkey]mres
	// firstRed: per base, the pull requests this plan evicted as the
	// first candidate on it (the red target rule counts them).
	firstRed map[plumbing.Hash][]string
	// heals: red first candidates published again (a red target).
	heals   map[string]Publish
	toTrial []trialGroup
	// strictAside: a red strict step is tried aside (strictaside.go).
	strictAside bool
	// standing, while a lane under strict checks is built, says which
	// standing candidate to keep for an entry (lanes.go); kept memoises
	// its answers within the pass.
	standing func(c candidateEntry, parent plumbing.Hash, first bool) (*Recorded, error)
	kept     map[mkey]*Recorded
	// tested memoises partition steps built (lanes.go).
	tested map[[3]string]mres
}

// keep asks standing (when set) which standing candidate of entry c to
// keep at parent, once per (parent, entry) in a pass.
func (p *planner) keep(c candidateEntry, parent plumbing.Hash, first bool) (*Recorded, error) {
	if p.standing == nil {
		return nil, nil
	}
	k := mkey{parent.String(), c.head, c.pr}
	if rec, ok := p.kept[k]; ok {
		return rec, nil
	}
	rec, err := p.standing(c, parent, first)
	if err != nil {
		return nil, err
	}
	if p.kept == nil {
		p.kept = map[mkey]*Recorded{}
	}
	p.kept[k] = rec
	return rec, nil
}

// merge builds (memoised) the candidate of entry c onto parent.
func (p *planner) merge(parent plumbing.Hash, c candidateEntry) (mres, error) {
	k := mkey{parent.String(), c.head, c.pr}
	if r, ok := p.memo[k]; ok {
		return r, nil
	}
	step, conflicts, err := p.in.Merge(parent, plumbing.NewHash(c.head), c.pr)
	if err != nil {
		return mres{}, fmt.Errorf("%w: pull request %s (head %s onto %s): %w", ErrMerge, c.pr, c.head, parent, err)
	}
	r := mres{step, conflicts}
	p.memo[k] = r
	return r, nil
}

// build builds one chain on base over ready (in queue order) up to the
// depth — conflicts evicted, entries whose path owners are unmet waiting,
// verdicts judged — and evicts the culprit of a red step and builds again,
// until no eviction (docs/queue.md steps 3–6). lane names the partition
// the chain is a lane of ("": none). It returns the chain and the ready
// entries past the depth.
//
// held says the chain stands on steps of other chains that are not green
// yet (a lane behind a global entry, a global entry behind its lanes:
// lanes.go): a red step of it may be their doing, so it evicts nobody and
// searches no group while held; it waits.
//
// pinned (batch checks) keeps the groups of the whole chain: it cannot
// land before the chains it stands on (batchGroups).
func (p *planner) build(base plumbing.Hash, ready []candidateEntry, lane string, depth int, held, pinned bool) (chain []Step, beyond []candidateEntry, err error) {
	in, q, out, every := p.in, p.q, p.out, p.every
	for {
		chain, beyond = nil, make([]candidateEntry, 0, max(len(ready)-depth, 0))
		parent := base
		rest := make([]candidateEntry, 0, len(ready))
		for _, c := range ready {
			if len(chain) >= depth {
				beyond = append(beyond, c)
				rest = append(rest, c)
				continue
			}
			// A lane keeps a standing candidate built elsewhere when it
			// can still land (lanes.go); else the merge onto parent.
			var r mres
			at := parent
			rec, err := p.keep(c, parent, len(chain) == 0 && parent == in.Tip)
			if err != nil {
				return nil, nil, err
			}
			if rec != nil {
				r, at = mres{step: plumbing.NewHash(rec.Step)}, plumbing.NewHash(rec.Parents[0])
			} else if r, err = p.merge(parent, c); err != nil {
				return nil, nil, err
			}
			if len(r.conflicts) > 0 {
				out.Evict = append(out.Evict, Evict{PR: c.pr, Head: c.head, Reason: ReasonConflict,
					Detail: "conflict: " + strings.Join(r.conflicts, ", "), Paths: r.conflicts})
				p.del(c.pr)
				continue
			}
			if why, err := ownersWait(in, c, at, r.step); err != nil {
				return nil, nil, err
			} else if why != "" { // owners.go: waits, holding nobody up
				out.Waiting = append(out.Waiting, Wait{PR: c.pr, Head: c.head, Reason: laneWhy(lane, why)})
				continue
			}
			rest = append(rest, c)
			st := Step{PR: c.pr, Head: c.head, Parent: at.String(), Commit: r.step.String(), Partition: lane}
			if c.global {
				st.Partition = "" // checked whole (lanes.go)
			}
			st.Verdict, st.Failed, st.Missing, st.run = verdict(in, c, st.Commit)
			st.enteredSeq = c.seq
			if st.Verdict == Pending && (every == 1 || asked(q, c, st.Commit)) {
				if why := silent(in, c, st.Commit, st.Missing); why != "" {
					st.Verdict, st.Failed, st.Missing, st.timeout = Red, st.Missing, nil, why
				}
			}
			chain = append(chain, st)
			parent = r.step
		}
		ready = rest
		// The first non-green step decides: red with all ahead green → evict.
		culprit := -1
		if every > 1 {
			var aside [2]int
			culprit, aside = batchGroups(chain, q, every, func(lo, hi int) bool { return canAside(q, chain, lo, hi) }, pinned)
			if held {
				widenGroups(chain)
				return chain, beyond, nil
			}
			if aside[0] >= 0 {
				// A red group with every group below green: search it
				// aside and build the chain again without it.
				gone := map[string]bool{}
				for _, st := range chain[aside[0] : aside[1]+1] {
					gone[st.PR] = true
				}
				var group []candidateEntry
				kept := ready[:0:0]
				for _, c := range ready {
					if gone[c.pr] {
						group = append(group, c)
					} else {
						kept = append(kept, c)
					}
				}
				ready = kept
				for _, h := range halves(group) {
					p.toTrial = append(p.toTrial, trialGroup{members: h, run: chain[aside[1]].run})
				}
				continue
			}
		} else {
			for i, st := range chain {
				if st.Verdict == Green {
					continue
				}
				if st.Verdict == Red {
					culprit = i
				}
				break
			}
		}
		if every > 1 {
			widenGroups(chain) // lanes.go
		}
		if culprit < 0 || held {
			return chain, beyond, nil
		}
		st := chain[culprit]
		switch p.strictRed(chain, culprit) { // strictaside.go
		case redWait:
			return chain, beyond, nil
		case redAside:
			// Out of the chain, tried alone on the target; the chain is
			// built again without it.
			kept := ready[:0:0]
			for _, c := range ready {
				if c.pr == st.PR {
					p.toTrial = append(p.toTrial, trialGroup{members: []candidateEntry{c}, run: st.run, lane: st.Partition})
				} else {
					kept = append(kept, c)
				}
			}
			ready = kept
			continue
		}
		if culprit == 0 {
			base := plumbing.NewHash(st.Parent)
			if why := RedTarget(q, st.Parent, p.firstRed[base]); why != "" {
				out.TargetRed = why
				if st.run != "" && !healed(q.latestRec(st.PR), st) {
					if p.heals == nil {
						p.heals = map[string]Publish{}
					}
					p.heals[st.PR] = Publish{PR: st.PR, Head: st.Head, Step: st.Commit, Parents: StepParents(in.Branch.Squash(), st.Parent, st.Head),
						Branch: Branch(q.Target, st.PR), GroupEnd: st.GroupEnd, GroupSize: st.GroupSize, Run: st.run, Partition: st.Partition}
					out.Heal = fmt.Sprintf("re-running %s of pull request %s once, citing its failed run %s, before waiting for a person", st.Commit, st.PR, st.run)
				}
				return chain, beyond, nil
			}
			p.firstRed[base] = append(p.firstRed[base], st.PR)
		}
		detail := "failed: " + strings.Join(st.Failed, ", ") + " at " + st.Commit
		if st.run != "" {
			detail += " (run " + st.run + ")"
		}
		if st.timeout != "" {
			detail = "failed: " + st.timeout + " at " + st.Commit
		}
		detail += chain[culprit].evidence
		out.Evict = append(out.Evict, Evict{PR: st.PR, Head: st.Head, Reason: ReasonFailed,
			Detail: detail, Checks: st.Failed, Step: st.Commit, Run: st.run})
		p.del(st.PR)
		kept := ready[:0:0]
		for _, c := range ready {
			if c.pr != st.PR {
				kept = append(kept, c)
			}
		}
		ready = kept
	}
}

// healed reports whether rec (a pull request's latest queue.candidate)
// already published step st again citing a failed run (Plan.Heal): a red
// first candidate is re-run once.
func healed(rec *Recorded, st Step) bool {
	return rec != nil && !rec.Trial && rec.Run != "" && rec.Step == st.Commit
}

// announces reports whether rec (a pull request's latest queue.candidate)
// stands and names exactly step st in the entry's current episode: its
// commit, head, parents and group marks. Such a step is not published
// again.
func announces(rec *Recorded, st Step) bool {
	return rec != nil && rec.Invalidated.IsZero() && rec.Step == st.Commit && rec.Head == st.Head &&
		namesStep(rec, st.Parent, st.Head) && rec.Seq > st.enteredSeq &&
		rec.GroupEnd == st.GroupEnd && rec.GroupSize == st.GroupSize
}

func containsRev(in PlanInput, rev string) bool {
	return pr.ValidOID(rev) == nil && in.Contains(in.Tip, plumbing.NewHash(rev))
}

// evictedAt reports whether the latest queue.left of pull request id evicted
// it (failed or conflict) at head: --auto-enter does not enter it again at
// the same head, or a broken pull request would go round for ever
// (docs/queue.md). A new head, or a `git+ queue enter` by hand, brings it back.
func evictedAt(q *State, id, head string) bool {
	for i := len(q.Left) - 1; i >= 0; i-- {
		if l := q.Left[i]; l.PR == id {
			return l.Head == head && (l.Reason == ReasonFailed || l.Reason == ReasonConflict)
		}
	}
	return false
}

// settle decides whether entry e leaves before the chain is built.
func settle(in PlanInput, e Entry) (Settle, bool) {
	return Settles(in.Queue, e, in.PRs[e.PR], in.Tip, in.Contains)
}

// Settles is the rule of step 2 (docs/queue.md): whether entry e of queue
// q leaves before the chain is built, and why — its pull request p (nil:
// not found) closed, merged elsewhere, moved to another head or base, or
// its head already contained in the target at tip (landed; with the
// pr.merged to record when none is). contains(tip, rev) reports whether rev
// is tip or an ancestor of it. The planner settles by it and the web page
// says by it why an entry is about to leave.
func Settles(q *State, e Entry, p *pr.State, tip plumbing.Hash, contains func(tip, rev plumbing.Hash) bool) (Settle, bool) {
	in := PlanInput{Queue: q, Tip: tip, Contains: contains}
	s := Settle{PR: e.PR, Head: e.Head}
	switch {
	case p == nil:
		s.Reason, s.Detail = ReasonWithdrawn, "pull request not found"
	case p.State == pr.Closed:
		s.Reason, s.Detail = ReasonWithdrawn, "pull request closed"
	case containsRev(in, e.Head):
		if p.Head != e.Head {
			s.Reason, s.Detail = ReasonStale, "target contains the entered head, but the pull request moved on to "+p.Head
			break
		}
		s.Reason, s.Detail = ReasonLanded, "target contains "+e.Head
		recorded := false
		for _, m := range p.Merged {
			recorded = recorded || m.Revision == e.Head
		}
		// pr.merged names the pull request's base (the hook refuses another
		// branch, docs/events.md): one retargeted after it landed leaves
		// without it.
		if !recorded && p.Base == in.Queue.Target {
			commit := e.Head
			if c, ok := in.Queue.LatestCandidate(e.PR); ok && c.Head == e.Head && pr.ValidOID(c.Step) == nil && in.Contains(in.Tip, plumbing.NewHash(c.Step)) {
				commit = c.Step
			}
			s.Merged = &Merged{Revision: e.Head, Branch: in.Queue.Target, Commit: commit}
		}
	case p.State == pr.Merged:
		s.Reason, s.Detail = ReasonWithdrawn, "pull request merged elsewhere"
	case p.Head != e.Head:
		s.Reason, s.Detail = ReasonStale, "head moved to "+p.Head
	case p.Base != e.Base || e.Base != in.Queue.Target:
		s.Reason, s.Detail = ReasonStale, "base is "+p.Base+", not "+in.Queue.Target
	default:
		return Settle{}, false
	}
	return s, true
}

// silent reports, for a pending step at rev, why its required checks
// (missing) count as failed: Branch.CheckTimeout is set, the step was
// announced by a queue.candidate in the entry's current episode, and Now is
// at least the timeout past that event's time. Empty otherwise.
func silent(in PlanInput, c candidateEntry, rev string, missing []string) string {
	limit := in.Branch.CheckTimeout
	if limit <= 0 || len(missing) == 0 {
		return ""
	}
	if in.Now <= 0 {
		if in.Clock != nil {
			in.Clock.Until = min(in.Clock.Until, 1) // a positive Now turns it on
		}
		return ""
	}
	rec, ok := in.Queue.LatestCandidate(c.pr)
	if !ok || rec.Step != rev || rec.Seq <= c.seq || !rec.Invalidated.IsZero() {
		return ""
	}
	if in.Clock != nil {
		clockAt(in.Clock, in.Now, rec.Time, limit)
	}
	if time.Duration(in.Now-rec.Time)*time.Second < limit {
		return ""
	}
	return fmt.Sprintf("check %s not concluded within checkTimeout %s of its queue.candidate %s", strings.Join(missing, ", "), limit, rec.Event)
}

// clockAt narrows c to the Nows on the same side as now of the moment the
// comparison of silent turns: (Now-t)·1s ≥ limit, for limit > 0, is Now ≥
// t + ⌈limit/1s⌉ as long as nothing overflows, which holds when |now-t|
// and ⌈limit/1s⌉ are at most 2³² and Now stays within clockSpan of now
// (start). Anything outside that pins c to now.
func clockAt(c *ClockRange, now, t int64, limit time.Duration) {
	k := int64(limit / time.Second)
	if limit%time.Second != 0 {
		k++
	}
	d := now - t
	if (t > 0 && d > now) || (t < 0 && d < now) || d > 1<<32 || d < -(1<<32) || k > 1<<32 ||
		now > math.MaxInt64-1<<34 || now < math.MinInt64+1<<34 {
		c.pin(now)
		return
	}
	turn := t + k
	if now >= turn {
		c.From = max(c.From, turn)
	} else {
		c.Until = min(c.Until, turn)
	}
}

// latestRun is the latest check.completed of name at rev from a current
// holder of hub.check:<name> (the one pr.State.Check reports).
func latestRun(p *pr.State, t *trust.State, name, rev string) (pr.CheckRun, bool) {
	for i := len(p.Runs) - 1; i >= 0; i-- {
		r := p.Runs[i]
		if r.Name == name && r.Revision == rev && t.Has(r.Key, trust.CheckCap(name)) {
			return r, true
		}
	}
	return pr.CheckRun{}, false
}

// targetRed reports why the target is believed red: at least
// RedTargetEvictions different pull requests were already evicted as the
// first candidate on this very tip (their red steps' parent is the tip),
// counting those the queue log records and those this plan evicts (planned).
func targetRed(in PlanInput, planned []string) string {
	return RedTarget(in.Queue, in.Tip.String(), planned)
}

// RedTarget is targetRed from the queue's records alone (for `queue show`;
// and for a lane, with the commit its chain is built on as tip): why the
// target at tip looks red, or "".
func RedTarget(q *State, tip string, planned []string) string {
	seen := map[string]bool{}
	for _, id := range planned {
		seen[id] = true
	}
	for _, l := range q.Left {
		if l.Reason != ReasonFailed || l.Step == "" {
			continue
		}
		if parent, ok := q.StepParent(l.Step); ok && parent == tip {
			seen[l.PR] = true
		}
	}
	if len(seen) < RedTargetEvictions {
		return ""
	}
	return fmt.Sprintf("%s at %s looks broken: %d different pull requests failed as the first candidate on it; evictions stop until the target moves or a candidate on it turns green", q.Target, tip, len(seen))
}

// RedTargetEvictions is how many different pull requests must have failed
// as the first candidate on one target tip before the queue believes the
// target itself is red.
const RedTargetEvictions = 2

// verdict judges a chain step of entry c at rev (StepVerdict).
func verdict(in PlanInput, c candidateEntry, rev string) (v string, failed, missing []string, run string) {
	sv := StepVerdict(in.Queue, c.pr, c.p, in.Branch, in.Trust, rev)
	return sv.Verdict, sv.Failed, sv.Missing, sv.Run
}

// Judged is a chain step's verdict from its required checks.
type Judged struct {
	Verdict string   // Green, Red or Pending
	Failed  []string // required checks that failed at the step (Red)
	Missing []string // required checks not yet success (Pending)
	Run     string   // the check.completed event that made it red
}

// StepVerdict judges the step rev of pull request prID (p) in queue q from
// b's required checks at rev, read by the boundary's own rule
// (pr.State.ChecksOn): all success → green; any failure → red, unless an
// earlier eviction of this pull request already cited that run (then the
// check is pending again: docs/queue.md, "Fresh verdicts"); otherwise
// pending (cancelled and absent are pending); so is a run a trial record of
// the pull request cited. checkTimeout's silence is the
// planner's to add (it needs the time). The planner and the web page read
// it; the hook's acceptance of a step is exactly Green (docs/boundary.md).
func StepVerdict(q *State, prID string, p *pr.State, b trust.Branch, t *trust.State, rev string) Judged {
	cv := p.ChecksOn(b, rev)
	var j Judged
	if cv.Green() {
		j.Verdict = Green
		return j
	}
	failed := map[string]bool{}
	for _, name := range cv.Failed {
		failed[name] = true
	}
	cited := map[string]bool{}
	for _, l := range q.Left {
		if l.PR == prID && l.Run != "" {
			cited[l.Run] = true
		}
	}
	if rec := q.latestRec(prID); rec != nil {
		for _, r := range rec.Cited {
			cited[r] = true // a run a trial cites (docs/queue.md, "Searching a red group aside")
		}
	}
	for _, name := range b.RequiredChecks {
		if !failed[name] {
			if !slices.Contains(cv.Passed, name) {
				j.Missing = append(j.Missing, name)
			}
			continue
		}
		r, _ := latestRun(p, t, name, rev)
		if cited[r.Event.String()] {
			j.Missing = append(j.Missing, name)
			continue
		}
		j.Failed = append(j.Failed, name)
		if j.Run == "" {
			j.Run = r.Event.String()
		}
	}
	switch {
	case len(j.Failed) > 0:
		j.Verdict = Red
	default:
		j.Verdict = Pending
	}
	return j
}
