package main

// git+ on gitolite (docs/operating.md "On gitolite"): a real gitolite3
// behind a real sshd on a loopback port, with its own host key, its own
// sshd_config (ExposeAuthInfo yes) and gitolite's home in a temporary
// directory; git+'s hooks in the repository gitolite made.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/opstatus"
	"github.com/gitplus/gitplus/hooks/wake"
)

// gitoliteHost is a running gitolite: its home (the hosting user's $HOME
// for gitolite), the sshd port and the login user.
type gitoliteHost struct {
	home, user string
	libdir     string // GL_LIBDIR, for gitolite's update hook in pushes by path
	port       int
	knownHosts string
	env        []string // the gitolite user's environment (HOME)
}

// configure rewrites gitolite.conf with repo's options and compiles it, as
// a push of gitolite-admin does (gitolite setup runs the triggers too).
func (h *gitoliteHost) configure(t *testing.T, repo string, options ...string) {
	t.Helper()
	conf := "repo gitolite-admin\n    RW+ = gladmin\nrepo " + repo + "\n    RW+ = @all\n"
	for _, o := range options {
		conf += "    " + o + "\n"
	}
	if err := os.WriteFile(filepath.Join(h.home, ".gitolite", "conf", "gitolite.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"compile"}, {"trigger", "POST_COMPILE"}} {
		cmd := exec.Command("gitolite", args...)
		cmd.Env = h.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gitolite %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// startGitolite sets gitolite up in a temporary home with the given users'
// public keys and one repository, repo, that every user may write, and
// starts sshd for it.
func startGitolite(t *testing.T, repo string, users map[string]string) *gitoliteHost {
	t.Helper()
	needHost(t, "gitolite3", "gitolite")
	needHost(t, "openssh-client", "ssh")
	sshd := needHost(t, "openssh-server", "sshd")["sshd"]
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if u.Uid == "0" {
		// sshd running as root needs its privilege separation directory,
		// which the package's service unit would create.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Skipf("sshd: cannot create /run/sshd: %v", err)
		}
	}
	dir := t.TempDir()
	h := &gitoliteHost{home: filepath.Join(dir, "home"), user: u.Username, port: freePort(t)}
	os.MkdirAll(h.home, 0o700)
	env := append(fixtures.GitEnv(h.home), "HOME="+h.home)
	h.env = env
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("gitolite", args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gitolite %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	admin := fixtures.NewKey(t, dir, "gladmin")
	run("setup", "-pk", admin.Path+".pub")
	keydir := filepath.Join(h.home, ".gitolite", "keydir")
	for name, pub := range users {
		data, err := os.ReadFile(pub)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(keydir, name+".pub"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// git+ goes in gitolite's way (docs/operating.md "Installing on
	// gitolite"): repo-specific hooks, enabled in the rc, kept in
	// LOCAL_CODE and named by the repository's options, so gitolite's
	// compiles keep them.
	enableRepoSpecificHooks(t, h.home) // e2e_hostinstall_test.go
	hooksDir := filepath.Join(h.home, "local", "hooks", "repo-specific")
	for _, name := range []string{"pre-receive", "post-receive"} {
		script := fmt.Sprintf("#!/bin/sh\nexec '%s' hook %s\n", fixtures.Binary(t), name)
		if err := os.WriteFile(filepath.Join(hooksDir, "gitplus-"+name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Another repo-specific hook, which an admin may put in git+'s place.
	if err := os.WriteFile(filepath.Join(hooksDir, "lint"), []byte("#!/bin/sh\ncat >/dev/null\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := "repo gitolite-admin\n    RW+ = gladmin\nrepo " + repo + "\n    RW+ = @all\n" +
		"    option hook.pre-receive = gitplus-pre-receive\n    option hook.post-receive = gitplus-post-receive\n"
	if err := os.WriteFile(filepath.Join(h.home, ".gitolite", "conf", "gitolite.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	run("setup")
	run("trigger", "POST_COMPILE")
	cmd := exec.Command("gitolite", "query-rc", "GL_LIBDIR")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gitolite query-rc GL_LIBDIR: %v", err)
	}
	h.libdir = strings.TrimSpace(string(out))

	hostKey := fixtures.NewKey(t, dir, "hostkey")
	pub, _ := os.ReadFile(hostKey.Path + ".pub")
	h.knownHosts = filepath.Join(dir, "known_hosts")
	os.WriteFile(h.knownHosts, []byte(fmt.Sprintf("[127.0.0.1]:%d %s", h.port, pub)), 0o644)
	cfg := filepath.Join(dir, "sshd_config")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile %s
AuthorizedKeysFile %s
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
AllowUsers %s
ExposeAuthInfo yes
SetEnv HOME=%s
`, h.port, hostKey.Path, filepath.Join(dir, "sshd.pid"), filepath.Join(h.home, ".ssh", "authorized_keys"), h.user, h.home)), 0o644)
	startDaemon(t, "sshd", exec.Command(sshd, "-D", "-e", "-f", cfg), listening(h.port))
	return h
}

// sshCommand is GIT_SSH_COMMAND logging in with key.
func (h *gitoliteHost) sshCommand(key string) string {
	return fmt.Sprintf("ssh -F /dev/null -p %d -i %s -o IdentitiesOnly=yes -o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes -o BatchMode=yes",
		h.port, key, h.knownHosts)
}

func (h *gitoliteHost) url(repo string) string {
	return fmt.Sprintf("ssh://%s@127.0.0.1:%d/%s", h.user, h.port, repo)
}

// TestHostGitolite: a member's plain git push through gitolite is judged
// with the key sshd authenticated (gitplus.pusher = ssh-auth-info), then
// with gitolite's GL_USER (env:GL_USER); then a pull request lands
// unattended (checkHostFlow).
func TestHostGitolite(t *testing.T) {
	t.Parallel()
	needHost(t, "gitolite3", "gitolite")
	needHost(t, "openssh-server", "sshd")
	keys := t.TempDir()
	alice, carol := fixtures.NewKey(t, keys, "alice"), fixtures.NewKey(t, keys, "carol")
	h := startGitolite(t, "team", map[string]string{"alice": alice.Path + ".pub", "carol": carol.Path + ".pub"})
	origin := filepath.Join(h.home, "repositories", "team.git")

	// The operator's pushes by path on the server pass gitolite's own
	// update hook as `gitolite push` makes them: with its bypass and its
	// library (gitolite has no user for them).
	w := newHostE2E(t, origin, []string{"GL_BYPASS_ACCESS_CHECKS=1", "GL_LIBDIR=" + h.libdir, "HOME=" + h.home}, nil)
	// The boundary is in place through gitolite's driver; init's rules
	// require a known pusher, which gitolite gives only once
	// gitplus.pusher names its source: check warns (exit 3).
	if out, errs, code := w.gp("admin", w.work, "", "--repo", origin, "hook", "check"); code != 3 || !strings.Contains(out, "reaches git+ through gitolite's repo-specific hook driver") ||
		!strings.Contains(out, "warning: the rules require a known pusher") {
		t.Fatalf("hook check on gitolite's repository: exit %d\n%s%s", code, out, errs)
	}
	// alice is a member holding the very key she logs in to gitolite with.
	w.keys["alice"] = alice
	w.mustGP("admin", w.work, "", "--repo", origin, "member", "add", "alice", "--key", alice.Path+".pub", "--cap", "source.push", "--cap", "hub.pr", "--cap", "hub.queue")
	c0 := seedProtected(t, w)
	keyOf := map[string]string{"alice": alice.Path, "carol": carol.Path}
	push := func(who string, args ...string) (string, error) {
		_, errs, err := w.gitRun(w.work, "", []string{"GIT_SSH_COMMAND=" + h.sshCommand(keyOf[who])}, append([]string{"push", "--porcelain", h.url("team")}, args...)...)
		return errs, err
	}
	t.Run("ssh-auth-info", func(t *testing.T) {
		checkHostPushes(t, w, hostCase{push: push, pusher: "ssh-auth-info", member: "alice", carol: "carol"}, c0)
	})
	t.Run("env:GL_USER", func(t *testing.T) {
		checkHostPushes(t, w, hostCase{push: push, pusher: "env:GL_USER", member: "alice", carol: "carol"}, c0)
	})
	// The server's own pushes into "." pass gitolite's update hook with
	// its bypass (docs/operating.md "On gitolite").
	t.Run("unattended", func(t *testing.T) {
		checkHostFlow(t, w, hostFlow{url: h.url("team"), env: []string{"GIT_SSH_COMMAND=" + h.sshCommand(alice.Path)},
			wakePre: []string{"env", "GL_BYPASS_ACCESS_CHECKS=1"}}, c0)
	})
	// A wake rule that fails is seen in a clone over ssh: queue show
	// reads the status the server publishes.
	t.Run("wake failure", func(t *testing.T) {
		checkHostWakeFailure(t, w, h.url("team"), []string{"GIT_SSH_COMMAND=" + h.sshCommand(alice.Path)}, push)
	})
	// An admin gives the repository another pre-receive in git+'s place:
	// gitolite deletes git+'s link, its post-receive still runs, and an
	// unreviewed push to main raises the alarm everywhere.
	t.Run("unjudged", func(t *testing.T) {
		sink := newWebhookSink(t)
		writeJSONFile(t, filepath.Join(origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{{URL: sink.srv.URL, Secret: "s"}}})
		t.Cleanup(func() { stopWorker(t, origin) })
		h.configure(t, "team", "option hook.pre-receive = lint", "option hook.post-receive = gitplus-post-receive")
		if out, errs, code := w.gp("admin", w.work, "", "--repo", origin, "hook", "check"); code != 1 || !strings.Contains(out, "problem: pushes are not judged") {
			t.Fatalf("hook check with git+ dropped from pre-receive: exit %d\n%s%s", code, out, errs)
		}
		main := w.git(origin, "rev-parse", "refs/heads/main")
		w.git(w.work, "fetch", "-q", origin, "refs/heads/main") // the landing, into the clone the commit is made in
		c := w.commit([]string{main}, map[string]string{"unreviewed.txt": "no review\n"}, "unreviewed")
		out, err := push("alice", c+":refs/heads/main")
		if err != nil || w.ref("refs/heads/main") != c {
			t.Fatalf("the unjudged push did not go through: %v\n%s", err, out)
		}
		unjudgedAlarm(t, origin, out, "refs/heads/main", c, sink)
		if a, _ := opstatus.ReadUnjudged(origin); len(a) != 1 || a[0].Pusher != "GL_USER=alice" {
			t.Fatalf("the alarm records: %+v", a)
		}
		h.configure(t, "team", "option hook.pre-receive = gitplus-pre-receive", "option hook.post-receive = gitplus-post-receive")
	})
}

// checkHostWakeFailure: a wake rule that fails on a branch push through
// the host is shown by queue show in a fresh clone of the host's URL.
func checkHostWakeFailure(t *testing.T, w *e2e, url string, env []string, push func(string, ...string) (string, error)) {
	t.Helper()
	p := filepath.Join(w.origin, config.WakeFile)
	saved, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer os.WriteFile(p, saved, 0o644)
	writeJSONFile(t, p, wake.WakeConfig{Rules: []wake.WakeRule{
		{Name: "lint", Ref: "refs/heads/*", On: []string{"*"}, Run: []string{"sh", "-c", "echo 'lint: no runner configured' >&2; exit 1"}}}})
	c := w.commit(nil, map[string]string{"w.txt": "w\n"}, "wake")
	if out, err := push("alice", c+":refs/heads/wake-me"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	if !waitFor(20*time.Second, func() bool {
		fs, _ := opstatus.WakeFailingIn(w.origin)
		return len(fs) == 1 && len(opstatus.PublishedWakeFailures(w.origin)) == 1
	}) {
		t.Fatal("the wake rule's failure was not recorded")
	}
	dir := filepath.Join(t.TempDir(), "c")
	clientEnv := append(append([]string{}, w.env...), env...)
	cmd := exec.Command("git", "clone", "-q", url, dir)
	cmd.Env = clientEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone %s: %v\n%s", url, err, out)
	}
	cmd = exec.Command(w.bin, "queue", "show", "--target", "main", "--json")
	cmd.Dir, cmd.Env = dir, clientEnv
	out, err := cmd.Output()
	var v struct {
		WakeFailures []struct{ Rule, Line string } `json:"wakeFailures"`
	}
	if err != nil || json.Unmarshal(out, &v) != nil || len(v.WakeFailures) != 1 || v.WakeFailures[0].Rule != "lint" || v.WakeFailures[0].Line != "lint: no runner configured" {
		t.Fatalf("queue show --json in a clone of %s: %v\n%s", url, err, out)
	}
}
