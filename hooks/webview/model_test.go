package webview

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

const (
	testRepo  = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	testQueue = "0190a1b2-c3d4-7e5f-8a9b-000000000f00"
	testMain  = "refs/heads/main"
)

func testKey(t *testing.T) ssh.PublicKey { return fixtures.NewSSHSigner(t).PublicKey() }

func oid(s string) string { return plumbing.ComputeHash(plumbing.BlobObject, []byte(s)).String() }

// TestQueueWaitingIsThePlanners: what the page says of a queue entry is
// the planner's verdict (queue.StepVerdict, queue.Settles), not a rule of
// its own: a cancelled check is pending (the planner waits), a failure an
// earlier eviction already cited is pending (the planner asks CI again), an
// inner step of a batch group whose last step is green is green, and an
// entry whose pull request was closed is about to be withdrawn; an entry in
// a trial (a red group searched aside) says so, red when the next run
// evicts it.
func TestQueueWaitingIsThePlanners(t *testing.T) {
	runner, ci, alice := testKey(t), testKey(t), testKey(t)
	ts := &trust.State{RepoID: testRepo, Rules: trust.DefaultRules(), Members: map[string]*trust.Member{
		"runner": {Name: "runner", Key: runner, Caps: []string{trust.CapQueue}},
		"ci":     {Name: "ci", Key: ci, Caps: []string{"hub.check:ci"}},
		"alice":  {Name: "alice", Key: alice, Caps: []string{"hub.pr"}},
	}}
	ts.Rules.Protected[testMain] = trust.Branch{RequirePullRequest: true, RequiredChecks: []string{"ci"}, QueueCandidates: true, QueueDepth: 8, CheckEvery: 2}

	var evs []hubrefs.Event
	add := func(typ string, fields ...any) hubrefs.Event {
		p := map[string]any{"type": typ, "repo": testRepo}
		for i := 0; i+1 < len(fields); i += 2 {
			p[fields[i].(string)] = fields[i+1]
		}
		raw, _ := json.Marshal(p)
		ev := hubrefs.Event{ID: plumbing.ComputeHash(plumbing.CommitObject, fmt.Appendf(raw, "%d", len(evs))), Type: typ, Repo: testRepo, Payload: raw, Signer: runner, Time: int64(len(evs) + 1)}
		if len(evs) > 0 {
			ev.Parents = []plumbing.Hash{evs[len(evs)-1].ID}
		}
		evs = append(evs, ev)
		return ev
	}
	id := func(n int) string { return fmt.Sprintf("0190a1b2-c3d4-7e5f-8a9b-0000000000%02x", n) }
	tip := oid("tip")
	prs := map[string]*PR{}
	type entry struct {
		head, groupEnd       string
		groupSize            int
		check                string // the ci conclusion at the step ("" none)
		cited, closed, trial bool
	}
	entries := []entry{
		{head: "a", check: pr.Cancelled},                                         // 1: pending, not red
		{head: "b", check: pr.Failure, cited: true},                              // 2: pending again
		{head: "c", check: pr.Failure},                                           // 3: red
		{head: "d", groupEnd: "e", groupSize: 2},                                 // 4: vouched for by 5
		{head: "e", groupEnd: "e", groupSize: 2, check: pr.Success},              // 5: green
		{head: "f", closed: true},                                                // 6: withdrawn next run
		{head: "g", groupEnd: "h", groupSize: 2},                                 // 7: its group's end is pending
		{head: "h", groupEnd: "h", groupSize: 2, check: pr.Cancelled},            // 8: pending
		{head: "i", groupEnd: "i", groupSize: 1, check: pr.Failure, trial: true}, // 9: red alone: evicted next
		{head: "j", groupEnd: "k", groupSize: 2, trial: true},                    // 10: its trial green
		{head: "k", groupEnd: "k", groupSize: 2, check: pr.Success, trial: true}, // 11: green
		{head: "l", groupEnd: "m", groupSize: 2, trial: true},                    // 12: its trial pending
		{head: "m", groupEnd: "m", groupSize: 2, trial: true},                    // 13: pending
	}
	add(hubrefs.TypeQueueOpened, "id", testQueue, "target", testMain)
	parent := tip
	for i, e := range entries {
		n := i + 1
		add(hubrefs.TypeQueueEntered, "pr", id(n), "head", oid(e.head), "base", testMain)
		st := &pr.State{ID: id(n), State: pr.Open, Base: testMain, Head: oid(e.head), Checks: map[pr.CheckKey]string{}}
		if e.closed {
			st.State = pr.Closed
		}
		step := oid("step " + e.head)
		fields := []any{"pr", id(n), "head", oid(e.head), "step", step, "parents", []string{parent, oid(e.head)}, "branch", queue.Branch(testMain, id(n))}
		if e.groupEnd != "" {
			fields = append(fields, "groupEnd", oid("step "+e.groupEnd), "groupSize", e.groupSize)
		}
		if e.trial {
			fields = append(fields, "trial", true)
		}
		if e.check != "" {
			run := plumbing.ComputeHash(plumbing.CommitObject, []byte("run "+e.head))
			st.Checks[pr.CheckKey{Name: "ci", Revision: step}] = e.check
			st.Runs = append(st.Runs, pr.CheckRun{Event: run, Key: ci, Name: "ci", Revision: step, Conclusion: e.check})
			if e.cited {
				// Evicted once for this very run, then entered again.
				add(hubrefs.TypeQueueCandidate, fields...)
				add(hubrefs.TypeQueueLeft, "pr", id(n), "head", oid(e.head), "reason", queue.ReasonFailed, "step", step, "run", run.String())
				add(hubrefs.TypeQueueEntered, "pr", id(n), "head", oid(e.head), "base", testMain)
			}
		}
		add(hubrefs.TypeQueueCandidate, fields...)
		prs[id(n)] = &PR{State: st}
		parent = step
	}
	q, err := queue.Fold(evs, ts)
	if err != nil {
		t.Fatal(err)
	}
	s := &Snapshot{Trust: ts, PRs: prs}
	qq := &Queue{ID: q.ID, Target: q.Target, state: q}
	s.judgeQueue(qq, nil) // no tip: nothing is contained, no object is read
	want := []struct {
		waiting string
		red     bool
	}{
		{"check ci pending on candidate", false},
		{"check ci pending on candidate", false},
		{"red: ci failure on candidate", true},
		{"green; lands with or after", false},
		{"green; lands with or after", false},
		{"withdrawn: pull request closed; the next run removes it", false},
		{"checks pending at its group's last step " + oid("step h")[:12] + " (a group of 2, checkEvery 2)", false},
		{"check ci pending on candidate", false},
		{"aside from the chain, in a trial of 1 on " + oid("step h")[:12] + " (its group was red): red on its own: the next run evicts it", true},
		{"aside from the chain, in a trial of 2 on " + oid("step i")[:12] + " (its group was red): green: the next run puts it back into the chain", false},
		{"aside from the chain, in a trial of 2 on " + oid("step j")[:12] + " (its group was red): green", false},
		{"aside from the chain, in a trial of 2 on " + oid("step k")[:12] + " (its group was red): checks pending at " + oid("step m")[:12], false},
		{"aside from the chain, in a trial of 2 on " + oid("step l")[:12] + " (its group was red): checks pending at " + oid("step m")[:12], false},
	}
	if len(qq.Entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(qq.Entries), len(want))
	}
	for i, w := range want {
		got := qq.Entries[i]
		if !strings.HasPrefix(got.Waiting, w.waiting) || got.Red != w.red {
			t.Errorf("entry %d: waiting %q red %v; want %q… red %v", i+1, got.Waiting, got.Red, w.waiting, w.red)
		}
	}
}

// TestLaneList: on a target with partitions the page lists each lane's
// queued entries, in the rules' order, then global and unassigned ones.
func TestLaneList(t *testing.T) {
	web, _ := trust.NewPartition("web", []string{"web/**"}, nil)
	api, _ := trust.NewPartition("api", []string{"api/**"}, nil)
	b := trust.Branch{Partitions: []trust.Partition{web, api}}
	got := laneList(b, []Entry{{Position: 1, Lane: "api", Candidate: "c1"}, {Position: 2, Candidate: "c2"}, {Position: 3, Lane: "web", Candidate: "c3"},
		{Position: 4}, {Position: 5, Lane: "api", Candidate: "c5"}})
	want := []string{"web: #3", "api: #1, #5", "global: #2", "unassigned: #4"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lanes %q, want %q", got, want)
	}
	if laneList(trust.Branch{}, []Entry{{Position: 1}}) != nil {
		t.Error("lanes listed on a target without partitions")
	}
}
