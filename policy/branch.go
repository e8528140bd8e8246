package policy

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/mergetree"
)

// foldPRs summarizes every pull request ref once per Judge call — from the
// pull request index when it holds the ref at its current tip (index.go),
// else by folding its log — and indexes the open heads by (base, head).
// With in.PRRefs and an open index for the current trust tip, the open
// index alone is taken, and openHeads reads the ref of each pull request it
// returns.
func (j *judge) foldPRs() {
	if j.prsDone {
		return
	}
	j.prsDone = true
	j.prs = map[string]prSummary{}
	j.heads = map[string][]string{}
	j.full = map[string]*pr.State{}
	j.prErrs = nil
	j.fromIndex = false
	trustTip := j.in.Refs[hubrefs.TrustRef]
	if j.in.PRRefs != nil && !j.allPRs && j.in.Cache != nil {
		if open, _, ok := j.readOpenIndex(trustTip); ok {
			j.fromIndex = true
			j.checked = map[string]bool{}
			refs := make([]string, 0, len(open))
			for ref := range open {
				refs = append(refs, ref)
			}
			sort.Strings(refs)
			for _, ref := range refs {
				j.addPR(open[ref])
			}
			return
		}
	}
	var indexed map[string]prSummary
	// The open index is rewritten when it is missing or damaged, and after
	// a judgement from it fell back to every ref (it may name a tip that a
	// push accepted here and then failed in git never moved its ref to).
	openStale := j.allPRs
	if j.in.Cache != nil {
		if b, ok := j.in.Cache.Get(indexKey(trustTip)); ok {
			indexed, _ = decodeIndex(trustTip, b)
		}
		if !openStale {
			_, _, ok := j.readOpenIndex(trustTip)
			openStale = !ok
		}
	}
	j.prTips = map[string]plumbing.Hash{}
	if j.in.PRRefs != nil {
		all, err := j.in.PRRefs.Under(hubrefs.PRRefPrefix)
		if err != nil {
			j.prErrs = append(j.prErrs, refuse(CodePRInvalid, "the pull request refs cannot be read (%v); retry, and report it to the repository's administrator if it persists", err))
			return
		}
		j.prTips = all
	} else {
		for ref, tip := range j.in.Refs {
			if strings.HasPrefix(ref, hubrefs.PRRefPrefix) {
				j.prTips[ref] = tip
			}
		}
	}
	refs := make([]string, 0, len(j.prTips))
	for ref := range j.prTips {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	sums := make([]prSummary, 0, len(refs))
	reused := 0
	for _, ref := range refs {
		tip := j.prTips[ref]
		sum, ok := indexed[ref]
		if ok && sum.Tip == tip {
			reused++
		} else {
			st, err := j.foldPR(ref)
			if err != nil {
				j.prErrs = append(j.prErrs, err)
				continue
			}
			sum = summarize(ref, tip, st)
		}
		sums = append(sums, sum)
		j.addPR(sum)
	}
	if j.in.Cache != nil && (reused != len(sums) || reused != len(indexed)) {
		j.in.Cache.Put(indexKey(trustTip), encodeIndex(trustTip, sums))
		openStale = true
	}
	if j.in.Cache != nil && openStale {
		j.writeOpenIndex(trustTip, openSummaries(sums))
	}
}

func (j *judge) addPR(sum prSummary) {
	j.prs[sum.Ref] = sum
	if sum.State == pr.Open {
		k := headKey(sum.Base, sum.Head)
		j.heads[k] = append(j.heads[k], sum.Ref)
	}
}

// current reports whether pull request ref is still at the tip its
// summary describes: always when every ref was read; else its ref is read
// (once).
func (j *judge) current(ref string) bool {
	if !j.fromIndex {
		return true
	}
	ok, done := j.checked[ref]
	if !done {
		tip, err := j.in.PRRefs.Ref(ref)
		ok = err == nil && tip == j.prs[ref].Tip
		j.checked[ref] = ok
	}
	return ok
}

// foldPR reads and folds the pull request at ref under the current trust.
func (j *judge) foldPR(ref string) (*pr.State, error) {
	if st, ok := j.full[ref]; ok {
		return st, nil
	}
	evs, err := j.readLog(j.prTips[ref])
	if err != nil {
		return nil, j.storedErr(CodePRInvalid, ref, err)
	}
	st, err := pr.Fold(evs, j.trust)
	if err != nil {
		return nil, refuse(CodePRInvalid, "%s cannot be folded (%v); repair it from a good replica", ref, err)
	}
	if hubrefs.PRRefPrefix+st.ID != ref {
		return nil, refuse(CodePRInvalid, "%s holds pull request %s; repair it from a good replica", ref, st.ID)
	}
	j.full[ref] = st
	return st, nil
}

// headKey indexes j.heads: an open pull request's base and head.
func headKey(base, head string) string { return base + " " + head }

// openHeads returns the open pull requests based on ref whose head is h:
// their full fold when this judgement folded them, else the state their
// index summary gives (what review and checks read; see prSummary.state).
func (j *judge) openHeads(ref string, h plumbing.Hash) []*pr.State {
	var out []*pr.State
	for _, r := range j.heads[headKey(ref, h.String())] {
		if !j.current(r) {
			continue
		}
		st, ok := j.full[r]
		if !ok {
			st = j.prs[r].state()
			j.full[r] = st
		}
		out = append(out, st)
	}
	return out
}

// notAHead explains why h is not the head of an open pull request on ref.
func (j *judge) notAHead(ref string, h plumbing.Hash, what string) error {
	var ids []string
	for _, st := range j.prs {
		if st.Base == ref && st.Head == h.String() {
			ids = append(ids, st.ID+" ("+st.State+")")
		}
	}
	if len(ids) > 0 {
		sort.Strings(ids)
		return refuse(CodePRClosed, "%s %s is the head of pull request %s, which is not open; reopen it with git+ pr reopen", what, short(h), strings.Join(ids, ", "))
	}
	return refuse(CodeNotAPRHead, "%s %s is not the head of an open pull request based on %s; open one with git+ pr open", what, short(h), ref)
}

// notAHeadCreating is notAHead for an update u; when u creates the branch
// (its first commit, say, with the rules set before it existed) the
// refusal says the way in, which is the same as for any landing
// (docs/boundary.md "The first commit of a protected branch").
func (j *judge) notAHeadCreating(u Update) error {
	err := j.notAHead(u.Ref, u.New, "commit")
	var r *refusal
	if !u.Old.IsZero() || !errors.As(err, &r) || r.Code != CodeNotAPRHead {
		return err
	}
	b := strings.TrimPrefix(u.Ref, "refs/heads/")
	r.Reason += fmt.Sprintf("; %s does not exist yet, and it is created like any landing: push the commit to a branch of its own with a pull request onto %s (git+ pr open --base %s --source BRANCH --push), and once it is approved git+ pr merge creates %s", u.Ref, b, b, b)
	return err
}

// branch judges an update of a branch (docs/boundary.md).
func (j *judge) branch(u Update) error {
	b, ok := j.rules.For(u.Ref)
	if !ok {
		j.learnCandidate(u)
		return nil
	}
	if u.New.IsZero() {
		return refuse(CodeProtectedDelete, "%s is protected and cannot be deleted", u.Ref)
	}
	if u.Old.IsZero() {
		ok, err := j.containedInProtected(u, b)
		if err != nil || ok {
			return err
		}
	}
	tip, err := j.candidate(u.New)
	if err != nil {
		return err
	}
	if err := linearTip(u, b, tip); err != nil { // linear.go
		return err
	}
	if !b.RequirePullRequest {
		if err := j.fastForward(u); err != nil {
			return err
		}
		if err := j.linear(u, b); err != nil { // linear.go
			return err
		}
		if err := j.checkObjects(u.New, u.Old); err != nil { // fsck.go
			return err
		}
		return j.provenance(u, b)
	}
	// Bounded work (docs/boundary.md): with pull requests required, only an
	// open pull request's head or a candidate chain within queueDepth can
	// land. Anything else is refused before any ancestry walk, so a pusher
	// cannot make the hook walk a long unrelated history it sent.
	j.foldPRs()
	if cands := j.openHeads(u.Ref, u.New); len(cands) > 0 {
		if err := j.fastForward(u); err != nil {
			return err
		}
		if err := j.direct(u, b, cands); err != nil {
			return err
		}
		if err := j.linear(u, b); err != nil { // linear.go
			return err
		}
		// The objects are checked once the landing is otherwise justified,
		// so what cannot land costs no walk (docs/boundary.md).
		return j.checkObjects(u.New, u.Old) // fsck.go
	}
	if b.Squash() { // mergeMethod squash: squash.go
		return j.squashLanding(u, b, tip)
	}
	if !b.QueueCandidates {
		if j.rewind(u) {
			return nonFastForward(u)
		}
		if len(tip.parents) == 2 && len(j.heads[headKey(u.Ref, tip.parents[1].String())]) > 0 {
			return refuse(CodeCandidatesOff, "%s is a merge of pull request head %s, but %s does not take queue candidates (queueCandidates is false); push the approved head itself, or ask an admin to turn candidates on", short(u.New), short(tip.parents[1]), u.Ref)
		}
		return j.notAHeadCreating(u)
	}
	if len(tip.parents) < 2 {
		if j.rewind(u) {
			return nonFastForward(u)
		}
		return j.notAHeadCreating(u)
	}
	if b.RequireProvenance {
		return refuse(CodeProvenance, "%s requires provenance, so it takes no queue candidates (their merge commits are unsigned); land pull request heads directly with git+ pr merge", u.Ref)
	}
	if u.Old.IsZero() {
		return refuse(CodeNotAPRHead, "%s does not exist yet, so a candidate chain has nothing to start from; land its first commit directly, as an approved pull request's head (git+ pr merge ID)", u.Ref)
	}
	// A chain reaches the old tip by first parents within queueDepth steps
	// (chain refuses otherwise), so it is a fast-forward by construction.
	if err := j.chain(u, b, tip); err != nil {
		return err
	}
	// Asked last: it lists and folds the queue refs, which what cannot
	// land otherwise need not cost.
	if err := j.queuePaused(u); err != nil { // pause.go
		return err
	}
	return j.checkObjects(u.New, u.Old) // fsck.go
}

// containedInProtected reports whether u creates a protected branch at a
// commit some existing protected branch already contains: nothing new
// reaches protected space, so such a creation (the first release/* branch
// cut from main) needs no pull request (docs/boundary.md, "Creating a
// protected branch"). A branch that requires provenance is created this way
// only from one that requires it too.
func (j *judge) containedInProtected(u Update, b trust.Branch) (bool, error) {
	tips := map[string]plumbing.Hash{}
	consider := func(name string, id plumbing.Hash) {
		if name == u.Ref || id.IsZero() {
			return
		}
		other, ok := j.rules.For(name)
		if !ok || (b.RequireProvenance && !other.RequireProvenance) {
			return
		}
		tips[name] = id
	}
	for name, id := range j.in.Refs {
		consider(name, id)
	}
	if src := j.in.PRRefs; src != nil {
		for key := range j.rules.Protected {
			star := strings.IndexByte(key, '*')
			if star < 0 {
				id, err := src.Ref(key)
				if err != nil {
					return false, objErr(plumbing.ZeroHash, err)
				}
				consider(key, id)
				continue
			}
			dir := key[:strings.LastIndexByte(key[:star], '/')+1]
			refs, err := src.Under(dir)
			if err != nil {
				return false, objErr(plumbing.ZeroHash, err)
			}
			for name, id := range refs {
				consider(name, id)
			}
		}
	}
	names := make([]string, 0, len(tips))
	for n := range tips {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ok, err := j.commits.isAncestor(u.New, tips[n])
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// fastForward refuses u unless its new tip descends from its old one. A
// short first-parent walk spares the merge-base computation for the usual
// fast-forward.
func (j *judge) fastForward(u Update) error {
	if u.Old.IsZero() || j.firstParentReaches(u.New, u.Old, firstParentProbe) {
		return nil
	}
	ok, err := j.commits.isAncestor(u.Old, u.New)
	if err != nil {
		return err
	}
	if !ok {
		return nonFastForward(u)
	}
	return nil
}

// rewind reports, within a bounded first-parent walk from the old tip,
// whether u moves the branch back to one of its own earlier commits: such
// an update is refused as a non-fast-forward rather than as "not a pull
// request head", without walking anything the pusher sent.
func (j *judge) rewind(u Update) bool {
	return !u.Old.IsZero() && j.firstParentReaches(u.Old, u.New, firstParentProbe)
}

func nonFastForward(u Update) error {
	return refuse(CodeNonFastForward, "%s is protected: %s does not descend from its tip %s; fetch, rebase or merge, and push again", u.Ref, short(u.New), short(u.Old))
}

// review refuses unless the review half of b's rules holds for st at rev
// (pr.State.ReviewAt, the one rule: docs/architecture.md). The caller has
// found st among the open pull requests based on the branch.
func review(st *pr.State, b trust.Branch, rev string) error {
	v := st.ReviewAt(b, rev)
	if v.Draft {
		return refuse(CodePRDraft, "pull request %s is a draft; mark it ready with git+ pr ready %s", st.ID, st.ID)
	}
	if !v.Approved() {
		who := ""
		if b.Approvers != nil {
			who = " from " + strings.Join(b.Approvers, ", ")
		}
		return refuse(CodeNotApproved, "pull request %s has %d of %d required approvals%s at %s; ask a reviewer to git+ pr review %s --approve", st.ID, v.Approvals, v.Required, who, rev[:12], st.ID)
	}
	if len(v.Vetoes) > 0 {
		return refuse(CodeChangesRequested, "pull request %s has changes requested by %s; they review again, or a holder of hub.bypass runs git+ pr dismiss %s --review EVENT --reason TEXT", st.ID, strings.Join(v.Vetoes, ", "), st.ID)
	}
	if v.Unresolved > 0 {
		return refuse(CodeUnresolvedThreads, "pull request %s has %d unresolved threads; resolve them with git+ pr thread", st.ID, v.Unresolved)
	}
	return nil
}

// checks refuses unless every required check is success at rev in st's
// events (pr.State.ChecksOn, the one rule).
func checks(st *pr.State, b trust.Branch, rev string, what string) error {
	v := st.ChecksOn(b, rev)
	if len(v.Failed) > 0 {
		return refuse(CodeChecksFailed, "required checks %s failed on %s %s (pull request %s); fix it and run them again", strings.Join(v.Failed, ", "), what, rev[:12], st.ID)
	}
	if len(v.Missing) > 0 && b.RequireSandbox {
		return refuse(CodeChecksMissing, "required checks %s have not succeeded in a confined run on %s %s (pull request %s): the branch has requireSandbox, so only a completion whose command ran under Landlock (\"sandbox\": \"landlock-N\") counts; run them with git+ check run --pr %s --rev %s on a worker whose kernel has Landlock", strings.Join(v.Missing, ", "), what, rev[:12], st.ID, st.ID, rev)
	}
	if len(v.Missing) > 0 {
		return refuse(CodeChecksMissing, "required checks %s have not succeeded on %s %s (pull request %s); run them with git+ check run --pr %s --rev %s", strings.Join(v.Missing, ", "), what, rev[:12], st.ID, st.ID, rev)
	}
	return nil
}

// landDirect judges the review and check halves of a direct landing of
// st's head rev; when they refuse, a bypass (pr.State.BypassAt) that names
// rev lets it land anyway, and is returned (docs/trust.md, "An audited
// bypass"). A draft is refused whatever bypass there is. The hook and the
// audit both judge direct landings with it.
func landDirect(st *pr.State, b trust.Branch, rev string, changed changedFn) (*pr.Bypass, error) {
	err := review(st, b, rev)
	if err == nil {
		err = checks(st, b, rev, "head")
	}
	if err == nil {
		err = owners(st, b, rev, changed) // owners.go
	}
	var r *refusal
	if err == nil || st.Draft || !errors.As(err, &r) {
		return nil, err
	}
	if bp, ok := st.BypassAt(b, rev); ok {
		return &bp, nil
	}
	return nil, err
}

// direct judges a direct landing of an open pull request's head.
func (j *judge) direct(u Update, b trust.Branch, cands []*pr.State) error {
	var first error
	changed := lazyChanged(j.in.Objects, j.merges, u.Old, plumbing.ZeroHash, u.New, plumbing.ZeroHash)
	for _, st := range cands {
		_, err := landDirect(st, b, u.New.String(), changed)
		if err == nil {
			return j.provenance(u, b)
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// chain judges a candidate chain from u.Old to u.New (docs/boundary.md, rules 1–5,
// judged cheapest first: 1, 2, 4, 5 on every step, then 3).
func (j *judge) chain(u Update, b trust.Branch, tip *commit) error {
	var steps []*commit
	// The walk stops at the step whose first parent is the old tip, which
	// is never read: nothing of it is judged.
	for c := tip; ; {
		if len(steps) >= b.QueueDepth {
			return refuse(CodeChainTooDeep, "%s is more than %d first-parent steps above %s's tip %s (queueDepth); land a shorter chain", short(u.New), b.QueueDepth, u.Ref, short(u.Old))
		}
		steps = append(steps, c)
		if len(c.parents) == 0 {
			return refuse(CodeNonFastForward, "%s does not reach %s's tip %s by first parents", short(u.New), u.Ref, short(u.Old))
		}
		if c.parents[0] == u.Old {
			break
		}
		next, err := j.candidate(c.parents[0])
		if err != nil {
			return err
		}
		c = next
	}
	for l, r := 0, len(steps)-1; l < r; l, r = l+1, r-1 {
		steps[l], steps[r] = steps[r], steps[l]
	}
	used := map[string]plumbing.Hash{}
	prev := u.Old
	// Batch checks (docs/boundary.md): with checkEvery > 1 a step whose
	// checks are not green is set aside here and judged by its group after
	// the walk; unchecked[i] is rule 5's refusal for step i.
	batch := b.Every() > 1
	unchecked := map[int]error{}
	// Partition steps (tested.go): a step naming its tested candidate is
	// judged by that candidate's checks; revs[i] is the revision whose
	// checks count for step i.
	revs := make([]plumbing.Hash, len(steps))
	var partition []testedAt
	for i, c := range steps {
		// Rule 1.
		if len(c.parents) != 2 || c.parents[0] != prev {
			return refuse(CodeCandidateParents, "step %d of the chain, %s, has parents %s; a candidate has exactly the parents [%s, <pull request head>] in that order", i+1, short(c.id), hashes(c.parents), short(prev))
		}
		h := c.parents[1]
		rev, what, isTested, err := j.checksRev(b, c, "candidate")
		if err != nil {
			return err
		}
		if isTested {
			// The tested candidate's shape first (one object read), so
			// that another pull request's candidate is named as such.
			if _, err := testedShape(j.in.Objects, b, TestedStep{Prev: prev, Step: c.id, Tested: rev, Head: h}); err != nil {
				return err
			}
		}
		revs[i] = rev
		// Rule 2.
		cands := j.openHeads(u.Ref, h)
		if len(cands) == 0 {
			return j.notAHead(u.Ref, h, fmt.Sprintf("the second parent of step %d (%s),", i+1, short(c.id)))
		}
		var st, reviewed *pr.State
		var first, firstChecks error
		var prevTree plumbing.Hash // C_0's is read from its commit when needed
		if i > 0 {
			prevTree = steps[i-1].tree
		}
		changed := j.stepChanged(c, lazyChanged(j.in.Objects, j.merges, prev, prevTree, c.id, c.tree)) // changedfacts.go
		for _, cand := range cands {
			if at, dup := used[cand.ID]; dup {
				if first == nil {
					first = refuse(CodeDuplicatePR, "pull request %s appears twice in the chain (at %s and %s); a pull request lands at most once", cand.ID, short(at), short(c.id))
				}
				continue
			}
			// Rules 4 and 5, and the step's path owners.
			err := review(cand, b, h.String())
			if err == nil {
				err = owners(cand, b, h.String(), changed)
			}
			if err == nil {
				if err = checks(cand, b, rev.String(), what); err != nil && reviewed == nil {
					reviewed, firstChecks = cand, err
				}
			}
			if err == nil {
				st = cand
				break
			}
			if first == nil {
				first = err
			}
		}
		if st == nil && batch && reviewed != nil {
			st, unchecked[i] = reviewed, firstChecks
		}
		if st == nil {
			return first
		}
		used[st.ID] = c.id
		if isTested {
			partition = append(partition, testedAt{i: i, s: TestedStep{Prev: prev, Step: c.id, Tested: rev, Head: h, PR: st.ID}})
		}
		prev = c.id
	}
	if len(unchecked) > 0 {
		if err := j.groups(u, b, steps, revs, unchecked); err != nil {
			return err
		}
	}
	// Rule 3: the tree is exactly mergeTree(C_{i-1}, H_i), clean.
	if err := j.mergeSteps(u.Old, steps); err != nil {
		return err
	}
	// Last, the partition steps' rule (tested.go).
	return j.judgeTested(b, partition)
}

// testedAt is a partition step of a chain (its index) to judge.
type testedAt struct {
	i int
	s TestedStep
}

// checksRev is the revision whose required checks count for chain step c
// and how a refusal names it: the step itself ("candidate", or what), or,
// on a branch with partitions, the candidate its Git-Plus-Tested trailer
// names (docs/boundary.md, "Partition steps"; isTested). The trailer is
// read only on a branch with partitions: elsewhere a step is judged by
// its own checks as ever.
func (j *judge) checksRev(b trust.Branch, c *commit, what string) (rev plumbing.Hash, how string, isTested bool, err error) {
	if len(b.Partitions) == 0 {
		return c.id, what, false, nil
	}
	t, found, err := j.testedOf(c)
	if err != nil || !found {
		return c.id, what, false, err
	}
	return t, "tested candidate", true, nil
}

// judgeTested judges the partition steps of a chain by JudgeTested, in
// chain order.
func (j *judge) judgeTested(b trust.Branch, steps []testedAt) error {
	for _, t := range steps {
		t.s.Squash = b.Squash()
		if _, err := JudgeTested(j.in.Objects, b, t.s, j.merges); err != nil {
			var r *refusal
			if errors.As(err, &r) {
				return refuse(r.Code, "step %d: %s", t.i+1, r.Reason)
			}
			return err
		}
	}
	return nil
}

// groups judges rule 5 under batch checks (checkEvery K > 1,
// docs/boundary.md) by the one rule, queue.JudgeBatch: unchecked holds the
// steps whose own required checks are not green, with that refusal. The
// last step and every step the queue marked as a group's last must be
// green themselves; any other step is vouched for by a green group end
// above it in the chain whose group (at most K steps, counted down first
// parents from the end) reaches it. The marks are read from the queue that
// counts for the branch (its latest queue.candidate per step, signed by a
// hub.queue holder).
func (j *judge) groups(u Update, b trust.Branch, steps []*commit, revs []plumbing.Hash, unchecked map[int]error) error {
	marks, err := j.queueMarks(u.Ref)
	if err != nil {
		return err
	}
	ids := make([]string, len(steps))
	green := make([]bool, len(steps))
	for i := range steps {
		_, red := unchecked[i]
		ids[i], green[i] = revs[i].String(), !red
	}
	k := b.Every()
	// A group vouches only through revisions standing on each other
	// (JudgeBatchLinked): a chain step stands on the one below by rule
	// 1; a partition step's tested candidate must stand on the revision
	// of the step below.
	linked := func(i int) bool {
		if revs[i+1] == steps[i+1].id {
			return revs[i] == steps[i].id
		}
		c, err := j.commits.get(revs[i+1])
		return err == nil && len(c.parents) > 0 && c.parents[0] == revs[i]
	}
	v := queue.JudgeBatchLinked(ids, green, marks, k, linked)
	i := v.Step
	switch v.Fault {
	case queue.BatchOK:
		return nil
	case queue.BatchLastNotGreen, queue.BatchEndNotGreen:
		// The chain's last step always carries its own checks.
		if v.Marked {
			return groupEndRefusal(i, steps[i], v.Size, unchecked[i])
		}
		return unchecked[i]
	case queue.BatchTooLong:
		return refuse(CodeGroupTooLong, "step %d (%s) is marked as the last of a group of %d steps, but %s checks every %d (checkEvery): a group end vouches for at most %d steps; land a chain whose groups are at most %d long", i+1, short(steps[i].id), v.Size, u.Ref, k, k, k)
	}
	err = unchecked[i]
	var r *refusal
	if errors.As(err, &r) {
		return refuse(r.Code, "%s; step %d (%s) is in no group whose last step is green in this chain (%s checks every %d, checkEvery), so it needs its own checks", r.Reason, i+1, short(steps[i].id), u.Ref, k)
	}
	return err
}

// groupEndRefusal is rule 5's refusal for a group end whose own required
// checks are not green.
func groupEndRefusal(e int, c *commit, n int, err error) error {
	var r *refusal
	if !errors.As(err, &r) {
		return err
	}
	return refuse(r.Code, "%s; step %d (%s) is the last of a group of %d steps and its checks vouch for the group, so they must be green on it", r.Reason, e+1, short(c.id), n)
}

// queueMarks folds the queue that counts for branch ref (the open one with
// the smallest id among those targeting it, as the runner picks) for its
// group marks. No queue: no marks, every step needs its own checks.
func (j *judge) queueMarks(ref string) (*queue.State, error) {
	states, err := j.queues(ref)
	if err != nil {
		return nil, err
	}
	if q := queue.SelectQueue(states, ref); q != nil {
		return q, nil
	}
	return &queue.State{}, nil
}

// queueTips returns the queue refs (sorted) and their tips: listed through
// PRRefs when the judgement reads refs on demand, else from Refs.
func (j *judge) queueTips() ([]string, map[string]plumbing.Hash, error) {
	tips := map[string]plumbing.Hash{}
	if j.in.PRRefs != nil {
		all, err := j.in.PRRefs.Under(hubrefs.QueueRefPrefix)
		if err != nil {
			return nil, nil, refuse(CodeMissingObject, "the queue refs cannot be read (%v); retry, and report it to the repository's administrator if it persists", err)
		}
		tips = all
	} else {
		for name, tip := range j.in.Refs {
			if strings.HasPrefix(name, hubrefs.QueueRefPrefix) {
				tips[name] = tip
			}
		}
	}
	names := make([]string, 0, len(tips))
	for name := range tips {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, tips, nil
}

// queues folds every queue ref whose target is ref (a queue that does not
// fold vouches for nothing and is left out).
func (j *judge) queues(ref string) ([]*queue.State, error) {
	names, tips, err := j.queueTips()
	if err != nil {
		return nil, err
	}
	var states []*queue.State
	for _, name := range names {
		evs, err := j.readLog(tips[name])
		if err != nil {
			return nil, j.storedErr(CodeHubInvalid, name, err)
		}
		st, err := queue.Fold(evs, j.trust)
		if err != nil || st.Target != ref {
			continue
		}
		states = append(states, st)
	}
	return states, nil
}

// ConcurrentReader is implemented by an Objects whose reads are safe from
// several goroutines at once (receive's store). For such a store the merges
// of a candidate chain, which are independent of each other, are computed
// on up to GOMAXPROCS goroutines; any other store is read from one.
type ConcurrentReader interface {
	ConcurrentReads() bool
}

// minParallelSteps is the shortest chain whose merges are spread over
// goroutines. Each goroutine reads the base trees again, so short chains
// gain nothing: on the bench repository (2 cores) 8 steps ran as fast on
// one goroutine and 32 steps 2% faster on two, for 15% more CPU.
const minParallelSteps = 16

// mergeSteps checks rule 3 on every step and reports the first step, in
// chain order, that breaks it. Steps with a merge fact (facts.go) hold
// without merging.
func (j *judge) mergeSteps(old plumbing.Hash, steps []*commit) error {
	prevOf := func(i int) plumbing.Hash {
		if i == 0 {
			return old
		}
		return steps[i-1].id
	}
	todo := make([]int, 0, len(steps))
	for i, c := range steps {
		if !j.knownMerge(c) {
			todo = append(todo, i)
		}
	}
	workers := 1
	if cr, ok := j.in.Objects.(ConcurrentReader); ok && cr.ConcurrentReads() && len(todo) >= minParallelSteps {
		workers = min(runtime.GOMAXPROCS(0), len(todo)/2, 8)
	}
	// Contiguous blocks, one mergetree cache each: neighbouring steps share
	// most of their merge-base walks. A block stops at its first bad step;
	// the first bad step in chain order is reported.
	errs := make([]error, len(steps))
	block := func(lo, hi int, cache *mergetree.Cache) {
		for _, i := range todo[lo:hi] {
			if errs[i] = j.mergeStep(i, prevOf(i), steps[i], cache); errs[i] != nil {
				return
			}
		}
	}
	if workers <= 1 {
		block(0, len(todo), j.merges)
	} else {
		var wg sync.WaitGroup
		var panicked any
		var once sync.Once
		per := (len(todo) + workers - 1) / workers
		for lo := 0; lo < len(todo); lo += per {
			cache := j.merges
			if lo > 0 {
				cache = mergetree.NewCache()
			}
			wg.Add(1)
			go func(lo, hi int) {
				defer wg.Done()
				defer func() {
					if r := recover(); r != nil {
						once.Do(func() { panicked = r })
					}
				}()
				block(lo, hi, cache)
			}(lo, min(lo+per, len(todo)))
		}
		wg.Wait()
		if panicked != nil {
			// Re-raised on the judging goroutine, where the caller's
			// recover (receive.JudgePush) turns it into internal-error as
			// for a sequential judgement.
			panic(panicked)
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// mergeStep checks rule 3 on step i (c, whose first parent is prev).
func (j *judge) mergeStep(i int, prev plumbing.Hash, c *commit, cache *mergetree.Cache) error {
	h := c.parents[1]
	switch fault, detail, merged, err := candidateTree(j.in.Objects, prev, h, c.tree, cache); fault {
	case treeUnrelated:
		return refuse(CodeCandidateConflict, "step %d (%s): %s and %s have no common ancestor", i+1, short(c.id), short(prev), short(h))
	case treeUnreadable:
		return objErr(plumbing.ZeroHash, err)
	case treeConflict:
		return refuse(CodeCandidateConflict, "step %d (%s): merging %s into %s conflicts at %s; rebase the pull request", i+1, short(c.id), short(h), short(prev), detail)
	case treeDiffers:
		return refuse(CodeCandidateTree, "step %d (%s) has tree %s, but the merge of %s into %s is %s; a candidate's tree must be exactly that merge (git+ merge-tree)", i+1, short(c.id), short(c.tree), short(h), short(prev), short(merged))
	}
	return nil
}

// treeFault is what keeps a candidate's tree from being rule 3's.
type treeFault int

const (
	treeOK treeFault = iota
	treeUnrelated
	treeUnreadable
	treeConflict
	treeDiffers
)

// candidateTree is rule 3 for one candidate (docs/boundary.md): its tree is
// exactly the clean merge of its first parent prev and its second parent
// h. The hook (mergeStep) and the audit (auditor.tree) both judge by it.
// detail lists the conflicted paths (treeConflict); merged is the merge's
// tree (treeDiffers); err the read error (treeUnreadable).
func candidateTree(objs mergetree.Store, prev, h, tree plumbing.Hash, cache *mergetree.Cache) (fault treeFault, detail string, merged plumbing.Hash, err error) {
	res, err := mergetree.Merge(objs, prev, h, mergetree.Options{Cache: cache})
	switch {
	case errors.Is(err, mergetree.ErrUnrelated):
		return treeUnrelated, "", plumbing.ZeroHash, err
	case err != nil:
		return treeUnreadable, "", plumbing.ZeroHash, err
	case !res.Clean():
		var paths []string
		for _, cf := range res.Conflicts {
			paths = append(paths, cf.Path+" ("+cf.Kind+")")
		}
		return treeConflict, strings.Join(paths, ", "), plumbing.ZeroHash, nil
	case res.Tree != tree:
		return treeDiffers, "", res.Tree, nil
	}
	return treeOK, "", res.Tree, nil
}

func hashes(hs []plumbing.Hash) string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = short(h)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// provenance requires, when the branch asks for it, every commit the push
// introduces to carry a valid SSH signature of a current member holding
// source.push.
func (j *judge) provenance(u Update, b trust.Branch) error {
	if !b.RequireProvenance {
		return nil
	}
	cs, err := j.commits.introduced(u.New, u.Old)
	if err != nil {
		return err
	}
	for _, c := range cs {
		raw, err := j.commits.rawOf(c)
		if err != nil {
			return err
		}
		switch fault, who, err := commitProvenance(raw, j.trust); fault {
		case provUnsigned:
			return refuse(CodeProvenance, "%s requires provenance: commit %s is not signed; sign it with git commit -S (gpg.format=ssh) using a member's key", u.Ref, c.id)
		case provBadSignature:
			return refuse(CodeProvenance, "%s requires provenance: commit %s has a bad signature (%v)", u.Ref, c.id, err)
		case provNotMember:
			return refuse(CodeProvenance, "%s requires provenance: commit %s is signed by a key that is not a member's", u.Ref, c.id)
		case provNoCapability:
			return refuse(CodeProvenance, "%s requires provenance: commit %s is signed by %q, who does not hold %s", u.Ref, c.id, who, trust.CapSourcePush)
		}
	}
	return nil
}

// provFault is what keeps a commit from having provenance.
type provFault int

const (
	provOK provFault = iota
	provUnsigned
	provBadSignature
	provNotMember
	provNoCapability
)

// commitProvenance is the provenance rule for one commit (docs/boundary.md):
// its raw bytes carry a valid SSH signature by the key of a member of t who
// holds source.push. The hook (against the trust state of the push) and the
// audit (against the trust state of the landing) both judge by it. who is
// the signing member's name (provNoCapability); err the signature error
// (provBadSignature).
func commitProvenance(raw []byte, t *trust.State) (fault provFault, who string, err error) {
	key, err := hubrefs.Verify(raw)
	switch {
	case errors.Is(err, hubrefs.ErrUnsigned):
		return provUnsigned, "", err
	case err != nil:
		return provBadSignature, "", err
	}
	m, ok := t.MemberByKey(key)
	if !ok {
		return provNotMember, "", nil
	}
	if !m.Has(trust.CapSourcePush) {
		return provNoCapability, m.Name, nil
	}
	return provOK, m.Name, nil
}
