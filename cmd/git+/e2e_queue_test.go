package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive/queuerun"
)

const e2eQueueRules = `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true}}}`

// queueSetup makes a bare repository with members dev (hub.pr), rev
// (hub.review), ci (hub.check:ci) and q (hub.queue), queue rules, and n
// approved pull requests each adding its own file; it returns the bare
// repository and the pull request ids in order. prios[i], when given and not
// empty, is the --priority pull request i+1 enters with.
func queueSetup(t *testing.T, e *hubEnv, n int, prios ...string) (string, []string) {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "repo.git")
	e.ok(root, "admin", "init", bare)
	work := filepath.Join(root, "work")
	fixtures.Git(t, root, "init", "-q", "-b", "main", work)
	signClone(t, work, e.keys["admin"].Path, e.bin) // git+ init requires a known pusher
	if err := os.WriteFile(filepath.Join(work, "base.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures.Git(t, work, "add", ".")
	fixtures.Git(t, work, "commit", "-q", "-m", "base")
	fixtures.Git(t, work, "push", "-q", bare, "main")
	for _, m := range []struct{ name, cap string }{{"dev", "hub.pr"}, {"rev", "hub.review"}, {"ci", "hub.check:ci"}, {"q", "hub.queue"}} {
		e.ok(bare, "admin", "member", "add", m.name, "--key", e.keys[m.name].Path+".pub", "--cap", m.cap)
	}
	rules := filepath.Join(root, "rules.json")
	if err := os.WriteFile(rules, []byte(e2eQueueRules), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok(bare, "admin", "rules", "set", rules)
	qid := lastLine(e.ok(bare, "q", "queue", "open", "--target", "main"))

	var ids []string
	for i := 1; i <= n; i++ {
		br := "feat" + string(rune('0'+i))
		fixtures.Git(t, work, "checkout", "-q", "-b", br, "main")
		if err := os.WriteFile(filepath.Join(work, br+".txt"), []byte(br+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fixtures.Git(t, work, "add", ".")
		fixtures.Git(t, work, "commit", "-q", "-m", br)
		fixtures.Git(t, work, "push", "-q", bare, br)
		id := lastLine(e.ok(bare, "dev", "pr", "open", "--base", "main", "--head", br, "--title", br))
		e.ok(bare, "rev", "pr", "review", id, "--approve")
		args := []string{"queue", "enter", id}
		if i <= len(prios) && prios[i-1] != "" {
			args = append(args, "--priority", prios[i-1])
		}
		e.ok(bare, "q", args...)
		ids = append(ids, id)
	}
	if len(prios) > 0 {
		return bare, ids
	}
	// queue show --target lists them in order, with the queue's id.
	var show queueJSON
	if err := json.Unmarshal([]byte(e.ok(bare, "", "queue", "show", "--target", "main", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	if show.ID != qid || len(show.Active) != n || show.Active[0].PR != ids[0] {
		t.Fatalf("queue show: %+v", show)
	}
	// Each waiting entry says why it waits (no candidate yet, behind whom).
	for i, a := range show.Active {
		if !strings.Contains(a.Waiting, "no candidate yet") || (i > 0) != strings.Contains(a.Waiting, "behind") {
			t.Fatalf("queue show: entry %d waits for %q", i+1, a.Waiting)
		}
	}
	return bare, ids
}

func queueRunJSON(t *testing.T, e *hubEnv, bare string) queuerun.Report {
	t.Helper()
	var rep queuerun.Report
	out := e.ok(bare, "q", "queue", "run", "--target", "main", "--json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("queue run --json: %v\n%s", err, out)
	}
	return rep
}

func hubRefs(t *testing.T, dir string) string {
	t.Helper()
	return fixtures.Git(t, dir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/hub/")
}

func TestQueuePassLandsAndEvicts(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, ids := queueSetup(t, e, 3)
	c0 := strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", "main"))

	// Pass 1 publishes three candidates and lands nothing.
	rep := queueRunJSON(t, e, bare)
	if len(rep.Published) != 3 || len(rep.Landed) != 0 {
		t.Fatalf("pass 1: %+v", rep)
	}
	steps := make([]string, 3)
	for i, id := range ids {
		steps[i] = strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", "refs/heads/queue/main/"+id))
		if steps[i] != rep.Published[i].Step {
			t.Fatalf("branch of %s holds %s, report says %s", id, steps[i], rep.Published[i].Step)
		}
	}
	// Publishing went through the hook, which learned each merge fact.
	fact := func(c string) string {
		return filepath.Join(bare, "gitplus", "foldcache", policy.MergeFactKey(plumbing.NewHash(c)).String())
	}
	for _, c := range steps {
		if _, err := os.Stat(fact(c)); err != nil {
			t.Fatalf("published candidate %s has no merge fact: %v", c, err)
		}
	}

	// CI: green on C_1 and C_2, red on C_3, the three runs at once as a CI
	// fleet runs them (each checks its candidate out into a worktree of the
	// same repository).
	cmds := []string{"true", "true", "false"}
	codes, errs := make([]int, len(cmds)), make([]string, len(cmds))
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i], codes[i] = e.run(bare, "ci", nil, "check", "run", "--pr", ids[i], "--rev", "queue/main/"+ids[i], "--name", "ci", "--", cmd)
		}()
	}
	wg.Wait()
	for i, cmd := range cmds {
		if want := map[string]int{"true": 0, "false": 1}[cmd]; codes[i] != want {
			t.Fatalf("check run -- %s: exit %d, want %d\n%s", cmd, codes[i], want, errs[i])
		}
		// Exit 1 is also what an error gives: the result must be recorded.
		if log := fixtures.Git(t, bare, "log", "--format=%s", "refs/hub/pr/"+ids[i]); !strings.Contains(log, "check.completed") {
			t.Fatalf("check run -- %s on %s recorded no check.completed:\n%s\n%s", cmd, ids[i], log, errs[i])
		}
	}

	// Pass 2 lands C_1..C_2 in one swap and evicts the third.
	rep = queueRunJSON(t, e, bare)
	if len(rep.Landed) != 2 || rep.Commit != steps[1] {
		t.Fatalf("pass 2 landed %+v commit %s, want C_2 %s\n%+v", rep.Landed, rep.Commit, steps[1], rep)
	}
	if got := strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", "main")); got != steps[1] {
		t.Fatalf("main is %s, want C_2 %s", got, steps[1])
	}
	if p := strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", steps[0]+"^1")); p != c0 {
		t.Fatalf("C_1's first parent is %s, want C_0 %s", p, c0)
	}
	if len(rep.Evicted) != 1 || rep.Evicted[0].PR != ids[2] || rep.Evicted[0].Reason != "failed" {
		t.Fatalf("pass 2 evicted %+v\nreport %+v\nPR3 log:\n%s", rep.Evicted, rep, fixtures.Git(t, bare, "log", "--format=%H %s", "refs/hub/pr/"+ids[2]))
	}
	for i, id := range ids[:2] {
		j := prShowJSON(t, e, bare, id)
		if j.State != "merged" || len(j.Merged) != 1 || j.Merged[0].Commit != steps[i] {
			t.Fatalf("pull request %d after landing: %+v", i+1, j)
		}
	}
	if j := prShowJSON(t, e, bare, ids[2]); j.State != "open" {
		t.Fatalf("evicted pull request is %s", j.State)
	}
	if out := fixtures.Git(t, bare, "for-each-ref", "refs/heads/queue/"); strings.TrimSpace(out) != "" {
		t.Fatalf("candidate branches left behind:\n%s", out)
	}
	for _, c := range steps {
		if _, err := os.Stat(fact(c)); !os.IsNotExist(err) {
			t.Fatalf("the merge fact of %s outlived its candidate branch (%v)", c, err)
		}
	}
	var show queueJSON
	if err := json.Unmarshal([]byte(e.ok(bare, "", "queue", "show", "--target", "main", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, l := range show.Left {
		reasons[l.PR] = l.Reason
	}
	if len(show.Active) != 0 || reasons[ids[0]] != "landed" || reasons[ids[1]] != "landed" || reasons[ids[2]] != "failed" {
		t.Fatalf("queue show after pass 2: %+v", show)
	}
	// queue stats counts what the fold took, from the signed logs.
	var st queue.Stats
	if err := json.Unmarshal([]byte(e.ok(bare, "", "queue", "stats", "--target", "main", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Queues) != 1 || len(st.Unfolded) != 0 || st.Entered != 3 || st.Landed != 2 || st.Evicted != 1 || st.EvictedByReason["failed"] != 1 {
		t.Fatalf("queue stats after pass 2: %+v", st)
	}

	// A further pass appends nothing.
	before := hubRefs(t, bare)
	rep = queueRunJSON(t, e, bare)
	if after := hubRefs(t, bare); after != before {
		t.Fatalf("idle pass changed hub refs:\n%s\n---\n%s\n%+v", before, after, rep)
	}
}

func TestQueueOrdinaryStates(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin")
	root := t.TempDir()
	bare := filepath.Join(root, "repo.git")
	e.ok(root, "admin", "init", bare)
	// A target without a queue is a mistake: exit 1 naming the targets
	// that have queues.
	if _, errs, code := e.run(bare, "admin", nil, "queue", "run", "--target", "main"); code != 1 || !strings.Contains(errs, "no target has an open queue") {
		t.Fatalf("queue run without a queue: exit %d\n%s", code, errs)
	}
	id := lastLine(e.ok(bare, "admin", "queue", "open", "--target", "main"))
	if _, errs, code := e.run(bare, "admin", nil, "queue", "run", "--target", "nosuch"); code != 1 || !strings.Contains(errs, "open queues exist for refs/heads/main") {
		t.Fatalf("queue run --target nosuch: exit %d\n%s", code, errs)
	}
	// queueCandidates off (no rules): exit 0 with the reason.
	out := e.ok(bare, "admin", "queue", "run", "--target", "main")
	if !strings.Contains(out, "queueCandidates is off") {
		t.Fatalf("queue run without rules: %s", out)
	}
	// A named queue that does not exist: exit 1.
	if _, _, code := e.run(bare, "admin", nil, "queue", "run", "--target", "main", "--queue", "0190a0a0-0000-7000-8000-000000000000"); code != 1 {
		t.Fatalf("queue run --queue missing: exit %d, want 1", code)
	}
	rules := filepath.Join(root, "rules.json")
	if err := os.WriteFile(rules, []byte(e2eQueueRules), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok(bare, "admin", "rules", "set", rules)
	e.ok(bare, "admin", "queue", "run", "--target", "main") // rules set: a pass with nothing to do
	var list []queueSummaryJSON
	if err := json.Unmarshal([]byte(e.ok(bare, "", "queue", "list", "--json")), &list); err != nil || len(list) != 1 || list[0].ID != id || !list[0].Counts {
		t.Fatalf("queue list: %v %+v", err, list)
	}
	// While git updates a ref it holds an empty <ref>.lock beside it:
	// listing hub refs meanwhile (concurrent runners do) must not fail.
	for _, lock := range []string{"refs/hub/queue/" + id + ".lock", "refs/hub/pr/01900000-0000-7000-8000-0000000000aa.lock"} {
		p := filepath.Join(bare, filepath.FromSlash(lock))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list = nil
	if err := json.Unmarshal([]byte(e.ok(bare, "", "queue", "list", "--json")), &list); err != nil || len(list) != 1 || list[0].ID != id {
		t.Fatalf("queue list beside lock files: %v %+v", err, list)
	}
	e.ok(bare, "", "pr", "list")
	e.ok(bare, "", "queue", "stats", "--target", "main")
	for _, lock := range []string{"refs/hub/queue/" + id + ".lock", "refs/hub/pr/01900000-0000-7000-8000-0000000000aa.lock"} {
		os.Remove(filepath.Join(bare, filepath.FromSlash(lock)))
	}
	e.ok(bare, "admin", "queue", "close", id)
	if _, _, code := e.run(bare, "admin", nil, "queue", "close", id); code != 1 {
		t.Fatalf("closing twice: exit %d, want 1", code)
	}
}
