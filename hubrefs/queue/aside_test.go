package queue

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
)

// TestBatchGroupsAside: which red group batchGroups hands over to be
// searched aside (docs/queue.md, "Searching a red group aside"), and that a
// red group above a group without a verdict waits for it instead.
func TestBatchGroupsAside(t *testing.T) {
	for _, tt := range []struct {
		verdicts string // one letter a step: P pending, G green, R red
		k        int
		aside    string // "lo-hi" or ""
		groups   string // the groups marked when nothing is set aside
		held     string // the steps held
		culprit  int
	}{
		{"PPPR", 4, "0-3", "", "", -1},                // red end, nothing below: aside
		{"PRPP", 4, "0-1", "", "", -1},                // a known red step ends its group there
		{"GGGGPPPR", 4, "4-7", "", "", -1},            // own greens land; the red group past them
		{"PPPRPPPP", 4, "0-3", "", "", -1},            // the steps past it will be rebuilt
		{"PPPPPPPR", 4, "", "0-3,4-7", "", -1},        // the group below has no verdict: wait
		{"PPPPPPRPPP", 4, "", "0-3,4-6", "7,8,9", -1}, // and hold what is built on the red one
		{"RPPP", 4, "", "0-0", "1,2,3", 0},            // a red step alone: the culprit at once
	} {
		t.Run(fmt.Sprintf("%s_k%d", tt.verdicts, tt.k), func(t *testing.T) {
			var chain []Step
			for i, v := range tt.verdicts {
				chain = append(chain, Step{Commit: hex(fmt.Sprint("s", i)), Verdict: map[rune]string{'P': Pending, 'G': Green, 'R': Red}[v]})
			}
			culprit, aside := batchGroups(chain, &State{marks: map[string]int{}}, tt.k, func(lo, hi int) bool { return true }, false)
			got := ""
			if aside[0] >= 0 {
				got = fmt.Sprintf("%d-%d", aside[0], aside[1])
			}
			var groups, held []string
			for i := 0; i < len(chain); i++ {
				if chain[i].held {
					held = append(held, fmt.Sprint(i))
				}
				if got == "" && chain[i].GroupEnd != "" && (i == 0 || chain[i-1].GroupEnd != chain[i].GroupEnd) {
					groups = append(groups, fmt.Sprintf("%d-%d", i, i+chain[i].GroupSize-1))
				}
			}
			if got != tt.aside || strings.Join(groups, ",") != tt.groups || strings.Join(held, ",") != tt.held || culprit != tt.culprit {
				t.Errorf("aside %q groups %q held %q culprit %d; want %q, %q, %q, %d", got, groups, held, culprit, tt.aside, tt.groups, tt.held, tt.culprit)
			}
		})
	}
}

// asideWorld is a batch queue under checkEvery 4, depth 8, of the pull
// requests names, with a CI the test answers by hand. Each pull request
// log grows as events happen, so event ids (the runs trials cite) stay.
type asideWorld struct {
	*world
	t     *testing.T
	names []string
	logs  map[string]*log
	tip   plumbing.Hash
}

func newAsideWorld(t *testing.T, names ...string) *asideWorld {
	c := newCast(t)
	specs := map[string]prSpec{}
	w := &asideWorld{t: t, names: names, logs: map[string]*log{}, tip: tip0}
	for _, n := range names {
		specs[n] = prSpec{head: "h" + n}
		l := &log{}
		l.add(c.alice, hubrefs.TypePROpened, "id", prID(n), "base", main, "head", hex("h"+n), "title", "Change "+n)
		l.add(c.bob, hubrefs.TypeReviewSubmit, "head", hex("h"+n), "base", main, "verdict", "approve")
		w.logs[n] = l
	}
	w.world = newWorld(t, c, names, specs)
	return w
}

// check records conclusion at rev (in every pull request's log: only the
// one whose step rev is reads it).
func (w *asideWorld) check(rev, conclusion string) {
	for _, n := range w.names {
		w.logs[n].add(w.c.ci, hubrefs.TypeCheckCompleted, "name", "ci", "head", rev, "conclusion", conclusion)
	}
}

// close closes pull request n.
func (w *asideWorld) close(n string) { w.logs[n].add(w.c.alice, hubrefs.TypePRClosed) }

// pass plans one pass with the events so far, carries it out (land,
// evict, publish with marks) and returns it.
func (w *asideWorld) pass() Plan {
	w.t.Helper()
	for _, n := range w.names {
		st, err := pr.Fold(w.logs[n].evs, w.c.t)
		if err != nil {
			w.t.Fatal(err)
		}
		w.prs[prID(n)] = st
	}
	in := w.input(w.t, w.tip)
	in.Branch.CheckEvery, in.Branch.QueueDepth = 4, 8
	p, err := PlanPass(in)
	if err != nil {
		w.t.Fatal(err)
	}
	if p.Land != nil {
		w.tip = plumbing.NewHash(p.Land.New)
		for _, l := range p.Land.Landed {
			w.contains[plumbing.NewHash(l.Head)] = true
		}
	}
	w.applyBatch(p)
	return p
}

// ci records conclusion on the published step of pull request name.
func (w *asideWorld) ci(p Plan, name, conclusion string) {
	w.t.Helper()
	for _, pb := range p.Publish {
		if pb.PR == prID(name) {
			w.check(pb.Step, conclusion)
			return
		}
	}
	w.t.Fatalf("%s was not published: %+v", name, p.Publish)
}

// trials lists the trials p publishes as "a+b@base", base "tip" for the
// tip the pass started from and "new" for the one it landed.
func trials(p Plan, tip plumbing.Hash) string {
	var out []string
	cur := ""
	for _, pb := range p.Publish {
		if !pb.Trial {
			continue
		}
		if cur == "" {
			cur = nameOf(pb.PR)
		} else {
			cur += "+" + nameOf(pb.PR)
		}
		if pb.GroupEnd == pb.Step {
			base := "new"
			if p.Land == nil || pb.Parents[0] == tip.String() {
				base = "tip"
			}
			out = append(out, cur+"@"+base)
			cur = ""
		}
	}
	return strings.Join(out, ",")
}

func evictions(p Plan) string {
	var out []string
	for _, e := range p.Evict {
		out = append(out, nameOf(e.PR)+":"+e.Reason)
	}
	return strings.Join(out, ",")
}

// TestSearchAside walks one red group through its search: set aside, the
// chain rebuilt behind it at once, halves tried on the target, a green
// trial landing as it is, the culprit evicted alone on its own run, and
// the innocent queued again behind what was queued before their trial.
func TestSearchAside(t *testing.T) {
	w := newAsideWorld(t, "a", "b", "c", "d", "e", "f")
	p := w.pass()
	if chainStr(p) != "a=pending,b=pending,c=pending,d=pending,e=pending,f=pending" {
		t.Fatalf("pass 1 chain %s", chainStr(p))
	}
	w.ci(p, "d", pr.Failure) // c is broken

	// The group a–d is red with nothing below: aside, tried in halves on
	// the tip; e, f rebuilt on the tip and published at once.
	p = w.pass()
	if got := trials(p, tip0); got != "a+b@tip,c+d@tip" || chainStr(p) != "e=pending,f=pending" || len(p.Evict) != 0 {
		t.Fatalf("pass 2: trials %q chain %s evicted %v", got, chainStr(p), p.Evict)
	}
	if p.Chain[0].Parent != tip0.String() {
		t.Fatalf("e built on %s, want the tip", p.Chain[0].Parent)
	}
	for _, wt := range p.Waiting {
		if wt.PR == prID("a") && !strings.Contains(wt.Reason, "aside from the chain in a trial of 2") {
			t.Fatalf("a waits: %q", wt.Reason)
		}
	}
	if again := w.pass(); again.Appends() != 0 {
		t.Fatalf("planning again appends %+v", again)
	}
	trialAB, trialCD, chainF := p.Publish[1].Step, p.Publish[3].Step, p.Chain[1].Commit
	for _, pb := range p.Publish {
		if pb.Trial && pb.Run == "" {
			t.Fatalf("trial step %+v cites no run", pb)
		}
	}
	w.check(trialAB, pr.Success)
	w.check(trialCD, pr.Failure)

	// a–b is green on the tip, but e and f were queued before the trial,
	// so a and b go behind them (the chain in flight is not rebuilt); a
	// green trial lands as it is only when it is the chain's own prefix.
	p = w.pass()
	if p.Land != nil || chainStr(p) != "e=pending,f=pending,a=pending,b=pending" {
		t.Fatalf("pass 3: land %+v chain %s", p.Land, chainStr(p))
	}
	if got := trials(p, tip0); got != "c@tip,d@tip" {
		t.Fatalf("pass 3 trials %q, want c and d alone on the tip", got)
	}
	if p.Chain[1].Commit != chainF {
		t.Fatalf("f was rebuilt: the innocent must queue behind it")
	}
	end := p.Chain[3].Commit
	w.check(end, pr.Success)
	w.ci(p, "c", pr.Failure)
	w.ci(p, "d", pr.Success)

	// c alone red: evicted, naming its trial; e, f, a, b land through the
	// group end; d, green alone on the old tip, goes back into the chain.
	p = w.pass()
	if evictions(p) != "c:failed" || !strings.Contains(p.Evict[0].Detail, "a trial of it alone") {
		t.Fatalf("pass 4 evicted %v", p.Evict)
	}
	if p.Land == nil || len(p.Land.Landed) != 4 || p.Land.New != end {
		t.Fatalf("pass 4 land %+v, want e, f, a, b", p.Land)
	}
	if chainStr(p) != "e=pending,f=pending,a=pending,b=green,d=pending" || p.Chain[4].Parent != end {
		t.Fatalf("pass 4 chain %s, want d rebuilt on the new tip", chainStr(p))
	}
	w.ci(p, "d", pr.Success)
	p = w.pass()
	if p.Land == nil || len(p.Land.Landed) != 1 {
		t.Fatalf("pass 5: %+v", p)
	}
}

// TestSearchAsideLandsGreenTrial: a green trial built on the tip the queue
// still holds, first in queue order, is the chain's own prefix: it lands as
// it is, without running again.
func TestSearchAsideLandsGreenTrial(t *testing.T) {
	w := newAsideWorld(t, "a", "b", "c", "d")
	p := w.pass()
	w.ci(p, "d", pr.Failure) // d is broken
	p = w.pass()
	if got := trials(p, tip0); got != "a+b@tip,c+d@tip" {
		t.Fatalf("trials %q", got)
	}
	w.ci(p, "b", pr.Success)
	p = w.pass()
	if p.Land == nil || len(p.Land.Landed) != 2 || p.Land.Landed[1].PR != prID("b") {
		t.Fatalf("the green trial a+b did not land as it is: %+v, chain %s", p.Land, chainStr(p))
	}
}

// TestSearchAsideInteraction: two pull requests that pass alone and fail
// together. Their trials clear both; back in the chain together their
// group is red again, and the second time it is searched in place (by
// halving in the chain), so the queue cannot go round for ever.
func TestSearchAsideInteraction(t *testing.T) {
	w := newAsideWorld(t, "a", "b")
	p := w.pass()
	w.ci(p, "b", pr.Failure)
	p = w.pass()
	if got := trials(p, tip0); got != "a@tip,b@tip" {
		t.Fatalf("trials %q", got)
	}
	w.ci(p, "a", pr.Success)
	w.ci(p, "b", pr.Success)
	// The green trial of a alone is on the tip and first: a lands as it
	// is; b, green alone on the old tip, is rebuilt on a.
	p = w.pass()
	if p.Land == nil || len(p.Land.Landed) != 1 || chainStr(p) != "a=green,b=pending" {
		t.Fatalf("land %+v chain %s", p.Land, chainStr(p))
	}

	// Now two that fail together, each cleared before.
	w2 := newAsideWorld(t, "a", "b", "c")
	p = w2.pass()
	w2.ci(p, "c", pr.Failure)
	p = w2.pass() // trials a+b, c
	if got := trials(p, tip0); got != "a+b@tip,c@tip" {
		t.Fatalf("trials %q", got)
	}
	// c is broken alone; a+b's trial says red too (they fail together).
	for _, pb := range p.Publish {
		if pb.GroupEnd == pb.Step {
			w2.check(pb.Step, pr.Failure)
		}
	}
	// Both halves red: c, alone, is tried once more rather than evicted
	// (two culprits, or a flake); a+b is halved.
	p = w2.pass()
	if evictions(p) != "" || trials(p, tip0) != "a@tip,b@tip,c@tip" {
		t.Fatalf("evicted %q trials %q, want c tried again and a, b alone", evictions(p), trials(p, tip0))
	}
	for _, pb := range p.Publish {
		if pb.PR == prID("c") && pb.Run == "" {
			t.Fatalf("c tried again citing no run: %+v", pb)
		}
	}
	w2.ci(p, "c", pr.Failure)
	w2.ci(p, "a", pr.Success)
	w2.ci(p, "b", pr.Success)
	p = w2.pass() // c red again: evicted; a lands (its trial is on the tip); b rebuilt on it
	if evictions(p) != "c:failed" {
		t.Fatalf("evicted %q, want c", evictions(p))
	}
	if p.Land == nil || chainStr(p) != "a=green,b=pending" {
		t.Fatalf("land %+v chain %s", p.Land, chainStr(p))
	}
}

// TestSearchAsideRepeatInPlace: a red group holding two pull requests that
// trials cleared before is halved in the chain, not set aside again.
func TestSearchAsideRepeatInPlace(t *testing.T) {
	w := newAsideWorld(t, "a", "b", "c", "d")
	p := w.pass()
	w.ci(p, "d", pr.Failure)
	p = w.pass() // trials a+b, c+d
	for _, pb := range p.Publish {
		if pb.GroupEnd == pb.Step {
			w.check(pb.Step, pr.Success) // both green: a flake, or an interaction
		}
	}
	// All four back in the chain, in the same order on the same tip: the
	// same commits. a+b lands as it is; d's step is the group end that
	// was red, but the trials cited that run, so it is checked again
	// rather than judged by it.
	p = w.pass()
	if p.Land == nil || len(p.Land.Landed) != 2 || chainStr(p) != "a=pending,b=green,c=pending,d=pending" {
		t.Fatalf("land %+v chain %s", p.Land, chainStr(p))
	}
	w.ci(p, "d", pr.Failure) // c and d fail together
	p = w.pass()
	if trials(p, w.tip) != "" {
		t.Fatalf("set aside again: trials %q", trials(p, w.tip))
	}
	if chainStr(p) != "c=pending,d=red" || p.Chain[0].GroupEnd != p.Chain[0].Commit {
		t.Fatalf("chain %s (c's group end %s), want c halved into a group of its own in place", chainStr(p), p.Chain[0].GroupEnd)
	}
}

// TestSearchAsideMemberLeaves: a pull request withdrawn from a trial
// leaves the others to be tried again without it.
func TestSearchAsideMemberLeaves(t *testing.T) {
	w := newAsideWorld(t, "a", "b", "c", "d")
	p := w.pass()
	w.ci(p, "d", pr.Failure)
	w.pass() // trials a+b, c+d
	w.close("b")
	p = w.pass()
	if len(p.Settle) != 1 || p.Settle[0].PR != prID("b") || trials(p, tip0) != "a@tip" {
		t.Fatalf("settled %+v trials %q, want b withdrawn and a tried alone", p.Settle, trials(p, tip0))
	}
}

// TestSearchAsideRedTarget: trials of one on a tip that is itself broken
// evict RedTargetEvictions pull requests, then the queue stops
// (docs/queue.md, "A red target"), as a strict chain does.
func TestSearchAsideRedTarget(t *testing.T) {
	w := newAsideWorld(t, "a", "b", "c", "d")
	fail := func(p Plan) {
		for _, pb := range p.Publish {
			if pb.GroupEnd == pb.Step {
				w.check(pb.Step, pr.Failure)
			}
		}
	}
	p := w.pass()
	fail(p)
	p = w.pass() // trials a+b, c+d, both red
	fail(p)
	p = w.pass() // trials a, b, c, d
	if trials(p, tip0) != "a@tip,b@tip,c@tip,d@tip" {
		t.Fatalf("trials %q", trials(p, tip0))
	}
	fail(p)
	p = w.pass() // each pair red on both sides: each tried alone once more
	if trials(p, tip0) != "a@tip,b@tip,c@tip,d@tip" || len(p.Evict) != 0 {
		t.Fatalf("trials %q evicted %q", trials(p, tip0), evictions(p))
	}
	fail(p)
	p = w.pass()
	if len(p.Evict) != RedTargetEvictions || p.TargetRed == "" {
		t.Fatalf("evicted %q, target red %q; want %d evictions and the queue stopped", evictions(p), p.TargetRed, RedTargetEvictions)
	}
}

// TestSearchAsideSiblings: a trial of one that is red waits for the other
// half of its group; the other half green, it is evicted; both red (two
// culprits, or a flake), it is tried alone once more before it is.
func TestSearchAsideSiblings(t *testing.T) {
	w := newAsideWorld(t, "a", "b")
	p := w.pass()
	w.ci(p, "b", pr.Failure)
	p = w.pass() // trials a, b
	w.ci(p, "a", pr.Failure)
	p = w.pass()
	if len(p.Evict) != 0 || len(p.Publish) != 0 {
		t.Fatalf("a evicted or tried again while b has no verdict: %+v", p)
	}
	waits := false
	for _, wt := range p.Waiting {
		waits = waits || wt.PR == prID("a") && strings.Contains(wt.Reason, "waiting for the other half")
	}
	if !waits {
		t.Fatalf("a does not say it waits for b: %+v", p.Waiting)
	}
	for _, pb := range w.pass().Publish {
		t.Fatalf("planning again published %+v", pb)
	}
	// b's trial: find its step among the records and make it green.
	in := w.input(t, w.tip)
	rec, _ := in.Queue.LatestCandidate(prID("b"))
	w.check(rec.Step, pr.Success)
	p = w.pass()
	if evictions(p) != "a:failed" {
		t.Fatalf("evicted %q, want a once b is green", evictions(p))
	}
}
