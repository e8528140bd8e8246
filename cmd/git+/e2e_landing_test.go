package main

// End-to-end tests of issue #30 (docs/queue.md, "Step shapes" and
// "Pausing a queue"): linear history, a paused queue, squash steps, judged
// by the installed hooks on real `git push`es of stock git.

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/webview"
)

// landingClone is a clone of bare whose pushes are signed by key (a known
// pusher, so refusals are about content), with the candidate branches
// fetched.
func landingClone(t *testing.T, e *hubEnv, bare, key string) string {
	t.Helper()
	clone := filepath.Join(t.TempDir(), "clone")
	fixtures.Git(t, filepath.Dir(clone), "clone", "-q", bare, clone)
	signClone(t, clone, e.keys[key].Path, e.bin)
	fixtures.Git(t, clone, "config", "user.name", "Hand")
	fixtures.Git(t, clone, "config", "user.email", "hand@example.com")
	return clone
}

// refsOf snapshots every ref of the bare repository.
func refsOf(t *testing.T, bare string) string {
	t.Helper()
	return fixtures.Git(t, bare, "for-each-ref", "--format=%(objectname) %(refname)")
}

// pushRefused pushes args from clone and fails unless the hook refused
// ref with code and no ref of bare moved.
func pushRefused(t *testing.T, e *hubEnv, clone, bare, ref, code string, args ...string) string {
	t.Helper()
	before := refsOf(t, bare)
	cmd := exec.Command("git", append([]string{"push", "origin"}, args...)...)
	cmd.Dir, cmd.Env = clone, fixtures.GitEnv(e.home)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "git+: refused "+ref+": ["+code+"]") {
		t.Fatalf("git push %s: err %v, want [%s] for %s:\n%s", strings.Join(args, " "), err, code, ref, out)
	}
	if after := refsOf(t, bare); after != before {
		t.Fatalf("git push %s was refused but refs changed:\nbefore:\n%s\nafter:\n%s", strings.Join(args, " "), before, after)
	}
	return string(out)
}

func pushOK(t *testing.T, e *hubEnv, clone string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"push", "origin"}, args...)...)
	cmd.Dir, cmd.Env = clone, fixtures.GitEnv(e.home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git push %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func setRules(t *testing.T, e *hubEnv, bare, doc string) (string, int) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := e.run(bare, "admin", nil, "rules", "set", f)
	return errs, code
}

// TestQueuePauseE2E: `queue pause` stops the queue: `queue show` says who
// paused it, when and why, a pass builds and lands nothing, a hand-built
// green candidate landing is refused [queue-paused] with every ref
// unchanged; after `queue resume` the same landing is accepted and the
// entries are where they were.
func TestQueuePauseE2E(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, ids := batchSetup(t, e, 2, 1)
	c0 := strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", "main"))

	if _, errs, code := e.run(bare, "q", nil, "queue", "pause", "--target", "main"); code != 2 || !strings.Contains(errs, "--reason") {
		t.Fatalf("pause without a reason: exit %d\n%s", code, errs)
	}
	e.ok(bare, "q", "queue", "pause", "--target", "main", "--reason", "incident 12: the build farm is down")
	if _, errs, code := e.run(bare, "q", nil, "queue", "pause", "--target", "main", "--reason", "again"); code != 1 || !strings.Contains(errs, "already paused by q") {
		t.Fatalf("a second pause: exit %d\n%s", code, errs)
	}
	show := e.ok(bare, "q", "queue", "show", "--target", "main")
	if !strings.Contains(show, "paused by q at ") || !strings.Contains(show, "incident 12: the build farm is down") {
		t.Fatalf("queue show does not say who paused it and why:\n%s", show)
	}
	rep := queueRunJSON(t, e, bare)
	if !strings.Contains(rep.Idle, "paused by q") || len(rep.Published) != 0 || len(rep.Landed) != 0 {
		t.Fatalf("a pass of a paused queue: %+v", rep)
	}
	// The page says it too.
	page := httptest.NewRecorder()
	webview.Repo(bare, "").ServeHTTP(page, httptest.NewRequest("GET", "/", nil))
	if body := page.Body.String(); page.Code != 200 || !strings.Contains(body, "paused by q at ") || !strings.Contains(body, "incident 12: the build farm is down") {
		t.Fatalf("the page of a paused queue (%d):\n%s", page.Code, body)
	}

	// A green candidate of the first pull request, built by hand.
	clone := landingClone(t, e, bare, "q")
	fixtures.Git(t, clone, "fetch", "-q", "origin", "feat1")
	fixtures.Git(t, clone, "checkout", "-q", "--detach", c0)
	fixtures.Git(t, clone, "merge", "-q", "--no-ff", "-m", "candidate", "FETCH_HEAD")
	cand := strings.TrimSpace(fixtures.Git(t, clone, "rev-parse", "HEAD"))
	pushOK(t, e, clone, cand+":refs/heads/queue/main/hand")
	e.ok(bare, "ci", "check", "run", "--pr", ids[0], "--rev", cand, "--name", "ci", "--", "true")
	pushRefused(t, e, clone, bare, "refs/heads/main", "queue-paused", cand+":refs/heads/main")

	e.ok(bare, "q", "queue", "resume", "--target", "main")
	if show := e.ok(bare, "q", "queue", "show", "--target", "main"); strings.Contains(show, "paused") || !strings.Contains(show, "1. "+ids[0]) || !strings.Contains(show, "2. "+ids[1]) {
		t.Fatalf("after resume:\n%s", show)
	}
	// (Another ref beside it: the same push twice in one second would
	// carry the same push certificate, refused as a replay.)
	pushOK(t, e, clone, cand+":refs/heads/main", cand+":refs/heads/queue/main/after-resume")
}

// TestLinearHistoryE2E: rules set refuses requireLinearHistory with the
// merge method, naming both fields; on a linear branch a merge commit is
// refused [nonlinear] with every ref unchanged, as a pull request head and
// as a candidate step.
func TestLinearHistoryE2E(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, ids := batchSetup(t, e, 2, 1)
	c0 := strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", "main"))
	errs, code := setRules(t, e, bare, `{"protected":{"refs/heads/main":{"queueCandidates":true,"requireLinearHistory":true}}}`)
	if code == 0 || !strings.Contains(errs, "requireLinearHistory") || !strings.Contains(errs, "mergeMethod") {
		t.Fatalf("rules set of linear history with merges: exit %d\n%s", code, errs)
	}
	if errs, code := setRules(t, e, bare, `{"protected":{"refs/heads/main":{"queueCandidates":true,"mergeMethod":"squash","requireLinearHistory":true}}}`); code != 0 {
		t.Fatalf("rules set: exit %d\n%s", code, errs)
	}
	clone := landingClone(t, e, bare, "admin")

	// A candidate merge step of an approved pull request, green.
	fixtures.Git(t, clone, "fetch", "-q", "origin", "feat1")
	fixtures.Git(t, clone, "checkout", "-q", "--detach", c0)
	fixtures.Git(t, clone, "merge", "-q", "--no-ff", "-m", "candidate", "FETCH_HEAD")
	cand := strings.TrimSpace(fixtures.Git(t, clone, "rev-parse", "HEAD"))
	pushOK(t, e, clone, cand+":refs/heads/queue/main/hand")
	e.ok(bare, "ci", "check", "run", "--pr", ids[0], "--rev", cand, "--name", "ci", "--", "true")
	pushRefused(t, e, clone, bare, "refs/heads/main", "nonlinear", cand+":refs/heads/main")

	// A pull request whose head is a merge, approved and green.
	fixtures.Git(t, clone, "fetch", "-q", "origin", "feat2")
	fixtures.Git(t, clone, "checkout", "-q", "-b", "merged", "FETCH_HEAD")
	fixtures.Git(t, clone, "merge", "-q", "--no-ff", "-m", "merge feat1 in", cand+"^2")
	head := strings.TrimSpace(fixtures.Git(t, clone, "rev-parse", "HEAD"))
	pushOK(t, e, clone, "merged")
	id := lastLine(e.ok(bare, "dev", "pr", "open", "--base", "main", "--head", "merged", "--title", "merged"))
	e.ok(bare, "rev", "pr", "review", id, "--approve")
	e.ok(bare, "ci", "check", "run", "--pr", id, "--rev", head, "--name", "ci", "--", "true")
	pushRefused(t, e, clone, bare, "refs/heads/main", "nonlinear", head+":refs/heads/main")
}

// squashSetup is batchSetup's world with squash rules: members dev, rev,
// ci, q; pull requests from files (branch name → file → content, on the
// base), approved and entered in order.
func squashSetup(t *testing.T, e *hubEnv, rules string, prs [][3]string) (bare, work string, ids []string) {
	t.Helper()
	root := t.TempDir()
	bare = filepath.Join(root, "repo.git")
	e.ok(root, "admin", "init", bare)
	work = filepath.Join(root, "work")
	fixtures.Git(t, root, "init", "-q", "-b", "main", work)
	signClone(t, work, e.keys["admin"].Path, e.bin)
	if err := os.WriteFile(filepath.Join(work, "base.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures.Git(t, work, "add", ".")
	fixtures.Git(t, work, "commit", "-q", "-m", "base")
	fixtures.Git(t, work, "push", "-q", bare, "main")
	for _, m := range []struct{ name, cap string }{{"dev", "hub.pr"}, {"rev", "hub.review"}, {"ci", "hub.check:ci"}, {"q", "hub.queue"}} {
		e.ok(bare, "admin", "member", "add", m.name, "--key", e.keys[m.name].Path+".pub", "--cap", m.cap)
	}
	if errs, code := setRules(t, e, bare, rules); code != 0 {
		t.Fatalf("rules set: %s", errs)
	}
	e.ok(bare, "q", "queue", "open", "--target", "main")
	for _, p := range prs {
		br, file, content := p[0], p[1], p[2]
		fixtures.Git(t, work, "checkout", "-q", "-b", br, "main")
		if err := os.WriteFile(filepath.Join(work, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		fixtures.Git(t, work, "add", ".")
		fixtures.Git(t, work, "commit", "-q", "--author", "Author "+br+" <"+br+"@example.com>", "-m", br)
		fixtures.Git(t, work, "push", "-q", bare, br)
		id := lastLine(e.ok(bare, "dev", "pr", "open", "--base", "main", "--head", br, "--title", "Change "+br))
		e.ok(bare, "rev", "pr", "review", id, "--approve")
		ids = append(ids, id)
	}
	return bare, work, ids
}

const squashRules = `{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":["ci"],"queueCandidates":true,"queueDepth":8,"mergeMethod":"squash"}}}`

// TestSquashQueueE2E (issue #30): a queue of five pull requests (one
// conflicting with the one before it, one failing CI) on a branch with
// mergeMethod squash lands as squash steps: git log --merges main is
// empty, each landed commit has one parent, its head's author and the two
// trailers, and verify --branch main passes on a mirror. Then attacks by
// stock git are refused with their codes and every ref unchanged (a step
// whose tree adds one file, one naming another pull request's head, one
// with a second Git-Plus-Head, one with two parents on a linear branch, a
// landing while paused), a hand-built squash step with the right parent,
// tree and trailers lands, and pr merge lands a squash step.
func TestSquashQueueE2E(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, work, ids := squashSetup(t, e, squashRules, [][3]string{
		{"f1", "f1.txt", "one\n"}, {"f2", "base.txt", "two\n"}, {"f3", "base.txt", "three\n"}, {"f4", "bad.txt", "bad\n"}, {"f5", "f5.txt", "five\n"},
	})
	for _, id := range ids {
		e.ok(bare, "q", "queue", "enter", id)
	}
	c0 := strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", "main"))
	for round := 0; round < 12; round++ {
		rep := queueRunJSON(t, e, bare)
		for _, p := range rep.Published {
			if len(p.Parents) != 1 {
				t.Fatalf("published %+v: a squash step has one parent", p)
			}
			e.run(bare, "ci", nil, "check", "run", "--pr", p.PR, "--rev", p.Step, "--name", "ci", "--", "sh", "-c", "! test -e bad.txt")
		}
		if show := e.ok(bare, "q", "queue", "show", "--target", "main"); strings.Contains(show, "no active entries") {
			break
		}
	}
	show := e.ok(bare, "q", "queue", "show", "--target", "main")
	for i, want := range []string{"landed", "landed", "conflict", "failed", "landed"} {
		if !strings.Contains(show, ids[i]+" left ("+want+")") {
			t.Fatalf("pull request %d did not leave as %s:\n%s", i+1, want, show)
		}
	}
	if merges := fixtures.Git(t, bare, "log", "--merges", "--format=%H", "main"); strings.TrimSpace(merges) != "" {
		t.Fatalf("git log --merges main: %s", merges)
	}
	steps := strings.Fields(fixtures.Git(t, bare, "rev-list", "--first-parent", c0+"..main"))
	if len(steps) != 3 {
		t.Fatalf("%d commits landed, want 3 squash steps", len(steps))
	}
	top := fixtures.Git(t, bare, "log", "-1", "--format=%an <%ae>|%cn|%P|%(trailers:key=Git-Plus-PR,valueonly)", "main")
	if want := "Author f5 <f5@example.com>|git+ queue|" + steps[1] + "|" + ids[4]; strings.TrimSpace(top) != want {
		t.Fatalf("the last squash step: %q, want %q", top, want)
	}
	mirror := filepath.Join(t.TempDir(), "mirror.git")
	fixtures.Git(t, bare, "clone", "-q", "--mirror", bare, mirror)
	if out, errs, code := e.run(mirror, "", nil, "verify", "--branch", "main", "--since", c0, "--json"); code != 0 || strings.Count(out, `"kind": "squash"`)+strings.Count(out, `"kind":"squash"`) != 3 {
		t.Fatalf("verify --branch main on a mirror: exit %d\n%s%s", code, out, errs)
	}

	// Attacks, by hand with stock git. Two more pull requests, approved.
	tip := strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", "main"))
	var more []string
	fixtures.Git(t, work, "fetch", "-q", bare, "main")
	for _, br := range []string{"g1", "g2"} {
		fixtures.Git(t, work, "checkout", "-q", "-b", br, tip)
		if err := os.WriteFile(filepath.Join(work, br+".txt"), []byte(br+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fixtures.Git(t, work, "add", ".")
		fixtures.Git(t, work, "commit", "-q", "-m", br)
		fixtures.Git(t, work, "push", "-q", bare, br)
		id := lastLine(e.ok(bare, "dev", "pr", "open", "--base", "main", "--head", br, "--title", br))
		e.ok(bare, "rev", "pr", "review", id, "--approve")
		more = append(more, id)
	}
	clone := landingClone(t, e, bare, "q")
	fixtures.Git(t, clone, "fetch", "-q", "origin", "g1", "g2")
	h1 := strings.TrimSpace(fixtures.Git(t, clone, "rev-parse", "origin/g1"))
	h2 := strings.TrimSpace(fixtures.Git(t, clone, "rev-parse", "origin/g2"))
	merged := strings.TrimSpace(strings.Fields(fixtures.Git(t, clone, "merge-tree", "--write-tree", tip, h1))[0])
	n := 0
	// step writes a commit by hand and makes it green for pr id: pushed to
	// a candidate branch, then checked.
	step := func(tree string, parents []string, msg, id string) string {
		t.Helper()
		args := []string{"commit-tree", tree, "-m", msg}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		c := strings.TrimSpace(fixtures.Git(t, clone, args...))
		n++
		pushOK(t, e, clone, c+":refs/heads/queue/main/hand"+string(rune('a'+n)))
		e.ok(bare, "ci", "check", "run", "--pr", id, "--rev", c, "--name", "ci", "--", "true")
		return c
	}
	trailers := func(id, head string) string { return "Git-Plus-PR: " + id + "\nGit-Plus-Head: " + head }

	// A tree that adds one file.
	fixtures.Git(t, clone, "checkout", "-q", "--detach", tip)
	fixtures.Git(t, clone, "read-tree", merged)
	evil := filepath.Join(t.TempDir(), "evil.txt")
	if err := os.WriteFile(evil, []byte("evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	blob := strings.TrimSpace(fixtures.Git(t, clone, "hash-object", "-w", evil))
	fixtures.Git(t, clone, "update-index", "--add", "--cacheinfo", "100644,"+blob+",evil.txt")
	evilTree := strings.TrimSpace(fixtures.Git(t, clone, "write-tree"))
	bad := step(evilTree, []string{tip}, "g1\n\n"+trailers(more[0], h1), more[0])
	pushRefused(t, e, clone, bare, "refs/heads/main", "candidate-tree", bad+":refs/heads/main")
	// Naming another pull request's head.
	bad = step(merged, []string{tip}, "g1\n\n"+trailers(more[1], h1), more[1])
	pushRefused(t, e, clone, bare, "refs/heads/main", "squash-trailers", bad+":refs/heads/main")
	// A second Git-Plus-Head.
	bad = step(merged, []string{tip}, "g1\n\n"+trailers(more[0], h1)+"\nGit-Plus-Head: "+h2, more[0])
	pushRefused(t, e, clone, bare, "refs/heads/main", "squash-trailers", bad+":refs/heads/main")
	// A landing while paused, of a step that is otherwise right.
	good := step(merged, []string{tip}, "Add g1, by hand\n\n"+trailers(more[0], h1), more[0])
	e.ok(bare, "q", "queue", "pause", "--target", "main", "--reason", "release freeze")
	pushRefused(t, e, clone, bare, "refs/heads/main", "queue-paused", good+":refs/heads/main")
	e.ok(bare, "q", "queue", "resume", "--target", "main")
	// Two parents on a linear branch.
	if errs, code := setRules(t, e, bare, `{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":["ci"],"queueCandidates":true,"mergeMethod":"squash","requireLinearHistory":true}}}`); code != 0 {
		t.Fatalf("rules set: %s", errs)
	}
	bad = step(merged, []string{tip, h1}, "g1\n\n"+trailers(more[0], h1), more[0])
	pushRefused(t, e, clone, bare, "refs/heads/main", "nonlinear", bad+":refs/heads/main")
	// The hand-built squash step lands.
	pushOK(t, e, clone, good+":refs/heads/main", good+":refs/heads/queue/main/landed")

	// pr merge squashes g2 onto the tip (its head rebased there, checked
	// at the head) and pushes the step.
	fixtures.Git(t, work, "fetch", "-q", bare, "main")
	fixtures.Git(t, work, "checkout", "-q", "-B", "g2", good)
	fixtures.Git(t, work, "cherry-pick", h2)
	fixtures.Git(t, work, "push", "-q", "-f", bare, "g2")
	rebased := strings.TrimSpace(fixtures.Git(t, work, "rev-parse", "HEAD"))
	e.ok(bare, "dev", "pr", "update", more[1], "--head", "g2")
	e.ok(bare, "rev", "pr", "review", more[1], "--approve")
	e.ok(bare, "ci", "check", "run", "--pr", more[1], "--rev", rebased, "--name", "ci", "--", "true")
	out := e.ok(bare, "q", "pr", "merge", more[1])
	if !strings.Contains(out, "as squash step") {
		t.Fatalf("pr merge on a squash branch: %s", out)
	}
	if p := strings.TrimSpace(fixtures.Git(t, bare, "log", "-1", "--format=%P|%(trailers:key=Git-Plus-Head,valueonly)", "main")); p != good+"|"+rebased {
		t.Fatalf("pr merge landed %q, want one parent %s and the head %s", p, good, rebased)
	}
	if out, errs, code := e.run(bare, "", nil, "verify", "--branch", "main", "--since", c0); code != 0 {
		t.Fatalf("verify --branch main after the hand-built step and pr merge: exit %d\n%s%s", code, out, errs)
	}
}
