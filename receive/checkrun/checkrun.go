// Package checkrun is `git+ check run` as an importable package: run a
// command on a revision and record the result as a check of a pull request
// (docs/queue.md).
//
// Decisions:
//   - The revision is checked out into a temporary directory as a
//     repository of its own that borrows the repository's objects through
//     objects/info/alternates, with HEAD detached at the revision (it has no
//     branches or tags), and deleted afterwards. Nothing is registered in
//     the repository: `git worktree add` was used before, and a CI fleet's
//     parallel worktree adds and removes broke each other and, since
//     receive-pack reads every worktree's HEAD, the pushes recording their
//     results. A revision the repository lacks is fetched from its remote
//     first (fetchrev.go).
//   - check.started is appended before the command runs and check.completed
//     after: exit status 0 → success, a timeout (Options.Timeout) →
//     cancelled, any other status or a command that cannot start → failure.
//     Both events are judged with pr.Authorize first (hub.check:N).
//   - The command is the code under test and runs in a sandbox (sandbox.go,
//     receive/sandbox, docs/ci.md): an environment allowlist with a fresh
//     scratch HOME and TMPDIR beside the checkout, no capabilities, and
//     under Landlock only its checkout, scratch directory, caches and the
//     system and toolchain trees. How it will run is decided before
//     check.started: under Options.Sandbox.Mode required a kernel without
//     Landlock returns sandbox.ErrUnconfinable and nothing is recorded.
//     check.completed says how it ran ("sandbox").
//   - The command inherits the given standard input, output and error, runs
//     in its own process group, and the whole group is killed on timeout.
//   - Options.Retries runs a failed (or timed-out) command again, up to N
//     more times, before recording the failure; check.completed says how
//     many attempts it took ("attempts", omitted for one).
//   - No retry where it cannot pass (docs/queue.md, "Retries below a red
//     step"): before a retry it reads, in the queue whose latest
//     queue.candidate names the revision, the checked steps below it
//     (queue.Below). One that failed this check explains the failure: it is
//     recorded at once. One still without a verdict is waited for, at most
//     Options.BelowWait, looking every Options.Poll (a tenth of the wait,
//     at most 5s); then the retry runs whatever it says. By default
//     (BelowWait 0) the last step of a batch group of more than one waits
//     the timeout, or 10 minutes without one, and any other candidate does
//     not wait; a negative BelowWait never waits. A revision no queue names
//     is retried as before.
//   - No retry of a search step (docs/queue.md, "Searching a red group
//     aside", "A red strict step tried aside"; queue.SearchStep): when the
//     latest queue.candidate names the revision as a trial, as the last
//     step of a group of more than one (batch checks), or as a strict step
//     of a branch with partitions (checkEvery 1: a red one is tried aside,
//     alone on the target), a failure is recorded after one attempt
//     whatever Options.Retries says. The planner's search tests it again,
//     which is the retry; running it again first only delays the search
//     and holds up the steps built on it. A trial of one pull request is
//     retried as set (its red evicts it) only with Options.RetrySearch,
//     which retries every search step as any other candidate.
//   - check.started is a lease on (revision, check name) (docs/queue.md,
//     "CI once per candidate"): a run that finds a live start — a
//     check.started of this name at this revision by a current holder of
//     hub.check:<name>, with no check.completed after it, younger than the
//     lease (lease.go: by the reader's clock, and what it believes of a
//     start's time) — does not run the command. The lease is the reader's
//     Options.Lease; by default (retries+1) × timeout + retries ×
//     BelowWait + 1 minute with a timeout, else 30 minutes, so a crashed
//     worker's start expires. The start is appended as a compare-and-swap
//     on the tip the lease was judged on: when two workers race, the loser
//     re-reads, sees the winner's live start and steps aside — or, when the
//     winner has already recorded its completion by then, a completion
//     that was not there at the first read, and steps aside too.
//   - Batch checks (docs/queue.md): when the latest queue.candidate of the
//     pull request names the revision as a step inside a group (groupEnd
//     another step), the command does not run: the group's last step is
//     checked for it. Options.EveryStep runs it anyway.
//   - A lane's candidate (its queue.candidate names a partition) runs the
//     command with GITPLUS_CHECK_PARTITION and GITPLUS_CHECK_PATHS
//     (partition.go), and under Sandbox.ConfineReads with its reads of the checkout
//     confined to the partition's inputs, in a checkout without .git
//     (confine.go); check.completed then says "landlock-<N>+reads".
//   - For a long-running caller (`git+ check worker`, receive/checkworker):
//     Options.Context cancels a run (the command's process group is killed,
//     no retry follows, check.completed says cancelled); Options.Renew
//     appends check.started again at that interval while the command runs,
//     so a lease shorter than the run stays live while its worker does and
//     expires soon after a worker dies; Options.URL and Options.Output
//     (the output's tail) go into check.completed.
package checkrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/repo"
)

// Options say what to run, where, and how to record it.
type Options struct {
	PR      string   // the pull request (a full id)
	Rev     string   // the commit to test (a full id in the repository)
	Name    string   // the check name; the signer needs hub.check:<Name>
	Argv    []string // the command and its arguments
	Timeout time.Duration
	Retries int
	// Lease is how long another worker's check.started holds the check
	// (0: the default of the package doc).
	Lease time.Duration
	// Seen, when set, is a long-running reader's memory of when it first
	// saw each start (lease.go).
	Seen *Sightings
	// BelowWait bounds the wait, before a retry, for the verdict of a step
	// below the revision (0: the package doc's default; negative: no wait,
	// the retry runs unless a step below is already red); Poll is how often
	// it looks (0: the package doc's default).
	BelowWait, Poll time.Duration
	EveryStep       bool
	// RetrySearch applies Retries to search steps too (the package doc).
	RetrySearch bool
	// The command's standard streams. Log receives the run's progress
	// lines (Stderr when nil).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Log            io.Writer
	// Context, when set, cancels the run (the package doc).
	Context context.Context
	// Renew, when positive, re-appends check.started at this interval while
	// the command runs.
	Renew time.Duration
	// URL is recorded in check.completed; Output, when set, is called once
	// the command is done and its answer (the output's tail) recorded too.
	URL    string
	Output func() string
	// Worker names this run in its check.started events (default: a
	// random id), so that two runs signing with one key never write the
	// same event.
	Worker string
	// Sandbox is how the command is confined (sandbox.go, docs/ci.md).
	Sandbox Sandbox

	lane *lane // partition.go: what the command learns of its lane
	// reads, under Sandbox.ConfineReads, is the partition whose inputs
	// the command may read of its checkout (confine.go); nil: all of it.
	reads *trust.Partition
}

func (o Options) ctx() context.Context {
	if o.Context != nil {
		return o.Context
	}
	return context.Background()
}

// Result is what a run did.
type Result struct {
	// Skipped says why the command did not run ("" when it ran): another
	// worker's live lease, or a step inside a batch group.
	Skipped    string
	Lease      bool   // skipped because another worker's lease holds the check
	Conclusion string // pr.Success, pr.Failure or pr.Cancelled
	Attempts   int
	Event      string // the check.completed event id
}

// Run runs the check for the member s signs as and records it.
func Run(s *repo.Signing, o Options) (*Result, error) {
	if o.Log == nil {
		o.Log = o.Stderr
	}
	if err := repo.NeedCap(s.Member, trust.CheckCap(o.Name)); err != nil {
		return nil, err
	}
	// How the command will run, decided before anything is recorded:
	// --sandbox required on a kernel that cannot confine it stops here.
	box, err := o.prepare(s)
	if err != nil {
		return nil, err
	}
	// The queue records naming the revision, read once for the batch skip
	// and the search-step rule.
	recs := candidateRecords(s, o.PR, o.Rev)
	if !o.EveryStep {
		if end := groupInner(recs); end != "" {
			msg := fmt.Sprintf("the queue checks this candidate through its group's last step %s (batch checks, checkEvery)", end)
			fmt.Fprintf(o.Log, "check %s on pull request %s at %s: %s; not running it\n", o.Name, o.PR, o.Rev, msg)
			return &Result{Skipped: msg}, nil
		}
	}
	if err := EnsureRevision(s.Repo, o.Rev, o.Log); err != nil { // fetchrev.go
		return nil, err
	}
	lease := o.Lease
	if lease <= 0 {
		lease = 30 * time.Minute
		if o.Timeout > 0 {
			lease = time.Duration(o.Retries+1)*o.Timeout + time.Duration(o.Retries)*o.belowWait(true) + time.Minute
		}
	}
	if o.Worker == "" {
		o.Worker = randomWorker()
	}
	holder, err := startLease(s, o.PR, o.Name, o.Rev, o.Worker, lease, o.Seen)
	if err != nil {
		return nil, err
	}
	if holder != "" {
		fmt.Fprintf(o.Log, "check %s on pull request %s at %s: %s; not running it again\n", o.Name, o.PR, o.Rev, holder)
		return &Result{Skipped: holder, Lease: true}, nil
	}
	if o.Retries > 0 && !o.RetrySearch {
		if why := searchStep(recs, s.Trust.Rules); why != "" {
			fmt.Fprintf(o.Log, "check %s at %s: %s: a failure is not run again (the queue's search is its retry)\n", o.Name, o.Rev, why)
			o.Retries = 0
		}
	}
	if o.lane, err = laneOf(s.Repo.GitDir, recs, o.Rev); err != nil { // partition.go
		return nil, err
	}
	if o.Sandbox.ConfineReads && box.conf.Landlock() { // confine.go
		var why string
		if o.reads, why = confineTo(s.Trust.Rules, o.lane); o.reads != nil {
			fmt.Fprintf(o.Log, "check %s at %s: %s\n", o.Name, o.Rev, describeScope(o.reads))
		} else {
			fmt.Fprintf(o.Log, "check %s at %s: reads not confined to a partition: %s; the command reads its whole checkout\n", o.Name, o.Rev, why)
		}
	}
	how := record(box.conf, o.reads)
	base := ""
	if st, _, err := s.Repo.PRState(o.PR, s.Trust); err == nil {
		base = st.Base
	}
	res := &Result{Conclusion: pr.Failure}
	for res.Attempts < o.Retries+1 {
		res.Attempts++
		stop := renew(s, o)
		res.Conclusion, err = runOnce(s.Repo.GitDir, o, box, checkVars(o, base, res.Attempts, how))
		stop()
		if err != nil {
			return nil, err
		}
		if res.Conclusion == pr.Success || o.ctx().Err() != nil {
			break
		}
		if res.Attempts < o.Retries+1 {
			if red := redBelow(s, o); red != "" {
				fmt.Fprintf(o.Log, "check %s at %s: attempt %d %s; not running it again: %s\n", o.Name, o.Rev, res.Attempts, res.Conclusion, red)
				break
			}
			fmt.Fprintf(o.Log, "check %s at %s: attempt %d %s; running it again\n", o.Name, o.Rev, res.Attempts, res.Conclusion)
		}
	}
	// Re-read the pull request so check.completed is judged on the new tip.
	p, err := s.PR(o.PR)
	if err != nil {
		return nil, err
	}
	done := hubrefs.Check{Base: hubrefs.Base{Type: hubrefs.TypeCheckCompleted, Repo: s.Trust.RepoID}, Name: o.Name, Head: o.Rev, Conclusion: res.Conclusion, URL: o.URL,
		Sandbox: how}
	if o.Output != nil {
		done.Output = o.Output()
	}
	if res.Attempts > 1 {
		done.Attempts = res.Attempts
	}
	if res.Event, err = p.Write(done); err != nil {
		return nil, fmt.Errorf("the command finished (%s) but recording check.completed failed: %w", res.Conclusion, err)
	}
	fmt.Fprintf(o.Log, "check %s on pull request %s at %s: %s (%d attempt(s))\n", o.Name, o.PR, o.Rev, res.Conclusion, res.Attempts)
	return res, nil
}

// belowWait is how long a retry of a candidate waits for a step below
// without a verdict: grouped says the candidate is the last step of a batch
// group of more than one (docs/queue.md, "Retries below a red step").
func (o Options) belowWait(grouped bool) time.Duration {
	switch {
	case o.BelowWait < 0:
		return 0
	case o.BelowWait > 0:
		return o.BelowWait
	case !grouped:
		return 0
	case o.Timeout > 0:
		return o.Timeout
	}
	return 10 * time.Minute
}

// redBelow is the retry rule of the package doc: it returns why a retry of
// o.Rev cannot pass (a checked step below it failed the check), or "" when
// the retry should run. It waits, within o.belowWait, while a step below
// has no verdict. Reading errors answer "" (retrying too much is safe).
func redBelow(s *repo.Signing, o Options) string {
	var deadline time.Time
	var poll time.Duration
	for first := true; ; first = false {
		v, at, q, grouped := below(s, o)
		if first {
			// How long it may wait is decided on the first look: the
			// record read then is the one the failed attempt ran for.
			wait := o.belowWait(grouped)
			deadline, poll = time.Now().Add(wait), o.Poll
			if poll <= 0 {
				poll = min(5*time.Second, max(wait/10, 50*time.Millisecond))
			}
		}
		switch {
		case v == queue.BelowRed:
			return fmt.Sprintf("step %s below it in queue %s failed %s, so this candidate cannot pass", at, q, o.Name)
		case v == queue.BelowPending && time.Now().Before(deadline):
			if first {
				fmt.Fprintf(o.Log, "check %s at %s: waiting (at most %s) for the verdict of step %s below it before running it again\n", o.Name, o.Rev, time.Until(deadline).Round(time.Second), at)
			}
			time.Sleep(poll)
			if s.Repo.Refresh() != nil {
				return ""
			}
		default:
			return ""
		}
	}
}

// below reads queue.Below for o.Rev in the queue whose latest
// queue.candidate for o.PR names it, and whether that record marks it the
// last step of a group of more than one.
func below(s *repo.Signing, o Options) (v queue.BelowVerdict, at, queueID string, grouped bool) {
	recs := candidateRecords(s, o.PR, o.Rev)
	if len(recs) == 0 {
		return queue.BelowClear, "", "", false
	}
	q, queueID, rec := recs[0].q, recs[0].id, recs[0].rec
	prs := map[string]*pr.State{}
	v, at = queue.Below(q, o.Rev, func(id, step string) (string, bool) {
		p, ok := prs[id]
		if !ok {
			p, _, _ = s.Repo.PRState(id, s.Trust)
			prs[id] = p
		}
		if p == nil {
			return "", false
		}
		return p.Check(o.Name, step)
	})
	return v, at, queueID, rec.GroupEnd == rec.Step && rec.GroupSize > 1
}

// candidateRecords are the queues (in id order) whose latest
// queue.candidate for pull request prID names commit, with that record;
// none when the queues cannot be read.
func candidateRecords(s *repo.Signing, prID, commit string) []queueRecord {
	logs, _, err := s.Repo.QueueLogs(s.Trust)
	if err != nil {
		return nil
	}
	var out []queueRecord
	for _, id := range slices.Sorted(maps.Keys(logs)) {
		q := logs[id].State
		if rec, ok := q.LatestCandidate(prID); ok && rec.Step == commit {
			out = append(out, queueRecord{q, id, rec})
		}
	}
	return out
}

// queueRecord is a queue and its latest queue.candidate for a pull request.
type queueRecord struct {
	q   *queue.State
	id  string
	rec queue.Recorded
}

// groupInner returns the group end when one of recs (candidateRecords)
// names its commit as a step inside a batch group (docs/queue.md, "Batch
// checks"); "" otherwise, also when the queues could not be read (the check
// then runs: running too much is safe).
func groupInner(recs []queueRecord) string {
	for _, r := range recs {
		if r.rec.GroupEnd != "" && r.rec.GroupEnd != r.rec.Step {
			return r.rec.GroupEnd
		}
	}
	return ""
}

// searchStep says why the commit recs (candidateRecords) name is a step of
// the queue's search (queue.SearchStep: a trial, the last step of a group
// of more than one, a strict step of a branch with partitions, tried aside
// when red), or "" (also when the queues could not be read: retrying as
// asked is safe).
func searchStep(recs []queueRecord, rules trust.Rules) string {
	for _, r := range recs {
		if r.q == nil {
			continue
		}
		b, _ := rules.For(r.q.Target)
		if why := queue.SearchStep(r.q, r.rec, b); why != "" {
			return why
		}
	}
	return ""
}

// runOnce checks o.Rev out into a fresh temporary directory and runs the
// command there, confined as box says, with a scratch directory of its own
// beside the checkout; the conclusion is success, failure or cancelled
// (timeout).
func runOnce(gitDir string, o Options, box *confined, vars []string) (string, error) {
	tmp, err := os.MkdirTemp("", "gitplus-check-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	wt := filepath.Join(tmp, "tree")
	var inputs []string // confine.go: what of the checkout it reads; nil: all
	if o.reads == nil {
		err = Checkout(gitDir, wt, o.Rev)
	} else if err = checkout(gitDir, wt, filepath.Join(tmp, "git"), o.Rev); err == nil {
		inputs, err = inputGrants(gitDir, o.Rev, wt, o.reads)
	}
	if err != nil {
		return "", fmt.Errorf("checking %s out into a temporary directory: %w", o.Rev, err)
	}
	var reads []string
	if o.lane != nil {
		lv, file, err := o.lane.write(tmp) // partition.go
		if err != nil {
			return "", err
		}
		vars, reads = append(vars, lv...), append(reads, file)
	}
	sc, err := box.command(o, wt, filepath.Join(tmp, "scratch"), vars, reads, inputs)
	if err != nil {
		return "", err
	}
	ctx := o.ctx()
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	cmd, release, err := sc.Cmd(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	cmd.Env = sc.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	switch {
	case ctx.Err() != nil && runErr != nil:
		return pr.Cancelled, nil
	case runErr != nil:
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			fmt.Fprintf(o.Log, "git+: check %s: %v\n", o.Name, runErr)
		}
		if o.reads != nil && o.Stderr != nil {
			// Last in the output, so the tail check.completed keeps says
			// why a read may have been refused.
			fmt.Fprintf(o.Stderr, "git+ check: this run's %s (and no .git); a read refused above (\"Permission denied\") is of an input the partition does not declare: add it to the partition's reads (docs/ci.md, \"Confining reads to a partition\")\n", describeScope(o.reads))
		}
		return pr.Failure, nil
	}
	return pr.Success, nil
}

// renew starts re-appending check.started every o.Renew (when positive)
// and returns the function that stops it and waits for it.
func renew(s *repo.Signing, o Options) func() {
	if o.Renew <= 0 {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(o.Renew)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			started := hubrefs.Check{Base: hubrefs.Base{Type: hubrefs.TypeCheckStarted, Repo: s.Trust.RepoID}, Name: o.Name, Head: o.Rev, Worker: o.Worker}
			_, err := hubrefs.Append(o.ctx(), hubrefs.AppendOptions{
				GitDir: s.Repo.GitDir, Remote: s.Repo.Remote, Ref: hubrefs.PRRefPrefix + o.PR, Payload: started,
				Signer: s.Key.Signer, Name: s.Member.Name, Ceilings: repo.EventCeilings(s.Trust), Patience: o.Renew,
			})
			if err != nil && o.ctx().Err() == nil {
				fmt.Fprintf(o.Log, "check %s at %s: renewing the lease: %v\n", o.Name, o.Rev, err)
			}
		}
	}()
	return func() { close(quit); <-done }
}

// randomWorker is a run's default worker name: the host and 6 random bytes.
func randomWorker() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	host, _ := os.Hostname()
	if len(host) > 64 {
		host = host[:64]
	}
	return host + "/" + hex.EncodeToString(b[:])
}

// Checkout makes dir a repository whose objects are gitDir's (alternates)
// and checks commit out there, detached.
func Checkout(gitDir, dir, commit string) error { return checkout(gitDir, dir, "", commit) }

// checkout is Checkout with the repository at apart when it is not "": a
// bare repository outside dir, which then holds the tree's files alone
// (confine.go).
func checkout(gitDir, dir, apart, commit string) error {
	objects, err := repo.Git(gitDir, "rev-parse", "--git-path", "objects")
	if err != nil {
		return err
	}
	// git prints it relative to the directory it ran in (this process's)
	// when the git directory was given relative; the alternates file
	// needs it absolute.
	if objects, err = filepath.Abs(objects); err != nil {
		return err
	}
	repoDir := filepath.Join(dir, ".git")
	if apart == "" {
		_, err = repo.Git("", "init", "-q", dir)
	} else if _, err = repo.Git("", "init", "-q", "--bare", apart); err == nil {
		repoDir, err = apart, os.Mkdir(dir, 0o755)
	}
	if err != nil {
		return err
	}
	alt := filepath.Join(repoDir, "objects", "info", "alternates")
	if err := os.WriteFile(alt, []byte(objects+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", alt, err)
	}
	_, err = repo.Git(repoDir, "--work-tree="+dir, "checkout", "-q", "--detach", commit)
	return err
}
