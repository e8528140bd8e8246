package policy

// Audit: the offline verification of a protected branch's history
// (docs/architecture.md). Pure, like Judge: a function of an object store and refs.
//
// Decisions where the design is silent:
//   - The walk follows first parents from the branch tip back to Since (or the
//     root). Since (or the root) itself is not judged: history before it is
//     out of scope. Each first-parent step C_{i-1}→C_i is tried as a landing
//     onto the last justified tip:
//     a direct landing (C_i is a head the pull request proposed) or a
//     candidate step (C_i has the parents [C_{i-1}, H] with H a pull request
//     head). A commit that is neither is pending: a later direct landing
//     covers every pending commit below it (they are the landed head's own
//     commits; the hook accepts any fast-forward to an approved head), a
//     candidate step does not (its first parent must be the justified tip).
//     What is still pending at the end, or below a candidate, is unjustified.
//   - "As the pull request stood when it landed": a pr.merged naming the
//     commit pins the moment. The pull request is folded from the events that
//     are causal ancestors of that pr.merged only, and must then be open,
//     based on the branch, with the landed head current, approved, threads
//     resolved if required, and checks as the hook requires them (on the head
//     for a direct landing, on the candidate for a candidate step).
//   - Without a pr.merged naming the commit (a candidate chain pushed by hand
//     and never settled by a queue run, a head pushed with plain git) the
//     landing is justified when some causal prefix of the pull request's
//     events justifies it, judged under the current trust.
//   - Trust "then": the rules in force for a landing are picked by
//     causality, never by a signer's clock (auditepoch.go; docs/trust.md,
//     "The rules in force"): a pr.merged names the trust tip it was
//     written under, which the hook requires to be the tip at the push, so
//     it bounds from above the trust of its own landing and of every
//     landing below it on the first-parent chain; the audit judges the
//     landing under the tightest such bound. A record older than that
//     field is judged by its committer time as before, clamped between the
//     trust the landing below was judged under and the bound the records
//     above give. Because a landing may have been judged by the hook under
//     trust older than the bound, a landing refused there is judged again
//     under the current trust, and is justified if that passes. Rules
//     (protection, approvals, checks, candidates) come from the same trust
//     state.
//   - A commit with no pull request records at all is judged under the
//     current rules: justified when the branch is unprotected or does not
//     require pull requests (any fast-forward), else not-a-pr-head.
//   - Not judged: queueDepth (push boundaries are not recorded) and
//     landings reachable only through second parents (a head that merged
//     the branch in brings them): they are not reported, only asked, for
//     the path owners of the landing that brought them, which of them was
//     the tip it fast-forwarded (auditfrom.go).

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// AuditInput is what an audit reads.
type AuditInput struct {
	Objects Objects
	Refs    map[string]plumbing.Hash // every ref of the replica
	Branch  string                   // full ref name
	Since   plumbing.Hash            // zero: the root of the first-parent chain
	Cache   Cache                    // optional fold cache

	// Workers reads, verifies and folds the pull request logs on this many
	// goroutines (0 or 1: on the calling one). Above 1, Objects and Cache
	// must be safe for concurrent use, as receive.Store and
	// receive.DirCache are. The report does not depend on it.
	Workers int
}

// Landing kinds.
const (
	LandingDirect      = "direct"
	LandingCandidate   = "candidate"
	LandingUnprotected = "unprotected" // no pull request required
)

// AuditLanding is one justified landing.
type AuditLanding struct {
	Commit plumbing.Hash
	Kind   string
	PR     string // "" for unprotected
	Record string // "pr.merged <event id>", or "records" when no pr.merged names it
	Covers int    // commits below it it justifies (a direct landing's own commits)
	Trust  string // "then" or "current"
	// Bypass: the direct landing was justified by a bypass, not by its
	// reviews and checks (docs/trust.md, "An audited bypass").
	Bypass *AuditBypass
}

// AuditBypass is who bypassed the rules for a landing, and why.
type AuditBypass struct {
	By     string
	Reason string
	Event  plumbing.Hash // the pr.bypassed
}

// AuditFinding is one unjustified commit.
type AuditFinding struct {
	Commit plumbing.Hash
	Code   string
	Reason string
}

// AuditReport is the result of an audit.
type AuditReport struct {
	Branch  string
	Tip     plumbing.Hash
	Since   plumbing.Hash // the commit the walk stopped at (not judged)
	Commits int           // commits judged (first-parent steps)
	// First: the root commit (Since) is among them: a pull request landed
	// it, creating the branch (auditfirst.go).
	First       bool
	Landings    []AuditLanding
	Unjustified []AuditFinding
}

// Counts returns the number of direct landings, candidate steps, other
// (unprotected) landings and commits covered by direct landings.
func (r *AuditReport) Counts() (direct, candidates, unprotected, covered int) {
	for _, l := range r.Landings {
		switch l.Kind {
		case LandingDirect:
			direct++
		case LandingCandidate, LandingSquash:
			candidates++
		default:
			unprotected++
		}
		covered += l.Covers
	}
	return
}

// prLog is one pull request's events and full fold.
type prLog struct {
	ref    string
	evs    []hubrefs.Event       // causal order
	idx    map[plumbing.Hash]int // built by before, when first needed
	st     *pr.State             // folded under current trust
	merged []*mergedRef          // its pr.merged records for the branch, causal order
	err    error                 // the log cannot be read or folded: the audit cannot run
}

type auditor struct {
	j        *judge
	branch   string
	trustEvs []hubrefs.Event
	trustIdx map[plumbing.Hash]int // trust event → its index in trustEvs
	now      *trust.State
	epochMu  sync.Mutex // guards epochs: loading workers share them
	epochs   map[int]*trust.State
	prs      []*prLog
	mergedBy map[plumbing.Hash][]*mergedRef  // by landed commit
	headsBy  map[plumbing.Hash][]*prLog      // every head ever proposed
	trees    map[plumbing.Hash]error         // rule 3 results by candidate
	marks    map[*trust.State]map[string]int // batch group ends on the chain → group size, per trust (vouched)
	objs     *objChecker                     // fsck.go: trees checked so far

	// The first-parent chain as the walk judges it (auditfrom.go): chain[0]
	// is Since (or the root), pos the index of each of its commits, cur the
	// index being judged, landedAt which indexes below cur are landings.
	chain    []*commit
	pos      map[plumbing.Hash]int
	cur      int
	landedAt []bool
	under    map[plumbing.Hash]*trust.State    // a justified landing → the trust that justified it
	tops     map[plumbing.Hash][]plumbing.Hash // auditfrom.go: the newest landings at or below a commit
	valid    map[plumbing.Hash]bool            // auditfrom.go: a commit off the chain is a landing
}

// mergedRef is one pr.merged record, with the part of its landing's
// judgement that reads only the pull request and the rules (judgeState),
// made while loading: as the pull request stood before the record, under
// trust then and, when that is not the current trust, under the current
// trust. What reads the landed commit (its parents, provenance, rule 3) is
// judged on the walk.
type mergedRef struct {
	p       *prLog
	ev      hubrefs.Event
	i       int // ev's index in p.evs
	rec     hubrefs.PRMerged
	named   int // the trust the record names (rec.Trust) as a prefix length of the log; 0: none
	then    *trust.State
	thenErr error // trust then cannot be folded
	atThen  stateVerdict
	atNow   stateVerdict // only when then != the current trust
}

// stateVerdict is judgeState's answer for one trust state.
type stateVerdict struct {
	b        trust.Branch
	required bool // the branch requires pull requests under that trust
	err      error
	// What the path owners finish judges read (owners.go).
	own ownersInput
}

// Audit walks the first-parent chain of in.Branch and judges every landing
// (docs/architecture.md). The error is for an audit that cannot run at all (no
// branch, no trust, Since not on the chain, an unreadable object); a landing
// that cannot be justified is a finding.
func Audit(in AuditInput) (*AuditReport, error) {
	j := newJudge(Input{Objects: in.Objects, Refs: in.Refs, Cache: in.Cache})
	if j.trustErr != nil {
		return nil, j.trustErr
	}
	tip, ok := in.Refs[in.Branch]
	if !ok || tip.IsZero() {
		return nil, fmt.Errorf("%s does not exist in this repository; fetch it (git clone --mirror, or git fetch origin '+refs/*:refs/*')", in.Branch)
	}
	a := &auditor{j: j, branch: in.Branch, now: j.trust, epochs: map[int]*trust.State{},
		mergedBy: map[plumbing.Hash][]*mergedRef{}, headsBy: map[plumbing.Hash][]*prLog{}, trees: map[plumbing.Hash]error{},
		under: map[plumbing.Hash]*trust.State{}, tops: map[plumbing.Hash][]plumbing.Hash{}, valid: map[plumbing.Hash]bool{}}
	evs, err := j.readLog(in.Refs[hubrefs.TrustRef])
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", hubrefs.TrustRef, err)
	}
	a.trustEvs = evs
	a.trustIdx = make(map[plumbing.Hash]int, len(evs))
	for i, ev := range evs {
		a.trustIdx[ev.ID] = i
	}

	// Pull request logs are read on the workers while this goroutine walks
	// the first-parent chain; a log that cannot be read is reported first.
	// Which trust each pr.merged is judged under depends on where its
	// commit is on the chain (auditepoch.go), so the logs are folded and
	// judged once both are done, on the workers again.
	read := a.forEachPR(in.Workers, a.read)
	chain, walkErr := a.walk(tip, in.Since)
	if err := read(); err != nil {
		return nil, err
	}
	if walkErr != nil {
		return nil, walkErr
	}
	a.setEpochs(chain) // auditepoch.go
	if err := a.forEachPR(in.Workers, a.load)(); err != nil {
		return nil, err
	}
	a.index()
	a.chain, a.landedAt = chain, make([]bool, len(chain))
	a.pos = make(map[plumbing.Hash]int, len(chain))
	for i, c := range chain {
		a.pos[c.id] = i
	}
	a.landedAt[0] = true // Since, or the root: not judged, the base of what is
	rep := &AuditReport{Branch: in.Branch, Tip: tip, Since: chain[0].id, Commits: len(chain) - 1}
	if in.Since.IsZero() {
		a.first(rep, chain[0]) // auditfirst.go
	}
	var pending []AuditFinding
	for i, c := range chain[1:] {
		a.cur = i + 1
		l, err := a.justify(c)
		var g *groupPending
		if err != nil && errors.As(err, &g) {
			if end, ok := a.vouched(chain[1:], i, g); ok {
				l, err = AuditLanding{Commit: c.id, Kind: LandingCandidate, PR: g.pr, Record: "group end " + end.String(), Trust: "then"}, nil
			}
		}
		if err != nil {
			var r *refusal
			if !errors.As(err, &r) {
				return nil, err
			}
			pending = append(pending, AuditFinding{Commit: c.id, Code: r.Code, Reason: r.Reason})
			continue
		}
		a.landedAt[a.cur] = true
		// Every pr.merged naming the landing, or a commit it covers, must
		// tell the truth about it, also when another record justified it
		// (auditmerged.go).
		told := []*commit{c}
		if l.Kind == LandingCandidate || l.Kind == LandingSquash {
			rep.Unjustified = append(rep.Unjustified, pending...)
		} else {
			l.Covers = len(pending)
			told = append(told, chain[a.cur-len(pending):a.cur]...)
		}
		pending = pending[:0]
		rep.Landings = append(rep.Landings, l)
		for _, t := range told {
			bad, err := a.falseRecords(t)
			if err != nil {
				return nil, err
			}
			rep.Unjustified = append(rep.Unjustified, bad...)
		}
	}
	rep.Unjustified = append(rep.Unjustified, pending...)
	return rep, nil
}

// walk returns the first-parent chain from tip down to since (or the root),
// oldest first.
func (a *auditor) walk(tip, since plumbing.Hash) ([]*commit, error) {
	var chain []*commit
	c, err := a.j.commits.get(tip)
	if err != nil {
		return nil, fmt.Errorf("reading the tip of %s: %w", a.branch, err)
	}
	for {
		chain = append(chain, c)
		if c.id == since || len(c.parents) == 0 {
			break
		}
		if c, err = a.j.commits.get(c.parents[0]); err != nil {
			return nil, fmt.Errorf("walking the first parents of %s: %w", a.branch, err)
		}
	}
	if !since.IsZero() && chain[len(chain)-1].id != since {
		return nil, fmt.Errorf("%s is not on the first-parent chain of %s; pass a commit of `git log --first-parent %s`", since, a.branch, a.branch)
	}
	for l, r := 0, len(chain)-1; l < r; l, r = l+1, r-1 {
		chain[l], chain[r] = chain[r], chain[l]
	}
	return chain, nil
}

// forEachPR starts do on every pull request log (the logs are listed the
// first time) on workers goroutines (on this one when workers < 2) and
// returns the function that waits for them and returns the error of the
// first log in ref order that failed. Each worker has its own judge to
// read through (and log memo): the judge's memo is not safe for concurrent
// use.
func (a *auditor) forEachPR(workers int, do func(r *judge, p *prLog) error) func() error {
	if a.prs == nil {
		var refs []string
		for ref := range a.j.in.Refs {
			if strings.HasPrefix(ref, hubrefs.PRRefPrefix) {
				refs = append(refs, ref)
			}
		}
		sort.Strings(refs)
		a.prs = make([]*prLog, len(refs))
		for i, ref := range refs {
			a.prs[i] = &prLog{ref: ref}
		}
	}
	errs := make([]error, len(a.prs))
	var wg sync.WaitGroup
	if workers < 2 || len(a.prs) < 2 {
		for i, p := range a.prs {
			errs[i] = do(a.j, p)
		}
	} else {
		var next atomic.Int64
		for w := 0; w < min(workers, len(a.prs)); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := newJudge(Input{Objects: a.j.in.Objects, Cache: a.j.in.Cache})
				for i := next.Add(1) - 1; i < int64(len(a.prs)); i = next.Add(1) - 1 {
					errs[i] = do(r, a.prs[i])
				}
			}()
		}
	}
	return func() error {
		wg.Wait()
		for i, p := range a.prs {
			if errs[i] != nil {
				p.err = errs[i]
				return errs[i]
			}
		}
		return nil
	}
}

// index lists the pr.merged records by the commit they name and the pull
// requests by every head they proposed, in ref order.
func (a *auditor) index() {
	for _, p := range a.prs {
		for _, m := range p.merged {
			c := plumbing.NewHash(m.rec.Commit)
			a.mergedBy[c] = append(a.mergedBy[c], m)
		}
		for _, h := range p.st.Heads {
			a.headsBy[plumbing.NewHash(h)] = append(a.headsBy[plumbing.NewHash(h)], p)
		}
	}
}

// read reads p's log through r and lists its pr.merged records for the
// branch.
func (a *auditor) read(r *judge, p *prLog) error {
	evs, err := r.readLog(a.j.in.Refs[p.ref])
	if err != nil {
		return fmt.Errorf("reading %s: %w", p.ref, err)
	}
	p.evs = evs
	for i, ev := range evs {
		if ev.Type != hubrefs.TypePRMerged {
			continue
		}
		var m hubrefs.PRMerged
		if err := ev.Unmarshal(&m); err != nil {
			// The fold refuses the payload first, as it did before: report
			// that error when it does.
			if _, ferr := pr.Fold(evs, a.now); ferr != nil {
				return fmt.Errorf("folding %s (repair it from a good replica): %w", p.ref, ferr)
			}
			return fmt.Errorf("%s: pr.merged %s: %w", p.ref, ev.ID, err)
		}
		if m.Branch == a.branch {
			p.merged = append(p.merged, &mergedRef{p: p, ev: ev, i: i, rec: m})
		}
	}
	return nil
}

// load folds p's log under the current trust and judges the pull request
// state of each of its pr.merged records for the branch (judgeState) under
// the trust its landing is judged by (setEpochs) and the current one.
func (a *auditor) load(r *judge, p *prLog) error {
	evs := p.evs
	var err error
	if fastFold && a.foldOnce(r, p) {
		return nil
	}
	if p.st, err = pr.Fold(evs, a.now); err != nil {
		return fmt.Errorf("folding %s (repair it from a good replica): %w", p.ref, err)
	}
	for _, m := range p.merged {
		if m.thenErr != nil {
			continue // reported when the landing is judged
		}
		before := p.before(m.ev)
		st, err := pr.Fold(before, m.then)
		m.atThen = a.judgeState(r, st, err, m.then, m.rec)
		if m.then != a.now {
			st, err := pr.Fold(before, a.now)
			m.atNow = a.judgeState(r, st, err, a.now, m.rec)
		}
	}
	return nil
}

// fastFold enables foldOnce; tests turn it off to compare it with the
// fold per record it replaces.
var fastFold = true

// foldOnce is load's fast path for a linear log (each event's one parent is
// the event before it, so the events before a pr.merged are exactly its
// causal ancestors): one incremental fold judges the state before each
// pr.merged (pr.State.Apply, then Rejudge under the trust of the moment)
// and ends as the fold of the whole log under the current trust. It
// reports false, having set nothing, when the log is not linear, an event
// does not fold, or trust then is unknown: load then folds per record. r
// is the loader's judge (judgeState).
func (a *auditor) foldOnce(r *judge, p *prLog) bool {
	evs := p.evs
	if len(evs) == 0 || len(evs[0].Parents) != 0 {
		return false
	}
	for k := 1; k < len(evs); k++ {
		if len(evs[k].Parents) != 1 || evs[k].Parents[0] != evs[k-1].ID {
			return false
		}
	}
	for _, m := range p.merged {
		if m.i == 0 || m.thenErr != nil || m.then.RepoID != a.now.RepoID {
			return false
		}
	}
	var st *pr.State
	var judged *trust.State // the trust st was last judged under
	done := 0
	upTo := func(k int) bool {
		if st == nil {
			var err error
			st, err = pr.Fold(evs[:k], a.now)
			done, judged = k, a.now
			return err == nil
		}
		for ; done < k; done++ {
			if st.Apply(evs[done], a.now) != nil {
				return false
			}
			judged = a.now
		}
		return true
	}
	under := func(t *trust.State) {
		if judged != t {
			st.Rejudge(t)
			judged = t
		}
	}
	verdicts := make([][2]stateVerdict, len(p.merged))
	for n, m := range p.merged {
		if !upTo(m.i) {
			return false
		}
		under(m.then)
		verdicts[n][0] = a.judgeState(r, st, nil, m.then, m.rec)
		if m.then != a.now {
			under(a.now)
			verdicts[n][1] = a.judgeState(r, st, nil, a.now, m.rec)
		}
	}
	if !upTo(len(evs)) {
		return false
	}
	under(a.now)
	p.st = st
	for n, m := range p.merged {
		m.atThen, m.atNow = verdicts[n][0], verdicts[n][1]
	}
	return true
}

// before returns p's events that are causal ancestors of ev (ev excluded),
// in causal order.
func (p *prLog) before(ev hubrefs.Event) []hubrefs.Event {
	if p.idx == nil {
		p.idx = make(map[plumbing.Hash]int, len(p.evs))
		for i, e := range p.evs {
			p.idx[e.ID] = i
		}
	}
	keep := map[plumbing.Hash]bool{}
	stack := append([]plumbing.Hash{}, ev.Parents...)
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if keep[id] {
			continue
		}
		keep[id] = true
		if i, ok := p.idx[id]; ok {
			stack = append(stack, p.evs[i].Parents...)
		}
	}
	out := make([]hubrefs.Event, 0, len(keep))
	for _, e := range p.evs {
		if keep[e.ID] {
			out = append(out, e)
		}
	}
	return out
}

// justify judges c as a landing onto its first parent's line.
func (a *auditor) justify(c *commit) (AuditLanding, error) {
	// A pr.merged names this commit: judge as the records stood then.
	if recs := a.mergedBy[c.id]; len(recs) > 0 {
		var first error
		for _, m := range recs {
			l, err := a.atMerged(c, m)
			if err == nil {
				return l, nil
			}
			if first == nil {
				first = err
			}
		}
		return AuditLanding{}, first
	}
	// No pr.merged: some causal prefix of a pull request's events must
	// justify it, under the current trust.
	var tried []*prLog
	var first error
	for _, p := range a.headsBy[c.id] {
		tried = append(tried, p)
		l, err := a.scan(c, p, c.id, LandingDirect)
		if err == nil {
			return l, nil
		}
		if first == nil {
			first = err
		}
	}
	if len(c.parents) == 2 {
		for _, p := range a.headsBy[c.parents[1]] {
			tried = append(tried, p)
			l, err := a.scan(c, p, c.parents[1], LandingCandidate)
			if err == nil {
				return l, nil
			}
			if first == nil {
				first = err
			}
		}
	}
	if l, ok, err := a.justifySquash(c); ok { // auditsquash.go
		return l, err
	}
	if len(tried) > 0 {
		return AuditLanding{}, first
	}
	b, ok := a.now.Rules.For(a.branch)
	if !ok || !b.RequirePullRequest {
		if err := a.provenance(c, b, a.now); err != nil {
			return AuditLanding{}, err
		}
		a.under[c.id] = a.now
		return AuditLanding{Commit: c.id, Kind: LandingUnprotected, Record: "rules", Trust: "current"}, nil
	}
	if len(c.parents) == 2 {
		return AuditLanding{}, refuse(CodeNotAPRHead, "commit %s is not a pull request head, and its second parent %s is not one either: nothing in refs/hub/pr/* records it, so it was written around the boundary (or its records are missing from this replica: fetch refs/hub/*)", short(c.id), short(c.parents[1]))
	}
	return AuditLanding{}, refuse(CodeNotAPRHead, "commit %s is not a head any pull request on %s proposed and no pr.merged names it: it was written around the boundary (or its records are missing from this replica: fetch refs/hub/*)", short(c.id), a.branch)
}

// atMerged judges c against the pull request as it stood just before the
// pr.merged m, under trust then, and failing that under current trust. The
// pull request's part was judged when its log was loaded.
func (a *auditor) atMerged(c *commit, m *mergedRef) (AuditLanding, error) {
	rev := plumbing.NewHash(m.rec.Revision)
	kind := LandingDirect
	switch {
	case rev == c.id:
	case len(c.parents) == 2 && c.parents[1] == rev:
		kind = LandingCandidate
	case a.squashOf(a.j, c.id, m.p.st.ID, rev): // auditsquash.go
		kind = LandingSquash
	default:
		return AuditLanding{}, refuse(CodeCandidateParents, "pr.merged %s of pull request %s says %s carried head %s, but %s is neither that head nor a candidate with the parents [<previous tip>, %s]", short(m.ev.ID), m.p.st.ID, short(c.id), short(rev), short(c.id), short(rev))
	}
	if m.thenErr != nil {
		return AuditLanding{}, m.thenErr
	}
	then := m.then
	l := AuditLanding{Commit: c.id, Kind: kind, PR: m.p.st.ID, Record: "pr.merged " + m.ev.ID.String(), Trust: "then"}
	first := a.finish(c, m.atThen, then, kind)
	if justified(first, &l) {
		a.under[c.id] = then
		return l, nil
	}
	if then != a.now {
		if justified(a.finish(c, m.atNow, a.now, kind), &l) {
			l.Trust = "current"
			a.under[c.id] = a.now
			return l, nil
		}
	}
	var r *refusal
	if errors.As(first, &r) {
		rr := refuse(r.Code, "%s (pull request %s as it stood at its pr.merged %s)", r.Reason, m.p.st.ID, short(m.ev.ID))
		rr.err = r.err // a groupPending stays visible to Audit
		return AuditLanding{}, rr
	}
	return AuditLanding{}, first
}

// scan looks for a causal prefix of p's events that justifies c, under the
// current trust. The error reported is the one at the longest prefix where
// the pull request was open (else at the whole log).
func (a *auditor) scan(c *commit, p *prLog, rev plumbing.Hash, kind string) (AuditLanding, error) {
	var whole, open error
	for k := len(p.evs); k >= 1; k-- {
		err := a.judgeAt(c, p.evs[:k], a.now, rev, kind)
		if l := (AuditLanding{Commit: c.id, Kind: kind, PR: p.st.ID, Record: "records", Trust: "current"}); justified(err, &l) {
			a.under[c.id] = a.now
			return l, nil
		}
		if whole == nil {
			whole = err
		}
		var r *refusal
		if open == nil && errors.As(err, &r) && r.Code != CodePRClosed {
			open = err
		}
	}
	if open != nil {
		return AuditLanding{}, open
	}
	return AuditLanding{}, whole
}

// judgeAt judges the landing of c (a direct landing of rev, or a candidate
// step merging rev) against a pull request folded from evs under t.
func (a *auditor) judgeAt(c *commit, evs []hubrefs.Event, t *trust.State, rev plumbing.Hash, kind string) error {
	b, ok := t.Rules.For(a.branch)
	if !ok || !b.RequirePullRequest {
		return a.provenance(c, b, t)
	}
	st, err := pr.Fold(evs, t)
	return a.finish(c, stateVerdict{b: b, required: true, err: a.stateErr(st, err, b, rev, c.id, a.checkedRev(a.j, b, c.id, kind), kind), own: snapOwners(st, err, b, rev)}, t, kind)
}

// judgeState is the part of judgeAt that reads only the pull request state
// st (or the error folding it) and the rules of t, for the landing rec
// names: a direct landing when it carried its revision as is, else a
// candidate or squash step. It runs in the loaders, several at once: r is
// the calling loader's judge, the one it may read commits through.
func (a *auditor) judgeState(r *judge, st *pr.State, foldErr error, t *trust.State, rec hubrefs.PRMerged) stateVerdict {
	b, ok := t.Rules.For(a.branch)
	if !ok || !b.RequirePullRequest {
		return stateVerdict{b: b}
	}
	rev, landed := plumbing.NewHash(rec.Revision), plumbing.NewHash(rec.Commit)
	kind := LandingDirect
	if rev != landed {
		kind = LandingCandidate
		if st != nil && a.squashOf(r, landed, st.ID, rev) {
			kind = LandingSquash
		}
	}
	return stateVerdict{b: b, required: true, err: a.stateErr(st, foldErr, b, rev, landed, a.checkedRev(r, b, landed, kind), kind), own: snapOwners(st, foldErr, b, rev)}
}

// finish completes judgeAt from judgeState's verdict v for c under t.
func (a *auditor) finish(c *commit, v stateVerdict, t *trust.State, kind string) error {
	if !v.required {
		return a.provenance(c, v.b, t)
	}
	var g *groupPending
	var bp *bypassed
	if v.err != nil && !errors.As(v.err, &g) && !errors.As(v.err, &bp) {
		return v.err
	}
	if err := a.landed(c, v.b, t, kind); err != nil {
		return err
	}
	if bp == nil {
		if err := a.owners(c, v, kind); err != nil {
			return err
		}
	}
	return v.err
}

// bypassed is the "error" of a direct landing the review or check rules
// refuse but a bypass justifies (landDirect): the landing is justified,
// and the audit reports it with who bypassed and why (docs/trust.md, "An
// audited bypass").
type bypassed struct{ bp pr.Bypass }

func (e *bypassed) Error() string {
	return fmt.Sprintf("bypassed by %s: %s", e.bp.By, e.bp.Reason)
}

// justified reports whether err, from finish, justifies the landing, and
// notes on l the bypass that did, if one did.
func justified(err error, l *AuditLanding) bool {
	var bp *bypassed
	if errors.As(err, &bp) {
		l.Bypass = &AuditBypass{By: bp.bp.By, Reason: bp.bp.Reason, Event: bp.bp.Event}
		return true
	}
	return err == nil
}

// stateErr judges the pull request state st (foldErr: it cannot be folded)
// for the landing of commit landed, under the rules b that require pull
// requests; checked is the revision whose checks count for a step (landed,
// or the candidate a partition step was tested as: audittested.go).
func (a *auditor) stateErr(st *pr.State, foldErr error, b trust.Branch, rev, landed, checked plumbing.Hash, kind string) error {
	if foldErr != nil {
		return refuse(CodePRInvalid, "pull request events cannot be folded (%v); repair them from a good replica", foldErr)
	}
	if st.State != pr.Open {
		return refuse(CodePRClosed, "pull request %s was %s, not open, when %s landed", st.ID, st.State, short(landed))
	}
	if st.Base != a.branch {
		return refuse(CodeNotAPRHead, "pull request %s was based on %s, not %s, when %s landed", st.ID, st.Base, a.branch, short(landed))
	}
	if st.Head != rev.String() {
		return refuse(CodeNotAPRHead, "%s was not the current head of pull request %s (its head was %s) when %s landed", short(rev), st.ID, st.Head[:12], short(landed))
	}
	if kind == LandingDirect {
		bp, err := landDirect(st, b, rev.String(), nil) // owners: finish
		if bp != nil {
			return &bypassed{bp: *bp}
		}
		return err
	}
	if err := review(st, b, rev.String()); err != nil {
		return err
	}
	if kind == LandingSquash {
		return a.squashStateErr(st, b, rev, landed, checked) // auditsquash.go
	}
	if !b.QueueCandidates {
		return refuse(CodeCandidatesOff, "%s is a candidate merging %s, but %s did not take queue candidates (queueCandidates was false)", short(landed), short(rev), a.branch)
	}
	if b.Squash() {
		return refuse(CodeCandidateParents, "%s is a merge step of %s, but %s took squash steps (mergeMethod squash) when it landed", short(landed), short(rev), a.branch)
	}
	if b.RequireProvenance {
		return refuse(CodeProvenance, "%s required provenance, so it takes no queue candidates, yet candidate %s is on it", a.branch, short(landed))
	}
	err := checks(st, b, checked.String(), checkedWhat(landed, checked))
	var r *refusal
	if err != nil && b.Every() > 1 && errors.As(err, &r) {
		// Batch checks: a green group end above it may vouch for it (Audit).
		return &refusal{Code: r.Code, Reason: r.Reason, err: &groupPending{every: b.Every(), pr: st.ID}}
	}
	return err
}

// groupPending marks a candidate step refused for its own checks only,
// under rules with checkEvery > 1: Audit then looks for a green group end
// that vouches for it (docs/boundary.md, batch checks).
type groupPending struct {
	every int
	pr    string
}

func (g *groupPending) Error() string {
	return fmt.Sprintf("candidate checks wait for a group end (checkEvery %d)", g.every)
}

// groupMarks reads the batch group ends every queue of the branch recorded
// (open or closed), as the hook would have read them under the trust t:
// per step, its queue's latest queue.candidate naming it signed by a
// holder of hub.queue under t, when that marks it as a group's last; with
// differing marks across queues the smallest group counts (t nil: every
// mark any signer ever wrote, with its smallest group: a cheap first
// filter that holds every mark of any trust). vouched reads
// them under the trust that justified the group end's landing (whose marks
// the hook read when it landed) and under the current trust, so removing a
// runner's key later does not unjustify what it grouped; never by a
// signer's clock.
func (a *auditor) groupMarks(t *trust.State) map[string]int {
	if m, ok := a.marks[t]; ok {
		return m
	}
	marks := map[string]int{}
	for name, tip := range a.j.in.Refs {
		if !strings.HasPrefix(name, hubrefs.QueueRefPrefix) {
			continue
		}
		evs, err := a.j.readLog(tip)
		if err != nil {
			continue // a queue that cannot be read vouches for nothing
		}
		target, latest := "", map[string]int{}
		for _, ev := range evs {
			v, err := queue.Validate(ev)
			if err != nil || ev.Signer == nil || t != nil && !t.Has(ev.Signer, trust.CapQueue) {
				continue
			}
			switch p := v.(type) {
			case *hubrefs.QueueOpened:
				if target == "" {
					target = p.Target
				}
			case *hubrefs.QueueCandidate:
				switch {
				case p.GroupEnd != "" && p.GroupEnd == p.Step:
					if old, seen := latest[p.Step]; t != nil || !seen || p.GroupSize < old {
						latest[p.Step] = p.GroupSize
					}
				case t != nil:
					delete(latest, p.Step)
				}
			}
		}
		if target != a.branch {
			continue
		}
		for step, n := range latest {
			if old, seen := marks[step]; !seen || n < old {
				marks[step] = n
			}
		}
	}
	if a.marks == nil {
		a.marks = map[*trust.State]map[string]int{}
	}
	a.marks[t] = marks
	return marks
}

// vouched reports which landing of chain[e] vouches for chain[i], a
// candidate step whose own checks are not green (g): a step at most
// g.every-1 first parents above it that a queue.candidate on the branch
// marked as a group's last, whose group (at most g.every steps) reaches
// chain[i], and whose own landing is justified with its own checks.
func (a *auditor) vouched(chain []*commit, i int, g *groupPending) (plumbing.Hash, bool) {
	for e := i + 1; e < len(chain) && e < i+g.every; e++ {
		rev := a.markedRev(chain[e]).String() // audittested.go
		if _, marked := a.groupMarks(nil)[rev]; !marked || !a.linkedRange(chain, i, e) {
			continue
		}
		if _, err := a.justify(chain[e]); err != nil {
			continue
		}
		for _, t := range []*trust.State{a.under[chain[e].id], a.now} {
			if t == nil {
				continue
			}
			n, ok := a.groupMarks(t)[rev]
			if ok && n <= g.every && e-n < i {
				return chain[e].id, true
			}
		}
	}
	return plumbing.ZeroHash, false
}

// landed is what judgeAt reads of the landed commit itself: its signature
// for a direct landing, its tree (rule 3) for a candidate step.
func (a *auditor) landed(c *commit, b trust.Branch, t *trust.State, kind string) error {
	if b.RequireLinearHistory && len(c.parents) > 1 {
		return refuse(CodeNonlinear, "%s required linear history (requireLinearHistory) when %s landed, but it has %d parents", a.branch, short(c.id), len(c.parents))
	}
	if err := a.objects(c); err != nil {
		return err
	}
	if kind == LandingDirect {
		return a.provenance(c, b, t)
	}
	if kind == LandingSquash {
		if err := a.squashTree(c); err != nil {
			return err
		}
		return a.tested(c, b) // audittested.go
	}
	if err := a.tree(c); err != nil {
		return err
	}
	return a.tested(c, b)
}

// tree is rule 3: tree(c) equals mergeTree(first parent, second parent),
// clean. Computed once per commit.
func (a *auditor) tree(c *commit) error {
	if err, ok := a.trees[c.id]; ok {
		return err
	}
	prev, h := c.parents[0], c.parents[1]
	fault, detail, merged, err := candidateTree(a.j.in.Objects, prev, h, c.tree, a.j.merges)
	switch fault {
	case treeUnrelated:
		err = refuse(CodeCandidateConflict, "candidate %s: %s and %s have no common ancestor", short(c.id), short(prev), short(h))
	case treeUnreadable:
		err = objErr(plumbing.ZeroHash, err)
	case treeConflict:
		err = refuse(CodeCandidateConflict, "candidate %s: merging %s into %s conflicts at %s", short(c.id), short(h), short(prev), detail)
	case treeDiffers:
		err = refuse(CodeCandidateTree, "candidate %s has tree %s, but the merge of %s into %s is %s: its content was altered", short(c.id), short(c.tree), short(h), short(prev), short(merged))
	default:
		err = nil
	}
	a.trees[c.id] = err
	return err
}

// provenance checks, when b requires it, the signature of c under t.
func (a *auditor) provenance(c *commit, b trust.Branch, t *trust.State) error {
	if !b.RequireProvenance {
		return nil
	}
	raw, err := a.j.commits.rawOf(c)
	if err != nil {
		return err
	}
	switch fault, _, err := commitProvenance(raw, t); fault {
	case provUnsigned:
		return refuse(CodeProvenance, "%s required provenance: commit %s is not signed", a.branch, c.id)
	case provBadSignature:
		return refuse(CodeProvenance, "%s required provenance: commit %s has a bad signature (%v)", a.branch, c.id, err)
	case provNotMember, provNoCapability:
		return refuse(CodeProvenance, "%s required provenance: commit %s is not signed by a member holding %s", a.branch, c.id, trust.CapSourcePush)
	}
	return nil
}
