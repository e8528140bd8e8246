// Package webview is the read-only web view of a git+ repository: the merge
// queue (entries in order, each candidate's checks, what waits and why),
// recent landings, the pull requests and each pull request's page. It reads
// the hub refs of a git directory on every request (the records are the
// state; what is kept between requests is the fold cache's, keyed by what
// it was computed from, and the charts' memo, charts.go) and renders them
// server-side with html/template,
// which escapes every title, body and name: they are written by whoever can
// open a pull request. See docs/cli.md, "The page".
//
// Load builds the same model for the CLI (`git+ pr show`), so the page and
// the command line say the same thing.
package webview

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hooks/opstatus"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/gitio"
)

// ErrNoTrust is a repository without refs/hub/trust: not (yet) a git+
// repository.
var ErrNoTrust = errors.New("no refs/hub/trust: not a git+ repository (run `git+ init`)")

// readCeilings are generous: the view reads what the boundary admitted.
var readCeilings = hubrefs.Ceilings{EventsPerRef: 1 << 20, EventBytes: 16 << 20, Parents: 64}

// Snapshot is one repository's hub state, read at one moment.
type Snapshot struct {
	GitDir   string
	RepoID   string
	RepoName string
	Trust    *trust.State
	PRs      map[string]*PR
	PRList   []*PR // newest first
	Queues   []*Queue
	Landings []Landing // newest first
	Bypassed int       // landed pull requests whose head a bypass named (LandedPR.Bypass)
	Warnings []string  // records that could not be read
	Read     time.Time
	// Alarms: updates of protected refs git+ did not judge, recently;
	// WakeFailures: the wake rules whose latest run failed (opsview.go).
	Alarms       []opstatus.Unjudged
	WakeFailures []opstatus.WakeFailure
}

// Item is one event of a pull request's timeline.
type Item struct {
	Event  string
	Time   time.Time
	Who    string // member name now holding the signing key, or its fingerprint
	Type   string
	Text   string // one line saying what happened
	Body   string // the free text the event carried (review, thread, description)
	Thread string
}

// Thread is one review thread.
type Thread struct {
	ID          string
	Opened      Item
	Resolved    bool
	Resolution  *Item
	UnderReview bool
}

// Review is one review.submitted.
type Review struct {
	Item
	Verdict string
	Head    string
	Current bool // names the pull request's current head and base
}

// CheckRun is one check result or start, per revision.
type CheckRun struct {
	Item
	Name       string
	Revision   string
	Conclusion string // "" for a start (check.started)
	URL        string
	Output     string // check.completed's tail of the command's output
	Sandbox    string // how check.completed says its command ran (docs/ci.md)
	Counts     bool   // the signer holds hub.check:<name> now
}

// QueueStatus is where a pull request stands in the queue.
type QueueStatus struct {
	Queue     string
	Target    string
	Position  int    // 1-based; 0 when not queued now
	Left      string // the reason it last left ("" when queued or never)
	Detail    string
	Candidate string
	Checks    []CheckState
	Waiting   string // why it waits (queued only)
	Red       bool
}

// CheckState is a required check's state at a candidate.
type CheckState struct {
	Name  string
	State string // success, failure, cancelled or pending
}

// PR is one pull request with everything its page shows.
type PR struct {
	*pr.State
	Events   int
	Timeline []Item
	Reviews  []Review
	Threads  []Thread
	Runs     []CheckRun
	Queue    *QueueStatus
	Opened   time.Time
	// Owners: the path owners entries the head triggers, previewed
	// (owners.go); OwnersNote: why there is no preview.
	Owners     []pr.OwnerNeed
	OwnersNote string
}

// Queue is one queue ref folded, with each entry's standing.
type Queue struct {
	ID      string
	Target  string
	Counts  bool // the queue that counts for its target (smallest open id)
	Closed  bool
	Tip     string // the target's commit now ("" when absent)
	Entries []Entry
	Left    []queue.Left // newest first
	Red     bool         // the head of the queue has a failing candidate
	// Lanes: on a target with partitions, each lane with its queued
	// entries ("web: #1, #3"), global ones last (lanes.go).
	Lanes []string

	state *queue.State
}

// Entry is one active queue entry.
type Entry struct {
	Position  int
	PR        string
	Title     string
	Head      string
	Candidate string
	Branch    string
	// Lane: the partition whose lane the entry's candidate was built in
	// (queue.candidate partition); "" without one.
	Lane    string
	Checks  []CheckState
	Waiting string
	Red     bool
}

// Landing is one commit of a protected branch that carried pull requests.
type Landing struct {
	Commit string
	Branch string
	Time   time.Time
	PRs    []LandedPR
}

// LandedPR is one pull request a landing carried.
type LandedPR struct {
	ID, Title, Head string
	// Bypass: "who: why" when a pr.bypassed by a current holder of
	// hub.bypass named the landed head (docs/trust.md, "An audited
	// bypass"); verify --branch says whether the bypass was needed.
	Bypass string
}

// Load reads the hub state of the repository at gitDir.
func Load(gitDir string) (*Snapshot, error) {
	store, err := gitio.OpenStore(gitDir, gitio.QuarantineEnv{})
	if err != nil {
		return nil, fmt.Errorf("opening the objects of %s: %w", gitDir, err)
	}
	defer store.Close()
	refs, err := gitio.ReadRefsUnder(gitDir, []string{"refs/hub/"}, nil)
	if err != nil {
		return nil, fmt.Errorf("listing the hub refs of %s: %w", gitDir, err)
	}
	tip, ok := refs[hubrefs.TrustRef]
	if !ok {
		return nil, fmt.Errorf("%s: %w", gitDir, ErrNoTrust)
	}
	// Reads go through the repository's fold cache, as the CLI's do
	// (docs/foldcache.md): a page shown again verifies no signature the
	// hook or an earlier page already verified, and folds only what moved.
	cache := receive.NewDirCache(gitDir)
	t, err := (&policy.Reader{Objects: store, Cache: cache, Ceilings: readCeilings}).Trust(tip)
	if err != nil {
		return nil, fmt.Errorf("reading %s in %s: %w", hubrefs.TrustRef, gitDir, err)
	}
	s := &Snapshot{GitDir: gitDir, RepoID: t.RepoID, RepoName: t.Name, Trust: t, PRs: map[string]*PR{}, Read: time.Now()}
	c := t.Rules.Ceilings
	rd := &policy.Reader{Objects: store, Cache: cache, Ceilings: hubrefs.Ceilings{EventsPerRef: c.EventsPerRef, EventBytes: c.EventBytes, Parents: c.ParentsPerEvent}}
	names := make([]string, 0, len(refs))
	for n := range refs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, hubrefs.PRRefPrefix):
			p, err := loadPR(rd, refs[n], t)
			if err != nil {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %v", n, err))
				continue
			}
			s.PRs[p.ID] = p
			s.PRList = append(s.PRList, p)
		case strings.HasPrefix(n, hubrefs.QueueRefPrefix):
			st, err := rd.Queue(tip, t, refs[n])
			if err != nil {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %v", n, err))
				continue
			}
			s.Queues = append(s.Queues, &Queue{ID: st.ID, Target: st.Target, Closed: st.Closed, state: st})
		}
	}
	// UUIDv7 ids sort by creation time: newest first.
	sort.Slice(s.PRList, func(i, j int) bool { return s.PRList[i].ID > s.PRList[j].ID })
	s.previewOwners(gitDir, store)
	if err := s.judgeQueues(gitDir, store); err != nil {
		return nil, err
	}
	s.landings()
	s.queueTimeline(rd, t, refs) // opsview.go
	s.operatorState(gitDir)
	return s, nil
}

// who names the signer of ev as the trust state knows it now.
func who(t *trust.State, k hubrefs.PublicKey) string {
	if k == nil {
		return "(unsigned)"
	}
	if m, ok := t.MemberByKey(k); ok {
		return m.Name
	}
	return "former member " + hubrefs.Fingerprint(k)
}

func short(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
}

func loadPR(rd *policy.Reader, tip plumbing.Hash, t *trust.State) (*PR, error) {
	evs, err := rd.Log(tip)
	if err != nil {
		return nil, err
	}
	st, err := pr.Fold(evs, t)
	if err != nil {
		return nil, err
	}
	p := &PR{State: st, Events: len(evs)}
	threads := map[string]int{}
	for _, ev := range evs {
		it := Item{Event: ev.ID.String(), Time: time.Unix(ev.Time, 0).UTC(), Who: who(t, ev.Signer), Type: ev.Type}
		// The fields the page shows, of whichever type ev is. pr.Fold has
		// decoded ev strictly already (exact keys, none unknown or
		// repeated: docs/events.md), so a plain decode of this union of
		// fields, with exact tags, reads the same values.
		var f struct {
			Head       string `json:"head"`
			Base       string `json:"base"`
			Title      string `json:"title"`
			Body       string `json:"body"`
			Verdict    string `json:"verdict"`
			Thread     string `json:"thread"`
			Name       string `json:"name"`
			Conclusion string `json:"conclusion"`
			URL        string `json:"url"`
			Output     string `json:"output"`
			Sandbox    string `json:"sandbox"`
			Revision   string `json:"revision"`
			Branch     string `json:"branch"`
			Commit     string `json:"commit"`
			Source     string `json:"source"`
			Review     string `json:"review"`
			Reason     string `json:"reason"`
		}
		_ = json.Unmarshal(ev.Payload, &f)
		switch ev.Type {
		case hubrefs.TypePROpened:
			p.Opened = it.Time
			it.Text = fmt.Sprintf("opened %s onto %s", short(f.Head), f.Base)
			if f.Source != "" {
				it.Text += " from " + f.Source
			}
			it.Body = f.Body
		case hubrefs.TypePRUpdated:
			it.Text = "proposed a new head " + short(f.Head)
		case hubrefs.TypePRRetargeted:
			it.Text = "retargeted onto " + f.Base
		case hubrefs.TypePRClosed:
			it.Text = "closed the pull request"
		case hubrefs.TypePRReopened:
			it.Text = "reopened the pull request"
		case hubrefs.TypePRDraft:
			it.Text = "marked the pull request a draft"
		case hubrefs.TypePRReady:
			it.Text = "marked the pull request ready"
		case hubrefs.TypeReviewDismiss:
			it.Text, it.Body = "dismissed the changes request "+short(f.Review), f.Reason
		case hubrefs.TypePRBypassed:
			it.Text, it.Body = "bypassed the rules for "+short(f.Head), f.Reason
		case hubrefs.TypePRMerged:
			it.Text = fmt.Sprintf("landed %s on %s in %s", short(f.Revision), f.Branch, short(f.Commit))
		case hubrefs.TypeReviewSubmit:
			it.Text = fmt.Sprintf("reviewed %s: %s", short(f.Head), f.Verdict)
			it.Body = f.Body
			p.Reviews = append(p.Reviews, Review{Item: it, Verdict: f.Verdict, Head: f.Head, Current: f.Head == st.Head && f.Base == st.Base})
		case hubrefs.TypeThreadOpened:
			it.Text, it.Body, it.Thread = "opened thread "+f.Thread, f.Body, f.Thread
			if _, ok := threads[f.Thread]; !ok {
				threads[f.Thread] = len(p.Threads)
				p.Threads = append(p.Threads, Thread{ID: f.Thread, Opened: it})
			}
		case hubrefs.TypeThreadResolved:
			it.Text, it.Body, it.Thread = "resolved thread "+f.Thread, f.Body, f.Thread
			if i, ok := threads[f.Thread]; ok && !p.Threads[i].Resolved {
				r := it
				p.Threads[i].Resolved, p.Threads[i].Resolution = true, &r
			}
		case hubrefs.TypeCheckStarted, hubrefs.TypeCheckCompleted:
			concl := f.Conclusion
			if ev.Type == hubrefs.TypeCheckStarted {
				it.Text = fmt.Sprintf("started check %s on %s", f.Name, short(f.Head))
			} else {
				it.Text = fmt.Sprintf("check %s on %s: %s", f.Name, short(f.Head), concl)
			}
			p.Runs = append(p.Runs, CheckRun{Item: it, Name: f.Name, Revision: f.Head, Conclusion: concl, URL: f.URL, Output: f.Output, Sandbox: f.Sandbox, Counts: t.Has(ev.Signer, trust.CheckCap(f.Name))})
		default:
			it.Text = ev.Type
		}
		p.Timeline = append(p.Timeline, it)
	}
	return p, nil
}

// RunsByRevision groups the check runs by revision, the current head first,
// then the others newest first; within one, by name.
func (p *PR) RunsByRevision() []RevisionRuns {
	by := map[string][]CheckRun{}
	var order []string
	for i := len(p.Runs) - 1; i >= 0; i-- {
		r := p.Runs[i]
		if _, ok := by[r.Revision]; !ok {
			order = append(order, r.Revision)
		}
		by[r.Revision] = append(by[r.Revision], r)
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i] == p.Head && order[j] != p.Head })
	out := make([]RevisionRuns, 0, len(order))
	for _, rev := range order {
		runs := by[rev]
		sort.SliceStable(runs, func(i, j int) bool { return runs[i].Name < runs[j].Name })
		out = append(out, RevisionRuns{Revision: rev, AtHead: rev == p.Head, Runs: runs})
	}
	return out
}

// RevisionRuns are the check runs at one revision, newest first per name.
type RevisionRuns struct {
	Revision string
	AtHead   bool
	Runs     []CheckRun
}

// judgeQueues orders the queues (counting ones first, by target) and says
// for each entry what it waits for. A target or commit it cannot read is
// an error, never a reason guessed without it.
func (s *Snapshot) judgeQueues(gitDir string, store *gitio.Store) error {
	var states []*queue.State
	for _, q := range s.Queues {
		states = append(states, q.state)
	}
	for _, q := range s.Queues {
		if sel := queue.SelectQueue(states, q.Target); sel != nil && sel.ID == q.ID {
			q.Counts = true
		}
		switch tip, err := gitio.ReadRef(gitDir, q.Target); {
		case err == nil:
			q.Tip = tip.String()
		case !errors.Is(err, plumbing.ErrReferenceNotFound):
			return fmt.Errorf("reading the queue's target %s in %s: %w", q.Target, gitDir, err)
		}
		if err := s.judgeQueue(q, store); err != nil {
			return fmt.Errorf("judging the queue for %s in %s: %w", q.Target, gitDir, err)
		}
	}
	sort.SliceStable(s.Queues, func(i, j int) bool {
		a, b := s.Queues[i], s.Queues[j]
		if a.Counts != b.Counts {
			return a.Counts
		}
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		return a.ID < b.ID
	})
	return nil
}

func (s *Snapshot) judgeQueue(q *Queue, store *gitio.Store) (err error) {
	st := q.state
	// contains is the planner's question "does the target contain rev". A
	// commit it cannot read (other than one the repository does not hold:
	// not contained) makes the whole judgement an error.
	contains := func(tip, rev plumbing.Hash) bool {
		if tip.IsZero() || tip == rev {
			return !tip.IsZero()
		}
		bases, merr := mergetree.MergeBases(receive.Objects{Store: store}, rev, tip)
		if merr != nil && !errors.Is(merr, plumbing.ErrObjectNotFound) && !errors.Is(merr, mergetree.ErrUnrelated) && err == nil {
			err = fmt.Errorf("does %s contain %s: %w", tip, rev, merr)
		}
		return merr == nil && slices.Contains(bases, rev)
	}
	tip := plumbing.ZeroHash
	if q.Tip != "" {
		tip = plumbing.NewHash(q.Tip)
	}
	b, _ := s.Trust.Rules.For(st.Target)
	// ahead: the entries before this one that are not yet green — in its
	// lane when the target has partitions (lanes.go), else all of them.
	var all []string
	inLane := map[string][]string{}
	for i, e := range st.Entries {
		en := Entry{Position: i + 1, PR: e.PR, Head: e.Head}
		p := s.PRs[e.PR]
		if p != nil {
			en.Title = p.Title
		}
		r, ok := st.LatestCandidate(e.PR)
		if ok && r.Invalidated.IsZero() && r.Head == e.Head {
			en.Candidate, en.Branch, en.Lane = r.Step, r.Branch, r.Partition
		}
		ahead := all
		if en.Lane != "" {
			ahead = inLane[en.Lane]
		}
		green := false
		leaving := "" // the planner's own settle rule: the entry leaves next run
		if p != nil {
			leaving = settles(st, e, p.State, tip, contains)
		}
		switch {
		case p == nil:
			en.Waiting = "the pull request cannot be read: the next run withdraws it"
		case leaving != "":
			en.Waiting = leaving
		default:
			if ok, reasons := p.Satisfies(b, e.Head); !ok {
				en.Waiting = "waiting for review: " + strings.Join(trimIDs(reasons, e.PR), "; ")
				break
			}
			if why := ownersWaiting(p); why != "" && e.Head == p.Head {
				en.Waiting = "waiting for path owners: " + why
				break
			}
			if en.Candidate == "" {
				en.Waiting = "no candidate yet: the next `git+ queue run` builds one"
				if len(ahead) > 0 {
					en.Waiting += " (behind " + strings.Join(ahead, ", ") + ")"
				}
				break
			}
			for _, name := range b.RequiredChecks {
				state, ok := p.Check(name, en.Candidate)
				if !ok {
					state = "pending"
				}
				en.Checks = append(en.Checks, CheckState{Name: name, State: state})
			}
			if r.Trial && r.Seq > e.Seq {
				// Batch checks: a red group searched aside, in trials on
				// the target (docs/queue.md, "Searching a red group aside").
				end, _ := s.groupEndVerdict(st, b, r.GroupEnd)
				what := "checks pending at " + short(r.GroupEnd)
				switch {
				case end.Verdict == queue.Green:
					what = "green: the next run puts it back into the chain"
				case end.Verdict == queue.Red && r.GroupSize == 1:
					what = "red on its own: the next run evicts it (or, if the other half of its group is red too, tries it alone once more)"
				case end.Verdict == queue.Red:
					what = "red: the next run tries its halves"
				}
				was := "its group was red"
				if b.Every() == 1 {
					// Strict checks on a branch with partitions: a red step
					// tried alone (docs/queue.md, "A red strict step tried
					// aside"), evicted if its trial is red.
					was = "its step was red"
					if end.Verdict == queue.Red {
						what = "red again: the next run evicts it"
					}
				}
				en.Waiting = fmt.Sprintf("aside from the chain, in a trial of %d on %s (%s): %s", r.GroupSize, short(r.Parents[0]), was, what)
				en.Red = end.Verdict == queue.Red && r.GroupSize == 1
				break
			}
			// The planner's own verdict of the step (queue.StepVerdict: the
			// boundary's check rule, plus fresh verdicts), so the page says
			// red exactly when the next run would evict.
			v := queue.StepVerdict(st, e.PR, p.State, b, s.Trust, en.Candidate)
			if v.Verdict == queue.Pending && r.GroupEnd != "" && r.GroupEnd != r.Step {
				// Batch checks: an inner step of a group is vouched for by
				// its group's last step (docs/queue.md, "Batch checks").
				if end, ok := s.groupEndVerdict(st, b, r.GroupEnd); ok && end.Verdict == queue.Green {
					v = end
				} else {
					en.Waiting = fmt.Sprintf("checks pending at its group's last step %s (a group of %d, checkEvery %d)", short(r.GroupEnd), r.GroupSize, b.Every())
					break
				}
			}
			switch {
			case v.Verdict == queue.Red:
				en.Red = true
				failed := make([]string, len(v.Failed))
				for i, name := range v.Failed {
					failed[i] = name + " " + pr.Failure
				}
				en.Waiting = fmt.Sprintf("red: %s on candidate %s; the next run evicts it", strings.Join(failed, ", "), short(en.Candidate))
			case v.Verdict == queue.Pending:
				en.Waiting = fmt.Sprintf("check %s pending on candidate %s", strings.Join(v.Missing, ", "), short(en.Candidate))
			case len(ahead) > 0:
				green = true
				en.Waiting = "green; lands with or after " + strings.Join(ahead, ", ")
			default:
				green = true
				en.Waiting = "green: the next run lands it"
			}
		}
		if !green {
			all = append(all, fmt.Sprintf("#%d %s", en.Position, short(e.PR)))
			inLane[en.Lane] = append(inLane[en.Lane], fmt.Sprintf("#%d %s", en.Position, short(e.PR)))
		}
		if i == 0 && en.Red {
			q.Red = true
		}
		q.Entries = append(q.Entries, en)
		if p != nil {
			p.Queue = &QueueStatus{Queue: q.ID, Target: q.Target, Position: en.Position, Candidate: en.Candidate,
				Checks: en.Checks, Waiting: en.Waiting, Red: en.Red}
		}
	}
	q.Lanes = laneList(b, q.Entries)
	for i := len(st.Left) - 1; i >= 0; i-- {
		l := st.Left[i]
		q.Left = append(q.Left, l)
		if p := s.PRs[l.PR]; p != nil && p.Queue == nil {
			p.Queue = &QueueStatus{Queue: q.ID, Target: q.Target, Left: l.Reason, Detail: l.Detail}
		}
	}
	return err
}

// settles says why entry e leaves at the next run (queue.Settles), or "".
func settles(st *queue.State, e queue.Entry, p *pr.State, tip plumbing.Hash, contains func(tip, rev plumbing.Hash) bool) string {
	x, ok := queue.Settles(st, e, p, tip, contains)
	if !ok {
		return ""
	}
	switch x.Reason {
	case queue.ReasonLanded:
		return fmt.Sprintf("landed: %s; the next run records it", x.Detail)
	case queue.ReasonStale:
		return fmt.Sprintf("stale: %s; the next run removes it", x.Detail)
	}
	return fmt.Sprintf("%s: %s; the next run removes it", x.Reason, x.Detail)
}

// groupEndVerdict judges the group end step of queue st (batch checks):
// the verdict of the entry whose current candidate it is.
func (s *Snapshot) groupEndVerdict(st *queue.State, b trust.Branch, end string) (queue.Judged, bool) {
	for _, e := range st.Entries {
		r, ok := st.LatestCandidate(e.PR)
		p := s.PRs[e.PR]
		if ok && r.Step == end && r.Invalidated.IsZero() && p != nil {
			return queue.StepVerdict(st, e.PR, p.State, b, s.Trust, end), true
		}
	}
	return queue.Judged{}, false
}

// trimIDs drops "pull request <id> " from the planner's reasons: the page
// already says which.
func trimIDs(reasons []string, id string) []string {
	out := make([]string, len(reasons))
	for i, r := range reasons {
		out[i] = strings.ReplaceAll(r, "pull request "+id+" ", "")
	}
	return out
}

// landings groups the pr.merged records by the branch commit that carried
// them.
func (s *Snapshot) landings() {
	by := map[string]*Landing{}
	for _, p := range s.PRList {
		for _, m := range p.Merged {
			key := m.Branch + " " + m.Commit
			l, ok := by[key]
			if !ok {
				l = &Landing{Commit: m.Commit, Branch: m.Branch}
				by[key] = l
			}
			for _, it := range p.Timeline {
				if it.Event == m.Event.String() && it.Time.After(l.Time) {
					l.Time = it.Time
				}
			}
			lp := LandedPR{ID: p.ID, Title: p.Title, Head: m.Revision}
			for _, b := range p.State.Bypassed {
				if b.Head == m.Revision && b.Base == m.Branch {
					lp.Bypass = b.By + ": " + b.Reason
				}
			}
			if lp.Bypass != "" {
				s.Bypassed++
			}
			l.PRs = append(l.PRs, lp)
		}
	}
	for _, l := range by {
		sort.Slice(l.PRs, func(i, j int) bool { return l.PRs[i].ID < l.PRs[j].ID })
		s.Landings = append(s.Landings, *l)
	}
	sort.Slice(s.Landings, func(i, j int) bool {
		a, b := s.Landings[i], s.Landings[j]
		if !a.Time.Equal(b.Time) {
			return a.Time.After(b.Time)
		}
		return a.Commit < b.Commit
	})
}

// laneList says, on a target with partitions, which queued entries each
// lane holds: "web: #1, #3", in the rules' order, then "global" for
// entries built in a chain on the tip and "unassigned" for those without a
// candidate yet (docs/queue.md, "Partitions and lanes").
func laneList(b trust.Branch, entries []Entry) []string {
	if len(b.Partitions) == 0 {
		return nil
	}
	by := map[string][]string{}
	for _, e := range entries {
		lane := e.Lane
		switch {
		case lane != "":
		case e.Candidate != "":
			lane = queue.StatsGlobal
		default:
			lane = queue.StatsUnassigned
		}
		by[lane] = append(by[lane], fmt.Sprintf("#%d", e.Position))
	}
	var out []string
	names := []string{}
	for _, p := range b.Partitions {
		names = append(names, p.Name)
	}
	for _, name := range append(names, queue.StatsGlobal, queue.StatsUnassigned) {
		if len(by[name]) > 0 {
			out = append(out, name+": "+strings.Join(by[name], ", "))
		}
	}
	return out
}
