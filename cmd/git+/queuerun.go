package main

// git+ queue run: the merge queue's pass (docs/queue.md). The
// executor is package receive/queuerun; this file parses flags, opens the
// signing key and prints the report.
//
// Decisions:
//   - Ordinary states exit 0 with the reason (text, or "idle" in --json): no
//     open queue for the target, queueCandidates off, requireProvenance on.
//     A --queue id that does not exist, or a queue whose target is not
//     --target, exits 1.
//   - A pass that finds another pass of the same queue running marks it
//     dirty and exits 0 ("deferred"): the running pass goes round again.
//     --no-lock skips the lock (every append is a compare-and-swap anyway).
//   - --no-notify passes the push option "gitplus.no-notify" on the pass's
//     pushes. The post-receive chain honours it only for a pass on the
//     server (a push into ".") and only for pushes of branches alone: hub
//     events are always delivered (docs/serving.md, "Push options").

import (
	"context"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/receive/queuerun"
)

func queueRunCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run the queue for --target until nothing is left: settle, build, land the green prefix, evict, publish",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "target", Usage: "the branch (main or refs/heads/main)"},
			&cli.StringFlag{Name: "queue", Usage: "queue id (default: the queue counting for the target)"},
			&cli.BoolFlag{Name: "auto-enter", Usage: "enter approved open pull requests on the target that are not queued"},
			&cli.IntFlag{Name: "depth", Usage: "bound the chain (default: the rules' queueDepth)"},
			&cli.BoolFlag{Name: "no-notify", Usage: "send no webhook for this pass's pushes of branches alone (honoured for a pass on the server only; hub events are always delivered)"},
			&cli.BoolFlag{Name: "no-lock", Usage: "do not take the per-queue lock (passes on other machines race through compare-and-swap anyway)"},
			&cli.IntFlag{Name: "max-rounds", Usage: "bound the plan, act, re-read rounds of the pass", Value: queuerun.DefaultMaxRounds},
			jsonFlag(), remoteFlag(),
		},
		Action: queueRun,
	}
}

func queueRun(c *cli.Context) error {
	if c.NArg() != 0 || (c.String("target") == "" && c.String("queue") == "") {
		return usageErr("usage: git+ queue run --target BRANCH [--queue ID] [--auto-enter] [--depth N] [--json] [--no-notify] [--no-lock]")
	}
	w, err := queueContext(c)
	if err != nil {
		return fail(1, err)
	}
	qid := c.String("queue")
	target, err := w.QueueTarget(c.String("target"), qid)
	if err != nil {
		return fail(1, err)
	}
	var pushOpts []string
	if c.Bool("no-notify") {
		pushOpts = wake.NoNotify(os.Getenv)
	}
	since := time.Now() // its own deliveries are those recorded from now (awaitOwnDeliveries)
	rep, err := queuerun.Run(context.Background(), queuerun.Options{
		GitDir: w.Repo.GitDir, Remote: w.Repo.Remote, Signer: w.Key.Signer, Name: w.Member.Name,
		Target: target, QueueID: qid, Depth: c.Int("depth"), AutoEnter: c.Bool("auto-enter"),
		PushOptions: pushOpts, NoLock: c.Bool("no-lock"), MaxRounds: c.Int("max-rounds"),
		Sign: w.Key.PushSigning(),
	})
	// The wait comes after the pass: no receiver holds its critical window
	// (docs/delivery.md).
	if rep != nil && rep.Deferred == "" {
		rep.Undelivered = append(rep.Undelivered, awaitOwnDeliveries(w.Repo, since)...)
	}
	_ = printView(c, rep)
	if err != nil {
		return fail(1, err)
	}
	return nil
}
