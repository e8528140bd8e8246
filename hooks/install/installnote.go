package install

import "fmt"

// InstalledNote is the line `git+ hook install` prints after installing
// the hooks running bin into gitDir: which pre-receive binary runs, and why
// when it is not the lean one (lean.go).
func InstalledNote(gitDir, bin string) string {
	if hd, err := hooksPath(gitDir); err == nil && isGitolite(gitDir, hd) {
		return fmt.Sprintf("gitolite manages the hooks of %s (%s): no hook was written; the repository's configuration is set", gitDir, reachHook(hd, "pre-receive").Detail())
	}
	lean, why := LeanHook(bin)
	if lean != "" {
		return fmt.Sprintf("installed git+ pre-receive and post-receive hooks in %s (running %s; pre-receive runs %s)", gitDir, bin, lean)
	}
	return fmt.Sprintf("installed git+ pre-receive and post-receive hooks in %s (running %s; the faster pre-receive binary %s is not used: %s)", gitDir, bin, HookBinary, why)
}
