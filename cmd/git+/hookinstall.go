package main

// git+ hook install's and git+ init's preflight (hooks.CheckInstall: the
// hook user can use what is written, docs/operating.md "Ownership and the
// hook user") and git+ hook check (hooks.Check, "Checking the boundary:
// git+ hook check").
//
// Decisions:
//   - The preflight runs before anything is written; with --chown (root
//     only) everything written is handed to the repository's owner
//     afterwards, and git is told to trust the repository for this run
//     (safe.directory through GIT_CONFIG_COUNT, which children inherit).
//   - hook check finds a named repository without asking git (no
//     safe.directory refusal), so root can check a repository another user
//     owns.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/install"
	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/receive/gitio"
	"github.com/gitplus/gitplus/receive/repo"
)

func chownFlag() cli.Flag {
	return &cli.BoolFlag{Name: "chown", Usage: "as root, install into a repository another user owns and hand everything written to that owner (the hook user)"}
}

// hookCheckCommand is `git+ hook check` (alias doctor).
func hookCheckCommand() *cli.Command {
	return &cli.Command{
		Name:    "check",
		Aliases: []string{"doctor"},
		Usage:   "tell whether the pre-receive git runs for this repository reaches git+, whether the hook user can run it and use the git directory, the identity source, and what will refuse or unprotect pushes (exit 1 when the boundary is not in place, 3 when it is but there are warnings)",
		Flags:   []cli.Flag{&cli.StringFlag{Name: "repo", Usage: "git directory of the repository (default: the global --repo, then the current git dir)"}},
		Action:  nargs(0, 0, "usage: git+ hook check [--repo DIR]", hookCheckAction),
	}
}

// preflightInstall judges installing into dir ("" is the current
// directory) before anything is written (hooks.CheckInstall).
func preflightInstall(dir string, chown bool) (install.InstallCheck, error) {
	target := dir
	if target == "" {
		target, _ = os.Getwd()
	}
	bin, err := wake.Executable()
	if err != nil {
		return install.InstallCheck{}, err
	}
	lean, _ := install.LeanHook(bin)
	ic, err := install.CheckInstall(target, bin, lean, chown)
	if err != nil {
		return ic, err
	}
	if ic.Chown {
		trustForGit(target)
	}
	return ic, nil
}

// trustForGit adds dir to git's safe.directory for the processes this one
// starts (root installing with --chown into another user's repository).
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

// finishInstall hands what was written to the hook user when asked.
func finishInstall(ic install.InstallCheck, gitDir string) error {
	if !ic.Chown {
		return nil
	}
	return install.ChownWritten(gitDir, ic.Owner)
}

func hookInstallAction(c *cli.Context) error {
	ic, err := preflightInstall(repoDir(c), c.Bool("chown"))
	if err != nil {
		return fail(1, err)
	}
	gitDir, _, err := repo.FindGitDir(repoDir(c))
	if err != nil {
		return err
	}
	err = hookInstall(c, gitDir)
	if cerr := finishInstall(ic, gitDir); err == nil {
		err = cerr
	}
	return err
}

func hookCheckAction(c *cli.Context) error {
	dir := repoDir(c)
	var gitDir string
	var err error
	if dir != "" {
		gitDir, err = gitio.ResolveGitDir(dir)
	} else {
		gitDir, _, err = repo.FindGitDir("")
	}
	if err != nil {
		return fail(1, err)
	}
	r, err := install.Check(gitDir)
	if err != nil {
		return fail(1, err)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "repository: %s\n", r.GitDir)
	fmt.Fprintf(w, "hooks: %s\n", r.HooksDir)
	if r.Gitolite {
		fmt.Fprintln(w, "host: gitolite manages this repository's hooks")
	}
	for _, h := range []struct {
		name string
		r    install.Reach
	}{{"pre-receive", r.PreReceive}, {"post-receive", r.PostReceive}} {
		if h.r.Via == install.ViaNone {
			fmt.Fprintf(w, "%s: does not reach git+\n", h.name)
		} else {
			fmt.Fprintf(w, "%s: %s\n", h.name, h.r.Detail())
		}
	}
	fmt.Fprintf(w, "hook user: %s, the owner of %s\n", r.Owner, r.GitDir)
	fmt.Fprintf(w, "identity source (gitplus.pusher): %s\n", r.Pusher)
	for _, p := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", p)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	if !r.OK() {
		return fail(1, fmt.Errorf("the boundary of %s is not in place (%d problems above): %w", r.GitDir, len(r.Problems), errNotInPlace))
	}
	if len(r.Warnings) > 0 {
		return fail(install.ExitWarnings, fmt.Errorf("the boundary of %s is in place, with %d warning(s) above: %w", r.GitDir, len(r.Warnings), errWarnings))
	}
	fmt.Fprintln(w, "ok: the boundary is in place")
	return nil
}

var errWarnings = errors.New("hook check warned")

var errNotInPlace = errors.New("hook check failed")
