package main

// git+ check run --pr ID --rev REV --name N [--timeout D] -- CMD...: run a
// command on a revision and record the result as the check N of pull
// request ID (docs/queue.md).
//
// The runner is package receive/checkrun (whose doc lists the decisions);
// the verb exits 0 when the check succeeded (or another worker holds the
// lease, or a batch group's last step is checked instead) and 1 otherwise.

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/checkrun"
	"github.com/gitplus/gitplus/receive/repo"
)

func init() {
	register(hubGroup("check", "run a command on a revision and record it as a check",
		&cli.Command{
			Name:      "run",
			Usage:     "check REV out into a temporary worktree, run CMD there, record check.started and check.completed",
			ArgsUsage: "-- CMD [ARGS...]",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "pr", Usage: "the pull request the check belongs to"},
				&cli.StringFlag{Name: "rev", Usage: "the revision to test (a candidate branch or commit)"},
				&cli.StringFlag{Name: "name", Usage: "the check name (needs hub.check:NAME)"},
				&cli.DurationFlag{Name: "timeout", Usage: "cancel the command after this long (0: no limit)"},
				&cli.IntFlag{Name: "retries", Usage: "run a failed command again up to N times before recording a failure"},
				&cli.BoolFlag{Name: "every-step", Usage: "run even on a candidate the queue marked as inside a batch group (only its group's last step needs checks)"},
				&cli.DurationFlag{Name: "below-wait", Usage: "before a retry, wait at most this long for the verdict of a candidate step below this one (default: the timeout, or 10m without one, for the last step of a batch group; no wait for other candidates; 0: never wait); a red step below means no retry"},
				&cli.BoolFlag{Name: "retry-search", Usage: "apply --retries also to the queue's search steps (a trial, the last step of a batch group of more than one, a strict step of a branch with partitions), which are otherwise run once: the search is their retry"},
				&cli.DurationFlag{Name: "lease", Usage: "how long another worker's check.started holds the check (default: (retries+1) × timeout + retries × below-wait + 1m, or 30m without a timeout)"},
				&cli.StringFlag{Name: "url", Usage: "a link to the run's full log, recorded in check.completed (pr show and the page link it)"},
				remoteFlag(),
			}, sandboxFlags()...),
			Action: checkRun,
		},
		checkWorkerCommand(),
	))
}

func checkRun(c *cli.Context) error {
	id, rev, name := c.String("pr"), c.String("rev"), c.String("name")
	argv := c.Args().Slice()
	if id == "" || rev == "" || name == "" || len(argv) == 0 || c.Int("retries") < 0 {
		return usageErr("usage: git+ check run --pr ID --rev REV --name NAME [--timeout D] [--retries N] [--below-wait D] [--lease D] [--url URL] [--sandbox required|best-effort|off] [--pass-env NAME] [--cache [NAME=]DIR] [--read DIR] [--run-as USER] [--confine-reads] -- CMD [ARGS...]")
	}
	if err := trust.ValidCheckName(name); err != nil {
		return usageErr("--name: %v", err)
	}
	sb, err := sandboxOptions(c)
	if err != nil {
		return err
	}
	id, err = resolveArgID(c, hubrefs.PRRefPrefix, "pull request", id) // a full id or an unambiguous prefix
	if err != nil {
		return err
	}
	w, err := prContext(c, id)
	if err != nil {
		return fail(1, err)
	}
	if err := repo.NeedCap(w.Member, trust.CheckCap(name)); err != nil {
		return fail(1, err)
	}
	if err := checkrun.EnsureRevision(w.Repo, rev, c.App.ErrWriter); err != nil { // a candidate the clone has not fetched
		return fail(1, fmt.Errorf("--rev: %w", err))
	}
	commit, err := w.Repo.ResolveCommit(rev)
	if err != nil {
		return fail(1, fmt.Errorf("--rev: %w", err))
	}
	// The command's output goes to our standard error as it comes, and its
	// tail into check.completed, so a failure can be read without the
	// runner's log (pr show, the page). Its standard output and error are
	// one writer, so the command gets one pipe for both and the tail keeps
	// their order: the reason a command prints last is the tail's end.
	tail := checkrun.NewTail(hubrefs.MaxCheckOutput)
	output := io.MultiWriter(c.App.ErrWriter, tail)
	res, err := checkrun.Run(w.Signing, checkrun.Options{PR: id, Rev: commit, Name: name, Argv: argv,
		Timeout: c.Duration("timeout"), Retries: c.Int("retries"), Lease: c.Duration("lease"), BelowWait: belowWait(c), EveryStep: c.Bool("every-step"), RetrySearch: c.Bool("retry-search"),
		Stdin: os.Stdin, Stdout: output, Stderr: output,
		URL: c.String("url"), Output: tail.String, Sandbox: sb})
	if err != nil {
		return fail(1, err)
	}
	if !res.Passed() {
		return fail(1, errSilent)
	}
	return nil
}

// belowWait is --below-wait for checkrun.Options: unset → the default (0),
// an explicit 0 → no wait (negative).
func belowWait(c *cli.Context) time.Duration {
	d := c.Duration("below-wait")
	if c.IsSet("below-wait") && d <= 0 {
		return -1
	}
	return d
}
