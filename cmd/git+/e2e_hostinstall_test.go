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
	out, errs, code := runBin(t, pub, nil, "hook", "check", "--repo", r)
	if code != 0 || !strings.Contains(out, "hook user: uid 54321") || !strings.Contains(out, "identity source (gitplus.pusher): none") {
		t.Fatalf("hook check after init --chown: exit %d\n%s%s", code, out, errs)
	}
}
