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
//   - The verb exits 0 when the check succeeded (or another worker holds
//     the lease) and 1 otherwise.
//   - --retries N runs a failed (or timed-out) command again, up to N more
//     times, before recording the failure; check.completed says how many
//     attempts it took ("attempts", omitted for one).
//   - check.started is a lease on (revision, check name) (docs/queue.md,
//     "CI once per candidate"): a check run that finds a live start — a
//     check.started of this name at this revision by a current holder of
//     hub.check:<name>, with no check.completed after it, younger than the
//     lease — does not run the command and exits 0. The lease is the
//     reader's --lease; by default (retries+1) × --timeout + 1 minute with a
//     timeout, else 30 minutes, so a crashed worker's start expires. The
//     start is appended as a compare-and-swap on the tip the lease was judged
//     on: when two workers race, the loser re-reads, sees the winner's live
//     start and steps aside.
//   - Batch checks (docs/queue.md): when the latest queue.candidate of the
//     pull request names the revision as a step inside a group (groupEnd
//     another step), the command does not run and the verb exits 0: the
//     group's last step is checked for it. --every-step runs it anyway.

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
	"github.com/gitplus/gitplus/receive/repo"
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
				&cli.IntFlag{Name: "retries", Usage: "run a failed command again up to N times before recording a failure"},
				&cli.BoolFlag{Name: "every-step", Usage: "run even on a candidate the queue marked as inside a batch group (only its group's last step needs checks)"},
				&cli.DurationFlag{Name: "lease", Usage: "how long another worker's check.started holds the check (default: (retries+1) × timeout + 1m, or 30m without a timeout)"},
				remoteFlag(),
			},
			Action: checkRun,
		},
	))
}

func checkRun(c *cli.Context) error {
	id, rev, name := c.String("pr"), c.String("rev"), c.String("name")
	argv := c.Args().Slice()
	if id == "" || rev == "" || name == "" || len(argv) == 0 || c.Int("retries") < 0 {
		return usageErr("usage: git+ check run --pr ID --rev REV --name NAME [--timeout D] [--retries N] [--lease D] -- CMD [ARGS...]")
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
	if err := needCap(w.Member, trust.CheckCap(name)); err != nil {
		return fail(1, err)
	}
	commit, err := w.Repo.ResolveCommit(rev)
	if err != nil {
		return fail(1, fmt.Errorf("--rev: %w", err))
	}
	if !c.Bool("every-step") {
		if end := groupInner(w.Repo, w.Trust, id, commit); end != "" {
			fmt.Fprintf(c.App.ErrWriter, "check %s on pull request %s at %s: the queue checks this candidate through its group's last step %s (batch checks, checkEvery); not running it\n", name, id, commit, end)
			return nil
		}
	}
	retries := c.Int("retries")
	lease := c.Duration("lease")
	if lease <= 0 {
		lease = 30 * time.Minute
		if d := c.Duration("timeout"); d > 0 {
			lease = time.Duration(retries+1)*d + time.Minute
		}
	}
	holder, err := startLease(w, id, name, commit, lease)
	if err != nil {
		return fail(1, err)
	}
	if holder != "" {
		fmt.Fprintf(c.App.ErrWriter, "check %s on pull request %s at %s: %s; not running it again\n", name, id, commit, holder)
		return nil
	}

	conclusion, attempts := pr.Failure, 0
	for attempts < retries+1 {
		attempts++
		conclusion, err = runCheckOnce(c, w.Repo.GitDir, commit, name, argv)
		if err != nil {
			return fail(1, err)
		}
		if conclusion == pr.Success {
			break
		}
		if attempts < retries+1 {
			fmt.Fprintf(c.App.ErrWriter, "check %s at %s: attempt %d %s; running it again\n", name, commit, attempts, conclusion)
		}
	}
	// Re-read the pull request so check.completed is judged on the new tip.
	if w.State, _, err = w.Repo.PRState(id, w.Trust); err != nil {
		return fail(1, err)
	}
	done := hubrefs.Check{Base: hubrefs.Base{Type: hubrefs.TypeCheckCompleted, Repo: w.Trust.RepoID}, Name: name, Head: commit, Conclusion: conclusion}
	if attempts > 1 {
		done.Attempts = attempts
	}
	if _, err := w.Write(done); err != nil {
		return fail(1, fmt.Errorf("the command finished (%s) but recording check.completed failed: %w", conclusion, err))
	}
	fmt.Fprintf(c.App.ErrWriter, "check %s on pull request %s at %s: %s (%d attempt(s))\n", name, id, commit, conclusion, attempts)
	if conclusion != pr.Success {
		return fail(1, errors.New(""))
	}
	return nil
}

// groupInner returns the group end when the latest queue.candidate of pull
// request id, in any queue, names commit as a step inside a batch group
// (docs/queue.md, "Batch checks"); "" otherwise, also when the queues
// cannot be read (the check then runs: running too much is safe).
func groupInner(h *hubRepo, t *trust.State, id, commit string) string {
	logs, _, err := h.QueueLogs(t)
	if err != nil {
		return ""
	}
	for _, q := range logs {
		if rec, ok := q.State.LatestCandidate(id); ok && rec.Step == commit && rec.GroupEnd != "" && rec.GroupEnd != rec.Step {
			return rec.GroupEnd
		}
	}
	return ""
}

// runCheckOnce checks commit out into a fresh temporary directory and runs
// argv there; the conclusion is success, failure or cancelled (timeout).
func runCheckOnce(c *cli.Context, gitDir, commit, name string, argv []string) (string, error) {
	tmp, err := os.MkdirTemp("", "gitplus-check-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	wt := filepath.Join(tmp, "tree")
	if err := checkout(gitDir, wt, commit); err != nil {
		return "", fmt.Errorf("checking %s out into a temporary directory: %w", commit, err)
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
	switch {
	case ctx.Err() != nil && runErr != nil:
		return pr.Cancelled, nil
	case runErr != nil:
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			fmt.Fprintf(c.App.ErrWriter, "git+: check %s: %v\n", name, runErr)
		}
		return pr.Failure, nil
	}
	return pr.Success, nil
}

// liveStart returns a description of the live lease on (name, rev) in the
// pull request's events, or "" when there is none (see the decisions).
func liveStart(evs []hubrefs.Event, t *trust.State, name, rev string, lease time.Duration, now time.Time) string {
	var start *hubrefs.Event
	for i := range evs {
		ev := evs[i]
		if ev.Type != hubrefs.TypeCheckStarted && ev.Type != hubrefs.TypeCheckCompleted {
			continue
		}
		var p hubrefs.Check
		if ev.Unmarshal(&p) != nil || p.Name != name || p.Head != rev || !t.Has(ev.Signer, trust.CheckCap(name)) {
			continue
		}
		if ev.Type == hubrefs.TypeCheckStarted {
			start = &evs[i]
		} else {
			start = nil
		}
	}
	if start == nil {
		return ""
	}
	until := time.Unix(start.Time, 0).Add(lease)
	if !now.Before(until) {
		return ""
	}
	who := fingerprint(start.Signer)
	if m, ok := t.MemberByKey(start.Signer); ok {
		who = m.Name
	}
	return fmt.Sprintf("already running: check.started %s by %s, lease until %s", start.ID, who, until.UTC().Format(time.RFC3339))
}

// startLease appends check.started unless a live start holds the check
// (then it returns who holds it). The append is a compare-and-swap on the
// tip the lease was judged on; a lost race re-reads and judges again.
func startLease(w *repo.PR, id, name, commit string, lease time.Duration) (holder string, err error) {
	begin := time.Now()
	for attempt := 1; ; attempt++ {
		st, evs, err := w.Repo.PRState(id, w.Trust)
		if err != nil {
			return "", err
		}
		w.State = st
		if holder := liveStart(evs, w.Trust, name, commit, lease, time.Now()); holder != "" {
			return holder, nil
		}
		started := hubrefs.Check{Base: hubrefs.Base{Type: hubrefs.TypeCheckStarted, Repo: w.Trust.RepoID}, Name: name, Head: commit}
		ev, err := newEvent(started, st.Tip, w.Key, time.Now())
		if err != nil {
			return "", err
		}
		if err := pr.Authorize(ev, st, w.Trust); err != nil {
			return "", fmt.Errorf("check.started on pull request %s refused, nothing written: %w", id, err)
		}
		_, err = hubrefs.Append(context.Background(), hubrefs.AppendOptions{
			GitDir: w.Repo.GitDir, Remote: w.Repo.Remote, Ref: hubrefs.PRRefPrefix + id, Payload: started,
			Signer: w.Key.Signer, Name: w.Member.Name, Ceilings: eventCeilings(w.Trust), Attempts: 1,
		})
		if err == nil {
			return "", nil
		}
		if !errors.Is(err, hubrefs.ErrStale) || time.Since(begin) > hubrefs.DefaultPatience {
			return "", fmt.Errorf("appending check.started to pull request %s: %w", id, err)
		}
		time.Sleep(hubrefs.Backoff(attempt))
		if w.Repo.Remote != "." {
			if err := hubrefs.Fetch(context.Background(), w.Repo.GitDir, w.Repo.Remote); err != nil {
				return "", err
			}
		}
		if err := w.Repo.Reopen(); err != nil {
			return "", err
		}
	}
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
