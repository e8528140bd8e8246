package install

// What `git+ hook install` and `git+ init` do around Install (docs/operating.md
// "Ownership and the hook user"): the preflight before anything is written,
// and handing what was written to the hook user after.
//
// Decisions:
//   - The preflight runs before anything is written; with chown (root
//     only) everything written is handed to the repository's owner
//     afterwards (Finish), and git is told to trust the repository for
//     this run (safe.directory through GIT_CONFIG_COUNT, which children
//     inherit).

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/gitplus/gitplus/hooks/wake"
)

// Preflight judges installing hooks that run this binary into dir ("" is
// the current directory) before anything is written (CheckInstall).
func Preflight(dir string, chown bool) (InstallCheck, error) {
	target := dir
	if target == "" {
		target, _ = os.Getwd()
	}
	bin, err := wake.Executable()
	if err != nil {
		return InstallCheck{}, err
	}
	lean, _ := LeanHook(bin)
	ic, err := CheckInstall(target, bin, lean, chown)
	if err != nil {
		return ic, err
	}
	if ic.Chown {
		trustForGit(target)
	}
	return ic, nil
}

// trustForGit adds dir to git's safe.directory for the processes this one
// starts (root installing with chown into another user's repository).
func trustForGit(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	n, _ := strconv.Atoi(os.Getenv("GIT_CONFIG_COUNT"))
	os.Setenv("GIT_CONFIG_KEY_"+strconv.Itoa(n), "safe.directory")
	os.Setenv("GIT_CONFIG_VALUE_"+strconv.Itoa(n), abs)
	os.Setenv("GIT_CONFIG_COUNT", strconv.Itoa(n+1))
}

// Finish hands what was written into gitDir to the hook user when the
// preflight asked for it (ChownWritten).
func (ic InstallCheck) Finish(gitDir string) error {
	if !ic.Chown {
		return nil
	}
	return ChownWritten(gitDir, ic.Owner)
}

// InstallHooks installs the receive hooks running this binary into gitDir
// and returns the binary.
func InstallHooks(gitDir string) (bin string, err error) {
	if bin, err = wake.Executable(); err == nil {
		err = Install(gitDir, bin)
	}
	return bin, err
}
