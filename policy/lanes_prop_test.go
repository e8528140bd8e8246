package policy

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// TestLanesPlannerHookAgree holds the planner's lanes, the hook and the
// audit to the one rule of partition steps (docs/boundary.md, "Partition
// steps"; docs/queue.md, "Partitions and lanes"). Random monorepos with
// three partitions (one reading a file another's pull requests may
// change), pull requests of one partition, of two, touching a read file
// or a file of none (global), some conflicting, under either merge method
// and strict or batch checks, go through queue passes carried out as the
// runner records them, with CI concluding (or not) on what each pass
// publishes. On every pass: whatever the planner lands, the hook accepts
// (its partition steps included); for every lane, the first step it does
// not land, added on top of what it lands (as is, or as its partition step
// there), the hook refuses — the planner lands each lane's longest
// prefix the hook accepts; what it holds back as not ready the hook
// refuses. After every pass, verify --branch justifies every landing. The
// run fails when the generated states miss a case the property is about.
func TestLanesPlannerHookAgree(t *testing.T) {
	var seen lanesSeen
	for _, method := range []string{trust.MergeMethodMerge, trust.MergeMethodSquash} {
		t.Run(method, func(t *testing.T) {
			for seed := int64(1); seed <= propSeeds; seed++ {
				t.Run(fmt.Sprint(seed), func(t *testing.T) {
					t.Parallel()
					lanesHook(t, seed, &seen, method == trust.MergeMethodSquash)
				})
			}
		})
	}
	t.Logf("landings %d (with partition steps %d, several lanes at once %d, batch %d); next steps refused %d; lanes rebuilt on the tip for the partition rule %d; kept standing on an older tip %d; global steps %d; audits %d; worlds of one partition %d; global entries landed before lane entries queued ahead of them %d",
		seen.landings.Load(), seen.tested.Load(), seen.multi.Load(), seen.batch.Load(), seen.next.Load(), seen.ruled.Load(), seen.kept.Load(), seen.global.Load(), seen.audits.Load(), seen.one.Load(), seen.jumped.Load())
	if !t.Failed() && (seen.landings.Load() == 0 || seen.tested.Load() == 0 || seen.multi.Load() == 0 || seen.batch.Load() == 0 ||
		seen.next.Load() == 0 || seen.ruled.Load() == 0 || seen.kept.Load() == 0 || seen.global.Load() == 0 || seen.one.Load() == 0 || seen.jumped.Load() == 0) {
		t.Errorf("the generated states miss a case the property is about")
	}
}

type lanesSeen struct {
	landings, tested, multi, batch, next, ruled, kept, global, audits, one, jumped atomic.Int64
}

const lanesParts = `[{"name":"web","paths":["web/**"],"reads":["lib/w"]},{"name":"api","paths":["api/**"],"reads":["lib/a","web/x"]},{"name":"docs","paths":["docs/**"]}]`

func lanesHook(t *testing.T, seed int64, seen *lanesSeen, squash bool) {
	rng := rand.New(rand.NewSource(seed))
	w := &propWorld{rng: rng, orng: rand.New(rand.NewSource(seed + 1<<32)), srng: rand.New(rand.NewSource(seed + 2<<32)), seed: seed, title: map[string]string{}, gone: map[string]bool{}, drafts: map[string]bool{}, squash: squash}
	w.world = newWorld(t, "")
	w.green, w.innerSkip = []int{13, 17}[rng.Intn(2)], 2
	depth := 2 + rng.Intn(4)
	every := 1
	if rng.Intn(3) == 0 {
		every = 2 + rng.Intn(min(2, depth-1))
	}
	extra := ""
	if squash {
		extra = `,"mergeMethod":"squash"`
	}
	parts := lanesParts
	if rng.Intn(4) == 0 {
		parts = `[{"name":"web","paths":["web/**"],"reads":["lib/w"]}]` // one lane, global entries in it
		seen.one.Add(1)
	}
	rules := fmt.Sprintf(`{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":["ci"],"queueCandidates":true,"queueDepth":%d,"checkEvery":%d%s,"partitions":%s}}}`, depth, every, extra, parts)
	w.rules = propRules{approvals: 1, depth: depth, every: every, checks: []string{"ci"}, squash: squash}
	w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(rules)})
	w.qref = hubrefs.QueueRefPrefix + queueID
	w.event(w.qref, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: queueID, Target: main})
	base := w.commitFiles(w.c0, map[string]string{"web/x": "x\n", "api/x": "x\n", "docs/x": "x\n", "lib/w": "w\n", "lib/a": "a\n", "root": "r\n"})
	w.refs[main] = base
	since := base

	kinds := []func(i int) map[string]string{
		func(i int) map[string]string { return map[string]string{fmt.Sprintf("web/f%d", i): "1\n"} },
		func(i int) map[string]string { return map[string]string{fmt.Sprintf("api/f%d", i): "1\n"} },
		func(i int) map[string]string { return map[string]string{fmt.Sprintf("docs/f%d", i): "1\n"} },
		func(i int) map[string]string { return map[string]string{fmt.Sprintf("web/f%d", i): "1\n"} },
		func(i int) map[string]string { return map[string]string{fmt.Sprintf("api/g%d", i): "1\n"} },
		func(i int) map[string]string { return map[string]string{"web/x": fmt.Sprintf("x %d\n", i)} }, // api reads it: global
		func(i int) map[string]string { return map[string]string{"lib/w": fmt.Sprintf("w %d\n", i)} }, // global, web reads it
		func(i int) map[string]string {
			return map[string]string{fmt.Sprintf("web/h%d", i): "1\n", fmt.Sprintf("api/h%d", i): "1\n"}
		}, // two partitions: global
		func(i int) map[string]string { return map[string]string{"docs/shared": fmt.Sprintf("pr %d\n", i)} }, // conflicts pairwise
		func(i int) map[string]string { return map[string]string{fmt.Sprintf("top%d", i): "1\n"} },           // global, no lane reads it
	}
	n := 5 + rng.Intn(5)
	for i := 0; i < n; i++ {
		k := rng.Intn(len(kinds))
		if k >= 5 && rng.Intn(2) == 0 {
			k = rng.Intn(5) // mostly partition changes
		}
		p := w.open(w.commitFiles(base, kinds[k](i)))
		w.title[p.id] = "change " + p.id
		if rng.Intn(8) != 0 {
			p.approve("bob")
		}
		w.prs = append(w.prs, p)
		w.event(w.qref, "queuer", hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: p.id, Head: p.head.String(), BaseRef: main})
	}

	for pass := 0; pass < 8; pass++ {
		if pass > 0 && rng.Intn(3) == 0 {
			w.outsideLanding(pass)
		}
		in := w.planInput()
		plan, err := queue.PlanPass(in)
		if err != nil {
			w.fatalf("pass %d: %v", pass, err)
		}
		w.lanesAgree(pass, in, plan, seen)
		w.carryOut(in, plan)
		if plan.Land != nil {
			rep, err := Audit(AuditInput{Objects: GoGitObjects(w.store), Refs: w.refs, Branch: main, Since: since})
			if err != nil {
				w.fatalf("pass %d: audit: %v", pass, err)
			}
			if len(rep.Unjustified) > 0 {
				w.fatalf("pass %d: audit: %+v", pass, rep.Unjustified)
			}
			seen.audits.Add(1)
		}
		w.runCI(plan)
	}
}

// lanesAgree checks the property on one plan, before it is carried out.
func (w *propWorld) lanesAgree(pass int, in queue.PlanInput, plan queue.Plan, seen *lanesSeen) {
	w.t.Helper()
	judge := func(u Update) Verdict {
		return Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}})[0]
	}
	top := in.Tip
	lanes := map[string]bool{}
	landed := map[string]bool{}
	if l := plan.Land; l != nil {
		v := judge(Update{Ref: main, Old: in.Tip, New: plumbing.NewHash(l.New)})
		if !v.Accepted() {
			w.fatalf("pass %d: the planner lands %s (%d pull requests) on %s; the hook: [%s] %s\nchain %s", pass, l.New, len(l.Landed), in.Tip, v.Code, v.Reason, describe(plan.Chain))
		}
		seen.landings.Add(1)
		top = plumbing.NewHash(l.New)
		for _, x := range l.Landed {
			landed[x.PR] = true
		}
		for _, st := range plan.Chain {
			if landed[st.PR] {
				lanes[st.Partition] = true
				if st.Commit != landedCommit(l, st.PR) {
					seen.tested.Add(1)
				}
			}
		}
		if len(lanes) > 1 {
			seen.multi.Add(1)
		}
		// A global entry landing before a lane entry queued ahead of it
		// (docs/queue.md, "Global entries").
		seq := map[string]int{}
		for _, e := range in.Queue.Entries {
			seq[e.PR] = e.Seq
		}
		for _, g := range plan.Chain {
			if !landed[g.PR] || g.Partition != "" {
				continue
			}
			for _, st := range plan.Chain {
				if st.Partition != "" && !landed[st.PR] && seq[st.PR] < seq[g.PR] {
					seen.jumped.Add(1)
				}
			}
		}
		if in.Branch.Every() > 1 {
			seen.batch.Add(1)
		}
	}
	// A lane's first entry whose standing candidate stands on an older
	// tip: the planner kept it, or rebuilt it on the tip because its
	// partition step there would be refused — which the hook confirms
	// (with that candidate's checks green, so that only the partition rule
	// can refuse it).
	first := map[string]bool{}
	for _, st := range plan.Chain {
		if st.Partition == "" || first[st.Partition] {
			continue
		}
		first[st.Partition] = true
		rec, ok := in.Queue.LatestCandidate(st.PR)
		if !ok || !rec.Invalidated.IsZero() || rec.Head != st.Head || rec.Parents[0] == in.Tip.String() || rec.Step == st.Commit || landed[st.PR] ||
			st.Parent != in.Tip.String() || rec.Partition != st.Partition || rec.Trial {
			continue // not a lane's first candidate rebuilt on the tip in place of one of its own
		}
		d, conflicts, err := in.BuildTested(in.Tip, plumbing.NewHash(st.Head), plumbing.NewHash(rec.Step), st.PR)
		if err != nil || len(conflicts) > 0 {
			continue
		}
		w.find(st.PR).check("ci", plumbing.NewHash(rec.Step), pr.Success)
		v := judge(Update{Ref: main, Old: in.Tip, New: d})
		switch v.Code {
		case CodePartitionUntested, CodePartitionOutside, CodeTestedCandidate:
			seen.ruled.Add(1)
		default:
			w.fatalf("pass %d: lane %q rebuilt %s on the tip (%s for %s), but its partition step there is [%s] %s", pass, st.Partition, st.PR, st.Commit, rec.Step, v.Code, v.Reason)
		}
	}
	// Per chain, the first step not landed, on top of the landing.
	done := map[string]bool{}
	for _, st := range plan.Chain {
		if st.Partition == "" {
			seen.global.Add(1)
		}
		if st.Parent != in.Tip.String() && !strings.HasPrefix(st.Parent, "0000") && !w.isStep(plan, st.Parent) {
			seen.kept.Add(1)
		}
		lane := st.Partition
		if len(in.Branch.Partitions) == 1 {
			lane = in.Branch.Partitions[0].Name // one lane: its global entries are steps of it
		}
		if landed[st.PR] || done[lane] || st.Behind {
			continue // landed, not the lane's first left, or waiting for the queue's order
		}
		done[lane] = true
		next := plumbing.NewHash(st.Commit)
		if st.Parent != top.String() {
			d, conflicts, err := in.BuildTested(top, plumbing.NewHash(st.Head), plumbing.NewHash(st.Commit), st.PR)
			if err != nil || len(conflicts) > 0 {
				continue
			}
			next = d
		}
		v := judge(Update{Ref: main, Old: in.Tip, New: next})
		if v.Accepted() {
			w.fatalf("pass %d: lane %q does not land %s (%s, %s), but the hook accepts it on top of the landing %v\nchain %s\nwaiting %+v", pass, st.Partition, st.PR, st.Commit, st.Verdict, plan.Land, describe(plan.Chain), plan.Waiting)
		}
		seen.next.Add(1)
	}
	// Held back as not ready: refused whatever its checks.
	for _, wt := range plan.Waiting {
		if !strings.HasPrefix(wt.Reason, "not ready") {
			continue
		}
		step, conflicts, err := in.Merge(in.Tip, plumbing.NewHash(wt.Head), wt.PR)
		if err != nil || len(conflicts) > 0 {
			continue
		}
		w.find(wt.PR).check("ci", step, pr.Success)
		if v := judge(Update{Ref: main, Old: in.Tip, New: step}); v.Accepted() {
			w.fatalf("pass %d: %s waits (%s), but the hook accepts its candidate %s", pass, wt.PR, wt.Reason, step)
		}
	}
}

// isStep reports whether commit is a step of plan's chain.
func (w *propWorld) isStep(plan queue.Plan, commit string) bool {
	for _, st := range plan.Chain {
		if st.Commit == commit {
			return true
		}
	}
	return false
}

func landedCommit(l *queue.Land, prID string) string {
	for _, x := range l.Landed {
		if x.PR == prID {
			return x.Commit
		}
	}
	return ""
}

// outsideLanding lands, directly (as git+ pr merge would), a pull request
// changing a file one partition reads, or one of no partition, on the tip:
// the lanes' standing candidates on an older tip may no longer land.
func (w *propWorld) outsideLanding(pass int) {
	w.t.Helper()
	file := []string{"lib/w", "web/x", "root", "lib/a"}[w.rng.Intn(4)]
	p := w.open(w.commitFiles(w.refs[main], map[string]string{file: fmt.Sprintf("outside %d\n", pass)}))
	w.title[p.id] = "outside " + p.id
	p.approve("bob").check("ci", p.head, pr.Success)
	if v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{{Ref: main, Old: w.refs[main], New: p.head}}})[0]; !v.Accepted() {
		w.fatalf("pass %d: the direct landing of %s: [%s] %s", pass, p.id, v.Code, v.Reason)
	}
	w.refs[main] = p.head
	w.event(p.ref, "queuer", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: p.head.String(), Branch: main, Commit: p.head.String()})
}
