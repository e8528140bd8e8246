package main

// End-to-end tests of git+ on the hosts teams already run (docs/operating.md
// "Installing on gitolite", "Ownership and the hook user"): the host's own
// refusal reaching a verb's error, install refusing what would break the
// host, `git+ hook check`, and server-side verbs under gitolite.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
)

// TestE2EHostRefusalReachesVerb: a hook git+ chains refuses the push in
// the host's own words (as gitolite's update hook or a site's pre-receive
// does); the git+ verb's error carries those words, not only "hook
// declined".
func TestE2EHostRefusalReachesVerb(t *testing.T) {
	w := newE2E(t, nil, "bob")
	chained := filepath.Join(w.origin, "hooks", "pre-receive.chained")
	script := "#!/bin/sh\ncat >/dev/null\necho 'FATAL: W refs/hub/trust origin admin DENIED by fallthru' >&2\necho '(or you mis-spelled the reponame)' >&2\nexit 1\n"
	if err := os.WriteFile(chained, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, errs, code := w.gp("admin", t.TempDir(), "", "--repo", w.origin, "member", "add", "bob", "--key", w.keys["bob"].Path+".pub", "--cap", "hub.pr")
	if code == 0 {
		t.Fatalf("member add was accepted through a refusing host hook:\n%s", errs)
	}
	for _, want := range []string{"FATAL: W refs/hub/trust origin admin DENIED by fallthru", "(or you mis-spelled the reponame)"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the verb's error does not relay the host's line %q:\n%s", want, errs)
		}
	}
}

// throwawayUID owns the repositories of the ownership tests.
const throwawayUID = 54321

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root, to give a repository to another uid with chown")
	}
}

// ownedRepo is a bare repository owned by the throwaway uid.
func ownedRepo(t *testing.T) string {
	t.Helper()
	r := filepath.Join(publicDir(t), "r.git")
	fixtures.Git(t, filepath.Dir(r), "init", "-q", "--bare", r)
	chownTree(t, r, throwawayUID)
	return r
}

func chownTree(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// notOwnedBy lists the entries under dir not owned by uid.
func notOwnedBy(t *testing.T, dir string, uid int) []string {
	t.Helper()
	var bad []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
			bad = append(bad, fmt.Sprintf("%s (uid %d)", p, st.Uid))
		}
		return nil
	})
	return bad
}

// publicDir is a temporary directory every user can search (t.TempDir's
// are root's alone).
func publicDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gitplus-public-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("skipped: %s is not searchable by other users", d)
		}
	}
	return dir
}

// publicBinaries copies git+ and git+hook into a directory every user can
// search (the test build's directory is root's alone), as an operator
// installs them into /usr/local/bin.
func publicBinaries(t *testing.T) string {
	t.Helper()
	dir := publicDir(t)
	for _, src := range []string{fixtures.Binary(t), fixtures.HookBinary(t)} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "git+")
}

// runBin runs bin with the test's git environment.
func runBin(t *testing.T, bin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(fixtures.GitEnv(t.TempDir()), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestE2EInstallAsAnotherUser: root installing into (or initialising) a
// repository another user owns is refused with the reason and leaves
// nothing behind; --chown installs and hands everything written to the
// owner; a binary the owner cannot run is refused; and git's
// safe.directory refusal is reported as dubious ownership.
func TestE2EInstallAsAnotherUser(t *testing.T) {
	needRoot(t)
	bin := fixtures.Binary(t)
	r := ownedRepo(t)
	key := fixtures.NewKey(t, t.TempDir(), "admin")

	_, errs, code := runBin(t, bin, nil, "hook", "install", "--repo", r)
	if code == 0 || !strings.Contains(errs, "is owned by uid 54321") || !strings.Contains(errs, "--chown") {
		t.Fatalf("install as root into uid %d's repository: exit %d\n%s", throwawayUID, code, errs)
	}
	_, errs, code = runBin(t, bin, []string{"GITPLUS_KEY=" + key.Path}, "init", r)
	if code == 0 || !strings.Contains(errs, "is owned by uid 54321") {
		t.Fatalf("init as root of uid %d's repository: exit %d\n%s", throwawayUID, code, errs)
	}
	if bad := notOwnedBy(t, r, throwawayUID); len(bad) > 0 {
		t.Fatalf("a refused install left files the owner does not own: %v", bad)
	}
	if _, err := os.Stat(filepath.Join(r, "hooks", "pre-receive")); err == nil {
		t.Fatal("a refused install wrote hooks/pre-receive")
	}

	// The binary lives where the owner cannot run it (the test build's
	// private directory): refused even with --chown.
	_, errs, code = runBin(t, bin, nil, "hook", "install", "--repo", r, "--chown")
	if code == 0 || !strings.Contains(errs, "cannot run") {
		t.Fatalf("install of a binary the owner cannot run: exit %d\n%s", code, errs)
	}
	if bad := notOwnedBy(t, r, throwawayUID); len(bad) > 0 {
		t.Fatalf("a refused install left files the owner does not own: %v", bad)
	}

	// git's own refusal, from a verb that asks git to find the repository.
	_, errs, code = runBin(t, bin, nil, "--repo", r, "pr", "list")
	if code == 0 || !strings.Contains(errs, "dubious ownership") || strings.Contains(errs, "not a git repository") {
		t.Fatalf("a verb on another user's repository: exit %d\n%s", code, errs)
	}

	// --chown with binaries the owner can run: installed, everything the
	// owner's, and git+ init too.
	pub := publicBinaries(t)
	_, errs, code = runBin(t, pub, []string{"GITPLUS_KEY=" + key.Path}, "init", "--chown", r)
	if code != 0 {
		t.Fatalf("init --chown: exit %d\n%s", code, errs)
	}
	if bad := notOwnedBy(t, r, throwawayUID); len(bad) > 0 {
		t.Fatalf("init --chown left files the owner does not own: %v", bad)
	}
	if data, err := os.ReadFile(filepath.Join(r, "hooks", "pre-receive")); err != nil || !strings.Contains(string(data), filepath.Dir(pub)) {
		t.Fatalf("init --chown did not install the hooks running %s: %v\n%s", pub, err, data)
	}
	// init's rules require a known pusher and gitplus.pusher is unset:
	// the boundary is in place, with that warning (exit 3).
	out, errs, code := runBin(t, pub, nil, "hook", "check", "--repo", r)
	if code != 3 || !strings.Contains(out, "hook user: uid 54321") || !strings.Contains(out, "identity source (gitplus.pusher): none") ||
		!strings.Contains(out, "warning: the rules require a known pusher") {
		t.Fatalf("hook check after init --chown: exit %d\n%s%s", code, out, errs)
	}
}

// gitoliteDriver writes a multi-hook driver as gitolite writes one (its
// loop over the hook's numbered companions) into dir and points
// repo's pre-receive at it, with the companions given (name: script).
func gitoliteDriver(t *testing.T, dir, repo string, companions map[string]string) string {
	t.Helper()
	driver := filepath.Join(dir, "multi-hook-driver")
	script := "#!/bin/sh\nstdin=`cat`\nfor h in $0.*; do\n    [ -x $h ] || continue\n    echo \"$stdin\" | $h || exit 1\ndone\n"
	if err := os.WriteFile(driver, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	pre := filepath.Join(repo, "hooks", "pre-receive")
	os.Remove(pre)
	if err := os.Symlink(driver, pre); err != nil {
		t.Fatal(err)
	}
	for name, body := range companions {
		if err := os.WriteFile(pre+"."+name, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return driver
}

// TestE2EHookCheck: git+ hook check passes on an installed repository and
// fails, saying what to do, once pre-receive is replaced the way gitolite
// replaces it (its driver, running only another repo-specific hook); a
// driver that runs git+ passes again.
func TestE2EHookCheck(t *testing.T) {
	w := newE2E(t, nil)
	w.git(w.origin, "config", "gitplus.pusher", "env:REMOTE_USER") // no warning about the pusher here (TestE2EHookCheckWarnsPusher)
	out, errs, code := w.gp("", t.TempDir(), "", "hook", "check", "--repo", w.origin)
	if code != 0 || !strings.Contains(out, "reaches git+ directly") || !strings.Contains(out, "ok: the boundary is in place") {
		t.Fatalf("hook check on an installed repository: exit %d\n%s%s", code, out, errs)
	}
	driver := gitoliteDriver(t, t.TempDir(), w.origin, map[string]string{"h00-lint": "cat >/dev/null\nexit 0\n"})
	out, errs, code = w.gp("", t.TempDir(), "", "hook", "check", "--repo", w.origin)
	if code != 1 || !strings.Contains(out, "problem: pushes are not judged") || !strings.Contains(out, "gitolite's hook driver") ||
		!strings.Contains(out, "pre-receive.h00-lint") {
		t.Fatalf("hook check after gitolite replaced pre-receive: exit %d\n%s%s", code, out, errs)
	}
	gitoliteDriver(t, filepath.Dir(driver), w.origin, map[string]string{"h01-gitplus": "exec '" + w.bin + "' hook pre-receive\n"})
	out, errs, code = w.gp("", t.TempDir(), "", "hook", "check", "--repo", w.origin)
	if code != 0 || !strings.Contains(out, "through gitolite's repo-specific hook driver (pre-receive.h01-gitplus)") {
		t.Fatalf("hook check with git+ as a gitolite repo-specific hook: exit %d\n%s%s", code, out, errs)
	}
	// A push is judged through the driver: an unsigned push is refused.
	w.signPushes(w.work, "")
	w.git(w.work, "commit", "-q", "--allow-empty", "-m", "unsigned")
	if _, errs, err := w.gitRun(w.work, "", nil, "push", "-q", "origin", "HEAD:refs/heads/main"); err == nil || !strings.Contains(errs, "git+: refused refs/heads/main") {
		t.Fatalf("an unsigned push to main through gitolite's driver running git+ was not refused by git+: %v\n%s", err, errs)
	}
}

// TestE2EInstallKeepsGitoliteDriver: install into a repository whose
// pre-receive is gitolite's driver neither renames the driver into
// .chained nor writes a hook; it prints gitolite's way (a repo-specific
// hook) and fails; once the driver runs git+, install sets the
// configuration and succeeds, the driver still in place.
func TestE2EInstallKeepsGitoliteDriver(t *testing.T) {
	bin := fixtures.Binary(t)
	r := filepath.Join(t.TempDir(), "r.git")
	fixtures.Git(t, filepath.Dir(r), "init", "-q", "--bare", r)
	driver := gitoliteDriver(t, t.TempDir(), r, map[string]string{"h00-lint": "cat >/dev/null\nexit 0\n"})
	pre := filepath.Join(r, "hooks", "pre-receive")

	_, errs, code := runBin(t, bin, nil, "hook", "install", "--repo", r)
	if code == 0 || !strings.Contains(errs, "repo-specific hook") || !strings.Contains(errs, "option hook.pre-receive  = gitplus-pre-receive") ||
		!strings.Contains(errs, "'repo-specific-hooks'") {
		t.Fatalf("install over gitolite's driver: exit %d\n%s", code, errs)
	}
	if target, err := os.Readlink(pre); err != nil || target != driver {
		t.Fatalf("pre-receive is no longer gitolite's driver: %q, %v", target, err)
	}
	for _, p := range []string{pre + ".chained", filepath.Join(r, "hooks", "post-receive")} {
		if _, err := os.Lstat(p); err == nil {
			t.Fatalf("install wrote %s into a gitolite repository", p)
		}
	}

	gitoliteDriver(t, filepath.Dir(driver), r, map[string]string{"h01-gitplus": "exec '" + bin + "' hook pre-receive\n"})
	_, errs, code = runBin(t, bin, nil, "hook", "install", "--repo", r)
	if code != 0 || !strings.Contains(errs, "gitolite manages the hooks") {
		t.Fatalf("install with git+ as gitolite's repo-specific hook: exit %d\n%s", code, errs)
	}
	if target, err := os.Readlink(pre); err != nil || target != driver {
		t.Fatalf("pre-receive is no longer gitolite's driver: %q, %v", target, err)
	}
	if v := fixtures.Git(t, r, "config", "receive.advertisePushOptions"); v != "true" {
		t.Fatalf("install did not set the configuration: receive.advertisePushOptions = %q", v)
	}
}

// gitoliteAdmin is a real gitolite (the gitolite user is the test's user,
// HOME a temporary directory) with repo-specific hooks enabled and
// LOCAL_CODE in $HOME/local, as gitolite's documentation sets them.
type gitoliteAdmin struct {
	t    *testing.T
	home string
	env  []string
	repo string // repositories/testing.git
}

func newGitoliteAdmin(t *testing.T) *gitoliteAdmin {
	t.Helper()
	if _, err := exec.LookPath("gitolite"); err != nil {
		t.Skip("skipped: gitolite is not on PATH (install gitolite3 to run this test)")
	}
	h := &gitoliteAdmin{t: t, home: t.TempDir()}
	h.env = fixtures.GitEnv(h.home)
	key := fixtures.NewKey(t, t.TempDir(), "gladmin")
	h.run("gitolite", "setup", "-pk", key.Path+".pub")
	enableRepoSpecificHooks(t, h.home)
	h.repo = filepath.Join(h.home, "repositories", "testing.git")
	return h
}

// enableRepoSpecificHooks turns on, in the gitolite rc under home,
// LOCAL_CODE in $HOME/local and the repo-specific-hooks feature, as
// gitolite's documentation sets them, and makes the directory those hooks
// live in. It skips the test when the rc lacks the expected lines.
func enableRepoSpecificHooks(t *testing.T, home string) {
	t.Helper()
	rc := filepath.Join(home, ".gitolite.rc")
	data, err := os.ReadFile(rc)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), `# LOCAL_CODE                =>  "$ENV{HOME}/local",`, `LOCAL_CODE                =>  "$ENV{HOME}/local",`, 1)
	s = strings.Replace(s, `# 'repo-specific-hooks',`, `'repo-specific-hooks',`, 1)
	if s == string(data) || !strings.Contains(s, "\n            'repo-specific-hooks',") {
		t.Skip("skipped: this gitolite's rc file does not have the expected LOCAL_CODE and repo-specific-hooks lines")
	}
	if err := os.WriteFile(rc, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, "local", "hooks", "repo-specific"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func (h *gitoliteAdmin) run(args ...string) string {
	h.t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = h.env
	cmd.Dir = h.home
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// hook writes the repo-specific hook name into LOCAL_CODE.
func (h *gitoliteAdmin) hook(name, script string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.home, "local", "hooks", "repo-specific", name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		h.t.Fatal(err)
	}
}

// options sets the testing repository's options in gitolite.conf and
// compiles, as a push of gitolite-admin does.
func (h *gitoliteAdmin) options(lines ...string) {
	h.t.Helper()
	conf := "repo gitolite-admin\n    RW+     =   gladmin\n\nrepo testing\n    RW+     =   @all\n"
	for _, l := range lines {
		conf += "    " + l + "\n"
	}
	if err := os.WriteFile(filepath.Join(h.home, ".gitolite", "conf", "gitolite.conf"), []byte(conf), 0o600); err != nil {
		h.t.Fatal(err)
	}
	h.run("gitolite", "compile")
	h.run("gitolite", "trigger", "POST_COMPILE")
}

// TestE2EGitolite: git+ on a real gitolite. A repo-specific hook that is
// not git+ makes gitolite's driver the pre-receive: hook check fails,
// install and init refuse and leave the driver alone. git+ added
// gitolite's way (a repo-specific hook) survives gitolite's compiles;
// init then works, and a server-side verb by path is refused with
// gitolite's own words and the command that works, and works with it.
func TestE2EGitolite(t *testing.T) {
	h := newGitoliteAdmin(t)
	w := &e2e{t: t, bin: fixtures.Binary(t), env: h.env, keys: map[string]fixtures.Key{}}
	w.keys["admin"] = fixtures.NewKey(t, t.TempDir(), "admin")
	w.keys["bob"] = fixtures.NewKey(t, t.TempDir(), "bob")
	h.hook("lint", "cat >/dev/null\nexit 0\n")
	h.hook("gitplus-pre-receive", "exec '"+w.bin+"' hook pre-receive\n")
	h.hook("gitplus-post-receive", "exec '"+w.bin+"' hook post-receive\n")
	h.options("option hook.pre-receive = lint")
	pre := filepath.Join(h.repo, "hooks", "pre-receive")
	driver, err := os.Readlink(pre)
	if err != nil || filepath.Base(driver) != "multi-hook-driver" {
		t.Fatalf("gitolite did not install its driver as pre-receive: %q, %v", driver, err)
	}

	out, errs, code := w.gp("", h.home, "", "hook", "check", "--repo", h.repo)
	if code != 1 || !strings.Contains(out, "problem: pushes are not judged") || !strings.Contains(out, "host: gitolite") {
		t.Fatalf("hook check with only another repo-specific hook: exit %d\n%s%s", code, out, errs)
	}
	_, errs, code = w.gp("admin", h.home, "", "hook", "install", "--repo", h.repo)
	if code == 0 || !strings.Contains(errs, "option hook.pre-receive  = gitplus-pre-receive") {
		t.Fatalf("install over gitolite's driver: exit %d\n%s", code, errs)
	}
	_, errs, code = w.gp("admin", h.home, "", "init", h.repo)
	if code == 0 || !strings.Contains(errs, "repo-specific hook") {
		t.Fatalf("init of a gitolite repository whose pre-receive does not reach git+: exit %d\n%s", code, errs)
	}
	if target, err := os.Readlink(pre); err != nil || target != driver {
		t.Fatalf("pre-receive is no longer gitolite's driver: %q, %v", target, err)
	}
	if _, err := os.Lstat(pre + ".chained"); err == nil {
		t.Fatal("install renamed gitolite's driver into pre-receive.chained")
	}
	if refs := fixtures.Git(t, h.repo, "for-each-ref", "refs/hub/"); refs != "" {
		t.Fatalf("a refused init wrote %s", refs)
	}

	// gitolite's way: git+ as a repo-specific hook, kept by compiles.
	h.options("option hook.pre-receive = lint gitplus-pre-receive", "option hook.post-receive = gitplus-post-receive")
	w.mustGP("admin", h.home, "", "init", h.repo)
	h.options("option hook.pre-receive = lint gitplus-pre-receive", "option hook.post-receive = gitplus-post-receive")
	// init's rules require a known pusher: without gitplus.pusher, every
	// plain push through gitolite would be refused, and check warns.
	out, errs, code = w.gp("", h.home, "", "hook", "check", "--repo", h.repo)
	if code != 3 || !strings.Contains(out, "through gitolite's repo-specific hook driver (pre-receive.h01-gitplus-pre-receive)") ||
		!strings.Contains(out, "warning: the rules require a known pusher") || !strings.Contains(out, "every plain push through gitolite will be refused [unknown-pusher]") {
		t.Fatalf("hook check after gitolite's compile with git+ as a repo-specific hook, gitplus.pusher unset: exit %d\n%s%s", code, out, errs)
	}
	fixtures.Git(t, h.repo, "config", "gitplus.pusher", "ssh-auth-info")
	out, errs, code = w.gp("", h.home, "", "hook", "check", "--repo", h.repo)
	if code != 0 || !strings.Contains(out, "ok: the boundary is in place") {
		t.Fatalf("hook check with git+ as a repo-specific hook and gitplus.pusher set: exit %d\n%s%s", code, out, errs)
	}
	// gitolite.conf no longer names git+'s pre-receive: gitolite leaves the
	// link (it rewrites a hook's links only for repositories that declare
	// it), so pushes are judged until its next run for the repository
	// deletes the link; check warns now.
	h.options("option hook.post-receive = gitplus-post-receive")
	if _, err := os.Lstat(filepath.Join(h.repo, "hooks", "pre-receive.h01-gitplus-pre-receive")); err != nil {
		t.Fatalf("gitolite removed the link at once (the warning's premise does not hold here): %v", err)
	}
	out, errs, code = w.gp("", h.home, "", "hook", "check", "--repo", h.repo)
	if code != 3 || !strings.Contains(out, "warning: gitolite's configuration no longer names gitplus-pre-receive in option hook.pre-receive for repo testing") {
		t.Fatalf("hook check with git+'s pre-receive link no longer declared in gitolite.conf: exit %d\n%s%s", code, out, errs)
	}
	h.options("option hook.pre-receive = lint gitplus-pre-receive", "option hook.post-receive = gitplus-post-receive")

	// A server-side verb by path: gitolite's update hook takes the push
	// only as gitolite's own server-side push.
	add := []string{"--repo", h.repo, "member", "add", "bob", "--key", w.keys["bob"].Path + ".pub", "--cap", "hub.pr"}
	_, errs, code = w.gp("admin", h.home, "", add...)
	if code == 0 || !strings.Contains(errs, "Gitolite/Hooks/Update.pm") || !strings.Contains(errs, "GL_BYPASS_ACCESS_CHECKS=1") {
		t.Fatalf("member add by path without gitolite's environment: exit %d\n%s", code, errs)
	}
	libdir := strings.TrimSpace(h.run("gitolite", "query-rc", "GL_LIBDIR"))
	w.env = append(append([]string{}, h.env...), "GL_BYPASS_ACCESS_CHECKS=1", "GL_LIBDIR="+libdir)
	w.mustGP("admin", h.home, "", add...)
	w.mustGP("admin", h.home, "", "--repo", h.repo, "queue", "open", "--target", "main")
	w.mustGP("admin", h.home, "", "--repo", h.repo, "queue", "run", "--target", "main")
	w.mustGP("admin", h.home, "", "--repo", h.repo, "wake", "--sweep")
	if out := w.mustGP("", h.home, "", "--repo", h.repo, "member", "list"); !strings.Contains(out, "bob") {
		t.Fatalf("bob is not a member after member add through gitolite:\n%s", out)
	}
}

// TestE2EInstallSharedRepository: a member of the group sharing a
// repository (core.sharedRepository) may install into it though another
// member owns it: its hooks run as whoever pushes.
func TestE2EInstallSharedRepository(t *testing.T) {
	needRoot(t)
	pub := publicBinaries(t)
	r := filepath.Join(publicDir(t), "shared.git")
	fixtures.Git(t, filepath.Dir(r), "init", "-q", "--bare", "--shared=group", r)
	chownTree(t, r, throwawayUID)
	cmd := exec.Command(pub, "hook", "install", "--repo", r)
	cmd.Env = append(fixtures.GitEnv(publicDir(t)), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: throwawayUID + 1, Gid: throwawayUID}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install by another member of the sharing group: %v\n%s", err, out)
	}
}
