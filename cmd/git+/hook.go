package main

// git+ hook {install,pre-receive,post-receive,deliver}: the receive hooks
// (docs/boundary.md, docs/operating.md) and the delivery worker
// (docs/delivery.md).
//
// Decisions:
//   - The hooks find the repository from --repo, then $GIT_DIR, then the
//     current directory (where git runs hooks), without running git
//     (hooks.GitDir).
//   - pre-receive (receive.PreReceive) prints one "git+: refused <ref>:
//     [<code>] <reason>" line per refused ref and exits 1 when any ref is
//     refused. It fails closed.
//   - post-receive (hooks.PostReceive) exits 1 only on unreadable input:
//     a failure is reported and logged, never failing the push.
//   - deliver is the worker post-receive starts; run by hand it settles
//     whatever is pending (it returns at once if a worker runs).
//   - `git+ init` installs the hooks too (install.InstallHooks); both judge
//     first that the hook user can use what they write (hookinstall.go).

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/delivery/webhookpost"
	"github.com/gitplus/gitplus/hooks/install"
	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/receive"
)

func init() {
	repo := func(def string) cli.Flag {
		return &cli.StringFlag{Name: "repo", Usage: "git directory of the repository (default: the global --repo, " + def + ")"}
	}
	register(&cli.Command{
		Name:  "hook",
		Usage: "install or run the receive hooks of a bare repository",
		Subcommands: []*cli.Command{
			{
				Name:   "install",
				Usage:  "write pre-receive and post-receive scripts that run this binary (existing hooks are kept and run first)",
				Flags:  []cli.Flag{repo("then the current git dir"), chownFlag()},
				Action: nargs(0, 0, "usage: git+ hook install [--repo DIR] [--chown]", hookInstallAction),
			},
			hookCheckCommand(),
			{
				Name:  "pre-receive",
				Usage: "judge a push (run by git; reads `old new ref` lines on stdin)",
				Action: func(c *cli.Context) error {
					if receive.PreReceive(hooks.GitDir(repoDir(c)), os.Environ(), os.Stdin, c.App.ErrWriter) > 0 {
						return fail(1, errSilent)
					}
					return nil
				},
			},
			{
				Name:   "post-receive",
				Usage:  "after-push chain (run by git; reads `old new ref` lines on stdin)",
				Action: hookPostReceiveAction,
			},
			{
				Name:   "deliver",
				Usage:  "the delivery worker (started by post-receive): settle every spooled webhook delivery and mirror change, then exit",
				Flags:  []cli.Flag{repo("$GIT_DIR, the current directory")},
				Action: hookDeliverAction,
			},
		},
	})
}

// repoDir is the verb's own --repo, else the global one.
func repoDir(c *cli.Context) string {
	if d := c.String("repo"); d != "" {
		return d
	}
	return rootString(c, "repo")
}

func hookInstall(c *cli.Context, gitDir string) error {
	bin, err := install.InstallHooks(gitDir)
	if err == nil {
		fmt.Fprintln(c.App.ErrWriter, install.InstalledNote(gitDir, bin))
	}
	return err
}

// preReceiveFast is `git+ hook pre-receive` with no other argument (the
// installed script's command line), run by main without building the CLI.
func preReceiveFast() int {
	return receive.RunPreReceive(os.Environ(), os.Stdin, os.Stderr)
}

func hookPostReceiveAction(c *cli.Context) error {
	gitDir := hooks.AbsGitDir(repoDir(c))
	bin, _ := wake.Executable()
	_, err := hooks.PostReceive(hooks.Options{GitDir: gitDir, Stdin: os.Stdin, Stderr: c.App.ErrWriter, Environ: os.Environ(), Binary: bin})
	if err != nil {
		return fmt.Errorf("post-receive in %s: %w", gitDir, err)
	}
	return nil
}

// wakeRunFast is `git+ hook wake-run RULE COMMAND...` (wake.SuperviseWake),
// run by main without the CLI so that the command's own flags reach it
// untouched: the repository is $GIT_DIR, else the current directory (the
// git directory, where post-receive starts it); standard output is the
// rule's log.
func wakeRunFast(rule string, argv []string) int {
	wake.SuperviseWake(hooks.AbsGitDir(""), rule, argv, os.Stdout)
	return 0
}

func hookDeliverAction(c *cli.Context) error {
	gitDir := hooks.AbsGitDir(repoDir(c))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	w := &delivery.Worker{GitDir: gitDir, Environ: os.Environ(), Log: c.App.ErrWriter, Send: delivery.Via(webhookpost.Post)}
	if err := w.Run(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("delivery worker for %s: %w", gitDir, err)
	}
	return nil
}
