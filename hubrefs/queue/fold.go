package queue

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Reasons an entry leaves the queue (queue.left "reason").
const (
	ReasonLanded    = "landed"
	ReasonFailed    = "failed"
	ReasonConflict  = "conflict"
	ReasonStale     = "stale"
	ReasonWithdrawn = "withdrawn"
)

// Sentinel errors; every error of this package wraps one.
var (
	// ErrMalformed: an event of the queue ref does not decode as its type,
	// names another repository, or is not a queue event.
	ErrMalformed = errors.New("malformed queue event")
	// ErrNoRoot: the log has no queue.opened root written by a hub.queue holder,
	// or has a second queue.opened.
	ErrNoRoot = errors.New("queue has no valid root")
	// ErrNotCommit: an object BuildCandidate reads is not a commit (or is corrupt).
	ErrNotCommit = errors.New("not a commit")
	// ErrMismatch: the object writer returned another id than the one computed.
	ErrMismatch = errors.New("written object id differs from computed id")
	// ErrInput: PlanInput is incomplete (nil queue, trust or functions).
	ErrInput = errors.New("incomplete plan input")
	// ErrMerge: the caller's Merge function failed; the pass stops.
	ErrMerge = errors.New("candidate merge failed")
)

// EventError names the event at fault and wraps the reason (see
// hubrefs.EventError).
type EventError = hubrefs.EventError

// eventErr is the EventError of ev in this package's log.
func eventErr(ev hubrefs.Event, err error) error {
	return &EventError{Log: "queue", ID: ev.ID, Type: ev.Type, Err: err}
}

// Entry is one active entry of the queue, in queue order.
type Entry struct {
	PR        string        `json:"pr"`
	Head      string        `json:"head"`
	Base      string        `json:"base"`
	EnteredAt plumbing.Hash `json:"-"` // the queue.entered event
	Seq       int           `json:"-"` // its position in the fold (events counted from 1)
	// Priority is PriorityHigh or PriorityNormal: high entries come before
	// normal ones, each class in the causal order of its queue.entered
	// (docs/queue.md, "Priority").
	Priority string `json:"priority"`
}

// Left is one queue.left that took effect.
type Left struct {
	PR     string        `json:"pr"`
	Head   string        `json:"head"`
	Reason string        `json:"reason"`
	Detail string        `json:"detail,omitempty"`
	Step   string        `json:"step,omitempty"` // failed: the red candidate
	Run    string        `json:"run,omitempty"`  // failed: the check.completed that made it red
	Event  plumbing.Hash `json:"-"`
}

// Recorded is one queue.candidate: the chain step published for a pull request.
type Recorded struct {
	PR      string
	Head    string
	Step    string
	Parents []string
	Branch  string
	// GroupEnd and GroupSize: the batch group the step was published in
	// (docs/queue.md, "Batch checks"); empty and zero for a step checked
	// on its own.
	GroupEnd  string
	GroupSize int
	// Trial: the step was published in a trial, aside from the chain
	// (docs/queue.md, "Searching a red group aside"). TrialSeq is the Seq
	// of the pull request's latest trial record, this one or an earlier
	// one (0: none): an entry cleared by a trial is queued again as of it.
	Trial    bool
	TrialSeq int
	// Run is the run this trial record cites (queue.candidate run).
	Run string
	// Partition is the lane the step was built in (queue.candidate
	// partition; "" for none).
	Partition string
	// Cited is every run (check.completed event) a trial record of the
	// pull request cited (queue.candidate run), this one's and earlier
	// ones': StepVerdict reads them as no verdict.
	Cited []string
	Event plumbing.Hash
	Seq   int   // position of the queue.candidate in the fold (from 1)
	Time  int64 // its committer time (writer-chosen; used for checkTimeout only)
	// Invalidated is the queue.reset that declared this candidate stale
	// (its chain was built on another tip); zero while it stands.
	Invalidated plumbing.Hash
}

// Reset is one queue.reset.
type Reset struct {
	Tip    string
	Detail string
	Event  plumbing.Hash
}

// Ignored is an event the fold read without effect, and why.
type Ignored struct {
	Event  plumbing.Hash
	Type   string
	Reason string
}

// State is one queue ref folded.
type State struct {
	ID      string
	Target  string // full ref, refs/heads/...
	Closed  bool
	Entries []Entry // active entries in queue order
	Left    []Left  // every queue.left that took effect, causal order
	// Began is every queue.entered that began an entry (a priority change
	// of a queued entry begins none), causal order, as entered. With Left
	// it is what the fold took from the log: `queue stats` counts them.
	Began   []Entry
	Resets  []Reset
	Ignored []Ignored
	// Paused is the pause standing on the queue (pause.go); zero when
	// the queue runs.
	Paused Pause
	Count  int           // events in the ref (all of them, counted against the ceiling)
	Tip    plumbing.Hash // the last event folded

	latest map[string]*Recorded // per pr, the latest queue.candidate
	bases  map[string]string    // candidate step → its first parent, over all candidates
	marks  map[string]int       // candidate step → the group size of its latest queue.candidate (0: not a group end)
	active map[string]bool      // the pull requests of Entries
	rooted bool                 // a queue.opened by a hub.queue holder was folded
}

// GroupEnd reports whether the latest queue.candidate naming step marked it
// as the last step of a batch group, and the group's size (docs/queue.md,
// "Batch checks"). The boundary reads it: a green group end vouches for
// the size-1 steps below it.
func (s *State) GroupEnd(step string) (size int, ok bool) {
	n := s.marks[step]
	return n, n > 0
}

// LatestCandidate returns the latest queue.candidate recorded for pr, if any.
// A candidate invalidated by a later queue.reset is still returned, with
// Invalidated set: its branch may still exist, but it names nothing current.
func (s *State) LatestCandidate(prID string) (Recorded, bool) {
	c, ok := s.latest[prID]
	if !ok {
		return Recorded{}, false
	}
	cc := *c
	cc.Parents = append([]string(nil), c.Parents...)
	cc.Cited = slices.Clone(c.Cited)
	return cc, true
}

// latestRec is LatestCandidate without the copy, for this package's
// readers that only read it (the planner asks it of every queued entry in
// a pass, docs/scale.md); nil when there is none.
func (s *State) latestRec(prID string) *Recorded { return s.latest[prID] }

// Active reports whether pr has an active entry, and its position (0-based).
func (s *State) Active(prID string) (int, bool) {
	for i, e := range s.Entries {
		if e.PR == prID {
			return i, true
		}
	}
	return -1, false
}

// IsStep reports whether commit is a candidate step some queue.candidate of
// this queue recorded.
func (s *State) IsStep(commit string) bool {
	_, ok := s.bases[commit]
	return ok
}

// StepParent returns the first parent recorded for candidate step commit.
func (s *State) StepParent(commit string) (string, bool) {
	p, ok := s.bases[commit]
	return p, ok
}

// MovedUnder reports whether the target, now at tip, moved outside the queue
// under pr's latest queue.candidate: the candidate still stands (no
// queue.reset invalidated it), yet the tip its chain was built on is not
// tip, and tip is no step this queue recorded (a landing moves the target
// to a step). It is the fold's own reset rule seen from before the reset:
// a queue.reset naming tip would invalidate exactly such a candidate. A
// candidate built on tip — a pull request re-entered after an eviction, a
// chain rebuilt after a member ahead left — stands on the current target
// and needs no reset (docs/queue.md, "Resets").
func (s *State) MovedUnder(tip, pr string) bool {
	c, ok := s.latest[pr]
	if !ok || !c.Invalidated.IsZero() || s.IsStep(tip) {
		return false
	}
	return s.chainBase(c.Step) != tip
}

// chainBase follows first parents through recorded candidate steps down to
// the first commit that is no recorded step: the tip the chain was built on.
func (s *State) chainBase(step string) string {
	cur := step
	for i := 0; i <= len(s.bases); i++ {
		p, ok := s.bases[cur]
		if !ok {
			return cur
		}
		cur = p
	}
	return cur
}

// Fold folds one queue ref's events (verified, causal order) judged against t.
// See the package doc for the rules.
func Fold(events []hubrefs.Event, t *trust.State) (*State, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: no trust state", ErrInput)
	}
	s := &State{latest: map[string]*Recorded{}, bases: map[string]string{}, marks: map[string]int{}, active: map[string]bool{}}
	pre := prevalidate(events)
	for i, ev := range events {
		var err error
		if pre != nil {
			err = s.apply(ev, pre[i].p, pre[i].err, t)
		} else {
			err = s.apply(ev, nil, nil, t)
		}
		if err != nil {
			return nil, err
		}
	}
	if !s.rooted {
		return nil, fmt.Errorf("%w: no queue.opened by a hub.queue holder among %d events", ErrNoRoot, len(events))
	}
	return s, nil
}

// Apply folds ev into s as Fold would fold it as the next event of the log
// s was folded from, judged against t, the trust state s was folded under:
// Fold(append(log, ev), t) is s after Apply(ev, t) when both succeed, and
// fails with Apply's error when Apply fails (docs/scale.md, "Writes"). s
// must come from Fold, Clone or Restore. On an error s is left part-way and
// must not be used again: apply to a Clone when the state is still needed.
func (s *State) Apply(ev hubrefs.Event, t *trust.State) error {
	if t == nil {
		return fmt.Errorf("%w: no trust state", ErrInput)
	}
	if s.latest == nil || s.bases == nil || s.marks == nil || s.active == nil {
		return fmt.Errorf("%w: a queue state not made by Fold, Clone or Restore", ErrInput)
	}
	return s.apply(ev, nil, nil, t)
}

// apply folds one event, with its payload already validated (payload, verr)
// when payload or verr is set, else validating it here.
func (s *State) apply(ev hubrefs.Event, payload any, verr error, t *trust.State) error {
	bad := func(err error) error { return eventErr(ev, err) }
	if s.Count == 0 && len(ev.Parents) > 0 {
		return bad(fmt.Errorf("%w: the first event of a queue log has parents", ErrNoRoot))
	}
	if s.Count > 0 {
		if err := hubrefs.CheckNext(s.Tip, ev); err != nil {
			return bad(fmt.Errorf("%w: %w", ErrMalformed, err))
		}
	}
	s.Count++
	s.Tip = ev.ID
	if payload == nil && verr == nil {
		payload, verr = Validate(ev)
	}
	if verr != nil {
		return bad(verr)
	}
	if t.RepoID != "" && ev.Repo != t.RepoID {
		return bad(fmt.Errorf("%w: names repository %q, not %q", ErrMalformed, ev.Repo, t.RepoID))
	}
	if ev.Signer == nil || !t.Has(ev.Signer, trust.CapQueue) {
		s.ignore(ev, "signer does not hold hub.queue")
		return nil
	}
	if !s.rooted && ev.Type != hubrefs.TypeQueueOpened {
		s.ignore(ev, "before the queue.opened root")
		return nil
	}
	// s.active is the set of pull requests with an active entry: the fold
	// asks it once per event, and scanning Entries each time made folding
	// n entries cost n² (docs/scale.md).
	active := s.active
	switch p := payload.(type) {
	case *hubrefs.QueueOpened:
		if s.rooted {
			return bad(fmt.Errorf("%w: second queue.opened", ErrNoRoot))
		}
		s.ID, s.Target, s.rooted = p.ID, p.Target, true
	case *hubrefs.QueueEntered:
		prio := priority(p.Priority)
		switch {
		case s.Closed:
			s.ignore(ev, "queue is closed")
		case active[p.PR]:
			i, _ := s.Active(p.PR)
			if s.Entries[i].Head == p.Head && s.Entries[i].Base == p.BaseRef && s.Entries[i].Priority != prio {
				// A change of priority: the entry keeps its episode
				// (EnteredAt, Seq) and moves to its new class.
				s.Entries[i].Priority = prio
				s.order()
			} else {
				s.ignore(ev, "pull request "+p.PR+" is already queued (priority "+s.Entries[i].Priority+")")
			}
		default:
			e := Entry{PR: p.PR, Head: p.Head, Base: p.BaseRef, EnteredAt: ev.ID, Seq: s.Count, Priority: prio}
			s.Entries = append(s.Entries, e)
			s.Began = append(s.Began, e)
			active[p.PR] = true
			if prio == PriorityHigh {
				// A normal entry appended last is already in order
				// (highest Seq); a high one moves ahead of the normals.
				s.order()
			}
		}
	case *hubrefs.QueueCandidate:
		rec := &Recorded{PR: p.PR, Head: p.Head, Step: p.Step, Parents: p.Parents, Branch: p.Branch,
			GroupEnd: p.GroupEnd, GroupSize: p.GroupSize, Trial: p.Trial, Run: p.Run, Partition: p.Partition, Event: ev.ID, Seq: s.Count, Time: ev.Time}
		if old := s.latest[p.PR]; old != nil {
			rec.TrialSeq, rec.Cited = old.TrialSeq, old.Cited
		}
		if p.Trial {
			rec.TrialSeq = s.Count
		}
		if p.Run != "" && !slices.Contains(rec.Cited, p.Run) {
			rec.Cited = append(slices.Clip(rec.Cited), p.Run)
		}
		s.latest[p.PR] = rec
		if p.GroupEnd != "" && p.GroupEnd == p.Step {
			s.marks[p.Step] = p.GroupSize
		} else {
			delete(s.marks, p.Step)
		}
		if _, seen := s.bases[p.Step]; !seen {
			s.bases[p.Step] = p.Parents[0]
		}
	case *hubrefs.QueueLeft:
		if !active[p.PR] {
			s.ignore(ev, "pull request "+p.PR+" is not queued")
			return nil
		}
		i, _ := s.Active(p.PR)
		s.Entries = append(s.Entries[:i:i], s.Entries[i+1:]...)
		delete(active, p.PR)
		s.Left = append(s.Left, Left{PR: p.PR, Head: p.Head, Reason: p.Reason, Detail: p.Detail, Step: p.Step, Run: p.Run, Event: ev.ID})
	case *hubrefs.QueueReset:
		s.Resets = append(s.Resets, Reset{Tip: p.Tip, Detail: p.Detail, Event: ev.ID})
		for _, c := range s.latest {
			if c.Invalidated.IsZero() && s.chainBase(c.Step) != p.Tip {
				c.Invalidated = ev.ID
			}
		}
	case *hubrefs.Base:
		s.Closed = true
	case *hubrefs.QueuePaused, *Resumed:
		s.pause(ev, p, t) // pause.go
	}
	return nil
}

// priority normalises a queue.entered priority (absent is normal).
func priority(p string) string {
	if p == PriorityHigh {
		return PriorityHigh
	}
	return PriorityNormal
}

// order puts the active entries in queue order: high priority first, then
// normal, each class by the fold position of its queue.entered.
func (s *State) order() {
	sort.SliceStable(s.Entries, func(i, j int) bool {
		a, b := s.Entries[i], s.Entries[j]
		if (a.Priority == PriorityHigh) != (b.Priority == PriorityHigh) {
			return a.Priority == PriorityHigh
		}
		return a.Seq < b.Seq
	})
}

// validated is one event's Validate result, computed ahead of the fold.
type validated struct {
	p   any
	err error
}

// parallelValidate is the log length from which Fold validates payloads on
// all CPUs before folding them in order: decoding the payloads is most of a
// long queue's fold (docs/scale.md).
var parallelValidate = 512

// prevalidate runs Validate on every event of a long log on GOMAXPROCS
// goroutines; nil for a short one. Validate is pure, so the fold reports
// exactly the error it would have met validating one event at a time.
func prevalidate(events []hubrefs.Event) []validated {
	return hubrefs.ParallelMap(len(events), parallelValidate, func(i int) validated {
		var d validated
		d.p, d.err = Validate(events[i])
		return d
	})
}

func (s *State) ignore(ev hubrefs.Event, why string) {
	s.Ignored = append(s.Ignored, Ignored{Event: ev.ID, Type: ev.Type, Reason: why})
}

// SelectQueue applies the one-queue-per-target rule: among the open queues
// whose target is target, the one with the smallest id counts. Nil when none.
func SelectQueue(states []*State, target string) *State {
	var best *State
	for _, s := range states {
		if s == nil || s.Closed || s.Target != target {
			continue
		}
		if best == nil || s.ID < best.ID {
			best = s
		}
	}
	return best
}

// CeilingWarning reports whether a ref holding count events is at or past 80%
// of ceiling (the events-per-ref ceiling; zero or negative means the default).
func CeilingWarning(count, ceiling int) bool {
	if ceiling <= 0 {
		ceiling = trust.DefaultEventsPerRef
	}
	return count*5 >= ceiling*4
}
