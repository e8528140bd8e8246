package install

// git+ on a gitolite host (docs/operating.md "Installing on gitolite").
// gitolite owns its repositories' hooks: it links its update hook into
// every repository, and with the repo-specific-hooks feature it points a
// repository's pre-receive (and post-receive) at its multi-hook driver,
// which runs hooks/pre-receive.hNN-<name> in order — and it rewrites those
// links on every compile. A git+ script written into hooks/pre-receive
// survives only until an admin gives the repository any repo-specific
// hook; then gitolite replaces it with the driver and pushes are no longer
// judged.
//
// Decisions:
//   - A repository is gitolite's when its update hook is gitolite's
//     (gitio.GitoliteUpdateHook) or its pre-receive is gitolite's driver.
//   - Install never writes hook scripts into a gitolite repository and
//     never renames gitolite's driver into .chained: git+ goes in as a
//     repo-specific hook, gitolite's own way, which its compiles keep
//     (GitoliteAdvice says how). When the driver already reaches git+,
//     Install only sets the repository's configuration.
//   - The driver's hooks are found as the driver finds them: executable
//     files named pre-receive.<anything> beside it, in name order.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gitplus/gitplus/receive/gitio"
)

// ErrGitolite reports a gitolite repository whose pre-receive does not
// reach git+: install git+ as a gitolite repo-specific hook.
var ErrGitolite = errors.New("git+ is not yet gitolite's repo-specific hook here")

// gitoliteDriverText is a line of gitolite's multi-hook driver (the loop
// over the hook's numbered companions), how a driver at another path
// (gitolite.rc MULTI_HOOK_DRIVER) is recognised.
const gitoliteDriverText = "for h in $0.*"

// IsGitoliteDriver reports whether the hook at path is gitolite's
// multi-hook driver: a symlink to multi-hook-driver, or a script with its
// loop.
func IsGitoliteDriver(path string) bool {
	if t, err := os.Readlink(path); err == nil && filepath.Base(t) == "multi-hook-driver" {
		return true
	}
	data, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(data), gitoliteDriverText)
}

// isGitolite reports whether gitolite manages the repository whose hooks
// directory is hooksDir.
func isGitolite(gitDir, hooksDir string) bool {
	return gitio.GitoliteUpdateHook(gitDir) || IsGitoliteDriver(filepath.Join(hooksDir, "pre-receive"))
}

// driverHooks are the hooks gitolite's driver at hooksDir/name runs, in
// order: executable files named name.<suffix> (.chained and .sample
// included, as the driver's glob includes them).
func driverHooks(hooksDir, name string) []string {
	ents, err := os.ReadDir(hooksDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), name+".") {
			continue
		}
		p := filepath.Join(hooksDir, e.Name())
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0 {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// GitoliteAdvice is what to do to run git+ on the gitolite repository
// gitDir: git+ as a repo-specific hook (gitolite.rc, the hook files in
// LOCAL_CODE, the option in gitolite.conf), then install again.
func GitoliteAdvice(gitDir, now, bin, lean string) string {
	pre := shellQuote(bin) + " hook pre-receive"
	if lean != "" {
		pre = shellQuote(lean) + " pre-receive"
	}
	name := strings.TrimSuffix(filepath.Base(gitDir), ".git")
	if _, rel, ok := strings.Cut(filepath.ToSlash(gitDir), "/repositories/"); ok { // gitolite's repository base
		name = strings.TrimSuffix(rel, ".git")
	}
	return fmt.Sprintf(`gitolite manages the hooks of %[1]s (now: %[5]s) and replaces a hook written there on its next compile; add git+ as a gitolite repo-specific hook instead:
  1. in the gitolite user's ~/.gitolite.rc: LOCAL_CODE => "$rc{GL_ADMIN_BASE}/local" (or "$ENV{HOME}/local"), and 'repo-specific-hooks' in the ENABLE list;
  2. in LOCAL_CODE (local/ of the gitolite-admin clone), two executable scripts:
       hooks/repo-specific/gitplus-pre-receive:   #!/bin/sh  then  exec %[2]s
       hooks/repo-specific/gitplus-post-receive:  #!/bin/sh  then  exec %[3]s hook post-receive
  3. in conf/gitolite.conf, for the repository:
       repo %[4]s
           option hook.pre-receive  = gitplus-pre-receive
           option hook.post-receive = gitplus-post-receive
     (with other pre-receive hooks, list them in the same option: each must pass);
  4. push gitolite-admin (or run gitolite setup), then run git+ hook install again and git+ hook check (docs/operating.md "Installing on gitolite")`,
		gitDir, pre, shellQuote(bin), name, now)
}

// gitoliteInstall decides Install's way on a gitolite repository: managed
// reports whether gitolite manages it; then a nil error means the driver
// already reaches git+ (only the configuration is to be set), and an error
// wrapping ErrGitolite says how to add git+ gitolite's way.
func gitoliteInstall(gitDir, hooksDir, bin, lean string) (managed bool, err error) {
	if !isGitolite(gitDir, hooksDir) {
		return false, nil
	}
	r := reachHook(hooksDir, "pre-receive")
	if r.Via == ViaGitolite {
		return true, nil
	}
	return true, fmt.Errorf("%s: %w", GitoliteAdvice(gitDir, r.Detail(), bin, lean), ErrGitolite)
}
