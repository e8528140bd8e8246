package main

// End-to-end tests of issue 19's command line (docs/cli.md): pull requests
// as a git user expects them, the remote a clone writes to, --json on
// writers, member capability edits, JSON errors with positions, --version.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/receive/repo"
)

// cliSetup makes a bare repository (members dev hub.pr, rev hub.review,
// ci hub.check:ci, q hub.queue; rules: main needs 1 approval and ci) and a
// clone of it whose main is pushed; it returns both.
func cliSetup(t *testing.T, e *hubEnv) (bare, clone string) {
	t.Helper()
	root := t.TempDir()
	bare = filepath.Join(root, "repo.git")
	e.ok(root, "admin", "init", bare)
	clone = filepath.Join(root, "clone")
	fixtures.Git(t, root, "init", "-q", "-b", "main", clone)
	signClone(t, clone, e.keys["admin"].Path, e.bin) // git+ init requires a known pusher
	writeCommit(t, clone, "base.txt", "base\n", "base")
	fixtures.Git(t, clone, "remote", "add", "origin", bare)
	fixtures.Git(t, clone, "push", "-q", "-u", "origin", "main") // before any rule protects main
	for _, m := range []struct{ name, cap string }{{"dev", "hub.pr"}, {"rev", "hub.review"}, {"ci", "hub.check:ci"}, {"q", "hub.queue"}} {
		e.ok(bare, "admin", "member", "add", m.name, "--key", e.keys[m.name].Path+".pub", "--cap", m.cap)
	}
	rules := filepath.Join(root, "rules.json")
	if err := os.WriteFile(rules, []byte(`{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok(bare, "admin", "rules", "set", rules)
	return bare, clone
}

// writeCommit writes file in the work tree dir and commits it.
func writeCommit(t *testing.T, dir, file, content, msg string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures.Git(t, dir, "add", file)
	fixtures.Git(t, dir, "commit", "-q", "-m", msg)
	return fixtures.Git(t, dir, "rev-parse", "HEAD")
}

func mustFail(t *testing.T, e *hubEnv, dir, key string, code int, want string, args ...string) string {
	t.Helper()
	out, errOut, got := e.run(dir, key, nil, args...)
	if got != code || !strings.Contains(errOut, want) {
		t.Fatalf("git+ %s: exit %d, want %d with %q\nstdout: %s\nstderr: %s", strings.Join(args, " "), got, code, want, out, errOut)
	}
	return errOut
}

func TestCLIPullRequests(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, clone := cliSetup(t, e)

	// A head that is only in the clone is refused, nothing written.
	fixtures.Git(t, clone, "checkout", "-q", "-b", "feat")
	head := writeCommit(t, clone, "f.txt", "one\ntwo\n", "feat")
	before := refsSnapshot(t, bare)
	mustFail(t, e, clone, "dev", 1, "is not on remote origin", "pr", "open", "--base", "main", "--title", "Add f")
	mustFail(t, e, clone, "dev", 1, "git push origin feat", "pr", "open", "--base", "main", "--title", "Add f")
	if after := refsSnapshot(t, bare); after != before {
		t.Fatalf("a refused pr open changed the remote:\n%s\n---\n%s", before, after)
	}

	// --push pushes it to its source branch (signed with dev's key, which
	// needs source.push); --head defaults to the current branch; --json
	// reports the event and both refs moved.
	e.ok(bare, "admin", "member", "change", "dev", "--cap", "hub.pr", "--cap", "source.push")
	var opened repo.WriterJSON
	out := e.ok(clone, "dev", "pr", "open", "--base", "main", "--title", "Add f", "--body", "why:\nbecause", "--push", "--json")
	if err := json.Unmarshal([]byte(out), &opened); err != nil {
		t.Fatalf("pr open --json: %v\n%s", err, out)
	}
	id := opened.Result
	if got := fixtures.Git(t, bare, "rev-parse", "refs/heads/feat"); got != head {
		t.Fatalf("--push left feat at %q on the remote, want %s", got, head)
	}
	if len(opened.Events) != 1 || opened.Events[0].Type != "pr.opened" || opened.Events[0].Ref != "refs/hub/pr/"+id ||
		opened.Events[0].ID != fixtures.Git(t, bare, "rev-parse", "refs/hub/pr/"+id) {
		t.Fatalf("pr open --json events: %+v", opened.Events)
	}
	if len(opened.Refs) != 2 || opened.Refs[0].Ref != "refs/heads/feat" || opened.Refs[0].New != head || opened.Refs[1].Ref != "refs/hub/pr/"+id {
		t.Fatalf("pr open --json refs: %+v", opened.Refs)
	}

	// A second pull request, opened from a pushed branch: ids share their
	// first characters (UUIDv7 begin with the time), so a short prefix is
	// ambiguous and a longer one is not.
	fixtures.Git(t, clone, "checkout", "-q", "-b", "other", "main")
	writeCommit(t, clone, "g.txt", "g\n", "other")
	fixtures.Git(t, clone, "push", "-q", "origin", "other")
	id2 := lastLine(e.ok(clone, "dev", "pr", "open", "--base", "main", "--head", "other", "--title", "Other"))
	common := 0
	for common < len(id) && id[common] == id2[common] {
		common++
	}
	if common >= 4 {
		errOut := mustFail(t, e, clone, "", 1, "ambiguous id", "pr", "show", id[:4])
		if !strings.Contains(errOut, id) || !strings.Contains(errOut, id2) {
			t.Fatalf("the ambiguity does not list both matches:\n%s", errOut)
		}
	} else {
		t.Logf("ids %s and %s share %d characters: ambiguity not exercised", id, id2, common)
	}
	short := id[:common+1]
	mustFail(t, e, clone, "", 2, "not an id", "pr", "show", "zz")
	mustFail(t, e, clone, "", 1, "no pull request id", "pr", "show", "ffffffff")

	// Reviews, threads and checks through an abbreviated id.
	e.ok(clone, "rev", "pr", "review", short, "--comment", "--body", "first look: fine")
	e.ok(clone, "rev", "pr", "review", short, "--approve", "--body", "LGTM <b>really</b>")
	thread := lastLine(e.ok(clone, "rev", "pr", "thread", short, "--open", "--body", "rename f.txt?"))
	e.ok(clone, "dev", "pr", "thread", short, "--resolve", thread, "--body", "kept: it is fine")
	e.ok(clone, "ci", "pr", "check", short, "--name", "ci", "--conclusion", "failure", "--url", "http://ci.invalid/1")
	var checked repo.WriterJSON
	if err := json.Unmarshal([]byte(e.ok(clone, "ci", "pr", "check", short, "--name", "ci", "--conclusion", "success", "--json")), &checked); err != nil {
		t.Fatal(err)
	}
	if len(checked.Events) != 1 || checked.Events[0].Type != "check.completed" || checked.Events[0].Parent == "" || checked.Result != checked.Events[0].ID {
		t.Fatalf("pr check --json: %+v", checked)
	}

	text := e.ok(clone, "", "pr", "show", short)
	for _, want := range []string{"source:    refs/heads/feat", "    why:\n    because", "rev: comment", "    first look: fine", "rev: approve", "    LGTM <b>really</b>",
		"thread " + thread + " by rev [resolved by dev]", "    rename f.txt?", "    resolution: kept: it is fine", "at " + head + " (head)", "failure by ci http://ci.invalid/1", "success by ci"} {
		if !strings.Contains(text, want) {
			t.Fatalf("pr show lacks %q:\n%s", want, text)
		}
	}
	j := prShowJSON(t, e, clone, short)
	if j.ID != id || j.Source != "refs/heads/feat" || len(j.Reviews) != 2 || j.Reviews[1].Body != "LGTM <b>really</b>" || len(j.Runs) != 2 || j.Threads[0].Resolution != "kept: it is fine" {
		t.Fatalf("pr show --json: %+v", j)
	}

	// The queue state, eviction reason included, after entering and leaving.
	qid := lastLine(e.ok(bare, "q", "queue", "open", "--target", "main"))
	e.ok(clone, "q", "queue", "enter", short)
	j = prShowJSON(t, e, clone, id)
	if j.Queue == nil || j.Queue.State != "queued" || j.Queue.Position != 1 || j.Queue.Queue != qid || !strings.Contains(j.Queue.Waiting, "no candidate yet") {
		t.Fatalf("pr show queue (queued): %+v", j.Queue)
	}
	e.ok(clone, "q", "queue", "leave", short, "--queue", qid[:common+1])
	j = prShowJSON(t, e, clone, id)
	if j.Queue == nil || j.Queue.State != "left" || j.Queue.Reason != "withdrawn" || j.Queue.Detail != "left by q" {
		t.Fatalf("pr show queue (left): %+v", j.Queue)
	}
	if text := e.ok(clone, "", "pr", "show", id); !strings.Contains(text, "left the queue for refs/heads/main: withdrawn (left by q)") {
		t.Fatalf("pr show does not say why it left:\n%s", text)
	}

	// pr checkout in a fresh clone that has never seen the branch.
	other := filepath.Join(t.TempDir(), "other")
	fixtures.Git(t, filepath.Dir(other), "clone", "-q", bare, other)
	signClone(t, other, e.keys["admin"].Path, e.bin)
	fixtures.Git(t, other, "push", "-q", "origin", "--delete", "feat") // only the event names the head now
	fixtures.Git(t, bare, "config", "uploadpack.allowAnySHA1InWant", "true")
	out = e.ok(other, "", "pr", "checkout", short)
	if lastLine(out) != "pr/"+id[:8] || fixtures.Git(t, other, "rev-parse", "HEAD") != head || fixtures.Git(t, other, "symbolic-ref", "--short", "HEAD") != "pr/"+id[:8] {
		t.Fatalf("pr checkout: printed %q, HEAD %s", out, fixtures.Git(t, other, "rev-parse", "HEAD"))
	}
	fixtures.Git(t, other, "checkout", "-q", "-B", "pr/"+id[:8], "origin/main")
	mustFail(t, e, other, "", 1, "pass --force", "pr", "checkout", id)
	e.ok(other, "", "pr", "checkout", id, "--force")
	if fixtures.Git(t, other, "rev-parse", "HEAD") != head {
		t.Fatal("pr checkout --force did not move the branch")
	}

	// pr diff is git diff BASE...HEAD, even after main moved on (the other
	// pull request landed).
	e.ok(clone, "rev", "pr", "review", id2, "--approve")
	e.ok(clone, "ci", "pr", "check", id2, "--name", "ci", "--conclusion", "success")
	e.ok(clone, "q", "pr", "merge", id2[:common+1])
	diff := e.ok(other, "", "pr", "diff", short)
	want := fixtures.Git(t, other, "diff", fixtures.Git(t, bare, "rev-parse", "main")+"..."+head)
	if strings.TrimSpace(diff) != want || !strings.Contains(diff, "+two") || strings.Contains(diff, "g.txt") {
		t.Fatalf("pr diff:\n%s\nwant:\n%s", diff, want)
	}
	if stat := e.ok(other, "", "pr", "diff", short, "--", "--stat"); !strings.Contains(stat, "f.txt | 2 ++") {
		t.Fatalf("pr diff -- --stat:\n%s", stat)
	}
	var dj prDiffJSON
	if err := json.Unmarshal([]byte(e.ok(other, "", "pr", "diff", short, "--json")), &dj); err != nil || dj.Head != head || dj.MergeBase == "" || dj.Diff != want+"\n" {
		t.Fatalf("pr diff --json: %v %+v", err, dj)
	}
}

// TestCLIRemoteChoice: in a clone, writers go to the current branch's
// upstream remote, then origin; with neither they refuse and write nothing.
func TestCLIRemoteChoice(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, clone := cliSetup(t, e)
	// Rename origin: main's upstream now names "up", and no origin exists.
	fixtures.Git(t, clone, "remote", "rename", "origin", "up")
	if got := fixtures.Git(t, clone, "config", "branch.main.remote"); got != "up" {
		t.Fatalf("branch.main.remote = %q", got)
	}
	id := lastLine(e.ok(clone, "dev", "pr", "open", "--base", "main", "--head", "main", "--title", "via upstream"))
	if fixtures.Git(t, bare, "for-each-ref", "--format=%(refname)", "refs/hub/pr/") != "refs/hub/pr/"+id {
		t.Fatal("the event did not reach the upstream remote")
	}
	// A detached HEAD has no upstream, and there is no origin.
	fixtures.Git(t, clone, "checkout", "-q", "--detach")
	before := refsSnapshot(t, clone)
	bareBefore := refsSnapshot(t, bare)
	mustFail(t, e, clone, "rev", 1, "no upstream remote for its current branch and no origin", "pr", "review", id, "--approve")
	if refsSnapshot(t, clone) != before || refsSnapshot(t, bare) != bareBefore {
		t.Fatal("a refused write moved refs")
	}
	// --remote names it; readers still work on the clone's own refs.
	e.ok(clone, "rev", "pr", "review", id, "--approve", "--remote", "up")
	if got := prShowJSON(t, e, clone, id, "--remote", "up"); len(got.Approvals) != 1 {
		t.Fatalf("approvals after --remote up: %v", got.Approvals)
	}
}

func TestCLIMemberCapsAndJSONErrors(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, _ := cliSetup(t, e)
	caps := func() string {
		var list []struct {
			Name string   `json:"name"`
			Caps []string `json:"caps"`
		}
		out := e.ok(bare, "", "member", "list", "--json")
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("member list --json: %v\n%s", err, out)
		}
		for _, m := range list {
			if m.Name == "dev" {
				return strings.Join(m.Caps, " ")
			}
		}
		t.Fatal("no member dev")
		return ""
	}
	_, errOut, code := e.run(bare, "admin", nil, "member", "change", "dev", "--add-cap", "hub.review", "--add-cap", "hub.check:lint")
	if code != 0 || !strings.Contains(errOut, "capabilities of dev: was hub.pr\n") || !strings.Contains(errOut, "now hub.check:lint hub.pr hub.review\n") {
		t.Fatalf("--add-cap: exit %d\n%s", code, errOut)
	}
	if got := caps(); got != "hub.check:lint hub.pr hub.review" {
		t.Fatalf("after --add-cap: %q", got)
	}
	var j repo.WriterJSON
	if err := json.Unmarshal([]byte(e.ok(bare, "admin", "member", "change", "dev", "--remove-cap", "hub.review", "--json")), &j); err != nil {
		t.Fatal(err)
	}
	if j.Details["capsAfter"] == nil || len(j.Events) != 1 || j.Events[0].Type != "member.changed" || j.Events[0].Ref != "refs/hub/trust" {
		t.Fatalf("member change --json: %+v", j)
	}
	if got := caps(); got != "hub.check:lint hub.pr" {
		t.Fatalf("after --remove-cap: %q", got)
	}
	mustFail(t, e, bare, "admin", 1, "does not hold hub.queue", "member", "change", "dev", "--remove-cap", "hub.queue")
	mustFail(t, e, bare, "admin", 2, "--cap replaces every capability", "member", "change", "dev", "--cap", "hub.pr", "--add-cap", "hub.review")
	// --cap still replaces, and says what it replaced.
	_, errOut, code = e.run(bare, "admin", nil, "member", "change", "dev", "--cap", "hub.review")
	if code != 0 || !strings.Contains(errOut, "was hub.check:lint hub.pr\n") || !strings.Contains(errOut, "now hub.review\n") || caps() != "hub.review" {
		t.Fatalf("--cap: exit %d\n%s", code, errOut)
	}

	// A rules file with a syntax error names its line and column.
	bad := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(bad, []byte("{\n  \"protected\": {\n    \"refs/heads/main\": {\"requiredApprovals\": 1,}\n  }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustFail(t, e, bare, "admin", 1, "line 3, column 47: a trailing comma", "rules", "set", bad)
}

func TestCLIVersion(t *testing.T) {
	t.Parallel()
	bin := fixtures.Binary(t)
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("git+ --version: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "git+ version github.com/gitplus/gitplus ") {
		t.Fatalf("git+ --version printed %q", out)
	}
	// The revision printed is the one the toolchain stamped (go version -m).
	meta, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`vcs\.revision=([0-9a-f]+)`).FindSubmatch(meta); m != nil {
		if !strings.Contains(string(out), "revision "+string(m[1])) {
			t.Fatalf("git+ --version %q lacks the stamped revision %s", out, m[1])
		}
	} else if !strings.Contains(string(out), "revision unknown") {
		t.Fatalf("no revision stamped, yet git+ --version printed %q", out)
	}
}

// TestCLIMergeTreeAndWakeJSON: the plain verbs take --json too.
func TestCLIMergeTreeAndWakeJSON(t *testing.T) {
	t.Parallel()
	bin := fixtures.Binary(t)
	dir := filepath.Join(t.TempDir(), "r")
	fixtures.Git(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	base := writeCommit(t, dir, "f.txt", "base\n", "base")
	ours := writeCommit(t, dir, "f.txt", "ours\n", "ours")
	fixtures.Git(t, dir, "checkout", "-q", "-b", "theirs", base)
	theirs := writeCommit(t, dir, "f.txt", "theirs\n", "theirs")
	cmd := exec.Command(bin, "merge-tree", "--json", ours, theirs)
	cmd.Dir = dir
	out, err := cmd.Output()
	var j mergetree.ResultJSON
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || json.Unmarshal(out, &j) != nil || j.Clean || len(j.Conflicts) != 1 || j.Conflicts[0].Path != "f.txt" || j.Conflicts[0].Kind != "content" {
		t.Fatalf("merge-tree --json on a conflict: %v %+v\n%s", err, j, out)
	}
	cmd = exec.Command(bin, "--json", "wake", "--sweep")
	cmd.Dir = dir
	out, err = cmd.Output()
	var w repo.WriterJSON
	if err != nil || json.Unmarshal(out, &w) != nil || w.Verb != "wake" || !strings.Contains(w.Result, "no wake rules") {
		t.Fatalf("wake --json: %v %+v\n%s", err, w, out)
	}
}
