package main

// git+ pr merge ID: the direct landing (receive/repo's Signing.Merge, whose
// comment has the decisions). A refusal prints the hook's lines as they are
// and exits 1; a landing waits for its own deliveries (delivery.go).

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive"
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
		for _, l := range refused.Lines {
			fmt.Fprintln(c.App.ErrWriter, l)
		}
		var host *receive.PushRefusedError // the host's own words (a chained or gitolite hook)
		if errors.As(err, &host) {
			for _, l := range host.Host {
				fmt.Fprintln(c.App.ErrWriter, "remote: "+l)
			}
		}
	}
	if err != nil {
		return fail(1, err)
	}
	var undelivered []string
	if !m.Already {
		undelivered = awaitOwnDeliveries(s.Repo, since)
	}
	if !m.Squash.IsZero() {
		m.Result += " as squash step " + m.Squash.String()
	}
	if m.SourceDeleted != "" {
		m.Result += "; deleted its source branch " + m.SourceDeleted + " (deleteSourceBranch)"
	} else if m.SourceNote != "" {
		m.Result += "; " + m.SourceNote
	}
	return prMergeReport(c, m.ID, m.Branch, m.Head, m.Pushed, m.Result, undelivered)
}

// prMergeReport prints the outcome; undelivered lists the verb's own
// deliveries (mirrors, webhooks) that did not arrive within the wait.
func prMergeReport(c *cli.Context, id, base string, head plumbing.Hash, pushed bool, msg string, undelivered []string) error {
	if wantJSON(c) {
		return printJSON(c, map[string]any{"pr": id, "branch": base, "commit": head.String(), "pushed": pushed, "result": msg,
			"undelivered": append([]string{}, undelivered...)})
	}
	fmt.Fprintf(c.App.Writer, "%s %s %s: %s\n", id, strings.TrimPrefix(base, "refs/heads/"), head, msg)
	for _, u := range undelivered {
		fmt.Fprintf(c.App.Writer, "undelivered: %s\n", u)
	}
	return nil
}
