package main

// Helpers for the end-to-end tests against real git hosts (gitolite over
// sshd, git http-backend behind lighttpd): docs/serving.md "Identity from
// the host", docs/operating.md "On gitolite" and "Behind git http-backend".

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gitplus/gitplus/fixtures"
)

// needHost skips the test when a host program is not installed (.ci/run
// installs them).
func needHost(t *testing.T, pkg string, names ...string) map[string]string {
	t.Helper()
	paths := map[string]string{}
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			for _, dir := range []string{"/usr/sbin", "/usr/lib/git-core"} {
				if fi, e := os.Stat(filepath.Join(dir, n)); e == nil && !fi.IsDir() {
					p, err = filepath.Join(dir, n), nil
					break
				}
			}
		}
		if err != nil {
			t.Skipf("%s (%s): not installed", pkg, n)
		}
		paths[n] = p
	}
	return paths
}

// freePort returns a loopback port the kernel just handed out.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startDaemon starts a host daemon in the foreground and stops it (by its
// own process id) when the test ends. It returns once ready reports the
// daemon serving; a daemon that exits first fails the test with its output.
func startDaemon(t *testing.T, name string, cmd *exec.Cmd, ready func() bool) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		logf.Close()
	})
	for deadline := time.Now().Add(20 * time.Second); ; {
		select {
		case <-exited:
			out, _ := os.ReadFile(logPath)
			t.Fatalf("%s exited at start:\n%s", name, out)
		default:
		}
		if ready() {
			return
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logPath)
			t.Fatalf("%s did not start serving:\n%s", name, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listening reports whether something accepts TCP connections on port.
func listening(port int) func() bool {
	return func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}
}

// newHostE2E is newE2E for a repository at origin that a host serves (it
// may exist already, as gitolite creates it): git+ init there, the members
// added, a work clone by path that signs its pushes as the admin.
// env is added to the environment of everything the world runs (the
// operator's commands on the server).
func newHostE2E(t *testing.T, origin string, env []string, members map[string][]string, extraKeys ...string) *e2e {
	t.Helper()
	w := &e2e{t: t, bin: fixtures.Binary(t), home: t.TempDir(), keys: map[string]fixtures.Key{}, origin: origin}
	w.env = append(fixtures.GitEnv(w.home), env...)
	keyDir := t.TempDir()
	w.keys["admin"] = fixtures.NewKey(t, keyDir, "admin")
	for name := range members {
		w.keys[name] = fixtures.NewKey(t, keyDir, name)
	}
	for _, name := range extraKeys {
		w.keys[name] = fixtures.NewKey(t, keyDir, name)
	}
	root := t.TempDir()
	out := w.mustGP("admin", root, "", "init", "--admin", "admin", origin)
	w.repoID = strings.TrimSpace(out)
	if _, err := uuid.Parse(w.repoID); err != nil {
		t.Fatalf("git+ init printed %q, not a RepoID", out)
	}
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		args := []string{"--repo", origin, "member", "add", n, "--key", w.keys[n].Path + ".pub"}
		for _, c := range members[n] {
			args = append(args, "--cap", c)
		}
		w.mustGP("admin", root, "", args...)
	}
	w.work = filepath.Join(root, "work")
	w.git(root, "clone", "-q", origin, w.work)
	w.signPushes(w.work, "admin")
	return w
}

// hostCase is what one host's acceptance run needs: how a host user
// pushes from the work clone, and the gitplus.pusher value that names the
// host's identity.
type hostCase struct {
	// push runs `git push --porcelain <url> args...` as the host user
	// (its key or password), unsigned; it returns git's output.
	push   func(user string, args ...string) (string, error)
	pusher string // gitplus.pusher
	member string // the host user who is the member alice
	carol  string // a host user who is no member
}

// seedProtected pushes main (signed by the admin, by path) and protects it,
// keeping requireKnownPusher on; it returns main's commit.
func seedProtected(t *testing.T, w *e2e) string {
	t.Helper()
	c0 := w.commit(nil, map[string]string{"README": "hello\n"}, "seed")
	w.expectAccepted(t, "refs/heads/main", c0, w.origin, c0+":refs/heads/main")
	rules := filepath.Join(t.TempDir(), "rules.json")
	writeRules(t, rules, `{"requireKnownPusher":true,"protected":{"refs/heads/main":{}}}`)
	w.mustGP("admin", w.work, "", "--repo", w.origin, "rules", "set", rules)
	return c0
}

// checkHostPushes is the acceptance run every host passes: a member's
// plain push is refused [unknown-pusher] until the operator names the
// host's identity, then accepted; a host user who is no member is refused
// naming them, unless the push is signed by a member (the certificate
// wins); a direct and a force push to protected main are refused
// with git+'s text at the client.
func checkHostPushes(t *testing.T, w *e2e, h hostCase, c0 string) {
	t.Helper()
	w.signPushes(w.work, "") // plain pushes from here on
	c1 := w.commit([]string{c0}, map[string]string{"a.txt": "a\n"}, "feature")
	w.gitRun(w.origin, "", nil, "config", "--unset-all", "gitplus.pusher")   // absent: nothing to do
	for _, ref := range []string{"refs/heads/feature", "refs/heads/carol"} { // from an earlier run
		w.gitRun(w.origin, "", nil, "update-ref", "-d", ref)
	}
	refused := func(what, out string, err error, ref, code string, says ...string) {
		t.Helper()
		if err == nil || !strings.Contains(out, "git+: refused "+ref+": ["+code) {
			t.Fatalf("%s: want [%s] for %s, got err %v:\n%s", what, code, ref, err, out)
		}
		for _, s := range says {
			if !strings.Contains(out, s) {
				t.Errorf("%s: the refusal does not say %q:\n%s", what, s, out)
			}
		}
	}

	before := w.refs()
	out, err := h.push(h.member, c1+":refs/heads/feature")
	refused("a member's push without gitplus.pusher", out, err, "refs/heads/feature", "unknown-pusher", "gitplus.pusher", "git push --signed")
	if strings.Contains(out, "member token issue") {
		t.Errorf("the advice on another host offers git+ serve's token:\n%s", out)
	}
	if after := w.refs(); after != before {
		t.Fatalf("a refused push changed refs:\n%s\n%s", before, after)
	}

	w.git(w.origin, "config", "gitplus.pusher", h.pusher)
	if out, err := h.push(h.member, c1+":refs/heads/feature"); err != nil || w.ref("refs/heads/feature") != c1 {
		t.Fatalf("a member's push with gitplus.pusher = %s: %v\n%s", h.pusher, err, out)
	}

	c2 := w.commit([]string{c1}, map[string]string{"c.txt": "c\n"}, "carol's")
	out, err = h.push(h.carol, c2+":refs/heads/carol")
	refused("a host user who is no member", out, err, "refs/heads/carol", "unknown-pusher", "git+ member add")
	if h.pusher != "ssh-auth-info" && !strings.Contains(out, `"`+h.carol+`"`) {
		t.Errorf("the refusal does not name the host user %q:\n%s", h.carol, out)
	}

	// A push certificate wins over the host's word: carol's login, alice's
	// signature.
	w.signPushes(w.work, "alice")
	if out, err := h.push(h.carol, c2+":refs/heads/carol"); err != nil || w.ref("refs/heads/carol") != c2 {
		t.Fatalf("a push through carol's login signed with alice's key: %v\n%s", err, out)
	}
	w.signPushes(w.work, "")

	out, err = h.push(h.member, c1+":refs/heads/main")
	refused("a direct push to protected main", out, err, "refs/heads/main", "not-a-pr-head")
	other := w.commit(nil, map[string]string{"x.txt": "x\n"}, "unrelated")
	out, err = h.push(h.member, "+"+other+":refs/heads/main")
	refused("a force push to protected main", out, err, "refs/heads/main", "") // not-a-pr-head or non-fast-forward
	if got := w.ref("refs/heads/main"); got != c0 {
		t.Fatalf("main moved to %s", got)
	}
}
