package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hooks/webview"
)

// TestServeSSHLogsRefusedKey: a key SSH refuses is in serve's log, with its
// fingerprint and the reason, so an operator can tell a user why their
// `git clone` said only "Permission denied (publickey)".
func TestServeSSHLogsRefusedKey(t *testing.T) {
	t.Parallel()
	a := newAuthWorld(t)
	c := a.commit(nil, map[string]string{"a.txt": "a\n"}, "one")
	errs, err := a.sshPush("out", c+":refs/heads/ssh-out")
	a.mustRefuse("a key that is nobody's", errs, err, "refs/heads/ssh-out", "", "Permission denied (publickey)")
	want := "git+ serve: ssh: refused key " + ssh.FingerprintSHA256(a.keys["out"].Public) + " (ssh-ed25519) from 127.0.0.1:"
	log := readFile(a.s.Log)
	if !strings.Contains(log, want) || !strings.Contains(log, "it is not a member key of any git+ repository here") {
		t.Fatalf("serve's log lacks %q and its reason:\n%s", want, log)
	}
}

// TestServeWithoutGitSuffix: "team/app" names team/app.git over HTTP and
// SSH, as git's own servers take it; on a private server the short name of
// an existing repository is answered exactly as a missing one.
func TestServeWithoutGitSuffix(t *testing.T) {
	t.Parallel()
	a := newAuthWorld(t)
	c := a.commit(nil, map[string]string{"a.txt": "a\n"}, "one")
	errs, err := a.push([]string{"GIT_SSH_COMMAND=" + a.sshCommand("dev")}, a.sshURL("origin"), c+":refs/heads/short-ssh")
	a.mustAccept("a push over SSH to origin (no .git)", errs, err, "refs/heads/short-ssh", c)
	out, errs, err := a.gitRun(a.work, "", []string{"GIT_TERMINAL_PROMPT=0"}, "ls-remote", a.s.URL+"/origin", "refs/heads/short-ssh")
	if err != nil || !strings.HasPrefix(out, c) {
		t.Fatalf("ls-remote %s/origin over HTTP: %v\n%s%s", a.s.URL, err, out, errs)
	}
	errs, err = a.signedPush("dev", c+":refs/heads/short-http")
	a.mustAccept("a signed push over HTTP", errs, err, "refs/heads/short-http", c)

	p, _ := newPrivateWorld(t)
	tok := strings.TrimSpace(p.mustGP("", p.root, "", "--repo", p.origin, "member", "token", "issue", "dev"))
	if got := httpAnswer(t, "GET", p.s.URL+"/origin/info/refs?service=git-upload-pack", "dev", tok, ""); got.Status != 200 {
		t.Fatalf("dev's token on origin (no .git), private: %d %q", got.Status, got.Body)
	}
	// Anonymous: "origin" and "absent" (as long) get the same 401.
	want := httpAnswer(t, "GET", p.s.URL+"/absent/info/refs?service=git-upload-pack", "", "", "")
	got := httpAnswer(t, "GET", p.s.URL+"/origin/info/refs?service=git-upload-pack", "", "", "")
	want.Headers, want.Body = strings.ReplaceAll(want.Headers, "absent", "REPO"), strings.ReplaceAll(want.Body, "absent", "REPO")
	got.Headers, got.Body = strings.ReplaceAll(got.Headers, "origin", "REPO"), strings.ReplaceAll(got.Body, "origin", "REPO")
	if got != want || got.Status != 401 {
		t.Fatalf("private: origin (no .git) answered\n%+v\nand a missing repository\n%+v", got, want)
	}
}

// TestPageAmbiguousID: a prefix several pull request ids start with is
// titled as ambiguous on the page, each candidate linked, not "no such
// pull request".
func TestPageAmbiguousID(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, ids := pageScenario(t, e)
	var all []string
	for _, id := range ids {
		all = append(all, id)
	}
	prefix := all[0][:4]
	var want []string
	for _, id := range all {
		if strings.HasPrefix(id, prefix) {
			want = append(want, id)
		}
	}
	if len(want) < 2 {
		t.Skipf("the scenario's ids share no 4-character prefix: %v", all)
	}
	rec := httptest.NewRecorder()
	webview.Repo(bare, "/").ServeHTTP(rec, httptest.NewRequest("GET", "/pr/"+prefix, nil))
	body := rec.Body.String()
	if rec.Code != 300 || !strings.Contains(body, "ambiguous pull request id") || strings.Contains(body, "no such pull request") {
		t.Fatalf("GET /pr/%s: %d\n%s", prefix, rec.Code, body)
	}
	for _, id := range want {
		if !strings.Contains(body, `<a href="/pr/`+id+`">`) {
			t.Errorf("GET /pr/%s does not link %s:\n%s", prefix, id, body)
		}
	}
}
