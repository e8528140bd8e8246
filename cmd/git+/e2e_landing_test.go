package main

// End-to-end tests of issue #30 (docs/queue.md, "Step shapes" and
// "Pausing a queue"): linear history, a paused queue, squash steps, judged
// by the installed hooks on real `git push`es of stock git.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
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
