package main

// git+ webhook {deliveries,redeliver} and git+ mirror {status,sync}: the
// after-push delivery spool seen and driven by hand (docs/delivery.md). The
// spool, the views and the waiting are hooks/delivery's (status.go there).

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/delivery/webhookpost"
	"github.com/gitplus/gitplus/receive/repo"
)

func init() {
	register(&cli.Command{
		Name:  "webhook",
		Usage: "see and resend the webhook deliveries the after-push chain spooled",
		Subcommands: []*cli.Command{
			{
				Name:  "deliveries",
				Usage: "list every delivery: hook, state, attempts, last status and error",
				Flags: []cli.Flag{jsonFlag()},
				Action: inGitDir("usage: git+ webhook deliveries [--json]", 0, 0, func(c *cli.Context, gitDir string) error {
					st := delivery.ReadDeliveryStatus(gitDir)
					return printStatus(c, st, gitDir)
				}),
			},
			{
				Name:      "redeliver",
				Usage:     "send one delivery again, now",
				ArgsUsage: "ID",
				Action: inGitDir("usage: git+ webhook redeliver ID", 1, 1, func(c *cli.Context, gitDir string) error {
					j, err := delivery.Redeliver(context.Background(), gitDir, c.Args().First(), delivery.Via(webhookpost.Post))
					if err == nil {
						fmt.Fprintf(c.App.Writer, "delivered %s to %s (%s, attempt %d)\n", j.ID, j.Hook, j.LastStatus, j.Attempts)
					}
					return err
				}),
			},
		},
	}, &cli.Command{
		Name:  "mirror",
		Usage: "see and drive the mirrors of remotes.json",
		Subcommands: []*cli.Command{
			{
				Name:  "status",
				Usage: "each mirror's last success, last error and whether it is behind",
				Flags: []cli.Flag{jsonFlag()},
				Action: inGitDir("usage: git+ mirror status [--json]", 0, 0, func(c *cli.Context, gitDir string) error {
					st := delivery.ReadMirrorStatus(gitDir)
					return printStatus(c, st, gitDir)
				}),
			},
			{
				Name:      "sync",
				Usage:     "push everything to every mirror (or NAME) now",
				ArgsUsage: "[NAME]",
				Action: inGitDir("usage: git+ mirror sync [NAME]", 0, 1, func(c *cli.Context, gitDir string) error {
					return delivery.SyncMirrors(context.Background(), gitDir, c.Args().First(), os.Environ(), c.App.Writer, c.App.ErrWriter)
				}),
			},
		},
	})
}

// inGitDir is an action that checks the number of arguments (min to max),
// finds the git directory (repoDir, or the current one) and runs fn there.
// An error fn returns is printed and exits 1 (run, in main.go).
func inGitDir(usage string, min, max int, fn func(c *cli.Context, gitDir string) error) cli.ActionFunc {
	return nargs(min, max, usage, func(c *cli.Context) error {
		gitDir, _, err := repo.FindGitDir(repoDir(c))
		if err != nil {
			return err
		}
		return fn(c, gitDir)
	})
}

// printStatus prints a status document as JSON (--json) or text, then
// ends with its error (a configuration that did not load).
func printStatus(c *cli.Context, st interface {
	WriteText(io.Writer, string)
	Err(string) error
}, gitDir string) error {
	if wantJSON(c) {
		if err := printJSON(c, st); err != nil {
			return err
		}
	} else {
		st.WriteText(c.App.Writer, gitDir)
	}
	return st.Err(gitDir)
}

// awaitOwnDeliveries waits, bounded, for the deliveries of the pushes a
// verb made to h since it started (delivery.AwaitPushes), when h's server is
// on this machine (repo.Repo.ServerGitDir, the one rule for where a remote
// lives: a relative URL is relative to a clone's work tree).
func awaitOwnDeliveries(h *repo.Repo, since time.Time) []string {
	return delivery.AwaitPushes(h.ServerGitDir(), since, os.Environ())
}
