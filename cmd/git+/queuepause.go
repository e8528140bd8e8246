package main

// git+ queue pause / resume: stop a queue's landings and start them again
// (docs/queue.md, "Pausing a queue"); the writers are receive/repo's
// (pause.go).

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func queuePauseCommand() *cli.Command {
	return &cli.Command{
		Name:  "pause",
		Usage: "pause the queue of --target: its passes build and land nothing and the hook refuses candidate landings until queue resume; entries keep their places",
		Flags: []cli.Flag{&cli.StringFlag{Name: "target", Usage: "the branch whose queue to pause"},
			&cli.StringFlag{Name: "reason", Usage: "why, one line (shown by queue show and the page)"}, remoteFlag()},
		Action: queuePause,
	}
}

func queueResumeCommand() *cli.Command {
	return &cli.Command{
		Name:   "resume",
		Usage:  "resume the paused queue of --target",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "target", Usage: "the branch whose queue to resume"}, remoteFlag()},
		Action: queueResume,
	}
}

func queuePause(c *cli.Context) error {
	if c.NArg() != 0 || c.String("target") == "" || c.String("reason") == "" {
		return usageErr("usage: git+ queue pause --target BRANCH --reason TEXT")
	}
	s, err := queueContext(c)
	if err != nil {
		return fail(1, err)
	}
	q, id, err := s.PauseQueue(c.String("target"), c.String("reason"))
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "paused queue %s (%s): nothing lands until git+ queue resume --target %s\n", q.State.ID, q.State.Target, c.String("target"))
	fmt.Fprintln(c.App.Writer, id)
	return nil
}

func queueResume(c *cli.Context) error {
	if c.NArg() != 0 || c.String("target") == "" {
		return usageErr("usage: git+ queue resume --target BRANCH")
	}
	s, err := queueContext(c)
	if err != nil {
		return fail(1, err)
	}
	q, id, err := s.ResumeQueue(c.String("target"))
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "resumed queue %s (%s); %d entries in their places\n", q.State.ID, q.State.Target, len(q.State.Entries))
	fmt.Fprintln(c.App.Writer, id)
	return nil
}
