package policy

// Audit: the offline verification of a protected branch's history
// (DESIGN.md §10). Pure, like Judge: a function of an object store and refs.
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
//   - Trust "then": trust cannot be linked causally to a pull request event,
//     so the trust state of a landing with a pr.merged is the fold of the
//     longest causal prefix of refs/hub/trust whose events' committer times
//     are not after the pr.merged's committer time (writer-chosen times, used
//     only to pick the epoch). Because writers' clocks may be skewed, a
//     landing refused under that state is judged again under the current
//     trust, and is justified if that passes. Rules (protection, approvals,
//     checks, candidates) come from the same trust state.
//   - A commit with no pull request records at all is judged under the
//     current rules: justified when the branch is unprotected or does not
//     require pull requests (any fast-forward), else not-a-pr-head.
//   - Not judged: queueDepth (push boundaries are not recorded) and
//     landings reachable only through second parents.

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/mergetree"
)

// AuditInput is what an audit reads.
type AuditInput struct {
	Objects Objects
	Refs    map[string]plumbing.Hash // every ref of the replica
	Branch  string                   // full ref name
	Since   plumbing.Hash            // zero: the root of the first-parent chain
	Cache   Cache                    // optional fold cache
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
}

// AuditFinding is one unjustified commit.
type AuditFinding struct {
	Commit plumbing.Hash
	Code   string
	Reason string
}

// AuditReport is the result of an audit.
type AuditReport struct {
	Branch      string
	Tip         plumbing.Hash
	Since       plumbing.Hash // the commit the walk stopped at (not judged)
	Commits     int           // commits judged (first-parent steps)
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
		case LandingCandidate:
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
	evs    []hubrefs.Event // causal order
	idx    map[plumbing.Hash]int
	st     *pr.State // folded under current trust
	merged map[plumbing.Hash]hubrefs.PRMerged
}

type auditor struct {
	j        *judge
	branch   string
	trustEvs []hubrefs.Event
	now      *trust.State
	epochs   map[int]*trust.State
	prs      []*prLog
	mergedBy map[plumbing.Hash][]mergedRef // by landed commit
	headsBy  map[plumbing.Hash][]*prLog    // every head ever proposed
	trees    map[plumbing.Hash]error       // rule 3 results by candidate
}

type mergedRef struct {
	p   *prLog
	ev  hubrefs.Event
	rec hubrefs.PRMerged
}

// Audit walks the first-parent chain of in.Branch and judges every landing
// (DESIGN.md §10). The error is for an audit that cannot run at all (no
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
		mergedBy: map[plumbing.Hash][]mergedRef{}, headsBy: map[plumbing.Hash][]*prLog{}, trees: map[plumbing.Hash]error{}}
	evs, err := j.readLog(in.Refs[hubrefs.TrustRef])
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", hubrefs.TrustRef, err)
	}
	a.trustEvs = evs
	if err := a.loadPRs(); err != nil {
		return nil, err
	}

	// The first-parent chain, oldest first.
	var chain []*commit
	c, err := j.commits.get(tip)
	if err != nil {
		return nil, fmt.Errorf("reading the tip of %s: %w", in.Branch, err)
	}
	for {
		chain = append(chain, c)
		if c.id == in.Since || len(c.parents) == 0 {
			break
		}
		if c, err = j.commits.get(c.parents[0]); err != nil {
			return nil, fmt.Errorf("walking the first parents of %s: %w", in.Branch, err)
		}
	}
	if !in.Since.IsZero() && chain[len(chain)-1].id != in.Since {
		return nil, fmt.Errorf("%s is not on the first-parent chain of %s; pass a commit of `git log --first-parent %s`", in.Since, in.Branch, in.Branch)
	}
	for l, r := 0, len(chain)-1; l < r; l, r = l+1, r-1 {
		chain[l], chain[r] = chain[r], chain[l]
	}
	rep := &AuditReport{Branch: in.Branch, Tip: tip, Since: chain[0].id, Commits: len(chain) - 1}
	var pending []AuditFinding
	for _, c := range chain[1:] {
		l, err := a.justify(c)
		if err != nil {
			var r *refusal
			if !errors.As(err, &r) {
				return nil, err
			}
			pending = append(pending, AuditFinding{Commit: c.id, Code: r.Code, Reason: r.Reason})
			continue
		}
		if l.Kind == LandingCandidate {
			rep.Unjustified = append(rep.Unjustified, pending...)
		} else {
			l.Covers = len(pending)
		}
		pending = pending[:0]
		rep.Landings = append(rep.Landings, l)
	}
	rep.Unjustified = append(rep.Unjustified, pending...)
	return rep, nil
}

// loadPRs reads and folds every pull request and indexes their pr.merged
// records and proposed heads.
func (a *auditor) loadPRs() error {
	var refs []string
	for ref := range a.j.in.Refs {
		if strings.HasPrefix(ref, hubrefs.PRRefPrefix) {
			refs = append(refs, ref)
		}
	}
	sort.Strings(refs)
	for _, ref := range refs {
		evs, err := a.j.readLog(a.j.in.Refs[ref])
		if err != nil {
			return fmt.Errorf("reading %s: %w", ref, err)
		}
		st, err := pr.Fold(evs, a.now)
		if err != nil {
			return fmt.Errorf("folding %s (repair it from a good replica): %w", ref, err)
		}
		p := &prLog{ref: ref, evs: evs, st: st, idx: map[plumbing.Hash]int{}, merged: map[plumbing.Hash]hubrefs.PRMerged{}}
		for i, ev := range evs {
			p.idx[ev.ID] = i
			if ev.Type != hubrefs.TypePRMerged {
				continue
			}
			var m hubrefs.PRMerged
			if err := ev.Unmarshal(&m); err != nil {
				return fmt.Errorf("%s: pr.merged %s: %w", ref, ev.ID, err)
			}
			if m.Branch == a.branch {
				a.mergedBy[plumbing.NewHash(m.Commit)] = append(a.mergedBy[plumbing.NewHash(m.Commit)], mergedRef{p: p, ev: ev, rec: m})
			}
		}
		a.prs = append(a.prs, p)
		for _, h := range st.Heads {
			a.headsBy[plumbing.NewHash(h)] = append(a.headsBy[plumbing.NewHash(h)], p)
		}
	}
	return nil
}

// trustAt is the trust state of the longest causal prefix of the trust log
// whose events are not dated after t.
func (a *auditor) trustAt(t int64) (*trust.State, error) {
	k := 0
	for k < len(a.trustEvs) && a.trustEvs[k].Time <= t {
		k++
	}
	if k == 0 {
		k = 1 // repo.created: nothing was protected before it
	}
	if k == len(a.trustEvs) {
		return a.now, nil
	}
	if st, ok := a.epochs[k]; ok {
		return st, nil
	}
	st, err := trust.Fold(a.trustEvs[:k])
	if err != nil {
		return nil, fmt.Errorf("folding %s up to event %s: %w", hubrefs.TrustRef, a.trustEvs[k-1].ID, err)
	}
	a.epochs[k] = st
	return st, nil
}

// before returns p's events that are causal ancestors of ev (ev excluded),
// in causal order.
func (p *prLog) before(ev hubrefs.Event) []hubrefs.Event {
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
	if len(tried) > 0 {
		return AuditLanding{}, first
	}
	b, ok := a.now.Rules.For(a.branch)
	if !ok || !b.RequirePullRequest {
		if err := a.provenance(c, b, a.now); err != nil {
			return AuditLanding{}, err
		}
		return AuditLanding{Commit: c.id, Kind: LandingUnprotected, Record: "rules", Trust: "current"}, nil
	}
	if len(c.parents) == 2 {
		return AuditLanding{}, refuse(CodeNotAPRHead, "commit %s is not a pull request head, and its second parent %s is not one either: nothing in refs/hub/pr/* records it, so it was written around the boundary (or its records are missing from this replica: fetch refs/hub/*)", short(c.id), short(c.parents[1]))
	}
	return AuditLanding{}, refuse(CodeNotAPRHead, "commit %s is not a head any pull request on %s proposed and no pr.merged names it: it was written around the boundary (or its records are missing from this replica: fetch refs/hub/*)", short(c.id), a.branch)
}

// atMerged judges c against the pull request as it stood just before the
// pr.merged m, under trust then, and failing that under current trust.
func (a *auditor) atMerged(c *commit, m mergedRef) (AuditLanding, error) {
	rev := plumbing.NewHash(m.rec.Revision)
	kind := LandingDirect
	switch {
	case rev == c.id:
	case len(c.parents) == 2 && c.parents[1] == rev:
		kind = LandingCandidate
	default:
		return AuditLanding{}, refuse(CodeCandidateParents, "pr.merged %s of pull request %s says %s carried head %s, but %s is neither that head nor a candidate with the parents [<previous tip>, %s]", short(m.ev.ID), m.p.st.ID, short(c.id), short(rev), short(c.id), short(rev))
	}
	evs := m.p.before(m.ev)
	then, err := a.trustAt(m.ev.Time)
	if err != nil {
		return AuditLanding{}, err
	}
	l := AuditLanding{Commit: c.id, Kind: kind, PR: m.p.st.ID, Record: "pr.merged " + m.ev.ID.String(), Trust: "then"}
	first := a.judgeAt(c, evs, then, rev, kind)
	if first == nil {
		return l, nil
	}
	if then != a.now {
		if a.judgeAt(c, evs, a.now, rev, kind) == nil {
			l.Trust = "current"
			return l, nil
		}
	}
	var r *refusal
	if errors.As(first, &r) {
		return AuditLanding{}, refuse(r.Code, "%s (pull request %s as it stood at its pr.merged %s)", r.Reason, m.p.st.ID, short(m.ev.ID))
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
		if err == nil {
			return AuditLanding{Commit: c.id, Kind: kind, PR: p.st.ID, Record: "records", Trust: "current"}, nil
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
	if err != nil {
		return refuse(CodePRInvalid, "pull request events cannot be folded (%v); repair them from a good replica", err)
	}
	if st.State != pr.Open {
		return refuse(CodePRClosed, "pull request %s was %s, not open, when %s landed", st.ID, st.State, short(c.id))
	}
	if st.Base != a.branch {
		return refuse(CodeNotAPRHead, "pull request %s was based on %s, not %s, when %s landed", st.ID, st.Base, a.branch, short(c.id))
	}
	if st.Head != rev.String() {
		return refuse(CodeNotAPRHead, "%s was not the current head of pull request %s (its head was %s) when %s landed", short(rev), st.ID, st.Head[:12], short(c.id))
	}
	if err := review(st, b, rev.String()); err != nil {
		return err
	}
	if kind == LandingDirect {
		if err := checks(st, b, rev.String(), "head"); err != nil {
			return err
		}
		return a.provenance(c, b, t)
	}
	if !b.QueueCandidates {
		return refuse(CodeCandidatesOff, "%s is a candidate merging %s, but %s did not take queue candidates (queueCandidates was false)", short(c.id), short(rev), a.branch)
	}
	if b.RequireProvenance {
		return refuse(CodeProvenance, "%s required provenance, so it takes no queue candidates, yet candidate %s is on it", a.branch, short(c.id))
	}
	if err := checks(st, b, c.id.String(), "candidate"); err != nil {
		return err
	}
	return a.tree(c)
}

// tree is rule 3: tree(c) equals mergeTree(first parent, second parent),
// clean. Computed once per commit.
func (a *auditor) tree(c *commit) error {
	if err, ok := a.trees[c.id]; ok {
		return err
	}
	prev, h := c.parents[0], c.parents[1]
	res, err := mergetree.Merge(a.j.in.Objects, prev, h, mergetree.Options{Cache: a.j.merges})
	switch {
	case errors.Is(err, mergetree.ErrUnrelated):
		err = refuse(CodeCandidateConflict, "candidate %s: %s and %s have no common ancestor", short(c.id), short(prev), short(h))
	case err != nil:
		err = objErr(plumbing.ZeroHash, err)
	case !res.Clean():
		var paths []string
		for _, cf := range res.Conflicts {
			paths = append(paths, cf.Path+" ("+cf.Kind+")")
		}
		err = refuse(CodeCandidateConflict, "candidate %s: merging %s into %s conflicts at %s", short(c.id), short(h), short(prev), strings.Join(paths, ", "))
	case res.Tree != c.tree:
		err = refuse(CodeCandidateTree, "candidate %s has tree %s, but the merge of %s into %s is %s: its content was altered", short(c.id), short(c.tree), short(h), short(prev), short(res.Tree))
	}
	a.trees[c.id] = err
	return err
}

// provenance checks, when b requires it, the signature of c under t.
func (a *auditor) provenance(c *commit, b trust.Branch, t *trust.State) error {
	if !b.RequireProvenance {
		return nil
	}
	key, err := hubrefs.Verify(c.raw)
	switch {
	case errors.Is(err, hubrefs.ErrUnsigned):
		return refuse(CodeProvenance, "%s required provenance: commit %s is not signed", a.branch, c.id)
	case err != nil:
		return refuse(CodeProvenance, "%s required provenance: commit %s has a bad signature (%v)", a.branch, c.id, err)
	}
	m, ok := t.MemberByKey(key)
	if !ok || !m.Has(trust.CapSourcePush) {
		return refuse(CodeProvenance, "%s required provenance: commit %s is not signed by a member holding %s", a.branch, c.id, trust.CapSourcePush)
	}
	return nil
}
