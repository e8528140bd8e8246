package main

// End-to-end tests of what git+ serve gives away (docs/serving.md "Tokens",
// "HTTP", "SSH", "What serve touches"): a token outlives no removal or
// re-keying of its member; a private server tells an unauthenticated client
// nothing about which repositories exist; the page shows only the
// repositories serve serves.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestServeTokenVoidedForGood: removing a member, or re-keying it, voids its
// tokens for good: adding it back with the same key, or changing the key
// back, does not bring an old token back. A capability change keeps it.
func TestServeTokenVoidedForGood(t *testing.T) {
	t.Parallel()
	a := newAuthWorld(t)
	c := a.commit(nil, map[string]string{"a.txt": "a\n"}, "one")
	devKey := a.keys["dev"].Path + ".pub"
	member := func(args ...string) {
		a.mustGP("admin", a.root, "", append([]string{"--repo", a.origin, "member"}, args...)...)
	}
	issue := func() string {
		return strings.TrimSpace(a.mustGP("", a.root, "", "--repo", a.origin, "member", "token", "issue", "dev"))
	}
	// refused: a push with token is answered 401 and no ref moves.
	refused := func(what, token, ref string) {
		t.Helper()
		before := a.refs()
		errs, err := a.push(nil, a.tokenURL("dev", token), c+":"+ref)
		a.mustRefuse(what, errs, err, ref, "", "401")
		if after := a.refs(); after != before {
			t.Fatalf("%s: the refs changed:\n%s\n---\n%s", what, before, after)
		}
		// The same answer to a plain HTTP client, on a read too.
		req, _ := http.NewRequest("GET", a.s.URL+"/origin.git/info/refs?service=git-upload-pack", nil)
		req.SetBasicAuth("dev", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s: a read with the token: %s, want 401", what, resp.Status)
		}
	}

	old := issue()
	errs, err := a.push(nil, a.tokenURL("dev", old), c+":refs/heads/first")
	a.mustAccept("a push with dev's token", errs, err, "refs/heads/first", c)

	member("remove", "dev")
	refused("the token of a removed member", old, "refs/heads/removed")
	member("add", "dev", "--key", devKey, "--cap", "source.push")
	refused("a token issued before its member was removed and added again with the same key", old, "refs/heads/readded")

	// A token issued now works, also after a change of capabilities only.
	tok := issue()
	errs, err = a.push(nil, a.tokenURL("dev", tok), c+":refs/heads/second")
	a.mustAccept("a push with a token issued after the member was added again", errs, err, "refs/heads/second", c)
	member("change", "dev", "--add-cap", "hub.pr")
	errs, err = a.push(nil, a.tokenURL("dev", tok), c+":refs/heads/third")
	a.mustAccept("a push with dev's token after a change of capabilities only", errs, err, "refs/heads/third", c)

	// Re-keyed away and back: the token stays void.
	member("change", "dev", "--key", a.keys["out"].Path+".pub")
	refused("the token of a re-keyed member", tok, "refs/heads/rekeyed")
	member("change", "dev", "--key", devKey)
	refused("a token issued before its member was re-keyed away and back", tok, "refs/heads/rekeyed-back")
	refused("the first token, after all of it", old, "refs/heads/rekeyed-back")
}

// privateWorld is an authWorld served with --private, beside a second git+
// repository (side.git, where "out" is a member: out's key passes SSH
// authentication and holds a token there, but is nobody in origin.git) and
// a plain bare repository (simple.git, not served).
func newPrivateWorld(t *testing.T) (*authWorld, string) {
	t.Helper()
	w := newE2E(t, map[string][]string{"dev": {"source.push"}}, "out")
	a := &authWorld{e2e: w, root: filepath.Dir(w.origin)}
	w.signPushes(w.work, "")
	side := filepath.Join(a.root, "side.git")
	w.mustGP("admin", a.root, "", "init", side)
	w.mustGP("admin", a.root, "", "--repo", side, "member", "add", "out", "--key", w.keys["out"].Path+".pub", "--cap", "source.push")
	w.git(a.root, "init", "-q", "--bare", filepath.Join(a.root, "simple.git"))
	hostKey := filepath.Join(t.TempDir(), "host_key")
	a.s = startServe(t, w.bin, w.env, a.root, "--private", "--ssh", "127.0.0.1:0", "--host-key", hostKey)
	pub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(a.s.SSH, ":")
	a.kh = filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(a.kh, []byte(fmt.Sprintf("[%s]:%s %s", host, port, pub)), 0o644); err != nil {
		t.Fatal(err)
	}
	return a, side
}

// answer is an HTTP response as a client sees it, the date left out.
type answer struct {
	Status  int
	Headers string
	Body    string
}

func httpAnswer(t *testing.T, method, url, user, pass, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	if method == "POST" {
		req.Header.Set("Content-Type", "application/x-git-receive-pack-request")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var hs []string
	for k, v := range resp.Header {
		if k != "Date" {
			hs = append(hs, k+": "+strings.Join(v, ", "))
		}
	}
	sort.Strings(hs)
	return answer{resp.StatusCode, strings.Join(hs, "\n"), string(b)}
}

// TestServePrivateHidesRepos: with --private, a client not authenticated
// for a repository gets the same answer whether it exists or not: over
// HTTP the same 401 (status, headers, body), over SSH the same message, and
// nothing moves.
func TestServePrivateHidesRepos(t *testing.T) {
	t.Parallel()
	a, side := newPrivateWorld(t)
	c := a.commit(nil, map[string]string{"a.txt": "a\n"}, "one")
	devTok := strings.TrimSpace(a.mustGP("", a.root, "", "--repo", a.origin, "member", "token", "issue", "dev"))
	outTok := strings.TrimSpace(a.mustGP("", a.root, "", "--repo", side, "member", "token", "issue", "out"))
	refsOf := func() string {
		return a.refs() + "\n" + a.git(side, "for-each-ref", "--format=%(objectname) %(refname)") + "\n" +
			a.git(a.root, "--git-dir", filepath.Join(a.root, "simple.git"), "for-each-ref")
	}
	before := refsOf()

	// Stock git: the same failure for an existing and a missing repository.
	for _, repo := range []string{"origin.git", "absent.git"} {
		_, errs, err := a.gitRun(a.work, "", []string{"GIT_TERMINAL_PROMPT=0"}, "ls-remote", a.s.URL+"/"+repo)
		if err == nil || !strings.Contains(errs, "could not read Username") {
			t.Fatalf("anonymous ls-remote of %s on a private server: %v\n%s", repo, err, errs)
		}
		errs, err = a.push(nil, a.s.URL+"/"+repo, c+":refs/heads/anon")
		a.mustRefuse("an anonymous push to "+repo, errs, err, "refs/heads/anon", "", "could not read Username")
	}

	// A plain HTTP client: every request, anonymous, with a bad token, and
	// with a token of another repository, is answered alike for origin.git
	// (exists, git+), simple.git (exists, not served) and absent.git. The
	// names are as long as one another, so the answers are byte for byte
	// alike but for the name the client sent.
	pktRef := fmt.Sprintf("%04x%s %s refs/heads/x\x00report-status\n0000", 4+40+1+40+len(" refs/heads/x\x00report-status\n"), strings.Repeat("0", 40), c)
	requests := []struct{ method, path, body string }{
		{"GET", "/info/refs?service=git-upload-pack", ""},
		{"GET", "/info/refs?service=git-receive-pack", ""},
		{"POST", "/git-upload-pack", "0000"},
		{"POST", "/git-receive-pack", pktRef},
	}
	creds := []struct{ user, pass string }{{"", ""}, {"dev", "gpt_bogus"}, {"out", outTok}}
	for _, rq := range requests {
		for _, cr := range creds {
			var want answer
			for i, repo := range []string{"origin.git", "simple.git", "absent.git"} {
				got := httpAnswer(t, rq.method, a.s.URL+"/"+repo+rq.path, cr.user, cr.pass, rq.body)
				got.Headers = strings.ReplaceAll(got.Headers, repo, "REPO")
				got.Body = strings.ReplaceAll(got.Body, repo, "REPO")
				if got.Status != http.StatusUnauthorized {
					t.Errorf("%s %s%s as %q: %d %q, want 401", rq.method, repo, rq.path, cr.user, got.Status, got.Body)
				}
				if i == 0 {
					want = got
				} else if got != want {
					t.Errorf("%s %s%s as %q tells it apart from origin.git:\n%+v\nwant\n%+v", rq.method, repo, rq.path, cr.user, got, want)
				}
			}
		}
	}
	// Authenticated for the repository, the client is let through.
	if got := httpAnswer(t, "GET", a.s.URL+"/origin.git/info/refs?service=git-upload-pack", "dev", devTok, ""); got.Status != http.StatusOK {
		t.Fatalf("dev's token on origin.git: %d %q", got.Status, got.Body)
	}

	// SSH: out's key authenticates (it is side.git's) and hears the same
	// of origin.git, where it is nobody, as of a missing repository and of
	// one serve does not serve.
	sshSays := func(repo string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", a.sshCommand("out")+" -p "+strings.Split(a.s.SSH, ":")[1]+" git@127.0.0.1 \"git-upload-pack '"+repo+"'\"")
		cmd.Env = a.env
		var stderr bytes.Buffer
		cmd.Stderr, cmd.Stdout = &stderr, io.Discard
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("git-upload-pack '%s' over SSH with out's key: %v\n%s", repo, err, stderr.String())
		}
		return strings.ReplaceAll(stderr.String(), repo, "REPO")
	}
	want := sshSays("origin.git")
	for _, repo := range []string{"absent.git", "simple.git"} {
		if got := sshSays(repo); got != want {
			t.Errorf("SSH tells %s apart from origin.git: %q, want %q", repo, got, want)
		}
	}
	// A real push over SSH: refused with that message.
	errs, err := a.push([]string{"GIT_SSH_COMMAND=" + a.sshCommand("out")}, a.sshURL("origin.git"), c+":refs/heads/ssh-out")
	a.mustRefuse("a push over SSH by a key that is no member of origin.git", errs, err, "refs/heads/ssh-out", "",
		`"origin.git" is not a git+ repository here, or key `)
	errs, err = a.push([]string{"GIT_SSH_COMMAND=" + a.sshCommand("out")}, a.sshURL("absent.git"), c+":refs/heads/ssh-out")
	a.mustRefuse("a push over SSH to a missing repository", errs, err, "refs/heads/ssh-out", "",
		`"absent.git" is not a git+ repository here, or key `)

	if after := refsOf(); after != before {
		t.Fatalf("refs changed:\n%s\n---\n%s", before, after)
	}
}

// TestServePageServedOnly: the page lists and shows only the repositories
// serve serves; a plain bare repository under the root is a plain 404 on
// the page as in smart HTTP, and serve leaves it alone.
func TestServePageServedOnly(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	root := filepath.Dir(w.origin)
	plain := filepath.Join(root, "team", "simple.git")
	w.git(root, "init", "-q", "--bare", plain)
	c := w.commit(nil, map[string]string{"a.txt": "a\n"}, "one")
	w.git(w.work, "push", "-q", plain, c+":refs/heads/main")
	plainRefs := w.git(plain, "for-each-ref", "--format=%(objectname) %(refname)")
	before := w.refs()
	s := startServe(t, w.bin, w.env, root)

	get := func(path string) answer { t.Helper(); return httpAnswer(t, "GET", s.URL+path, "", "", "") }
	list := get("/")
	if list.Status != http.StatusOK || !strings.Contains(list.Body, "origin.git") {
		t.Fatalf("GET /: %d, does not list origin.git:\n%s", list.Status, list.Body)
	}
	if strings.Contains(list.Body, "simple.git") {
		t.Errorf("GET / lists team/simple.git, which serve does not serve:\n%s", list.Body)
	}
	if got := get("/origin.git/"); got.Status != http.StatusOK {
		t.Errorf("GET /origin.git/: %d %q", got.Status, got.Body)
	}
	smart := get("/team/simple.git/info/refs?service=git-upload-pack")
	if smart.Status != http.StatusNotFound {
		t.Fatalf("smart HTTP of team/simple.git: %d %q", smart.Status, smart.Body)
	}
	for _, p := range []string{"/team/simple.git/", "/team/simple.git", "/team/simple.git/pr/0123"} {
		got := get(p)
		if got.Status != smart.Status || got.Body != smart.Body {
			t.Errorf("GET %s: %d %q, want smart HTTP's plain %d %q", p, got.Status, got.Body, smart.Status, smart.Body)
		}
	}
	if got := w.git(plain, "for-each-ref", "--format=%(objectname) %(refname)"); got != plainRefs {
		t.Errorf("team/simple.git's refs changed: %s, were %s", got, plainRefs)
	}
	if after := w.refs(); after != before {
		t.Errorf("origin.git's refs changed:\n%s\n---\n%s", before, after)
	}
}
