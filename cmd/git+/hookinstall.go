package main

// git+ hook install's and git+ init's preflight (install.Preflight: the
// hook user can use what is written, docs/operating.md "Ownership and the
// hook user") and git+ hook check (install.CheckDir, "Checking the
// boundary: git+ hook check"); package hooks/install has the decisions.

import (
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/install"
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

func hookInstallAction(c *cli.Context) error {
	ic, err := install.Preflight(repoDir(c), c.Bool("chown"))
	if err != nil {
		return fail(1, err)
	}
	gitDir, _, err := repo.FindGitDir(repoDir(c))
	if err != nil {
		return err
	}
	err = hookInstall(c, gitDir)
	if cerr := ic.Finish(gitDir); err == nil {
		err = cerr
	}
	return err
}

func hookCheckAction(c *cli.Context) error {
	r, err := install.CheckDir(repoDir(c))
	if err != nil {
		return fail(1, err)
	}
	r.WriteText(c.App.Writer)
	if code, err := r.Exit(); err != nil {
		return fail(code, err)
	}
	return nil
}
