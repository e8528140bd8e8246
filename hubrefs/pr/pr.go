package pr

import (
	"bytes"
	"fmt"
	"slices"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Opener is who opened the pull request: the key that signed pr.opened and
// the member holding it in the trust state given to the fold ("" once the
// key is no longer a member's).
type Opener struct {
	Name string
	Key  hubrefs.PublicKey
}

// Review is one review.submitted.
type Review struct {
	Event   plumbing.Hash
	Key     hubrefs.PublicKey
	Head    string
	Base    string
	Verdict string
}

// Dismissal is one review.dismissed: it lifts the veto of the review
// event Review (docs/trust.md, "Vetoes").
type Dismissal struct {
	Event  plumbing.Hash
	Key    hubrefs.PublicKey
	Review plumbing.Hash
	Reason string
}

// Bypass is one pr.bypassed (docs/trust.md, "An audited bypass"). By is
// the member holding its key in the trust state it was judged against.
type Bypass struct {
	Event  plumbing.Hash
	Key    hubrefs.PublicKey
	By     string
	Head   string
	Base   string
	Reason string
}

// CheckRun is one check.completed.
type CheckRun struct {
	Event      plumbing.Hash
	Key        hubrefs.PublicKey
	Name       string
	Revision   string // the payload's head: any revision
	Conclusion string
	URL        string
	Sandbox    string // how the command ran, as its worker says ("" before git+ said it)
}

// CheckKey names a check result: a check name at a revision.
type CheckKey struct{ Name, Revision string }

// MergedRecord is one pr.merged.
type MergedRecord struct {
	Event    plumbing.Hash
	Revision string // the head of the pull request that landed
	Branch   string
	Commit   string // the branch commit that carried it
	Trust    string // the trust tip it was written under ("" in older records)
}

// State is a pull request folded from its events.
type State struct {
	ID     string
	State  string // Open, Closed or Merged
	Base   string // full ref
	Head   string // commit id
	Title  string
	Body   string
	Opener Opener
	Heads  []string // every head the pull request proposed, oldest first
	Source string   // the branch pr.opened named as the head's source ("" if none)
	// Draft: opened with "draft": true or marked pr.draft, and not pr.ready
	// since (docs/events.md, "Drafts"). A draft cannot enter a queue nor
	// land.
	Draft bool

	// Judged against the trust state given to Fold (or Rejudge).
	Approvals []string            // member names, sorted
	Checks    map[CheckKey]string // latest conclusion per (name, revision)
	// Confined holds, per (name, revision), the latest conclusion among
	// the completions whose command ran confined ("sandbox":
	// "landlock-<N>", with "+reads" or not): what a branch with
	// requireSandbox counts (ChecksOn).
	// Nil when there is none.
	Confined map[CheckKey]string
	// ApproverTeams holds, for each name in Approvals that belongs to a
	// team, its teams (sorted): what a branch's "approvers" are matched
	// against (ReviewAt; docs/trust.md, "Who counts").
	ApproverTeams map[string][]string
	// Vetoes are the members whose latest verdict is changes, not
	// dismissed (sorted): what blockOnChangesRequested reads.
	Vetoes []string

	Threads           map[string]bool // thread id → resolved
	UnresolvedThreads int
	Reviews           []Review    // every review, causal order
	Runs              []CheckRun  // every check.completed, causal order
	Dismissals        []Dismissal // every review.dismissed, causal order
	Bypasses          []Bypass    // every pr.bypassed, causal order (By not set)
	// Bypassed are the bypasses whose signer holds hub.bypass in the trust
	// state given to the fold, By set and Key nil: what BypassAt reads.
	Bypassed []Bypass
	Merged   []MergedRecord
	Tip      plumbing.Hash

	seen  map[plumbing.Hash]bool
	heads map[string]bool // the set of Heads
}

func sameKey(a, b hubrefs.PublicKey) bool {
	return a != nil && b != nil && bytes.Equal(a.Marshal(), b.Marshal())
}

// Fold folds one pull request ref's events, given parents before children
// (causal order), judging approvals and checks against t, the trust state
// current now. Structural events are not re-authorised (the boundary
// admitted them against the trust of their push); a malformed payload, an
// unknown type, another repository or a broken DAG is an *EventError.
func Fold(events []hubrefs.Event, t *trust.State) (*State, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: no trust state to judge the pull request against", ErrOrder)
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("%w: no events", ErrOrder)
	}
	pre := predecode(events, t.RepoID)
	var s *State
	for i, ev := range events {
		var d *decoded
		if pre != nil {
			d = &pre[i]
		}
		if s == nil {
			if len(ev.Parents) > 0 || ev.Type != hubrefs.TypePROpened {
				return nil, eventErr(ev, fmt.Errorf("%w: the root of a pull request ref must be pr.opened without parents", ErrOrder))
			}
			p, err := decodeOnce(ev, t.RepoID, d)
			if err != nil {
				return nil, eventErr(ev, err)
			}
			s = open(ev, p)
			continue
		}
		if err := s.applyDecoded(ev, t.RepoID, d); err != nil {
			return nil, err
		}
	}
	s.Rejudge(t)
	return s, nil
}

// decoded is one event's payload decoded ahead of the fold.
type decoded struct {
	p   payload
	err error
}

// parallelDecode is the log length from which Fold decodes payloads on all
// CPUs before applying them in order: decoding (strict JSON) is most of a
// long fold's cost, and each payload decodes alone (docs/scale.md).
var parallelDecode = 512

// predecode decodes every payload of a long log on GOMAXPROCS goroutines;
// nil for a short one. Decoding is pure, so the fold that applies the
// results in order reports exactly the error it would have met.
func predecode(events []hubrefs.Event, repoID string) []decoded {
	return hubrefs.ParallelMap(len(events), parallelDecode, func(i int) decoded {
		var d decoded
		d.p, d.err = decode(events[i], repoID)
		return d
	})
}

// decodeOnce is d's result when the payload was decoded ahead, else decode.
func decodeOnce(ev hubrefs.Event, repoID string, d *decoded) (payload, error) {
	if d != nil {
		return d.p, d.err
	}
	return decode(ev, repoID)
}

func open(ev hubrefs.Event, p payload) *State {
	return &State{
		ID: p.id, State: Open, Base: p.base, Head: p.head, Title: p.title, Body: p.body, Source: p.source, Draft: p.draft,
		Opener:  Opener{Key: ev.Signer},
		Heads:   []string{p.head},
		Threads: map[string]bool{},
		Checks:  map[CheckKey]string{},
		Tip:     ev.ID,
		seen:    map[plumbing.Hash]bool{ev.ID: true},
		heads:   map[string]bool{p.head: true},
	}
}

// Apply folds one more stored event (its parents already folded) and
// re-judges against t.
func (s *State) Apply(ev hubrefs.Event, t *trust.State) error {
	if t == nil {
		return eventErr(ev, fmt.Errorf("%w: no trust state to judge the pull request against", ErrOrder))
	}
	if err := s.apply(ev, t.RepoID); err != nil {
		return err
	}
	s.Rejudge(t)
	return nil
}

func (s *State) apply(ev hubrefs.Event, repoID string) error {
	return s.applyDecoded(ev, repoID, nil)
}

// applyDecoded is apply with ev's payload decoded ahead when d is not nil.
func (s *State) applyDecoded(ev hubrefs.Event, repoID string, d *decoded) error {
	if s.seen[ev.ID] {
		return eventErr(ev, fmt.Errorf("%w: event folded twice", ErrOrder))
	}
	if len(ev.Parents) == 0 {
		return eventErr(ev, fmt.Errorf("%w: a second root; a pull request ref has one pr.opened", ErrOrder))
	}
	if err := hubrefs.CheckNext(s.Tip, ev); err != nil {
		return eventErr(ev, fmt.Errorf("%w: %w", ErrOrder, err))
	}
	if ev.Type == hubrefs.TypePROpened {
		return eventErr(ev, fmt.Errorf("%w: pr.opened is only the root", ErrOrder))
	}
	p, err := decodeOnce(ev, repoID, d)
	if err != nil {
		return eventErr(ev, err)
	}
	switch ev.Type {
	case hubrefs.TypePRUpdated:
		s.Head = p.head
		if s.heads == nil { // a State not built by Fold
			s.heads = make(map[string]bool, len(s.Heads))
			for _, h := range s.Heads {
				s.heads[h] = true
			}
		}
		if !s.heads[p.head] {
			s.heads[p.head] = true
			s.Heads = append(s.Heads, p.head)
		}
	case hubrefs.TypePRRetargeted:
		s.Base = p.base
	case hubrefs.TypePRClosed:
		if s.State != Merged {
			s.State = Closed
		}
	case hubrefs.TypePRReopened:
		if s.State != Merged {
			s.State = Open
		}
	case hubrefs.TypePRMerged:
		s.State = Merged
		s.Merged = append(s.Merged, MergedRecord{Event: ev.ID, Revision: p.revision, Branch: p.branch, Commit: p.commit, Trust: p.trust})
	case hubrefs.TypeReviewSubmit:
		s.Reviews = append(s.Reviews, Review{Event: ev.ID, Key: ev.Signer, Head: p.head, Base: p.base, Verdict: p.verdict})
	case hubrefs.TypeReviewDismiss:
		s.Dismissals = append(s.Dismissals, Dismissal{Event: ev.ID, Key: ev.Signer, Review: plumbing.NewHash(p.review), Reason: p.reason})
	case hubrefs.TypePRBypassed:
		s.Bypasses = append(s.Bypasses, Bypass{Event: ev.ID, Key: ev.Signer, Head: p.head, Base: p.base, Reason: p.reason})
	case hubrefs.TypePRDraft:
		s.Draft = true
	case hubrefs.TypePRReady:
		s.Draft = false
	case hubrefs.TypeThreadOpened:
		if _, ok := s.Threads[p.thread]; !ok {
			s.Threads[p.thread] = false
			s.UnresolvedThreads++
		}
	case hubrefs.TypeThreadResolved:
		if resolved, ok := s.Threads[p.thread]; ok && !resolved {
			s.Threads[p.thread] = true
			s.UnresolvedThreads--
		}
	case hubrefs.TypeCheckCompleted:
		s.Runs = append(s.Runs, CheckRun{Event: ev.ID, Key: ev.Signer, Name: p.name, Revision: p.head, Conclusion: p.conclusion, URL: p.url, Sandbox: p.sandbox})
	}
	s.seen[ev.ID] = true
	s.Tip = ev.ID
	return nil
}

// Rejudge recomputes what depends on trust — Opener.Name, Approvals and
// Checks — against t.
func (s *State) Rejudge(t *trust.State) {
	s.Opener.Name = ""
	if m, ok := t.MemberByKey(s.Opener.Key); ok {
		s.Opener.Name = m.Name
	}
	s.Approvals = s.approvals(s.Head, s.Base, t)
	s.ApproverTeams = nil
	for _, name := range s.Approvals {
		if teams := t.TeamsOf(name); len(teams) > 0 {
			if s.ApproverTeams == nil {
				s.ApproverTeams = map[string][]string{}
			}
			s.ApproverTeams[name] = teams
		}
	}
	s.Vetoes = s.vetoes(t)
	s.Bypassed = nil
	for _, b := range s.Bypasses {
		if m, ok := t.MemberByKey(b.Key); ok && m.CanBypass(b.Base) {
			b.By, b.Key = m.Name, nil
			s.Bypassed = append(s.Bypassed, b)
		}
	}
	s.Checks = map[CheckKey]string{}
	s.Confined = nil
	for _, r := range s.Runs {
		if t.Has(r.Key, trust.CheckCap(r.Name)) {
			s.Checks[CheckKey{r.Name, r.Revision}] = r.Conclusion
			if Confined(r.Sandbox) {
				if s.Confined == nil {
					s.Confined = map[CheckKey]string{}
				}
				s.Confined[CheckKey{r.Name, r.Revision}] = r.Conclusion
			}
		}
	}
}

// isOpener reports whether m is the opener: same key, or the member now
// holding the opener's key.
func (s *State) isOpener(key hubrefs.PublicKey, t *trust.State) bool {
	if sameKey(key, s.Opener.Key) {
		return true
	}
	m, ok1 := t.MemberByKey(key)
	o, ok2 := t.MemberByKey(s.Opener.Key)
	return ok1 && ok2 && m.Name == o.Name
}

// Approved returns the members whose latest verdict approves head for base
// under t: the rule of Approvals at any head and base. To judge a pull
// request as it stood earlier, fold its events up to that point.
func (s *State) Approved(head, base string, t *trust.State) []string {
	return s.approvals(head, base, t)
}

// approvals are the current members holding hub.review, not the opener,
// whose latest verdict (approve or changes; comments carry none) approves
// exactly head for base.
func (s *State) approvals(head, base string, t *trust.State) []string {
	latest := s.latestVerdicts(t)
	names := []string{}
	for name, r := range latest {
		m := t.Members[name]
		if r.Verdict == Approve && r.Head == head && r.Base == base && m.Has(trust.CapReview) && !s.isOpener(m.Key, t) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// latestVerdicts is each current member's latest review that carries a
// verdict (approve or changes; comments carry none), by member name under
// t: what approvals and vetoes both read.
func (s *State) latestVerdicts(t *trust.State) map[string]Review {
	latest := map[string]Review{}
	for _, r := range s.Reviews {
		if r.Verdict == Comment {
			continue
		}
		if m, ok := t.MemberByKey(r.Key); ok {
			latest[m.Name] = r
		}
	}
	return latest
}

// vetoes are the current members holding hub.review, not the opener, whose
// latest verdict (approve or changes; comments carry none) is changes and
// not dismissed by a current holder of hub.bypass (docs/trust.md,
// "Vetoes"). Like approvals, they are judged against t: a removed
// reviewer's veto, or a dismissal by someone who lost hub.bypass, stops
// counting.
func (s *State) vetoes(t *trust.State) []string {
	latest := s.latestVerdicts(t)
	var dismissed map[plumbing.Hash]bool
	for _, d := range s.Dismissals {
		if t.CanBypass(d.Key, s.Base) {
			if dismissed == nil {
				dismissed = map[plumbing.Hash]bool{}
			}
			dismissed[d.Review] = true
		}
	}
	var names []string
	for name, r := range latest {
		m := t.Members[name]
		if r.Verdict == Changes && !dismissed[r.Event] && m.Has(trust.CapReview) && !s.isOpener(m.Key, t) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Check returns the latest conclusion of check name at revision rev from a
// current holder of hub.check:<name>.
func (s *State) Check(name, rev string) (string, bool) {
	c, ok := s.Checks[CheckKey{name, rev}]
	return c, ok
}

// ChecksAt returns every check's conclusion at rev.
func (s *State) ChecksAt(rev string) map[string]string {
	out := map[string]string{}
	for k, c := range s.Checks {
		if k.Revision == rev {
			out[k.Name] = c
		}
	}
	return out
}

// Authorize judges a new event ev for this pull request: before is the
// state folded from the events it follows (nil for the root pr.opened), t
// the trust state current at the push. The error is an *EventError.
func Authorize(ev hubrefs.Event, before *State, t *trust.State) error {
	if err := authorize(ev, before, t); err != nil {
		return eventErr(ev, err)
	}
	return nil
}

func authorize(ev hubrefs.Event, before *State, t *trust.State) error {
	if t == nil {
		return fmt.Errorf("%w: no trust state", ErrOrder)
	}
	if ev.Signer == nil {
		return fmt.Errorf("%w: sign pull request events with a member's SSH key", ErrUnsigned)
	}
	p, err := decode(ev, t.RepoID)
	if err != nil {
		return err
	}
	m, ok := t.MemberByKey(ev.Signer)
	if !ok {
		return fmt.Errorf("%w: the signing %s key is not a member's", ErrUnauthorized, ev.Signer.Type())
	}
	need := func(caps ...string) error {
		for _, c := range caps {
			if m.Has(c) {
				return nil
			}
		}
		return fmt.Errorf("%w: member %q holds none of %v", ErrUnauthorized, m.Name, caps)
	}
	if ev.Type == hubrefs.TypePROpened {
		if before != nil || len(ev.Parents) > 0 {
			return fmt.Errorf("%w: pr.opened is only the root of a pull request ref", ErrOrder)
		}
		return need(trust.CapPR)
	}
	if before == nil || len(ev.Parents) == 0 {
		return fmt.Errorf("%w: the root of a pull request ref must be pr.opened", ErrOrder)
	}
	stateErr := func(format string, a ...any) error {
		return fmt.Errorf("%w: pull request %s is %s; "+format, append([]any{ErrState, before.ID, before.State}, a...)...)
	}
	switch ev.Type {
	case hubrefs.TypePRUpdated, hubrefs.TypePRRetargeted, hubrefs.TypePRClosed, hubrefs.TypePRReopened, hubrefs.TypePRDraft, hubrefs.TypePRReady:
		if !(m.Has(trust.CapAdmin) || sameKey(ev.Signer, before.Opener.Key) && m.Has(trust.CapPR)) {
			return fmt.Errorf("%w: only the opener (holding hub.pr) or a repo.admin may write %s; %q is neither", ErrUnauthorized, ev.Type, m.Name)
		}
		switch {
		case before.State == Merged:
			return stateErr("a merged pull request does not change")
		case ev.Type == hubrefs.TypePRReopened && before.State != Closed:
			return stateErr("only a closed pull request reopens")
		case ev.Type != hubrefs.TypePRReopened && before.State != Open:
			return stateErr("reopen it first")
		case ev.Type == hubrefs.TypePRUpdated && p.head == before.Head:
			return stateErr("its head is already %s", p.head)
		case ev.Type == hubrefs.TypePRRetargeted && p.base == before.Base:
			return stateErr("its base is already %s", p.base)
		case ev.Type == hubrefs.TypePRDraft && before.Draft:
			return stateErr("it is a draft already")
		case ev.Type == hubrefs.TypePRReady && !before.Draft:
			return stateErr("it is not a draft")
		}
	case hubrefs.TypePRBypassed:
		if !m.CanBypass(before.Base) {
			return bypassErr(m, before.Base)
		}
		switch {
		case before.State != Open:
			return stateErr("only an open pull request is bypassed")
		case p.head != before.Head:
			return fmt.Errorf("%w: pull request %s's head is %s, not %s: a bypass names the current head", ErrState, before.ID, before.Head, p.head)
		case p.base != before.Base:
			return fmt.Errorf("%w: pull request %s's base is %s, not %s: a bypass names the current base", ErrState, before.ID, before.Base, p.base)
		}
	case hubrefs.TypeReviewDismiss:
		if !m.CanBypass(before.Base) {
			return bypassErr(m, before.Base)
		}
		target := plumbing.NewHash(p.review)
		var found *Review
		for i := range before.Reviews {
			if before.Reviews[i].Event == target {
				found = &before.Reviews[i]
			}
		}
		switch {
		case found == nil:
			return fmt.Errorf("%w: pull request %s has no review %s", ErrState, before.ID, p.review)
		case found.Verdict != Changes:
			return fmt.Errorf("%w: review %s is %s, not a changes request; only a changes request is dismissed", ErrState, p.review, found.Verdict)
		}
		for _, d := range before.Dismissals {
			if d.Review == target {
				return fmt.Errorf("%w: review %s is dismissed already (event %s)", ErrState, p.review, d.Event)
			}
		}
	case hubrefs.TypeReviewSubmit:
		if err := need(trust.CapReview); err != nil {
			return err
		}
		if p.verdict == Approve && before.isOpener(ev.Signer, t) {
			return fmt.Errorf("%w: %q opened pull request %s and cannot approve it", ErrUnauthorized, m.Name, before.ID)
		}
	case hubrefs.TypeThreadOpened, hubrefs.TypeThreadResolved:
		if err := need(trust.CapPR, trust.CapReview); err != nil {
			return err
		}
		resolved, exists := before.Threads[p.thread]
		switch {
		case ev.Type == hubrefs.TypeThreadOpened && exists:
			return fmt.Errorf("%w: thread %q already exists in pull request %s", ErrState, p.thread, before.ID)
		case ev.Type == hubrefs.TypeThreadResolved && !exists:
			return fmt.Errorf("%w: pull request %s has no thread %q", ErrState, before.ID, p.thread)
		case ev.Type == hubrefs.TypeThreadResolved && resolved:
			return fmt.Errorf("%w: thread %q is already resolved", ErrState, p.thread)
		}
	case hubrefs.TypeCheckStarted, hubrefs.TypeCheckCompleted:
		return need(trust.CheckCap(p.name))
	case hubrefs.TypePRMerged:
		if err := need(trust.CapQueue, trust.CapSourcePush); err != nil {
			return err
		}
		if before.State == Merged {
			return stateErr("it was merged already")
		}
		if !slices.Contains(before.Heads, p.revision) {
			return fmt.Errorf("%w: revision %s was never a head of pull request %s", ErrState, p.revision, before.ID)
		}
	}
	return nil
}

// bypassErr: m may not bypass on branch (trust.Member.CanBypass).
func bypassErr(m *trust.Member, branch string) error {
	return fmt.Errorf("%w: member %q holds neither %s nor a %s<pattern> matching %s", ErrUnauthorized, m.Name, trust.CapBypass, trust.CapBypassPrefix, branch)
}
