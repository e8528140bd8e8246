package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/queuerun"
)

// batchSetup is queueSetup with batch rules (checkEvery k): a bare
// repository, members dev, rev, ci, q, and n approved, entered pull
// requests, feat<i> adding feat<i>.txt. It returns the bare repository and
// the ids in order.
func batchSetup(t *testing.T, e *hubEnv, n, k int) (string, []string) {
	t.Helper()
	return batchSetupRules(t, e, n, k, "")
}

// batchSetupRules is batchSetup with more fields for main's rules (extra,
// e.g. `, "partitions": [...]`).
func batchSetupRules(t *testing.T, e *hubEnv, n, k int, extra string) (string, []string) {
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
	doc := fmt.Sprintf(`{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true, "queueDepth": 8, "checkEvery": %d%s}}}`, k, extra)
	if err := os.WriteFile(rules, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok(bare, "admin", "rules", "set", rules)
	e.ok(bare, "q", "queue", "open", "--target", "main")
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
		e.ok(bare, "q", "queue", "enter", id)
		ids = append(ids, id)
	}
	return bare, ids
}

// TestBatchQueue (issue #20, batch checks): with checkEvery 4 the queue
// publishes one group of four and CI runs its last step only; a
// hand-built landing of that group before its end is checked is refused;
// a red group end is searched aside, in trials of its halves on the
// target (docs/queue.md, "Searching a red group aside"), the broken pull
// request alone is evicted, the three others land without entering again
// (two of them as the green trial they were tried in), and verify --branch
// justifies every landing.
func TestBatchQueue(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, ids := batchSetup(t, e, 4, 4)
	c0 := strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", "main"))

	// Pass 1: one group of four, marked on every queue.candidate.
	rep := queueRunJSON(t, e, bare)
	if len(rep.Published) != 4 {
		t.Fatalf("pass 1 published %+v", rep.Published)
	}
	end := rep.Published[3].Step
	for i, p := range rep.Published {
		if p.GroupEnd != end || p.GroupSize != 4 {
			t.Fatalf("candidate %d published with group %s/%d, want %s/4", i+1, p.GroupEnd, p.GroupSize, end)
		}
	}

	// The group's end has no check yet: a hand-built landing of the group
	// is refused, naming the group.
	clone := filepath.Join(t.TempDir(), "clone")
	fixtures.Git(t, filepath.Dir(clone), "clone", "-q", bare, clone)
	signClone(t, clone, e.keys["q"].Path, e.bin) // a known pusher: the refusal is about content
	fixtures.Git(t, clone, "fetch", "-q", "origin", "+refs/heads/queue/*:refs/remotes/origin/queue/*")
	cmd := exec.Command("git", "push", "origin", end+":refs/heads/main")
	cmd.Dir, cmd.Env = clone, fixtures.GitEnv(e.home)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "[checks-missing]") || !strings.Contains(string(out), "last of a group of 4 steps") {
		t.Fatalf("landing the unchecked group by hand: err %v\n%s", err, out)
	}

	// CI, as the wake rule runs it: on every published candidate. The
	// steps inside a group are skipped; the tests fail when feat3 is in.
	runs := 0
	type pub struct {
		pr, step string
		inner    bool
	}
	ci := func(pubs []pub) {
		for i, p := range pubs {
			if runs > 0 && p.inner {
				continue // the skip is tested on the first group; spare the suite the calls
			}
			_, errs, code := e.run(bare, "ci", nil, "check", "run", "--pr", p.pr, "--rev", p.step, "--name", "ci", "--", "sh", "-c", "! test -e feat3.txt")
			if strings.Contains(errs, "not running it") {
				if !p.inner {
					t.Fatalf("check run skipped group end %d %s:\n%s", i, p.step, errs)
				}
				continue
			}
			if p.inner {
				t.Fatalf("check run ran %s, a step inside a group:\n%s", p.step, errs)
			}
			if code > 1 {
				t.Fatalf("check run: exit %d\n%s", code, errs)
			}
			runs++
		}
	}
	pubs := func(r queuerun.Report) []pub {
		var out []pub
		for _, p := range r.Published {
			out = append(out, pub{p.PR, p.Step, p.GroupEnd != "" && p.GroupEnd != p.Step})
		}
		return out
	}
	ci(pubs(rep))
	if runs != 1 {
		t.Fatalf("CI ran %d candidates of one group, want its end only", runs)
	}

	var landed, evicted []string
	trials := 0
	for round := 0; round < 12; round++ {
		rep = queueRunJSON(t, e, bare)
		for _, l := range rep.Landed {
			landed = append(landed, l.PR)
		}
		for _, p := range rep.Published {
			if p.Trial {
				trials++
			}
		}
		for _, v := range rep.Evicted {
			evicted = append(evicted, v.PR+":"+v.Reason)
		}
		if len(rep.Published) == 0 && len(rep.Chain) == 0 {
			break
		}
		ci(pubs(rep))
	}
	want := []string{ids[0], ids[1], ids[3]}
	slices.Sort(want)
	slices.Sort(landed)
	if !slices.Equal(landed, want) || len(evicted) != 1 || evicted[0] != ids[2]+":failed" {
		t.Fatalf("landed %v evicted %v; want %v landed and %s evicted alone", landed, evicted, want, ids[2])
	}
	// The group's end (red); trials a-b (green: lands as it is) and c-d
	// (red); trials c (red: evicted) and d (green: lands): 5 runs, as
	// strict rule 5 (every step, then d again), in three rounds of CI
	// instead of four, and the queue behind the group never waits for the
	// search.
	if runs != 5 || trials != 6 {
		t.Errorf("CI runs: %d, trial steps published %d; want 5 and 6 (a-b, c-d, c, d)", runs, trials)
	}
	// The innocent never entered again: one queue.entered each.
	log := fixtures.Git(t, bare, "log", "--format=%s", "refs/hub/queue/"+rep.Queue)
	if n := strings.Count(log, "queue.entered"); n != 4 {
		t.Errorf("%d queue.entered events, want 4:\n%s", n, log)
	}

	// verify --branch justifies every landing, some through a group end.
	out2, errs, code := e.run(bare, "", nil, "verify", "--branch", "main", "--since", c0, "--json")
	var audit receive.AuditJSON
	if err := json.Unmarshal([]byte(out2), &audit); err != nil || code != 0 || !audit.OK || audit.Candidates != 3 {
		t.Fatalf("verify --branch main: exit %d (%v)\n%s%s", code, err, out2, errs)
	}
	if !strings.Contains(out2, "group end ") {
		t.Errorf("no landing was vouched for by a group end:\n%s", out2)
	}
}
