package main

// git+ init: create the bare repository if needed and write the root of
// refs/hub/trust (repo.created), the one ref git+ writes directly
// (docs/architecture.md); receive/repo.Init does it.

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/install"
	"github.com/gitplus/gitplus/receive/repo"
)

func init() {
	register(hubVerb(&cli.Command{
		Name:      "init",
		Usage:     "create a bare repository (if needed) and its trust log, with the signing key as admin",
		ArgsUsage: "[DIR]",
		Description: "DIR defaults to --repo, then the current git directory. Prints the new RepoID.\n" +
			"Refuses a repository that already has refs/hub/trust.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "repository name (default: DIR's base name without .git)"},
			&cli.StringFlag{Name: "admin", Usage: "member name of the admin (default: the key's comment before any @, else admin)"},
			&cli.BoolFlag{Name: "open", Usage: "do not require a known pusher for pushes by path (write no requireKnownPusher rule; pushes through git+ serve still need one)"},
			chownFlag(),
			&cli.StringFlag{Name: "initial-branch", Value: "main", Usage: "the branch HEAD names in a repository init creates (given explicitly, also in an existing one)"},
			jsonFlag(),
		},
		Action: initAction,
	}))
}

func initAction(c *cli.Context) (err error) {
	if c.NArg() > 1 {
		return usageErr("usage: git+ init [--name NAME] [--admin NAME] [--chown] [DIR]")
	}
	dir := c.Args().First()
	if dir == "" {
		dir = rootString(c, "repo")
	}
	if dir == "" {
		gd, _, err := repo.FindGitDir("")
		if err != nil {
			return usageErr("git+ init: give DIR (the bare repository to create) or run inside a repository: %v", err)
		}
		dir = gd
	}
	// Everything that can be judged before writing is judged first.
	key, err := loadKey(c)
	if err != nil {
		return fail(1, err)
	}
	ic, err := install.Preflight(dir, c.Bool("chown"))
	if err != nil {
		return fail(1, err)
	}
	if ic.Chown { // whatever was written, even on failure, goes to the owner
		abs, _ := filepath.Abs(dir)
		defer func() {
			if cerr := ic.Finish(abs); cerr != nil && err == nil {
				err = fail(1, cerr)
			}
		}()
	}
	in, err := repo.Init(repo.InitOptions{Dir: dir, Key: key, Admin: c.String("admin"), Name: c.String("name"), Open: c.Bool("open"),
		InitialBranch: c.String("initial-branch"), SetHead: c.IsSet("initial-branch")})
	if err != nil {
		return failed(err)
	}
	if _, err := install.InstallHooks(in.GitDir); err != nil {
		return fail(1, fmt.Errorf("installing hooks into %s: %w", in.GitDir, err))
	}
	if wantJSON(c) {
		return printJSON(c, map[string]string{
			"repo": in.RepoID, "name": in.Name, "admin": in.Admin,
			"fingerprint": repo.Fingerprint(key.Signer.PublicKey()),
			"gitDir":      in.GitDir, "event": in.Event.String(), "tip": in.Tip.String(),
		})
	}
	fmt.Fprintf(c.App.ErrWriter, "initialised %s (%s), admin %s (%s)\n", in.GitDir, in.Name, in.Admin, repo.Fingerprint(key.Signer.PublicKey()))
	fmt.Fprintln(c.App.Writer, in.RepoID)
	return nil
}
