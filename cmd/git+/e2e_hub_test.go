package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/repo"
)

// hubEnv runs the built binary with an isolated environment.
type hubEnv struct {
	t    *testing.T
	bin  string
	home string
	keys map[string]fixtures.Key
}

func newHubEnv(t *testing.T, names ...string) *hubEnv {
	t.Helper()
	e := &hubEnv{t: t, bin: fixtures.Binary(t), home: t.TempDir(), keys: map[string]fixtures.Key{}}
	kd := t.TempDir()
	for _, n := range names {
		e.keys[n] = fixtures.NewKey(t, kd, n)
	}
	return e
}

// run runs git+ in dir; key names the signing key ("" for none).
func (e *hubEnv) run(dir, key string, stdin []byte, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	if key != "" {
		args = append([]string{"--key", e.keys[key].Path}, args...)
	}
	cmd := exec.Command(e.bin, args...)
	cmd.Dir = dir
	cmd.Env = fixtures.GitEnv(e.home)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var o, er bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &er
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("git+ %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), er.String(), code
}

// ok runs git+ and fails the test unless it exits 0; it returns stdout.
func (e *hubEnv) ok(dir, key string, args ...string) string {
	e.t.Helper()
	out, errOut, code := e.run(dir, key, nil, args...)
	if code != 0 {
		e.t.Fatalf("git+ %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

const e2eRules = `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"]}}}`

// hubSetup creates an initialised bare repository with members admin,
// dev (hub.pr), rev (hub.review), ci (hub.check:ci) and rules, plus a
// work tree that pushed main and feat into it.
func hubSetup(t *testing.T, e *hubEnv, viaClone bool) (bare, dir, work string) {
	t.Helper()
	root := t.TempDir()
	bare = filepath.Join(root, "repo.git")
	repoID := lastLine(e.ok(root, "admin", "init", bare))
	if err := trust.ValidUUID(repoID); err != nil {
		t.Fatalf("init printed %q, not a RepoID: %v", repoID, err)
	}

	work = filepath.Join(root, "work")
	fixtures.Git(t, root, "init", "-q", "-b", "main", work)
	signClone(t, work, e.keys["admin"].Path, e.bin) // git+ init requires a known pusher
	fixtures.Git(t, work, "commit", "-q", "--allow-empty", "-m", "base")
	fixtures.Git(t, work, "push", "-q", bare, "main")
	fixtures.Git(t, work, "checkout", "-q", "-b", "feat")
	if err := os.WriteFile(filepath.Join(work, "f.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures.Git(t, work, "add", "f.txt")
	fixtures.Git(t, work, "commit", "-q", "-m", "feat")
	fixtures.Git(t, work, "push", "-q", bare, "feat")

	dir = bare
	var remote []string
	if viaClone {
		dir = filepath.Join(root, "clone")
		fixtures.Git(t, root, "clone", "-q", bare, dir)
		remote = []string{"--remote", "origin"}
	}
	for _, m := range []struct{ name, cap string }{{"dev", "hub.pr"}, {"rev", "hub.review"}, {"ci", "hub.check:ci"}} {
		e.ok(dir, "admin", append([]string{"member", "add", m.name, "--key", e.keys[m.name].Path + ".pub", "--cap", m.cap}, remote...)...)
	}
	rules := filepath.Join(root, "rules.json")
	if err := os.WriteFile(rules, []byte(e2eRules), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok(dir, "admin", append([]string{"rules", "set", rules}, remote...)...)
	return bare, dir, work
}

func prShowJSON(t *testing.T, e *hubEnv, dir, id string, extra ...string) repo.PRView {
	t.Helper()
	var j repo.PRView
	out := e.ok(dir, "", append([]string{"pr", "show", id, "--json"}, extra...)...)
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("pr show --json: %v\n%s", err, out)
	}
	return j
}

func TestHubFlowBare(t *testing.T)  { t.Parallel(); hubFlow(t, false) }
func TestHubFlowClone(t *testing.T) { t.Parallel(); hubFlow(t, true) }

func hubFlow(t *testing.T, viaClone bool) {
	e := newHubEnv(t, "admin", "dev", "rev", "ci")
	bare, dir, work := hubSetup(t, e, viaClone)
	var remote []string
	headRev := "feat"
	if viaClone {
		remote = []string{"--remote", "origin"}
		headRev = "origin/feat"
	}
	with := func(args ...string) []string { return append(args, remote...) }

	head := fixtures.Git(t, work, "rev-parse", "feat")
	id := lastLine(e.ok(dir, "dev", with("pr", "open", "--base", "main", "--head", headRev, "--title", "Add f")...))
	if err := trust.ValidUUID(id); err != nil {
		t.Fatalf("pr open printed %q last, not an id", id)
	}
	e.ok(dir, "rev", with("pr", "review", id, "--approve")...)
	e.ok(dir, "ci", with("pr", "check", id, "--name", "ci", "--rev", head, "--conclusion", "success")...)

	// The events landed in the bare repository itself.
	if got := fixtures.Git(t, bare, "for-each-ref", "--format=%(refname)", "refs/hub/pr/"); got != "refs/hub/pr/"+id {
		t.Fatalf("bare repository's pr refs: %q, want refs/hub/pr/%s", got, id)
	}

	// Every event under refs/hub/* verifies with git's own verify-commit and
	// the allowed-signers file git+ prints.
	signers := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(signers, []byte(e.ok(dir, "", with("member", "allowed-signers")...)), 0o644); err != nil {
		t.Fatal(err)
	}
	tips := strings.Fields(fixtures.Git(t, bare, "for-each-ref", "--format=%(objectname)", "refs/hub/"))
	events := strings.Fields(fixtures.Git(t, bare, append([]string{"rev-list"}, tips...)...))
	if len(events) != 9 { // created, init's rules.set, 3 added, rules.set; opened, review, check
		t.Fatalf("%d events under refs/hub/, want 9", len(events))
	}
	for _, ev := range events {
		cmd := exec.Command("git", "-c", "gpg.format=ssh", "-c", "gpg.ssh.allowedSignersFile="+signers, "verify-commit", ev)
		cmd.Dir, cmd.Env = bare, fixtures.GitEnv(e.home)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), `Good "git" signature for `) {
			t.Fatalf("git verify-commit %s: %s", ev, out)
		}
	}

	j := prShowJSON(t, e, dir, id, remote...)
	if j.State != "open" || j.Head != head || j.Base != "refs/heads/main" || j.Opener != "dev" {
		t.Fatalf("pr show: %+v", j)
	}
	if len(j.Approvals) != 1 || j.Approvals[0] != "rev" {
		t.Fatalf("approvals %v, want [rev]", j.Approvals)
	}
	found := false
	for _, c := range j.Checks {
		if c.Name == "ci" && c.Revision == head && c.Conclusion == "success" && c.AtHead {
			found = true
		}
	}
	if !found {
		t.Fatalf("no ci success at the head in %+v", j.Checks)
	}

	// A new head stales the approval (and the check, which named the old head).
	if err := os.WriteFile(filepath.Join(work, "f.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures.Git(t, work, "commit", "-q", "-am", "feat 2")
	fixtures.Git(t, work, "push", "-q", bare, "feat")
	head2 := fixtures.Git(t, work, "rev-parse", "feat")
	if viaClone {
		fixtures.Git(t, dir, "fetch", "-q", "origin")
	}
	e.ok(dir, "dev", with("pr", "update", id, "--head", headRev)...)
	j = prShowJSON(t, e, dir, id, remote...)
	if j.Head != head2 || len(j.Approvals) != 0 {
		t.Fatalf("after pr update: head %s approvals %v, want head %s and no approvals", j.Head, j.Approvals, head2)
	}
	for _, c := range j.Checks {
		if c.AtHead {
			t.Fatalf("a check at the new head nobody checked: %+v", c)
		}
	}
	// --json before the verb works too, and pr list shows the pull request.
	for _, args := range [][]string{append([]string{"--json"}, with("pr", "list")...), with("pr", "list", "--json")} {
		var list []repo.PRView
		out := e.ok(dir, "", args...)
		if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].ID != id {
			t.Fatalf("git+ %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// refsSnapshot lists every ref with its value.
func refsSnapshot(t *testing.T, dir string) string {
	t.Helper()
	return fixtures.Git(t, dir, "for-each-ref", "--format=%(objectname) %(refname)")
}

// TestHubBadInputAndMembers shares one repository (set-up is the costly
// part): first the bad-input table, then whoami and member changes.
func TestHubBadInputAndMembers(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "outsider", "newbie")
	bare, _, work := hubSetup(t, e, false)
	id := lastLine(e.ok(bare, "dev", "pr", "open", "--base", "main", "--head", "feat", "--title", "Add f"))
	_ = work

	badRules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(badRules, []byte(`{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requireAprovals": 2}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	absent := "01234567-89ab-7cde-8f01-23456789abcd"
	outsiderFP := repo.Fingerprint(e.keys["outsider"].Public)
	newbiePub := e.keys["newbie"].Path + ".pub"

	cases := []struct {
		name  string
		key   string
		args  []string
		stdin []byte
		want  []string // substrings of stderr
	}{
		{"unknown capability", "admin", []string{"member", "add", "newbie", "--key", newbiePub, "--cap", "hub.merge"}, nil,
			[]string{`unknown capability`, `hub.merge`}},
		{"malformed public key", "admin", []string{"member", "add", "newbie", "--key", "ssh-ed25519 AAAA!!notbase64", "--cap", "hub.pr"}, nil,
			[]string{"malformed public key"}},
		{"rules with an unknown field", "admin", []string{"rules", "set", badRules}, nil,
			[]string{"unknown field", "requireAprovals", "nothing was written"}},
		{"rules from stdin with an unknown field", "admin", []string{"rules", "set", "-"}, []byte(`{"protectd": {}}`),
			[]string{"unknown field", "protectd"}},
		{"review of a nonexistent pull request", "rev", []string{"pr", "review", absent, "--approve"}, nil,
			[]string{"no pull request " + absent}},
		{"a key that is not a member", "outsider", []string{"pr", "review", id, "--approve"}, nil,
			[]string{outsiderFP, "is not a member", "git+ member add"}},
		{"a member without the capability", "dev", []string{"member", "add", "newbie", "--key", newbiePub, "--cap", "hub.pr"}, nil,
			[]string{"lacks capability repo.admin"}},
		{"the opener approving", "dev", []string{"pr", "review", id, "--approve"}, nil,
			[]string{"hub.review"}},
		{"a check without its capability", "rev", []string{"pr", "check", id, "--name", "ci", "--conclusion", "success"}, nil,
			[]string{"hub.check:ci"}},
		{"init of an initialised repository", "admin", []string{"init", bare}, nil,
			[]string{"already has refs/hub/trust"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := refsSnapshot(t, bare)
			_, errOut, code := e.run(bare, tc.key, tc.stdin, tc.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1; stderr:\n%s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr does not mention %q:\n%s", w, errOut)
				}
			}
			if after := refsSnapshot(t, bare); after != before {
				t.Errorf("refs changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}

	// Usage mistakes exit 2 and write nothing either.
	before := refsSnapshot(t, bare)
	for _, args := range [][]string{
		{"pr", "review", id},
		{"pr", "review", id, "--approve", "--comment"},
		{"member", "add", "newbie", "--cap", "hub.pr"},
		{"pr", "open", "--base", "main"},
		{"pr", "nosuch"},
	} {
		if _, errOut, code := e.run(bare, "admin", nil, args...); code != 2 {
			t.Errorf("git+ %s: exit %d, want 2\n%s", strings.Join(args, " "), code, errOut)
		}
	}
	if after := refsSnapshot(t, bare); after != before {
		t.Errorf("usage errors changed refs")
	}
	hubWhoamiAndMembers(t, e, bare)
}

func hubWhoamiAndMembers(t *testing.T, e *hubEnv, bare string) {
	var w repo.Identity
	if err := json.Unmarshal([]byte(e.ok(bare, "dev", "whoami", "--json")), &w); err != nil {
		t.Fatal(err)
	}
	if w.Member != "dev" || len(w.Caps) != 1 || w.Caps[0] != "hub.pr" || w.Fingerprint != repo.Fingerprint(e.keys["dev"].Public) {
		t.Fatalf("whoami: %+v", w)
	}
	if out := e.ok(bare, "outsider", "whoami"); !strings.Contains(out, "not a member") || !strings.Contains(out, repo.Fingerprint(e.keys["outsider"].Public)) {
		t.Fatalf("whoami of an outsider: %q", out)
	}

	// change keeps what it is not told; remove drops the member.
	e.ok(bare, "admin", "member", "change", "dev", "--cap", "hub.pr", "--cap", "hub.review")
	var ms []memberJSON
	if err := json.Unmarshal([]byte(e.ok(bare, "", "member", "list", "--json")), &ms); err != nil {
		t.Fatal(err)
	}
	got := map[string]memberJSON{}
	for _, m := range ms {
		got[m.Name] = m
	}
	if d := got["dev"]; strings.Join(d.Caps, ",") != "hub.pr,hub.review" || d.Key != e.keys["dev"].Authorized {
		t.Fatalf("dev after change: %+v", d)
	}
	e.ok(bare, "admin", "member", "remove", "ci")
	if out := e.ok(bare, "", "member", "list"); strings.Contains(out, "ci ") || len(strings.Split(strings.TrimSpace(out), "\n")) != 3 {
		t.Fatalf("member list after remove:\n%s", out)
	}

	// rules show fills in the defaults.
	var r map[string]any
	if err := json.Unmarshal([]byte(e.ok(bare, "", "rules", "show", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	main := r["protected"].(map[string]any)["refs/heads/main"].(map[string]any)
	if main["requirePullRequest"] != true || main["queueDepth"] != float64(8) {
		t.Fatalf("rules show: %v", main)
	}
}
