package main

// git+ check worker --name N [--remote R] [--jobs K] [--retries N]
// [--timeout D] -- CMD...: run check N on every candidate the merge queue
// publishes, until SIGTERM (docs/queue.md, "Check workers"). The worker is
// package receive/checkworker, whose doc lists the decisions.

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/checkworker"
)

func checkWorkerCommand() *cli.Command {
	return &cli.Command{
		Name:      "worker",
		Usage:     "run check NAME on every published queue candidate, record it, cancel superseded runs; until SIGTERM",
		ArgsUsage: "-- CMD [ARGS...]",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "the check name (needs hub.check:NAME)"},
			&cli.IntFlag{Name: "jobs", Value: 1, Usage: "candidates run at once"},
			&cli.IntFlag{Name: "retries", Usage: "run a failed command again up to N times (the rules of check run)"},
			&cli.DurationFlag{Name: "timeout", Usage: "cancel the command after this long (0: no limit)"},
			&cli.DurationFlag{Name: "lease", Usage: "the lease of a run, renewed while it runs; a worker that dies leaves it this long (default 2m)"},
			&cli.DurationFlag{Name: "poll", Usage: "the longest wait between two looks for new candidates while idle (default 30s; the wait starts at 1s and doubles)"},
			&cli.StringFlag{Name: "url", Usage: "a URL recorded with each result; {pr}, {rev} and {name} are replaced"},
			&cli.BoolFlag{Name: "every-step", Usage: "run also candidates inside batch groups"},
			&cli.StringFlag{Name: "listen", Usage: "also look at once when a webhook delivery (git+'s or GitHub's format, signed with --secret) arrives at this address, e.g. 127.0.0.1:9090"},
			&cli.StringFlag{Name: "secret", Usage: "the webhook's secret (with --listen)"},
			remoteFlag(),
		}, sandboxFlags()...),
		Action: checkWorker,
	}
}

func checkWorker(c *cli.Context) error {
	name, argv := c.String("name"), c.Args().Slice()
	if name == "" || len(argv) == 0 || c.Int("jobs") < 1 || c.Int("retries") < 0 {
		return usageErr("usage: git+ check worker --name NAME [--remote R] [--jobs K] [--retries N] [--timeout D] [--lease D] [--poll D] [--url U] [--sandbox required|best-effort|off] [--pass-env NAME] [--cache [NAME=]DIR] [--read DIR] [--run-as USER] [--confine-reads] -- CMD [ARGS...]")
	}
	if err := trust.ValidCheckName(name); err != nil {
		return usageErr("--name: %v", err)
	}
	sb, err := sandboxOptions(c)
	if err != nil {
		return err
	}
	key, err := loadKey(c)
	if err != nil {
		return fail(1, err)
	}
	gitDir, remote, err := checkworker.Locate(rootString(c, "repo"), c.String("remote"))
	if err != nil {
		return fail(1, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	var wake chan struct{}
	if addr := c.String("listen"); addr != "" {
		if c.String("secret") == "" {
			return usageErr("--listen needs --secret: deliveries are signed")
		}
		wake = make(chan struct{}, 1)
		at, closeListener, err := checkworker.Listen(addr, delivery.Verifier(c.String("secret")), wake)
		if err != nil {
			return fail(1, fmt.Errorf("--listen: %w", err))
		}
		defer closeListener()
		fmt.Fprintf(c.App.ErrWriter, "check worker: listening for webhook deliveries on http://%s/\n", at)
	}
	err = checkworker.Run(ctx, checkworker.Options{GitDir: gitDir, Remote: remote, Key: key, Name: name, Argv: argv,
		Jobs: c.Int("jobs"), Retries: c.Int("retries"), Timeout: c.Duration("timeout"), Lease: c.Duration("lease"),
		PollMax: c.Duration("poll"), URL: c.String("url"), EveryStep: c.Bool("every-step"), Log: c.App.ErrWriter, Wake: wake,
		Sandbox: sb})
	if err != nil {
		return fail(1, err)
	}
	return nil
}
