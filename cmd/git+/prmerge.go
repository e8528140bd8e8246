package main

// git+ pr merge ID: the direct landing (receive/repo's Signing.Merge, whose
// comment has the decisions). A refusal prints the hook's lines as they are
// and exits 1; a landing waits for its own deliveries (delivery.go).

import (
	"errors"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive/repo"
)

// prMergeCommand is `git+ pr merge`; the pr verb group lists it.
func prMergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "land the pull request's approved head on its base (the hook judges it), then record pr.merged",
		ArgsUsage: "ID",
		Description: "Pushes the head onto the base with the base's current value as the expected old\n" +
			"value; a refusal prints the hook's lines and exits 1.",
		Flags:  []cli.Flag{remoteFlag(), jsonFlag()},
		Action: nargs(1, 1, "usage: git+ pr merge ID [--remote R]", prMergeAction),
	}
}

func prMergeAction(c *cli.Context) error {
	id, err := resolveArgID(c, hubrefs.PRRefPrefix, "pull request", c.Args().First())
	if err != nil {
		return err
	}
	since := time.Now() // its own deliveries are those recorded from now (awaitOwnDeliveries)
	s, err := openSigning(c)
	if err != nil {
		return fail(1, err)
	}
	m, err := s.Merge(id)
	var refused *repo.LandingRefusedError
	if errors.As(err, &refused) {
		refused.WriteLines(c.App.ErrWriter)
	}
	if err != nil {
		return fail(1, err)
	}
	var undelivered []string
	if !m.Already {
		undelivered = awaitOwnDeliveries(s.Repo, since)
	}
	return printView(c, m.View(undelivered))
}
