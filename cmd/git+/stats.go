package main

// git+ queue stats --target T [--since DATE] [--json]: how the queue did, by
// day (UTC), from the events alone (docs/queue.md). The counting is
// hubrefs/queue.ComputeStats, the reading receive/queuerun.Stats.

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/receive/queuerun"
	"github.com/gitplus/gitplus/receive/repo"
)

// queueStatsCommand is `git+ queue stats`; the queue verb group lists it.
func queueStatsCommand() *cli.Command {
	return &cli.Command{
		Name:  "stats",
		Usage: "how the queue for --target did, by day (UTC), from its events, with docs/queue.md's health thresholds",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "target", Usage: "the branch the queue lands on (main or refs/heads/main)"},
			&cli.StringFlag{Name: "since", Usage: "count events from this day on (YYYY-MM-DD, UTC)"},
			jsonFlag(), remoteFlag(),
		},
		Action: queueStatsAction,
	}
}

func queueStatsAction(c *cli.Context) error {
	if c.NArg() != 0 || c.String("target") == "" {
		return usageErr("usage: git+ queue stats --target T [--since YYYY-MM-DD] [--json]")
	}
	target, err := repo.BranchRef(c.String("target"))
	if err != nil {
		return usageErr("--target: %v", err)
	}
	var since int64
	if s := c.String("since"); s != "" {
		d, err := time.Parse("2006-01-02", s)
		if err != nil {
			return usageErr("--since %q: want a day as YYYY-MM-DD (UTC)", s)
		}
		since = d.Unix()
	}
	h, err := openHub(c) // fetches the hub refs from the remote, if any
	if err != nil {
		return fail(1, err)
	}
	t, err := h.Trust()
	if err != nil {
		return fail(1, err)
	}
	st, err := queuerun.Stats(h.GitDir, t, target, since)
	if err != nil {
		return fail(1, err)
	}
	if since != 0 {
		st.Since = c.String("since")
	}
	if len(st.Queues) == 0 {
		fmt.Fprintf(c.App.ErrWriter, "git+: no queue targets %s in %s (open one with git+ queue open --target %s)\n", target, h.Where(), target)
	}
	return printView(c, st)
}
