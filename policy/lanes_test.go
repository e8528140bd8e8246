package policy

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
)

// lanesWorld is a propWorld with partitions web, api, docs and a base.
func lanesWorld(t *testing.T, extra string) (*propWorld, plumbing.Hash) {
	w := &propWorld{rng: rand.New(rand.NewSource(1)), title: map[string]string{}, gone: map[string]bool{}, drafts: map[string]bool{}}
	w.world = newWorld(t, "")
	w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(fmt.Sprintf(
		`{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":["ci"],"queueCandidates":true,"queueDepth":4%s,"partitions":%s}}}`, extra, lanesParts))})
	w.qref = hubrefs.QueueRefPrefix + queueID
	w.event(w.qref, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: queueID, Target: main})
	base := w.commitFiles(w.c0, map[string]string{"web/x": "x\n", "api/x": "x\n", "docs/x": "x\n", "lib/w": "w\n", "lib/a": "a\n"})
	w.refs[main] = base
	return w, base
}

// enter opens, approves and enters a pull request changing files on base.
func (w *propWorld) enter(base plumbing.Hash, files map[string]string) *prq {
	p := w.open(w.commitFiles(base, files)).approve("bob")
	w.title[p.id] = "change " + p.id
	w.prs = append(w.prs, p)
	w.event(w.qref, "queuer", hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: p.id, Head: p.head.String(), BaseRef: main})
	return p
}

// pass plans, checks that the hook accepts the landing, and carries the
// plan out.
func (w *propWorld) pass() queue.Plan {
	w.t.Helper()
	in := w.planInput()
	plan, err := queue.PlanPass(in)
	if err != nil {
		w.t.Fatal(err)
	}
	if l := plan.Land; l != nil {
		v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{{Ref: main, Old: in.Tip, New: plumbing.NewHash(l.New)}}})[0]
		if !v.Accepted() {
			w.t.Fatalf("the hook refuses the landing: [%s] %s", v.Code, v.Reason)
		}
	}
	w.carryOut(in, plan)
	return plan
}

func stepOf(plan queue.Plan, prID string) (queue.Step, bool) {
	for _, st := range plan.Chain {
		if st.PR == prID {
			return st, true
		}
	}
	return queue.Step{}, false
}

func published(plan queue.Plan, prID string) bool {
	for _, p := range plan.Publish {
		if p.PR == prID {
			return true
		}
	}
	return false
}

// TestLanes: lanes of a partitioned queue (docs/queue.md, "Partitions and
// lanes"). Each partition's entries form a chain of their own on the tip;
// a lane that is green lands while another waits, and the waiting lane's
// candidates stay as they are — not rebuilt, not published again, so CI
// does not run them again — and land later as partition steps on the
// moved tip, naming the candidates CI tested. A global entry is built on
// the composition of the lanes ahead of it and lands after them, as its
// tested tree exactly; the entries behind it land after it.
// A landing outside the queue that changes what a lane reads makes the
// lane start again on the tip.
func TestLanes(t *testing.T) {
	w, base := lanesWorld(t, "")
	web1 := w.enter(base, map[string]string{"web/a": "1\n"})
	api1 := w.enter(base, map[string]string{"api/a": "1\n"})
	web2 := w.enter(base, map[string]string{"web/b": "2\n"})
	glob := w.enter(base, map[string]string{"web/c": "3\n", "api/c": "3\n"})
	docs := w.enter(base, map[string]string{"docs/a": "4\n"})

	plan := w.pass()
	web1C, _ := stepOf(plan, web1.id)
	web2C, _ := stepOf(plan, web2.id)
	apiC, _ := stepOf(plan, api1.id)
	globC, _ := stepOf(plan, glob.id)
	docsC, _ := stepOf(plan, docs.id)
	if web1C.Partition != "web" || web2C.Partition != "web" || apiC.Partition != "api" || globC.Partition != "" || docsC.Partition != "docs" {
		t.Fatalf("lanes: %s", describeLanes(plan))
	}
	if web1C.Parent != base.String() || apiC.Parent != base.String() || web2C.Parent != web1C.Commit {
		t.Fatalf("each lane is a chain on the tip: %s", describeLanes(plan))
	}
	// The global entry stands on all three ahead of it; docs, behind it
	// but not reading what it changes, on the tip (it lands after it).
	if globC.Parent == base.String() || docsC.Parent != base.String() {
		t.Fatalf("the global entry and the entry behind it: %s", describeLanes(plan))
	}
	for _, p := range []*prq{web1, web2, api1, docs} {
		if !published(plan, p.id) {
			t.Fatalf("%s not published: %s", p.id, describeLanes(plan))
		}
	}
	// The global entry is checked once the lanes it stands on are green.
	if published(plan, glob.id) {
		t.Fatalf("the global entry is published while the lanes ahead are pending: %s", describeLanes(plan))
	}
	// Green docs does not land before what is ahead of it.
	docs.check("ci", plumbing.NewHash(docsC.Commit), pr.Success)
	if plan = w.pass(); plan.Land != nil {
		t.Fatalf("landed ahead of the lanes: %+v", plan.Land)
	}

	// api is green first: it lands alone; the others stand.
	api1.check("ci", plumbing.NewHash(apiC.Commit), pr.Success)
	plan = w.pass()
	if plan.Land == nil || len(plan.Land.Landed) != 1 || plan.Land.Landed[0].Commit != apiC.Commit {
		t.Fatalf("api's landing: %+v", plan.Land)
	}
	plan = w.pass()
	for _, x := range []struct {
		p *prq
		c queue.Step
	}{{web1, web1C}, {web2, web2C}, {docs, docsC}} {
		st, _ := stepOf(plan, x.p.id)
		if published(plan, x.p.id) || st.Commit != x.c.Commit {
			t.Fatalf("%s was rebuilt or published again after api landed: %s", x.p.id, describeLanes(plan))
		}
	}
	// web turns green: both land as partition steps on the moved tip,
	// naming the candidates CI tested; now the global entry is checked.
	web1.check("ci", plumbing.NewHash(web1C.Commit), pr.Success)
	web2.check("ci", plumbing.NewHash(web2C.Commit), pr.Success)
	plan = w.pass()
	if plan.Land == nil || len(plan.Land.Landed) != 2 || plan.Land.Old != apiC.Commit {
		t.Fatalf("web's landing: %+v\n%s", plan.Land, describeLanes(plan))
	}
	for i, want := range []string{web1C.Commit, web2C.Commit} {
		x := plan.Land.Landed[i]
		_, raw, err := GoGitObjects(w.store).ReadObject(plumbing.NewHash(x.Commit))
		if err != nil {
			t.Fatal(err)
		}
		if x.Commit == want || !strings.Contains(string(raw), queue.TrailerTested+": "+want) {
			t.Errorf("landed %s for %s, want a partition step naming %s:\n%s", x.Commit, x.PR, want, raw)
		}
	}
	globC, _ = stepOf(plan, glob.id)
	if !published(plan, glob.id) {
		t.Fatalf("the global entry is not checked once the lanes ahead are green: %s", describeLanes(plan))
	}
	// It lands as the very tree CI tested, then docs after it as a
	// partition step.
	glob.check("ci", plumbing.NewHash(globC.Commit), pr.Success)
	plan = w.pass()
	if plan.Land == nil || len(plan.Land.Landed) != 2 || plan.Land.Landed[0].PR != glob.id || plan.Land.Landed[1].PR != docs.id {
		t.Fatalf("the global entry's landing: %+v\n%s", plan.Land, describeLanes(plan))
	}
	if x := plan.Land.Landed[1]; x.Commit == docsC.Commit {
		t.Errorf("docs landed as its candidate %s on a moved tip", x.Commit)
	}

	// A landing outside the queue that changes what web reads: web's
	// standing candidate cannot land on the new tip and is rebuilt there;
	// api's stands.
	web3 := w.enter(base, map[string]string{"web/d": "5\n"})
	api2 := w.enter(base, map[string]string{"api/d": "5\n"})
	plan = w.pass()
	web3C, _ := stepOf(plan, web3.id)
	api2C, _ := stepOf(plan, api2.id)
	w.outsideFile("lib/w")
	plan = w.pass()
	if st, _ := stepOf(plan, web3.id); st.Commit == web3C.Commit || !published(plan, web3.id) {
		t.Fatalf("web after its reads changed: %s", describeLanes(plan))
	}
	if st, _ := stepOf(plan, api2.id); st.Commit != api2C.Commit || published(plan, api2.id) {
		t.Fatalf("api after web's reads changed: %s", describeLanes(plan))
	}
}

// outsideFile lands directly, on the tip, a pull request changing file.
func (w *propWorld) outsideFile(file string) {
	w.t.Helper()
	p := w.open(w.commitFiles(w.refs[main], map[string]string{file: "outside\n"}))
	p.approve("bob").check("ci", p.head, pr.Success)
	if v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{{Ref: main, Old: w.refs[main], New: p.head}}})[0]; !v.Accepted() {
		w.t.Fatalf("the direct landing: [%s] %s", v.Code, v.Reason)
	}
	w.refs[main] = p.head
}

func describeLanes(plan queue.Plan) string {
	var s []string
	for _, st := range plan.Chain {
		s = append(s, fmt.Sprintf("%s:%s:%s<-%s:%s", st.Partition, st.PR[len(st.PR)-4:], st.Commit[:7], st.Parent[:7], st.Verdict))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// TestGlobalOnGreenLanes: a global entry that changes no lane's inputs is
// built on the lanes' green steps only; the lane steps ahead of it still
// being checked land after it, as partition steps on a tip holding it, and
// it is checked at once instead of waiting for them. Once published, its
// candidate stands while those steps turn green (docs/queue.md, "Global
// entries").
func TestGlobalOnGreenLanes(t *testing.T) {
	w, base := lanesWorld(t, "")
	web1 := w.enter(base, map[string]string{"web/a": "1\n"})
	api1 := w.enter(base, map[string]string{"api/a": "1\n"})
	glob := w.enter(base, map[string]string{"README": "g\n"})
	web2 := w.enter(base, map[string]string{"web/b": "2\n"})

	plan := w.pass()
	web1C, _ := stepOf(plan, web1.id)
	api1C, _ := stepOf(plan, api1.id)
	globC, _ := stepOf(plan, glob.id)
	web2C, _ := stepOf(plan, web2.id)
	if globC.Partition != "" || globC.Parent != base.String() || !published(plan, glob.id) {
		t.Fatalf("the global entry is not built on the tip and checked at once: %s", describeLanes(plan))
	}
	if web2C.Parent != web1C.Commit || !published(plan, web1.id) || !published(plan, api1.id) || !published(plan, web2.id) {
		t.Fatalf("the lanes: %s", describeLanes(plan))
	}
	// web1 turns green while the global entry's check runs: its candidate
	// stands (not rebuilt on web1, not checked again).
	web1.check("ci", plumbing.NewHash(web1C.Commit), pr.Success)
	plan = w.pass()
	if st, _ := stepOf(plan, glob.id); st.Commit != globC.Commit || published(plan, glob.id) || plan.Land != nil {
		t.Fatalf("after web1 turned green: %s land %+v", describeLanes(plan), plan.Land)
	}
	// The global entry is green: it lands first, then web1 behind it as a
	// partition step (the hook accepts both: pass checks it).
	glob.check("ci", plumbing.NewHash(globC.Commit), pr.Success)
	plan = w.pass()
	if plan.Land == nil || len(plan.Land.Landed) != 2 || plan.Land.Landed[0].PR != glob.id || plan.Land.Landed[0].Commit != globC.Commit ||
		plan.Land.Landed[1].PR != web1.id || plan.Land.Landed[1].Commit == web1C.Commit {
		t.Fatalf("landing: %+v\n%s", plan.Land, describeLanes(plan))
	}
	// api1 and web2, checked meanwhile, land as partition steps too.
	api1.check("ci", plumbing.NewHash(api1C.Commit), pr.Success)
	web2.check("ci", plumbing.NewHash(web2C.Commit), pr.Success)
	plan = w.pass()
	if plan.Land == nil || len(plan.Land.Landed) != 2 || len(plan.Publish) != 0 {
		t.Fatalf("the rest: land %+v publish %+v\n%s", plan.Land, plan.Publish, describeLanes(plan))
	}
}
