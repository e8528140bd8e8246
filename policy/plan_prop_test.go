package policy

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/mergetree"
)

// TestPlannerHookAgree: the planner's "green" is the hook's acceptance
// (docs/architecture.md, "One rule in one place"). Random states over a real
// object store — rules (required approvals, required checks, resolved
// threads, queueDepth, checkEvery 1 to 4, changed between passes, so that
// group marks published under a larger checkEvery stay in the queue log),
// members who leave or lose a capability between passes, pull requests
// approved or not, approvals made stale by a pushed head, unresolved
// threads, approvers (a member, the team "rev", both) with the team changed
// between passes, changes requested under blockOnChangesRequested (some
// dismissed, some lifted by a new approval), drafts made ready and back,
// conflicting heads, a queue of several entries at either
// priority, and check results (success, failure, cancelled or none) on the
// candidate steps — under either merge method (merge steps, or squash
// steps, docs/queue.md "Step shapes") go through a few queue passes, each carried out as the
// runner records it (settles, landings, evictions, and candidates with
// their group marks). On every pass, for every prefix P of the planned
// chain: the planner would land P (queue.Landable, whose longest true
// prefix is what PlanPass lands) ⇔ policy.Judge accepts moving the target
// from its tip to P's last step with the records as they stand. And for
// every entry the planner holds back as not ready, the hook refuses its
// candidate even with every required check green on it. A failure names
// its seed; the run fails too when the generated states miss a case.
func TestPlannerHookAgree(t *testing.T) {
	var seen propSeen
	for _, method := range []string{trust.MergeMethodMerge, trust.MergeMethodSquash} {
		t.Run(method, func(t *testing.T) {
			for seed := int64(1); seed <= propSeeds; seed++ {
				t.Run(fmt.Sprint(seed), func(t *testing.T) {
					t.Parallel()
					plannerHook(t, seed, &seen, method == trust.MergeMethodSquash)
				})
			}
		})
	}
	// The generator reaches both verdicts, batch vouching and the held back.
	t.Logf("prefixes landed %d, refused %d (of which under checkEvery > 1: %d landed with an unchecked step, %d refused; %d all green under marks of a larger checkEvery); held back %d (drafts %d, vetoes %d, approved by others than the approvers %d, path owners %d)",
		seen.landed.Load(), seen.refused.Load(), seen.vouched.Load(), seen.batchRefused.Load(), seen.staleMarks.Load(), seen.notReady.Load(),
		seen.draft.Load(), seen.veto.Load(), seen.notApprover.Load(), seen.owners.Load())
	if !t.Failed() && (seen.landed.Load() == 0 || seen.refused.Load() == 0 || seen.vouched.Load() == 0 || seen.batchRefused.Load() == 0 || seen.staleMarks.Load() == 0 || seen.notReady.Load() == 0 ||
		seen.draft.Load() == 0 || seen.veto.Load() == 0 || seen.notApprover.Load() == 0 || seen.owners.Load() == 0) {
		t.Errorf("the generated states miss a case the property is about")
	}
}

// propSeeds is how many seeds the property runs.
var propSeeds = int64(24)

// propSeen counts what the generated states exercised.
type propSeen struct {
	landed, refused, vouched, batchRefused, notReady atomic.Int64
	// staleMarks: all-green prefixes holding a group mark longer than a
	// checkEvery lowered since it was published.
	staleMarks atomic.Int64
	// Held back and refused as a draft, by a veto, and for approvals by
	// others than the branch's approvers.
	draft, veto, notApprover atomic.Int64
	// Held back and refused for path owners.
	owners atomic.Int64
}

// propWorld is a world with its queue and pull requests as the property
// drives them.
type propWorld struct {
	*world
	rng  *rand.Rand
	orng *rand.Rand // the owners' draws, apart so rng's stream is as before
	srng *rand.Rand // requireSandbox and how each check ran, apart too
	seed int64
	seen *propSeen
	gone map[string]bool // members removed
	// drafts: the pull requests that are drafts now.
	drafts map[string]bool
	// innerSkip: of 4 inner steps of a batch group, how many CI leaves
	// alone (CI is asked for the group's last step only).
	innerSkip int
	batch     bool // a world of batch checks, whose checkEvery shrinks
	squash    bool // mergeMethod squash: the steps are squash steps
	green     int  // of 20 check runs, how many succeed (the rest: 3 fail, 2 cancelled, or none)
	rules     propRules
	qref      string
	prs       []*prq
	title     map[string]string
}

type propRules struct {
	approvals, depth, every int
	checks                  []string
	threads                 bool
	approvers               []string // nil: any hub.review holder
	veto                    bool     // blockOnChangesRequested
	squash                  bool     // mergeMethod squash
	owners                  string   // the "owners" JSON, "" for none
	sandbox                 bool     // requireSandbox
}

func (r propRules) json() string {
	checks, _ := json.Marshal(r.checks)
	extra := ""
	if r.approvers != nil {
		a, _ := json.Marshal(r.approvers)
		extra += fmt.Sprintf(`,"approvers":%s`, a)
	}
	if r.veto {
		extra += `,"blockOnChangesRequested":true`
	}
	if r.squash {
		extra += fmt.Sprintf(`,"mergeMethod":%q`, trust.MergeMethodSquash)
	}
	if r.owners != "" {
		extra += `,"owners":` + r.owners
	}
	if r.sandbox {
		extra += `,"requireSandbox":true`
	}
	return fmt.Sprintf(`{"protected":{"refs/heads/main":{"requiredApprovals":%d,"requiredChecks":%s,"requireResolvedThreads":%v,"queueCandidates":true,"queueDepth":%d,"checkEvery":%d%s}}}`,
		r.approvals, checks, r.threads, r.depth, r.every, extra)
}

func (w *propWorld) randRules() propRules {
	depth := 2 + w.rng.Intn(5)
	r := propRules{
		approvals: w.rng.Intn(3),
		depth:     depth,
		every:     1 + w.rng.Intn(min(4, depth)), // checkEvery ≤ queueDepth
		checks:    [][]string{{}, {"ci"}, {"ci", "lint"}}[w.rng.Intn(3)],
		threads:   w.rng.Intn(3) == 0,
		// Approvers name bob or the team "rev" (never carol by name:
		// carol may be removed, and rules must name existing members).
		approvers: [][]string{nil, nil, {"bob"}, {"team:rev"}, {"team:rev", "bob"}}[w.rng.Intn(5)],
		veto:      w.rng.Intn(2) == 0,
		squash:    w.squash,
	}
	// Path owners over the heads' files (f0, f1, ..., shared): a step
	// triggers them by its own diff; owners name bob or the team "rev".
	if w.orng.Intn(2) == 0 && !w.batch {
		var entries []string
		for k := 1 + w.orng.Intn(3); k > 0; k-- {
			paths := [][]string{{"f1"}, {"f*"}, {"/f2", "shared"}, {"f?", "**/f3"}, {"*"}}[w.orng.Intn(5)]
			who := [][]string{{"bob"}, {"team:rev"}, {"team:rev", "bob"}}[w.orng.Intn(3)]
			pj, _ := json.Marshal(paths)
			wj, _ := json.Marshal(who)
			entries = append(entries, fmt.Sprintf(`{"paths":%s,"approvers":%s,"approvals":%d}`, pj, wj, 1+w.orng.Intn(2)))
		}
		r.owners = "[" + strings.Join(entries, ",") + "]"
	}
	r.sandbox = w.srng.Intn(3) == 0
	if w.batch {
		r.every = 3 + w.rng.Intn(2)
		r.depth = r.every + 1
		r.approvals = w.rng.Intn(2)
		r.checks = []string{"ci"} // some check, or every chain lands at once
		r.approvers, r.veto = nil, false
	}
	return r
}

// changeRules sets new rules between passes: in a batch world, mostly a
// smaller checkEvery (marks published under the old one stay in the queue
// log, longer than the new bound); else anything.
func (w *propWorld) changeRules() {
	if w.rules.every > 2 && (w.batch || w.rng.Intn(2) == 0) {
		w.rules.every = 2 + w.rng.Intn(w.rules.every-2)
	} else {
		w.rules = w.randRules()
	}
	w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(w.rules.json())})
}

func (w *propWorld) fatalf(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("seed %d (rules %s): %s", w.seed, w.rules.json(), fmt.Sprintf(format, args...))
}

func plannerHook(t *testing.T, seed int64, seen *propSeen, squash bool) {
	rng := rand.New(rand.NewSource(seed))
	w := &propWorld{rng: rng, orng: rand.New(rand.NewSource(seed + 1<<32)), srng: rand.New(rand.NewSource(seed + 2<<32)), seed: seed, seen: seen, title: map[string]string{}, gone: map[string]bool{}, drafts: map[string]bool{}, squash: squash}
	w.green = []int{11, 15}[rng.Intn(2)]
	w.innerSkip = 2
	if w.batch = rng.Intn(3) == 0; w.batch {
		w.green, w.innerSkip = 18, 0
	}
	w.rules = w.randRules()
	w.world = newWorld(t, "")
	w.setTeam()
	w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(w.rules.json())})
	w.qref = hubrefs.QueueRefPrefix + queueID
	w.event(w.qref, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: queueID, Target: main})

	n := 3 + rng.Intn(4)
	for i := 0; i < n; i++ {
		// Most heads touch a file of their own; some share one, so that
		// merging the second onto the first conflicts.
		file, content := fmt.Sprintf("f%d", i), "x\n"
		if rng.Intn(6) == 0 {
			file, content = "shared", fmt.Sprintf("pr %d\n", i)
		}
		p := w.open(w.commit(w.c0, file, content))
		w.title[p.id] = "change " + p.id
		for _, who := range []string{"bob", "carol"} {
			if rng.Intn(10) < 7 {
				p.approve(who)
			}
		}
		w.objectOrDraft(p)
		if rng.Intn(5) == 0 {
			w.thread(p, rng.Intn(2) == 0)
		}
		if rng.Intn(5) == 0 {
			// A pushed head makes every approval stale; maybe one again.
			w.update(p, w.commit(w.c0, file, content+"more\n"))
			if rng.Intn(2) == 0 {
				p.approve("bob")
			}
		}
		w.prs = append(w.prs, p)
	}
	for _, i := range rng.Perm(n) {
		p := w.prs[i]
		ev := hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: p.id, Head: p.head.String(), BaseRef: main}
		if rng.Intn(4) == 0 {
			ev.Priority = "high"
		}
		w.event(w.qref, "queuer", ev)
		if rng.Intn(10) == 0 {
			// Pushed after entering: the entry is stale.
			w.update(p, w.commit(p.head, fmt.Sprintf("g%d", i), "late\n"))
		}
	}

	for pass := 0; pass < 4; pass++ {
		if pass > 0 && rng.Intn(3) == 0 || w.batch && pass == 1 {
			w.changeRules()
		}
		if pass > 0 && rng.Intn(5) == 0 {
			w.changeMembers()
		}
		if pass > 0 && rng.Intn(3) == 0 {
			w.objectOrDraft(w.prs[rng.Intn(len(w.prs))])
		}
		in := w.planInput()
		plan, err := queue.PlanPass(in)
		if err != nil {
			w.fatalf("pass %d: %v", pass, err)
		}
		w.agree(pass, in, plan)
		w.carryOut(in, plan)
		w.runCI(plan)
	}
}

// changeMembers changes who counts between passes: a reviewer leaves or
// loses hub.review (their approvals stop counting), or CI loses one
// check's capability (its results stop counting), or comes back.
func (w *propWorld) changeMembers() {
	changed := func(name string, caps ...string) {
		m := w.memberAdded(name, caps...)
		m.Type = hubrefs.TypeMemberChanged
		w.event(hubrefs.TrustRef, "admin", m)
	}
	switch w.rng.Intn(4) {
	case 0:
		if !w.gone["carol"] {
			w.gone["carol"] = true
			w.event(hubrefs.TrustRef, "admin", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "carol"})
		}
	case 1:
		changed("bob", "hub.pr")
	case 2:
		changed("ci", "hub.check:ci")
	case 3:
		changed("bob", members["bob"]...)
		changed("ci", members["ci"]...)
	}
	if w.rng.Intn(2) == 0 {
		w.setTeam() // judged as the team stands now, not when they approved
	}
}

// setTeam sets the team "rev" to a random subset of the current reviewers.
func (w *propWorld) setTeam() {
	team := []string{}
	for _, name := range []string{"bob", "carol"} {
		if !w.gone[name] && w.rng.Intn(2) == 0 {
			team = append(team, name)
		}
	}
	w.event(hubrefs.TrustRef, "admin", hubrefs.TeamSet{Base: w.base(hubrefs.TypeTeamSet), Team: "rev", Members: team})
}

// objectOrDraft maybe has bob request changes (a veto under
// blockOnChangesRequested; sometimes dismissed by the admin, who holds
// hub.bypass through repo.admin, or lifted by bob approving again), and
// maybe makes the pull request a draft or ready again.
func (w *propWorld) objectOrDraft(p *prq) {
	if w.batch {
		return // batch worlds are about vouching: keep their entries ready
	}
	if !w.gone["bob"] && w.rng.Intn(4) == 0 {
		id := w.event(p.ref, "bob", hubrefs.Review{Base: w.base(hubrefs.TypeReviewSubmit), Head: p.head.String(), BaseRef: main, Verdict: "changes"})
		switch w.rng.Intn(3) {
		case 0:
			w.event(p.ref, "admin", hubrefs.ReviewDismissed{Base: w.base(hubrefs.TypeReviewDismiss), Review: id.String(), Reason: "overruled"})
		case 1:
			p.approve("bob")
		}
	}
	if w.rng.Intn(8) == 0 {
		typ := hubrefs.TypePRDraft
		if w.drafts[p.id] {
			typ = hubrefs.TypePRReady
		}
		w.drafts[p.id] = !w.drafts[p.id]
		w.event(p.ref, "alice", hubrefs.Base{Type: typ, Repo: repoID})
	}
}

func (w *propWorld) thread(p *prq, resolve bool) {
	w.event(p.ref, "bob", hubrefs.Thread{Base: w.base(hubrefs.TypeThreadOpened), Thread: "t1"})
	if resolve {
		w.event(p.ref, "bob", hubrefs.Thread{Base: w.base(hubrefs.TypeThreadResolved), Thread: "t1"})
	}
}

func (w *propWorld) update(p *prq, head plumbing.Hash) {
	w.event(p.ref, "alice", hubrefs.PRUpdated{Base: w.base(hubrefs.TypePRUpdated), Head: head.String()})
	p.head = head
}

// planInput reads the records as they stand, as the runner does.
func (w *propWorld) planInput() queue.PlanInput {
	w.t.Helper()
	read := func(ref string) []hubrefs.Event {
		evs, err := hubrefs.ReadLog(w.store, w.refs[ref], hubrefs.Ceilings{})
		if err != nil {
			w.fatalf("reading %s: %v", ref, err)
		}
		return evs
	}
	ts, err := trust.Fold(read(hubrefs.TrustRef))
	if err != nil {
		w.fatalf("trust: %v", err)
	}
	q, err := queue.Fold(read(w.qref), ts)
	if err != nil {
		w.fatalf("queue: %v", err)
	}
	prs := map[string]*pr.State{}
	for _, p := range w.prs {
		st, err := pr.Fold(read(p.ref), ts)
		if err != nil {
			w.fatalf("pull request %s: %v", p.id, err)
		}
		prs[p.id] = st
	}
	b, _ := ts.Rules.For(main)
	objs := mergetree.NewGoGitStore(w.store)
	return queue.PlanInput{Queue: q, PRs: prs, Trust: ts, Branch: b, Tip: w.refs[main],
		Contains: w.contains,
		Merge: func(parent, head plumbing.Hash, prID string) (plumbing.Hash, []string, error) {
			build := queue.BuildCandidate
			if w.squash {
				build = queue.BuildSquash
			}
			step, conflicts, err := build(objs, objs, parent, head, prID, main, w.title[prID])
			var paths []string
			for _, c := range conflicts {
				paths = append(paths, c.Path)
			}
			return step, paths, err
		},
		Changed: func(from, to plumbing.Hash) ([]string, error) { return ChangedFiles(objs, from, to) },
		BuildTested: func(parent, head, tested plumbing.Hash, prID string) (plumbing.Hash, []string, error) {
			step, conflicts, err := queue.BuildTested(objs, objs, parent, head, tested, prID, main, w.title[prID], b.Squash())
			var paths []string
			for _, c := range conflicts {
				paths = append(paths, c.Path)
			}
			return step, paths, err
		},
		Tested: func(prev, step, tested, head plumbing.Hash, prID string) (string, string, error) {
			part, _, reason, err := TestedVerdict(objs, b, TestedStep{Prev: prev, Step: step, Tested: tested, Head: head, PR: prID, Squash: b.Squash()})
			return part, reason, err
		}}
}

// contains reports whether rev is tip or one of its ancestors.
func (w *propWorld) contains(tip, rev plumbing.Hash) bool {
	seen := map[plumbing.Hash]bool{}
	todo := []plumbing.Hash{tip}
	for len(todo) > 0 {
		h := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if h == rev {
			return true
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := object.GetCommit(w.store, h)
		if err != nil {
			w.fatalf("reading commit %s: %v", h, err)
		}
		todo = append(todo, c.ParentHashes...)
	}
	return false
}

// agree checks the property on one plan, before it is carried out.
func (w *propWorld) agree(pass int, in queue.PlanInput, plan queue.Plan) {
	w.t.Helper()
	every := in.Branch.Every()
	longest := 0
	for j := 1; j <= len(plan.Chain); j++ {
		prefix := plan.Chain[:j]
		lands := queue.Landable(prefix, in.Queue, every)
		if lands {
			longest = j
		}
		u := Update{Ref: main, Old: in.Tip, New: plumbing.NewHash(prefix[j-1].Commit)}
		v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}})[0]
		unchecked, overlong := false, false
		for _, st := range prefix {
			unchecked = unchecked || st.Verdict != queue.Green
			n, marked := in.Queue.GroupEnd(st.Commit)
			overlong = overlong || every > 1 && marked && n > every
		}
		if overlong && !unchecked {
			w.seen.staleMarks.Add(1)
		}
		switch {
		case lands && unchecked:
			w.seen.vouched.Add(1)
			w.seen.landed.Add(1)
		case lands:
			w.seen.landed.Add(1)
		case every > 1:
			w.seen.batchRefused.Add(1)
			w.seen.refused.Add(1)
		default:
			w.seen.refused.Add(1)
		}
		if lands != v.Accepted() {
			w.fatalf("pass %d, prefix of %d of %s: the planner would land it: %v; the hook: [%s] %s", pass, j, describe(plan.Chain), lands, v.Code, v.Reason)
		}
	}
	switch {
	case longest == 0 && plan.Land != nil:
		w.fatalf("pass %d: the planner lands %s, which no prefix of %s the hook accepts ends at", pass, plan.Land.New, describe(plan.Chain))
	case longest > 0 && (plan.Land == nil || plan.Land.New != plan.Chain[longest-1].Commit):
		w.fatalf("pass %d: the planner lands %+v, not the longest landable prefix (%d) of %s", pass, plan.Land, longest, describe(plan.Chain))
	}
	// Held back as not ready: the hook refuses it whatever its checks.
	for _, wt := range plan.Waiting {
		if !strings.HasPrefix(wt.Reason, "not ready") {
			continue
		}
		p := in.PRs[wt.PR]
		step, conflicts, err := in.Merge(in.Tip, plumbing.NewHash(wt.Head), wt.PR)
		if err != nil {
			w.fatalf("building a candidate for %s: %v", wt.PR, err)
		}
		if len(conflicts) > 0 {
			continue
		}
		w.seen.notReady.Add(1)
		pq := w.find(wt.PR)
		for _, name := range in.Branch.RequiredChecks {
			if c, _ := p.Check(name, step.String()); c != pr.Success {
				pq.check(name, step, pr.Success)
			}
		}
		u := Update{Ref: main, Old: in.Tip, New: step}
		v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}})[0]
		if v.Accepted() {
			w.fatalf("pass %d: %s waits (%s), but the hook accepts its candidate %s", pass, wt.PR, wt.Reason, step)
		}
		switch v.Code {
		case CodePRDraft:
			w.seen.draft.Add(1)
		case CodeChangesRequested:
			w.seen.veto.Add(1)
		case CodeOwners:
			w.seen.owners.Add(1)
		case CodeNotApproved:
			if in.Branch.Approvers != nil && len(p.Approvals) >= in.Branch.RequiredApprovals {
				w.seen.notApprover.Add(1) // approved enough, but not by the approvers
			}
		}
	}
}

func (w *propWorld) find(id string) *prq {
	for _, p := range w.prs {
		if p.id == id {
			return p
		}
	}
	w.fatalf("no pull request %s", id)
	return nil
}

func describe(chain []queue.Step) string {
	var s []string
	for _, st := range chain {
		d := st.Commit[:7] + ":" + st.Verdict
		if st.GroupEnd != "" {
			d += fmt.Sprintf("(group of %d ending %s)", st.GroupSize, st.GroupEnd[:7])
		}
		s = append(s, d)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// carryOut records the plan as the runner does (receive/queuerun): settles
// (with pr.merged), the landing, evictions and published candidates.
func (w *propWorld) carryOut(in queue.PlanInput, plan queue.Plan) {
	left := func(prID, head, reason, detail, step, run string) {
		w.event(w.qref, "queuer", hubrefs.QueueLeft{Base: w.base(hubrefs.TypeQueueLeft), PR: prID, Head: head, Reason: reason, Detail: detail, Step: step, Run: run})
	}
	merged := func(prID string, m queue.Merged) {
		w.event(hubrefs.PRRefPrefix+prID, "queuer", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: m.Revision, Branch: m.Branch, Commit: m.Commit})
	}
	for _, s := range plan.Settle {
		if s.Merged != nil {
			merged(s.PR, *s.Merged)
		}
		left(s.PR, s.Head, s.Reason, s.Detail, "", "")
	}
	if l := plan.Land; l != nil {
		w.refs[main] = plumbing.NewHash(l.New)
		for _, x := range l.Landed {
			merged(x.PR, queue.Merged{Revision: x.Head, Branch: l.Ref, Commit: x.Commit})
			left(x.PR, x.Head, queue.ReasonLanded, "landed as "+x.Commit, "", "")
		}
	}
	for _, e := range plan.Evict {
		left(e.PR, e.Head, e.Reason, e.Detail, e.Step, e.Run)
	}
	for _, p := range plan.Publish {
		w.event(w.qref, "queuer", hubrefs.QueueCandidate{Base: w.base(hubrefs.TypeQueueCandidate), PR: p.PR, Head: p.Head, Step: p.Step,
			Parents: p.Parents, Branch: p.Branch, GroupEnd: p.GroupEnd, GroupSize: p.GroupSize, Trial: p.Trial, Run: p.Run, Partition: p.Partition})
	}
}

// runCI concludes (or not) the required checks of the steps the plan left
// in the chain: mostly on what the runner asks CI for (every step, or a
// group's last), sometimes on an inner step too.
func (w *propWorld) runCI(plan queue.Plan) {
	landed := map[string]bool{}
	if plan.Land != nil {
		for _, x := range plan.Land.Landed {
			landed[x.PR] = true
		}
	}
	var steps []queue.Step
	for _, st := range plan.Chain {
		if !landed[st.PR] {
			steps = append(steps, st)
		}
	}
	for _, st := range steps {
		asked := st.GroupEnd == "" || st.GroupEnd == st.Commit
		if !asked && w.rng.Intn(4) < w.innerSkip {
			continue
		}
		p := w.find(st.PR)
		for _, name := range []string{"ci", "lint"} {
			// How the run says its command ran: requireSandbox counts
			// only the landlock ones.
			box := []string{"", "off", "env-only", "landlock-7", "landlock-7", "landlock-6"}[w.srng.Intn(6)]
			switch r := w.rng.Intn(20); {
			case r < w.green:
				p.checkRan(name, plumbing.NewHash(st.Commit), pr.Success, box)
			case r < w.green+3:
				p.checkRan(name, plumbing.NewHash(st.Commit), pr.Failure, box)
			case r < w.green+5:
				p.checkRan(name, plumbing.NewHash(st.Commit), pr.Cancelled, box)
			}
		}
	}
}
