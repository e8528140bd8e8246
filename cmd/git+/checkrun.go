package main

// git+ check run --pr ID --rev REV --name N [--timeout D] -- CMD...: run a
// command on a revision and record the result as the check N of pull
// request ID (docs/queue.md).
//
// Decisions:
//   - The revision is checked out into a temporary directory as a
//     repository of its own that borrows the repository's objects through
//     objects/info/alternates, with HEAD detached at the revision (it has no
//     branches or tags), and deleted afterwards. Nothing is registered in
//     the repository: `git worktree add` was used before, and a CI fleet's
//     parallel worktree adds and removes broke each other and, since
//     receive-pack reads every worktree's HEAD, the pushes recording their
//     results. The revision must be in the repository (fetch the candidate
//     branch first).
//   - check.started is appended before the command runs and check.completed
//     after: exit status 0 → success, a timeout (--timeout) → cancelled, any
//     other status or a command that cannot start → failure. Both events are
//     judged with pr.Authorize first (hub.check:N).
//   - The command inherits standard input, output and error, runs in its own
//     process group, and the whole group is killed on timeout.
//   - The verb exits 0 when the check succeeded and 1 otherwise.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

func init() {
	register(hubGroup("check", "run a command on a revision and record it as a check",
		&cli.Command{
			Name:      "run",
			Usage:     "check REV out into a temporary worktree, run CMD there, record check.started and check.completed",
			ArgsUsage: "-- CMD [ARGS...]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "pr", Usage: "the pull request the check belongs to"},
				&cli.StringFlag{Name: "rev", Usage: "the revision to test (a candidate branch or commit)"},
				&cli.StringFlag{Name: "name", Usage: "the check name (needs hub.check:NAME)"},
				&cli.DurationFlag{Name: "timeout", Usage: "cancel the command after this long (0: no limit)"},
				remoteFlag(),
			},
			Action: checkRun,
		},
	))
}

func checkRun(c *cli.Context) error {
	id, rev, name := c.String("pr"), c.String("rev"), c.String("name")
	argv := c.Args().Slice()
	if id == "" || rev == "" || name == "" || len(argv) == 0 {
		return usageErr("usage: git+ check run --pr ID --rev REV --name NAME [--timeout D] -- CMD [ARGS...]")
	}
	if err := trust.ValidCheckName(name); err != nil {
		return usageErr("--name: %v", err)
	}
	id, err := resolveArgID(c, hubrefs.PRRefPrefix, "pull request", id) // a full id or an unambiguous prefix
	if err != nil {
		return err
	}
	w, err := prContext(c, id)
	if err != nil {
		return fail(1, err)
	}
	if err := needCap(w.m, trust.CheckCap(name)); err != nil {
		return fail(1, err)
	}
	commit, err := w.h.resolveCommitID(rev)
	if err != nil {
		return fail(1, fmt.Errorf("--rev: %w", err))
	}

	tmp, err := os.MkdirTemp("", "gitplus-check-")
	if err != nil {
		return fail(1, err)
	}
	defer os.RemoveAll(tmp)
	wt := filepath.Join(tmp, "tree")
	if err := checkout(w.h.GitDir, wt, commit); err != nil {
		return fail(1, fmt.Errorf("checking %s out into a temporary directory: %w", commit, err))
	}

	started := hubrefs.Check{Base: hubrefs.Base{Type: hubrefs.TypeCheckStarted, Repo: w.t.RepoID}, Name: name, Head: commit}
	if _, err := w.write(id, started); err != nil {
		return fail(1, err)
	}
	// Re-read the pull request so check.completed is judged on the new tip.
	if w.st, _, err = w.h.prState(id, w.t); err != nil {
		return fail(1, err)
	}

	ctx := context.Background()
	if d := c.Duration("timeout"); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = wt
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, c.App.Writer, c.App.ErrWriter
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	conclusion := pr.Success
	switch {
	case ctx.Err() != nil && runErr != nil:
		conclusion = pr.Cancelled
	case runErr != nil:
		conclusion = pr.Failure
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			fmt.Fprintf(c.App.ErrWriter, "git+: check %s: %v\n", name, runErr)
		}
	}
	done := hubrefs.Check{Base: hubrefs.Base{Type: hubrefs.TypeCheckCompleted, Repo: w.t.RepoID}, Name: name, Head: commit, Conclusion: conclusion}
	if _, err := w.write(id, done); err != nil {
		return fail(1, fmt.Errorf("the command finished (%s) but recording check.completed failed: %w", conclusion, err))
	}
	fmt.Fprintf(c.App.ErrWriter, "check %s on pull request %s at %s: %s\n", name, id, commit, conclusion)
	if conclusion != pr.Success {
		return fail(1, errors.New(""))
	}
	return nil
}

// checkout makes dir a repository whose objects are gitDir's (alternates)
// and checks commit out there, detached.
func checkout(gitDir, dir, commit string) error {
	objects, err := gitOut(gitDir, "rev-parse", "--git-path", "objects")
	if err != nil {
		return err
	}
	objects = strings.TrimSpace(objects)
	// git prints it relative to the directory it ran in (this process's)
	// when the git directory was given relative; the alternates file
	// needs it absolute.
	if objects, err = filepath.Abs(objects); err != nil {
		return err
	}
	if _, err := gitOut("", "init", "-q", dir); err != nil {
		return err
	}
	alt := filepath.Join(dir, ".git", "objects", "info", "alternates")
	if err := os.WriteFile(alt, []byte(objects+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", alt, err)
	}
	_, err = gitOut(filepath.Join(dir, ".git"), "--work-tree="+dir, "checkout", "-q", "--detach", commit)
	return err
}
