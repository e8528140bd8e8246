package main

// End-to-end tests of who may push through git+ serve (docs/serving.md):
// stock git over SSH (GIT_SSH_COMMAND with a member's key and a known_hosts
// pinned to the served host key) and over HTTP (tokens, signed pushes).

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// authWorld is a served root with one git+ repository (origin.git) whose
// members are admin, dev (source.push), rev (hub.review) and tagger
// (source.tag); "out" is a key that is nobody's.
type authWorld struct {
	*e2e
	s    *gpServer
	root string
	kh   string // known_hosts pinned to the server's host key
}

func newAuthWorld(t *testing.T) *authWorld {
	t.Helper()
	w := newE2E(t, map[string][]string{"dev": {"source.push"}, "rev": {"hub.review"}, "tagger": {"source.tag"}}, "out")
	a := &authWorld{e2e: w, root: filepath.Dir(w.origin)}
	w.signPushes(w.work, "") // each push here chooses its own identity
	hostKey := filepath.Join(t.TempDir(), "host_key")
	a.s = startServe(t, w.bin, w.env, a.root, "--ssh", "127.0.0.1:0", "--host-key", hostKey)
	pub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		t.Fatalf("git+ serve --ssh did not write the host key's public half: %v", err)
	}
	host, port, _ := strings.Cut(a.s.SSH, ":")
	a.kh = filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(a.kh, []byte(fmt.Sprintf("[%s]:%s %s", host, port, pub)), 0o644); err != nil {
		t.Fatal(err)
	}
	return a
}

// sshCommand is GIT_SSH_COMMAND for key: that key only, the pinned host key only.
func (a *authWorld) sshCommand(key string) string {
	return fmt.Sprintf("ssh -F /dev/null -i %s -o IdentitiesOnly=yes -o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes -o BatchMode=yes",
		a.keys[key].Path, a.kh)
}

func (a *authWorld) sshURL(repo string) string { return "ssh://git@" + a.s.SSH + "/" + repo }

// push runs git push in the work clone with extra environment.
func (a *authWorld) push(env []string, args ...string) (string, error) {
	_, errs, err := a.gitRun(a.work, "", append([]string{"GIT_TERMINAL_PROMPT=0"}, env...), append([]string{"push"}, args...)...)
	return errs, err
}

func (a *authWorld) sshPush(key string, args ...string) (string, error) {
	return a.push([]string{"GIT_SSH_COMMAND=" + a.sshCommand(key)}, append([]string{a.sshURL("origin.git")}, args...)...)
}

func (a *authWorld) signedPush(key string, args ...string) (string, error) {
	_, errs, err := a.gitRun(a.work, "", []string{"GIT_TERMINAL_PROMPT=0"}, append([]string{"-c", "gpg.format=ssh",
		"-c", "user.signingkey=" + a.keys[key].Path + ".pub", "push", "--signed", a.s.URL + "/origin.git"}, args...)...)
	return errs, err
}

func (a *authWorld) tokenURL(name, token string) string {
	return strings.Replace(a.s.URL, "http://", "http://"+name+":"+token+"@", 1) + "/origin.git"
}

func (a *authWorld) mustAccept(what, errs string, err error, ref, want string) {
	a.t.Helper()
	if err != nil {
		a.t.Fatalf("%s: refused: %v\n%s", what, err, errs)
	}
	if got := a.ref(ref); got != want {
		a.t.Fatalf("%s: %s is %q, want %s", what, ref, got, want)
	}
}

func (a *authWorld) mustRefuse(what, errs string, err error, ref, want, says string) {
	a.t.Helper()
	if err == nil {
		a.t.Fatalf("%s: accepted\n%s", what, errs)
	}
	if !strings.Contains(errs, says) {
		a.t.Fatalf("%s: the client was not told %q:\n%s", what, says, errs)
	}
	if got := a.ref(ref); got != want {
		a.t.Fatalf("%s: %s moved to %q", what, ref, got)
	}
}

func TestServeSSH(t *testing.T) {
	t.Parallel()
	a := newAuthWorld(t)
	c := a.commit(nil, map[string]string{"a.txt": "a\n"}, "one")

	errs, err := a.sshPush("dev", c+":refs/heads/ssh-dev")
	a.mustAccept("a member with source.push over SSH", errs, err, "refs/heads/ssh-dev", c)

	errs, err = a.sshPush("rev", c+":refs/heads/ssh-rev")
	a.mustRefuse("a member without source.push over SSH", errs, err, "refs/heads/ssh-rev", "", "remote: git+: refused refs/heads/ssh-rev: [missing-capability]")
	errs, err = a.sshPush("rev", ":refs/heads/ssh-dev")
	a.mustRefuse("a branch deletion without source.push over SSH", errs, err, "refs/heads/ssh-dev", c, "[missing-capability]")
	errs, err = a.sshPush("dev", c+":refs/tags/v1")
	a.mustRefuse("a tag without source.tag over SSH", errs, err, "refs/tags/v1", "", "does not hold source.tag")
	errs, err = a.sshPush("tagger", c+":refs/tags/v1")
	a.mustAccept("a tag with source.tag over SSH", errs, err, "refs/tags/v1", c)

	errs, err = a.sshPush("out", c+":refs/heads/ssh-out")
	a.mustRefuse("a key that is nobody's", errs, err, "refs/heads/ssh-out", "", "Permission denied (publickey)")

	_, errs, err = a.gitRun(a.work, "", []string{"GIT_SSH_COMMAND=" + a.sshCommand("dev")}, "ls-remote", "ssh://git@"+a.s.SSH+"/../"+filepath.Base(a.root)+"/origin.git")
	if err == nil || !strings.Contains(errs, "leaves the served root") {
		t.Fatalf("a ../ path over SSH: %v\n%s", err, errs)
	}

	// A failing command reports its own exit status.
	cmd := exec.Command("sh", "-c", a.sshCommand("dev")+" -p "+strings.Split(a.s.SSH, ":")[1]+" git@127.0.0.1 \"git-upload-pack 'nope.git'\"")
	cmd.Env = a.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "not a git+ repository") {
		t.Fatalf("git-upload-pack of a missing repository over SSH: %v\n%s", err, stderr.String())
	}

	// git's own failure: its standard error and exit status (128) reach
	// the client.
	cmd = exec.Command("sh", "-c", a.sshCommand("dev")+" -p "+strings.Split(a.s.SSH, ":")[1]+" git@127.0.0.1 \"git-upload-pack 'origin.git'\"")
	cmd.Env, cmd.Stdin = a.env, strings.NewReader("zzzz-not-a-pkt-line\n")
	stderr.Reset()
	cmd.Stderr, cmd.Stdout = &stderr, io.Discard
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 128 || !strings.Contains(stderr.String(), "protocol error") {
		t.Fatalf("git-upload-pack fed garbage over SSH: %v\n%s", err, stderr.String())
	}

	// A hook that writes far more than a pipe holds to stderr, then
	// refuses: the client gets all of it and a failed push (gitkit's
	// handler read stdout to the end first, and said 0).
	loud := filepath.Join(a.root, "loud.git")
	a.mustGP("admin", a.root, "", "init", loud)
	a.mustGP("admin", a.root, "", "--repo", loud, "member", "add", "dev", "--key", a.keys["dev"].Path+".pub", "--cap", "source.push")
	script := "#!/bin/sh\ncat >/dev/null\nseq 1 20000 | sed 's/^/noise /' >&2\necho LOUD-END >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(loud, "hooks", "pre-receive.chained"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	errs, err = a.push([]string{"GIT_SSH_COMMAND=" + a.sshCommand("dev")}, a.sshURL("loud.git"), c+":refs/heads/x")
	if err == nil || !strings.Contains(errs, "LOUD-END") || strings.Count(errs, "remote: noise ") != 20000 {
		t.Fatalf("a loud refusing hook over SSH: err %v, %d bytes of stderr, LOUD-END %v", err, len(errs), strings.Contains(errs, "LOUD-END"))
	}

	// Revocation is immediate: dev loses source.push, then membership.
	c2 := a.commit([]string{c}, map[string]string{"b.txt": "b\n"}, "two")
	a.mustGP("admin", a.root, "", "--repo", a.origin, "member", "change", "dev", "--cap", "hub.pr")
	errs, err = a.sshPush("dev", c2+":refs/heads/ssh-dev")
	a.mustRefuse("dev without source.push over SSH", errs, err, "refs/heads/ssh-dev", c, "[missing-capability]")
	a.mustGP("admin", a.root, "", "--repo", a.origin, "member", "remove", "dev")
	errs, err = a.sshPush("dev", c2+":refs/heads/ssh-dev")
	a.mustRefuse("a removed member over SSH", errs, err, "refs/heads/ssh-dev", c, "is not a member of origin.git")
}

func TestServeHTTPAuth(t *testing.T) {
	t.Parallel()
	a := newAuthWorld(t)
	c := a.commit(nil, map[string]string{"a.txt": "a\n"}, "one")
	url := a.s.URL + "/origin.git"

	// Anonymous: reads work, a push gets 401 with a message.
	if _, errs, err := a.gitRun(a.work, "", nil, "ls-remote", url); err != nil {
		t.Fatalf("anonymous ls-remote: %v\n%s", err, errs)
	}
	errs, err := a.push(nil, url, c+":refs/heads/anon")
	a.mustRefuse("an anonymous push", errs, err, "refs/heads/anon", "", "could not read Username")
	resp, err := http.Post(url+"/git-receive-pack", "application/x-git-receive-pack-request",
		strings.NewReader(fmt.Sprintf("%04x%s %s refs/heads/anon\x00report-status\n0000", 4+40+1+40+len(" refs/heads/anon\x00report-status\n"), strings.Repeat("0", 40), c)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "git+ member token issue") || !strings.Contains(string(body), "--signed") {
		t.Fatalf("anonymous receive-pack: %s\n%s", resp.Status, body)
	}
	if resp, err := http.Get(a.s.URL + "/x/../origin.git/info/refs?service=git-upload-pack"); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a ../ path over HTTP: %v %v", resp, err)
	}

	// Tokens: accepted, then revoked.
	token := strings.TrimSpace(a.mustGP("", a.root, "", "--repo", a.origin, "member", "token", "issue", "dev"))
	errs, err = a.push(nil, a.tokenURL("dev", token), c+":refs/heads/tok")
	a.mustAccept("a push with dev's token", errs, err, "refs/heads/tok", c)
	errs, err = a.push(nil, a.tokenURL("rev", token), ":refs/heads/tok")
	a.mustRefuse("dev's token under rev's name", errs, err, "refs/heads/tok", c, "401")
	revTok := strings.TrimSpace(a.mustGP("", a.root, "", "--repo", a.origin, "member", "token", "issue", "rev"))
	errs, err = a.push(nil, a.tokenURL("rev", revTok), ":refs/heads/tok")
	a.mustRefuse("a deletion with the token of a member without source.push", errs, err, "refs/heads/tok", c, "[missing-capability]")
	a.mustGP("", a.root, "", "--repo", a.origin, "member", "token", "revoke", "dev")
	errs, err = a.push(nil, a.tokenURL("dev", token), ":refs/heads/tok")
	a.mustRefuse("a revoked token", errs, err, "refs/heads/tok", c, "401")

	// Signed pushes: a member's accepted, a non-member's and a replay refused.
	errs, err = a.signedPush("dev", c+":refs/heads/signed")
	a.mustAccept("a signed push from dev", errs, err, "refs/heads/signed", c)
	// A non-member's certificate is refused at the door (401, before
	// receive-pack runs), so git asks for credentials; the reason is in the
	// server log (docs/serving.md "HTTP").
	errs, err = a.signedPush("out", c+":refs/heads/signed-out")
	a.mustRefuse("a signed push from a non-member", errs, err, "refs/heads/signed-out", "", "could not read Username")
	if log := readFile(a.s.Log); !strings.Contains(log, "[not-member]") {
		t.Fatalf("the server log does not say why the non-member's signed push was refused:\n%s", log)
	}
	errs, err = a.signedPush("rev", ":refs/heads/signed")
	a.mustRefuse("a signed deletion without source.push", errs, err, "refs/heads/signed", c, "[missing-capability]")

	// The replay: dev's certificate (receive-pack keeps it as a blob), sent
	// again as its own push after the branch is put back where it signed.
	// It is the one that created refs/heads/signed at c: rev's refused
	// deletion left a certificate naming the branch too, and a refused
	// push's certificate was never used (receive/certrecord.go).
	cert := ""
	created := strings.Repeat("0", 40) + " " + c + " refs/heads/signed\n"
	for _, line := range strings.Split(a.git(a.origin, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"), "\n") {
		id, typ, _ := strings.Cut(line, " ")
		if typ == "blob" && strings.Contains(a.git(a.origin, "cat-file", "blob", id), created) {
			cert = a.git(a.origin, "cat-file", "blob", id) + "\n"
		}
	}
	if cert == "" {
		t.Fatal("the signed push left no certificate blob")
	}
	a.git(a.origin, "update-ref", "-d", "refs/heads/signed")
	var req bytes.Buffer
	pkt := func(s string) { fmt.Fprintf(&req, "%04x%s", len(s)+4, s) }
	pkt("push-cert\x00report-status side-band-64k")
	for _, l := range strings.SplitAfter(cert, "\n") {
		if l != "" {
			pkt(l)
		}
	}
	pkt("push-cert-end\n")
	req.WriteString("0000")
	emptyPack := exec.Command("git", "pack-objects", "--stdout", "-q")
	emptyPack.Dir, emptyPack.Env, emptyPack.Stdin = a.work, a.env, strings.NewReader("")
	packBytes, err := emptyPack.Output()
	if err != nil {
		t.Fatal(err)
	}
	req.Write(packBytes)
	resp, err = http.Post(url+"/git-receive-pack", "application/x-git-receive-pack-request", &req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !bytes.Contains(body, []byte("[push-cert-nonce]")) || a.ref("refs/heads/signed") != "" {
		t.Fatalf("a replayed certificate: %s\n%q\nsigned = %q", resp.Status, body, a.ref("refs/heads/signed"))
	}

	// Revocation reaches signed pushes at once.
	a.mustGP("admin", a.root, "", "--repo", a.origin, "member", "change", "dev", "--cap", "hub.pr")
	errs, err = a.signedPush("dev", c+":refs/heads/signed-late")
	a.mustRefuse("a signed push from dev without source.push", errs, err, "refs/heads/signed-late", "", "[missing-capability]")
}

// TestServeAdopt: --adopt makes a plain bare repository a git+ repository
// (git+ init with the given key) before serving it; git+ init points HEAD
// at main.
func TestServeAdopt(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	if head := w.git(w.origin, "symbolic-ref", "HEAD"); head != "refs/heads/main" {
		t.Fatalf("git+ init left HEAD at %s", head)
	}
	root := t.TempDir()
	plain := filepath.Join(root, "plain.git")
	w.git(root, "init", "-q", "--bare", plain)
	s := startServe(t, w.bin, w.env, root, "--adopt", w.keys["admin"].Path)
	if w.git(plain, "for-each-ref", "--format=%(refname)", "refs/hub/trust") != "refs/hub/trust" {
		t.Fatalf("--adopt did not init %s:\n%s", plain, readFile(s.Log))
	}
	if !strings.Contains(readFile(s.Log), "adopted "+plain) {
		t.Fatalf("the log does not say %s was adopted:\n%s", plain, readFile(s.Log))
	}
	if _, errs, err := w.gitRun(root, "", nil, "ls-remote", s.URL+"/plain.git"); err != nil {
		t.Fatalf("the adopted repository is not served: %v\n%s", err, errs)
	}
	// Adopted means made by git+: a known pusher is required by path too.
	if out := w.mustGP("", root, "", "--repo", plain, "rules", "show", "--json"); !strings.Contains(out, `"requireKnownPusher": true`) {
		t.Fatalf("the adopted repository's rules:\n%s", out)
	}
}
