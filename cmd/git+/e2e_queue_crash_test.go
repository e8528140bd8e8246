package main

// Crash safety of `git+ queue run` (docs/queue.md: "A pass may crash
// anywhere; the next pass must converge"; docs/queue.md, "The queue agent dies
// mid-batch"). The executor (receive/queuerun) is run in-process with a
// crash point injected through Options.At: the pass stops there as a killed
// process would (each phase is one atomic push, so the points between
// phases are the only places a crash can leave a state behind); fresh
// passes and a CI simulator then drive the queue until nothing changes, and
// the world is
// checked: every queued pull request landed once or left with a reason,
// pr.merged exactly once per landing, no candidate branch left behind, the
// target holds every landed head, a further pass appends nothing.
//
// Setup is written in-process (events signed here, pushed in one push) into
// one template repository per stage; each case runs on a copy of it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/queuerun"
	"github.com/gitplus/gitplus/receive/repo"
)

// qworld is a queue world: an e2e world with a queue on main and pull
// requests entered in order.
type qworld struct {
	*e2e
	qid  string
	c0   string
	ids  []string          // queued pull requests, in queue order
	head map[string]string // pull request -> head
	// direct holds heads landed directly (fast-forward steps of the target
	// that are not candidates).
	direct map[string]bool

	mu      sync.Mutex
	checked map[string]bool // repo dir + pr + step already given a check
}

// newQWorld makes members dev (hub.pr), rev (hub.review), ci
// (hub.check:ci) and q (hub.queue), the queue rules, a queue on main and n
// approved pull requests, each adding its own file, entered in order when
// enter is set.
func newQWorld(t *testing.T, n int, enter bool) *qworld {
	t.Helper()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "rev": {"hub.review"}, "ci": {"hub.check:ci"}, "q": {"hub.queue"}})
	qw := &qworld{e2e: w, head: map[string]string{}, direct: map[string]bool{}, checked: map[string]bool{}}
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	w.git(w.work, "push", "-q", "origin", base+":refs/heads/main")
	qw.c0 = base
	rules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(rules, []byte(e2eQueueRules), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustGP("admin", w.origin, "", "rules", "set", rules)
	qw.qid = lastLine(w.mustGP("q", w.origin, "", "queue", "open", "--target", "main"))
	w.git(w.work, "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*")
	qtip := w.git(w.work, "rev-parse", hubrefs.QueueRefPrefix+qw.qid)

	args := []string{"origin"}
	var prs []*localPR
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("f%02d", i)
		h := w.commit([]string{base}, map[string]string{name + ".txt": name + "\n"}, name)
		p := w.localPR("dev", "refs/heads/main", h).approve("rev")
		prs = append(prs, p)
		qw.ids = append(qw.ids, p.ID)
		qw.head[p.ID] = h
		args = append(args, h+":refs/heads/"+name)
		if enter {
			qtip = w.writeEvent("q", hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: p.ID, Head: h, BaseRef: "refs/heads/main"}, qtip)
		}
	}
	for _, p := range prs {
		args = append(args, p.tip+":"+p.Ref())
	}
	args = append(args, qtip+":"+hubrefs.QueueRefPrefix+qw.qid)
	if out, err := w.push(args...); err != nil {
		t.Fatalf("pushing %d pull requests: %v\n%s", n, err, out)
	}
	return qw
}

// clone copies the bare repository (hooks and all) for one case.
func (qw *qworld) clone(t *testing.T, from string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo.git")
	if out, err := exec.Command("cp", "-a", from, dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return dir
}

// pass runs `git+ queue run --target main --json` in dir as q with extra
// environment; it returns the report (when it printed one) and the exit code.
func (qw *qworld) pass(t *testing.T, dir string, env []string, args ...string) (queuerun.Report, string, int) {
	t.Helper()
	cmd := exec.Command(qw.bin, append([]string{"queue", "run", "--target", "main", "--json"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(append([]string{}, qw.env...), "GITPLUS_KEY="+qw.keys["q"].Path), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("queue run: %v", err)
	}
	var rep queuerun.Report
	if code == 0 {
		if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
			t.Fatalf("queue run --json: %v\n%s", err, out.String())
		}
	}
	return rep, out.String() + errb.String(), code
}

// okPass runs a pass that must exit 0.
func (qw *qworld) okPass(t *testing.T, dir string, args ...string) queuerun.Report {
	t.Helper()
	rep, out, code := qw.pass(t, dir, nil, args...)
	if code != 0 {
		t.Fatalf("queue run: exit %d\n%s", code, out)
	}
	return rep
}

func (qw *qworld) gitDir(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errs, err := qw.gitRun(dir, "", nil, args...)
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, errs)
	}
	return out
}

// ci is the CI simulator: every published candidate branch not yet checked
// gets check.completed ci (failure when its pull request is broken) at its
// step, signed by ci, appended in-process through dir's hooks.
func (qw *qworld) ci(t *testing.T, dir string, broken map[string]bool) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(qw.gitDir(t, dir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/queue/main/"), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		id := strings.TrimPrefix(f[1], "refs/heads/queue/main/")
		key := dir + " " + id + " " + f[0]
		qw.mu.Lock()
		done := qw.checked[key]
		qw.checked[key] = true
		qw.mu.Unlock()
		if done {
			continue
		}
		conclusion := "success"
		if broken[id] {
			conclusion = "failure"
		}
		_, err := hubrefs.Append(context.Background(), hubrefs.AppendOptions{
			GitDir: dir, Remote: ".", Ref: hubrefs.PRRefPrefix + id, Signer: qw.signer("ci"), Name: "ci", Env: qw.env,
			Payload: hubrefs.Check{Base: qw.base(hubrefs.TypeCheckCompleted), Name: "ci", Head: f[0], Conclusion: conclusion},
		})
		if err != nil {
			t.Fatalf("ci on %s at %s: %v", id, f[0], err)
		}
		n++
	}
	return n
}

func (qw *qworld) allRefs(t *testing.T, dir string) string {
	t.Helper()
	return qw.gitDir(t, dir, "for-each-ref", "--format=%(objectname) %(refname)")
}

// drive runs passes, with CI between them, until a pass and CI change no
// ref; it fails after max passes.
func (qw *qworld) drive(t *testing.T, dir string, broken map[string]bool, max int) {
	t.Helper()
	for i := 0; i < max; i++ {
		before := qw.allRefs(t, dir)
		qw.okPass(t, dir)
		qw.ci(t, dir, broken)
		if qw.allRefs(t, dir) == before {
			return
		}
	}
	t.Fatalf("queue did not settle in %d passes", max)
}

// converged checks the end state: every queued pull request left the queue
// (broken ones as failed, the others landed), pr.merged exactly once per
// landed one with its head on the target, the target's first-parent steps
// are exactly the landed candidates, no candidate branch is left, and a
// further pass appends nothing.
func (qw *qworld) converged(t *testing.T, dir string, broken map[string]bool) {
	t.Helper()
	var show repo.QueueView
	out := qw.mustGP("", dir, "", "queue", "show", "--target", "main", "--json")
	if err := json.Unmarshal([]byte(out), &show); err != nil {
		t.Fatalf("queue show: %v\n%s", err, out)
	}
	if len(show.Active) != 0 {
		t.Fatalf("entries still active: %+v", show.Active)
	}
	reasons := map[string][]string{}
	for _, l := range show.Left {
		reasons[l.PR] = append(reasons[l.PR], l.Reason)
	}
	for _, id := range qw.ids {
		want := "landed"
		if broken[id] {
			want = "failed"
		}
		if got := reasons[id]; len(got) != 1 || got[0] != want {
			t.Errorf("pull request %s left the queue %v, want once %s", id, got, want)
		}
	}
	// pr.merged per pull request: one git log over every pull request ref.
	merged := map[string]int{}
	for _, line := range strings.Split(qw.gitDir(t, dir, "log", "--glob=refs/hub/pr/*", "--source", "--format=%S %s"), "\n") {
		ref, subj, _ := strings.Cut(line, " ")
		if subj == hubrefs.TypePRMerged || strings.HasPrefix(subj, hubrefs.TypePRMerged+" ") {
			merged[strings.TrimPrefix(ref, hubrefs.PRRefPrefix)]++
		}
	}
	// The target's first-parent steps since C_0: each a candidate (second
	// parent a queued head), each head once.
	onTarget := map[string]int{}
	steps := qw.gitDir(t, dir, "rev-list", "--first-parent", "--parents", qw.c0+"..refs/heads/main")
	byHead := map[string]string{}
	for id, h := range qw.head {
		byHead[h] = id
	}
	for _, line := range strings.Split(steps, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) == 2 && qw.direct[f[0]] {
			continue
		}
		if len(f) != 3 || byHead[f[2]] == "" {
			t.Errorf("first-parent step %s of main is not a queue candidate", line)
			continue
		}
		onTarget[byHead[f[2]]]++
	}
	for _, id := range qw.ids {
		want := 1
		if broken[id] {
			want = 0
		}
		if merged[id] != want || onTarget[id] != want {
			t.Errorf("pull request %s: %d pr.merged, landed %d times; want %d", id, merged[id], onTarget[id], want)
		}
	}
	if b := qw.gitDir(t, dir, "for-each-ref", "refs/heads/queue/"); b != "" {
		t.Errorf("candidate branches left behind:\n%s", b)
	}
	before := qw.allRefs(t, dir)
	rep := qw.okPass(t, dir)
	if after := qw.allRefs(t, dir); after != before {
		t.Errorf("a further pass changed refs:\n%s\n---\n%s\n%+v", before, after, rep)
	}
}

// directMerge lands pull request id directly (`git+ pr merge`, through the
// hook) in dir.
func (qw *qworld) directMerge(t *testing.T, dir, id string) {
	cmd := exec.Command(qw.bin, "pr", "merge", id)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, qw.env...), "GITPLUS_KEY="+qw.keys["q"].Path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("pr merge (direct landing): %v\n%s", err, out)
	}
}

// TestQueueCrashConverges kills a pass at every step boundary and checks
// that fresh passes converge. Stage A: three entries, nothing published.
// Stage B: published, CI green, green, red (the next pass lands two and
// evicts one). Direct: stage B with the target moved under a pass that
// was about to land (swap fails: queue.reset).
func TestQueueCrashConverges(t *testing.T) {
	t.Parallel()
	qw := newQWorld(t, 3, true)
	broken := map[string]bool{qw.ids[2]: true}

	stageA := qw.clone(t, qw.origin)
	stageB := qw.clone(t, qw.origin)
	if rep := qw.okPass(t, stageB); len(rep.Published) != 3 {
		t.Fatalf("stage B pass 1: %+v", rep)
	}
	qw.ci(t, stageB, broken)

	// A direct landing to race the queue: an approved pull request with a
	// green check on its head, on top of C_0, not queued.
	dh := qw.commit([]string{qw.c0}, map[string]string{"direct.txt": "direct\n"}, "direct")
	qw.direct[dh] = true
	dp := qw.localPR("dev", "refs/heads/main", dh).approve("rev").pass("ci", dh)
	if out, err := qw.push("origin", dh+":refs/heads/direct", dp.tip+":"+dp.Ref()); err != nil {
		t.Fatalf("pushing the direct pull request: %v\n%s", err, out)
	}
	if out, err := qw.push(stageB, dh+":refs/heads/direct", dp.tip+":"+dp.Ref()); err != nil {
		t.Fatalf("pushing the direct pull request: %v\n%s", err, out)
	}

	// Crash points: point:n stops the pass the n-th time it reaches point.
	// "planned" is after the phase's objects are written and before its
	// push; "pushed" after the push took effect, before the re-read.
	cases := map[string]struct {
		stage string // A or B
		at    []string
	}{
		"planned1":   {"A", []string{"planned:1"}},
		"pushed1":    {"A", []string{"pushed:1"}},
		"read1":      {"B", []string{"read:1"}},
		"landing":    {"B", []string{"planned:1", "planned:1"}},
		"landed":     {"B", []string{"pushed:1"}},
		"reset":      {"B", []string{"pushed:1"}},
		"lockedB":    {"B", []string{"locked:1"}},
		"directLand": {"B", nil},
	}
	// The target moves under a pass about to land (no crash): its phase
	// push fails as stale, the pass re-reads, appends queue.reset (the tip
	// is no candidate of this queue) and rebuilds on the new tip; a pass
	// after it appends nothing; CI on the rebuilt chain, and it lands.
	t.Run("direct", func(t *testing.T) {
		t.Parallel()
		dir := qw.clone(t, stageB)
		maintainBeside(t, dir) // on the case's own copy: cp -a beside pack-refs copies no repository
		rep, err := qw.passAt(t, dir, "", func() { qw.directMerge(t, dir, dp.ID) })
		if err != nil || len(rep.Resets) != 1 || len(rep.Landed) != 0 || len(rep.Published) != 3 || rep.Tip != dh || rep.Stale != 1 {
			t.Fatalf("pass racing a direct landing: %v, want one reset, nothing landed, the three entries rebuilt on %s\n%+v", err, dh, rep)
		}
		for _, p := range rep.Published {
			if parents := qw.gitDir(t, dir, "rev-parse", p.Step+"^1"); p.PR == qw.ids[0] && parents != dh {
				t.Errorf("C_1 rebuilt on %s, want the new tip %s", parents, dh)
			}
		}
		before := qw.allRefs(t, dir)
		if rep := qw.okPass(t, dir); qw.allRefs(t, dir) != before {
			t.Fatalf("a pass after the reset changed refs: %+v", rep)
		}
		qw.drive(t, dir, broken, 6)
		qw.converged(t, dir, broken)
	})
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			from := stageA
			if c.stage == "B" {
				from = stageB
			}
			dir := qw.clone(t, from)
			maintainBeside(t, dir)
			for i, at := range c.at {
				var onPlanned func()
				if name == "reset" && i == 0 {
					// The direct pull request lands under the pass's
					// first plan: the pass records the reset and the
					// rebuilt chain in one phase, then dies.
					onPlanned = func() { qw.directMerge(t, dir, dp.ID) }
				}
				_, err := qw.passAt(t, dir, at, onPlanned)
				if !errors.Is(err, queuerun.ErrCrash) {
					t.Fatalf("pass %d with crash at %s: %v, want the crash", i+1, at, err)
				}
			}
			if name == "reset" {
				var show repo.QueueView
				if err := json.Unmarshal([]byte(qw.mustGP("", dir, "", "queue", "show", "--target", "main", "--json")), &show); err != nil || len(show.Resets) != 1 {
					t.Fatalf("after the crash at reset: %v %+v", err, show)
				}
			}
			qw.drive(t, dir, broken, 8)
			qw.converged(t, dir, broken)
			if name == "reset" {
				if first := qw.gitDir(t, dir, "rev-list", "--first-parent", "--reverse", qw.c0+"..refs/heads/main"); !strings.HasPrefix(first, dh) {
					t.Errorf("main's first step after C_0 is not the direct landing %s:\n%s", dh, first)
				}
			}
		})
	}
}

// passAt runs one pass in-process on dir as q, stopping at crash point at
// ("point:n", or "" for none); onPlanned, if set, runs the first time the
// pass reaches "planned" (before its push).
func (qw *qworld) passAt(t *testing.T, dir, at string, onPlanned func()) (*queuerun.Report, error) {
	t.Helper()
	point, nth, _ := strings.Cut(at, ":")
	n, _ := strconv.Atoi(nth)
	reached := map[string]int{}
	return queuerun.Run(context.Background(), queuerun.Options{
		GitDir: dir, Signer: qw.signer("q"), Name: "q", Target: "refs/heads/main", Env: qw.env,
		Sign: &receive.PushSigning{Key: qw.keys["q"].Path, Program: qw.bin},
		At: func(p string) error {
			reached[p]++
			if p == "planned" && reached[p] == 1 && onPlanned != nil {
				onPlanned()
			}
			if p == point && reached[p] == n {
				return errors.New("killed")
			}
			return nil
		},
	})
}

// TestQueueAutoEnterDepth covers --auto-enter and --depth, and that a pass
// right after an eviction appends nothing.
func TestQueueAutoEnterDepth(t *testing.T) {
	t.Parallel()
	qw := newQWorld(t, 3, false)
	dir := qw.origin
	broken := map[string]bool{qw.ids[0]: true}

	// Nothing queued, no --auto-enter: nothing happens.
	before := qw.allRefs(t, dir)
	if rep := qw.okPass(t, dir); qw.allRefs(t, dir) != before || len(rep.Entered) != 0 {
		t.Fatalf("pass without --auto-enter: %+v", rep)
	}
	// --auto-enter enters all three, oldest first; --depth 2 publishes two.
	rep := qw.okPass(t, dir, "--auto-enter", "--depth", "2")
	if len(rep.Entered) != 3 || len(rep.Published) != 2 || len(rep.Chain) != 2 {
		t.Fatalf("pass --auto-enter --depth 2: %+v", rep)
	}
	for i, e := range rep.Entered {
		if e.PR != qw.ids[i] || e.Head != qw.head[e.PR] {
			t.Fatalf("entered %d: %+v, want %s", i, e, qw.ids[i])
		}
	}
	before = qw.allRefs(t, dir)
	if rep := qw.okPass(t, dir, "--auto-enter", "--depth", "2"); qw.allRefs(t, dir) != before {
		t.Fatalf("second pass --auto-enter changed refs: %+v", rep)
	}
	// C_1 red: evicted; the chain is rebuilt without it, still two deep.
	qw.ci(t, dir, broken)
	rep = qw.okPass(t, dir, "--depth", "2")
	if len(rep.Evicted) != 1 || rep.Evicted[0].PR != qw.ids[0] || rep.Evicted[0].Reason != "failed" ||
		len(rep.Published) != 2 || rep.Published[0].PR != qw.ids[1] || rep.Published[1].PR != qw.ids[2] {
		t.Fatalf("pass after C_1 failed: %+v", rep)
	}
	before = qw.allRefs(t, dir)
	if rep := qw.okPass(t, dir, "--depth", "2"); qw.allRefs(t, dir) != before {
		t.Fatalf("a pass after the eviction changed refs: %+v", rep)
	}
	qw.drive(t, dir, broken, 6)
	qw.converged(t, dir, broken)
	// --depth over the rules' queueDepth (8) is clamped to it: a deeper
	// chain is one the hook refuses to land, and the queue would stall.
	if rep := qw.okPass(t, dir, "--depth", "20"); len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "queueDepth 8") {
		t.Fatalf("pass --depth 20: warnings %v", rep.Warnings)
	}
}

// TestQueueLockDefersAndRepeats: a pass started while another holds the
// queue's lock exits 0 at once, deferred, and marks the queue dirty; the
// running pass then goes round once more (reads the state again) instead of
// a second process working on the same state.
func TestQueueLockDefersAndRepeats(t *testing.T) {
	t.Parallel()
	qw := newQWorld(t, 2, true)
	dir := qw.origin
	var second queuerun.Report
	reads := 0
	rep, err := queuerun.Run(context.Background(), queuerun.Options{
		GitDir: dir, Signer: qw.signer("q"), Name: "q", Target: "refs/heads/main", Env: qw.env,
		Sign: &receive.PushSigning{Key: qw.keys["q"].Path, Program: qw.bin},
		At: func(p string) error {
			if p != "read" {
				return nil
			}
			reads++
			if reads == 1 {
				var out string
				var code int
				second, out, code = qw.pass(t, dir, nil)
				if code != 0 || second.Deferred == "" || second.Rounds != 0 {
					t.Errorf("a pass during a pass: exit %d, want deferred without work\n%s", code, out)
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Published) != 2 {
		t.Fatalf("the running pass: %+v", rep)
	}
	// Round 1 publishes, round 2 finds nothing; the dirty mark makes it read
	// once more.
	if reads < 3 {
		t.Fatalf("the running pass read the state %d times; want a further round for the deferred wake", reads)
	}
	if rep := qw.okPass(t, dir); rep.Deferred != "" || rep.Rounds != 1 || rep.Pushes != 0 {
		t.Fatalf("a pass after the lock was released: %+v", rep)
	}
}
