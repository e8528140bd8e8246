package main

// git+ hook {install,pre-receive,post-receive}: the receive hooks
// (docs/boundary.md, docs/operating.md).
//
// Decisions:
//   - pre-receive and post-receive find the repository from --repo, then
//     $GIT_DIR, then the current directory (git runs hooks with the current
//     directory at $GIT_DIR), without running git: the hook runs on every push.
//   - pre-receive prints one "git+: refused <ref>: [<code>] <reason>" line
//     per refused ref on standard error (the pusher sees it as "remote: ...")
//     and exits 1 when any ref is refused. It fails closed: input it cannot
//     parse, or a push it cannot judge, refuses everything.
//   - `git+ init` installs the hooks too (installHooksOnInit, set below).
//   - post-receive runs hooks.PostReceive (wake rules; mirrors and webhooks
//     are spooled for the delivery worker, `hook deliver`: see
//     docs/delivery.md). It exits 1 only on unreadable input: a failure is
//     reported as a "git+: post-receive: ..." line and logged, never failing
//     the push.

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks"
	"github.com/gitplus/gitplus/receive"
)

func init() {
	register(&cli.Command{
		Name:  "hook",
		Usage: "install or run the receive hooks of a bare repository",
		Subcommands: []*cli.Command{
			{
				Name:  "install",
				Usage: "write pre-receive and post-receive scripts that run this binary (existing hooks are kept and run first)",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "repo", Usage: "git directory of the repository (default: the global --repo, then the current git dir)"},
				},
				Action: hookInstallAction,
			},
			{
				Name:   "pre-receive",
				Usage:  "judge a push (run by git; reads `old new ref` lines on stdin)",
				Action: hookPreReceiveAction,
			},
			{
				Name:   "post-receive",
				Usage:  "after-push chain (run by git; reads `old new ref` lines on stdin)",
				Action: hookPostReceiveAction,
			},
			hookDeliverCommand(),
		},
	})
	installHooksOnInit = func(gitDir string) error {
		bin, err := hooks.Executable()
		if err != nil {
			return err
		}
		return hooks.Install(gitDir, bin)
	}
}

// hookGitDir is the repository a hook runs for.
func hookGitDir(c *cli.Context) string {
	if d := rootString(c, "repo"); d != "" {
		return d
	}
	if d := os.Getenv("GIT_DIR"); d != "" {
		return d
	}
	return "."
}

func hookInstallAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ hook install [--repo DIR]")
	}
	dir := c.String("repo")
	if dir == "" {
		dir = rootString(c, "repo")
	}
	gitDir, _, err := findGitDir(dir)
	if err != nil {
		return fail(1, err)
	}
	bin, err := hooks.Executable()
	if err != nil {
		return fail(1, err)
	}
	if err := hooks.Install(gitDir, bin); err != nil {
		return fail(1, err)
	}
	if lean, why := hooks.LeanHook(bin); lean != "" {
		fmt.Fprintf(c.App.ErrWriter, "installed git+ pre-receive and post-receive hooks in %s (running %s; pre-receive runs %s)\n", gitDir, bin, lean)
	} else {
		fmt.Fprintf(c.App.ErrWriter, "installed git+ pre-receive and post-receive hooks in %s (running %s; the faster pre-receive binary %s is not used: %s)\n", gitDir, bin, hooks.HookBinary, why)
	}
	return nil
}

func hookPreReceiveAction(c *cli.Context) error {
	refused := receive.PreReceive(hookGitDir(c), os.Environ(), os.Stdin, c.App.ErrWriter)
	if refused > 0 {
		return fail(1, errSilent)
	}
	return nil
}

// preReceiveFast is `git+ hook pre-receive` with no other argument — the
// command line the installed hook script runs when the lean git+hook binary
// is not beside this one — dispatched from main before the CLI is built:
// the hook runs on every push and its latency is the push's. It behaves
// exactly as hookPreReceiveAction without --repo.
func preReceiveFast() int {
	return receive.RunPreReceive(os.Environ(), os.Stdin, os.Stderr)
}

func hookPostReceiveAction(c *cli.Context) error {
	gitDir := hookGitDir(c)
	if abs, err := filepath.Abs(gitDir); err == nil {
		gitDir = abs
	}
	bin, err := hooks.Executable()
	if err != nil {
		bin = ""
	}
	// Who pushed this push is no one's identity for what the chain starts
	// (a wake rule's own pushes): docs/serving.md.
	// receive-pack sets GIT_PUSH_CERT* only for a signed push and never
	// clears them, so a wake rule's own push into this repository would
	// carry this push's certificate into its hook.
	for _, v := range []string{receive.EnvServed, receive.EnvSSHKey, receive.EnvTokenKey,
		"GIT_PUSH_CERT", "GIT_PUSH_CERT_NONCE", "GIT_PUSH_CERT_NONCE_STATUS", "GIT_PUSH_CERT_STATUS",
		"GIT_PUSH_CERT_SIGNER", "GIT_PUSH_CERT_KEY", "GIT_PUSH_CERT_NONCE_SLOP"} {
		os.Unsetenv(v)
	}
	_, err = hooks.PostReceive(hooks.Options{
		GitDir: gitDir, Stdin: os.Stdin, Stderr: c.App.ErrWriter, Environ: os.Environ(), Binary: bin,
	})
	if err != nil {
		return fail(1, fmt.Errorf("post-receive in %s: %w", gitDir, err))
	}
	return nil
}
