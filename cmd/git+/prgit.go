package main

// Pull requests as a git user expects them (docs/cli.md, "Pull requests"):
// pr checkout and pr diff bring a pull request into the work tree and
// compare it as `git diff A...B` (receive/repo fetches what is missing).

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive/repo"
	"github.com/gitplus/gitplus/receive/termtext"
)

func prCheckoutCommand() *cli.Command {
	return &cli.Command{
		Name: "checkout", Usage: "check out a pull request's head as a local branch (default pr/ID8)", ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "branch", Usage: "the local branch to create or move (default: pr/ and the id's first 8 characters)"},
			&cli.BoolFlag{Name: "force", Usage: "move the branch when it exists at another commit"},
			remoteFlag(),
		},
		Action: prCheckout,
	}
}

func prDiffCommand() *cli.Command {
	return &cli.Command{
		Name: "diff", Usage: "diff a pull request against the merge base with its base branch (git diff BASE...HEAD)", ArgsUsage: "ID [-- GIT-DIFF-OPTIONS]",
		Flags:  []cli.Flag{jsonFlag(), remoteFlag()},
		Action: prDiff,
	}
}

func prCheckout(c *cli.Context) error {
	id, err := oneID(c, "checkout ID [--branch NAME] [--force]")
	if err != nil {
		return err
	}
	h, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	top := rootString(c, "repo")
	if top == "" {
		top = "."
	}
	co, err := h.Checkout(t, id, c.String("branch"), c.Bool("force"), top)
	if err != nil {
		return fail(1, err)
	}
	if co.Old != co.PR.Head {
		journal.Moved(co.Ref, co.Old, co.PR.Head, ".")
	}
	fmt.Fprintf(c.App.ErrWriter, "switched to branch %s at %s (pull request %s: %s)\n", co.Branch, repo.Short(co.PR.Head), id, co.PR.Title)
	fmt.Fprintln(c.App.Writer, co.Branch)
	return nil
}

func prDiff(c *cli.Context) error {
	if c.NArg() < 1 {
		return usageErr("usage: git+ pr diff ID [-- GIT-DIFF-OPTIONS]")
	}
	id, err := resolveArgID(c, hubrefs.PRRefPrefix, "pull request", c.Args().First())
	if err != nil {
		return err
	}
	h, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	d, err := h.Diff(t, id)
	if err != nil {
		return fail(1, err)
	}
	if wantJSON(c) {
		if err := d.Run(h, c.Args().Slice()[1:], nil, nil); err != nil {
			return fail(1, err)
		}
		return printJSON(c, d)
	}
	// git's diff of the files, as git diff shows it: to the terminal
	// itself (git pages and colours it), not through git+'s text escapes.
	if err := d.Run(h, c.Args().Slice()[1:], termtext.Raw(c.App.Writer), termtext.Raw(c.App.ErrWriter)); err != nil {
		return fail(1, err)
	}
	return nil
}
