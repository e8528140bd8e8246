// Package checkworker is `git+ check worker`: a long-running CI worker that
// runs a check on every candidate the merge queue publishes and records
// it (docs/queue.md, "Check workers"). Any number of workers, on any
// machines, each in its own clone of the served repository, share the work
// through the check.started lease.
//
// Decisions:
//   - Candidates are learnt from the remote's candidate branches
//     (refs/heads/queue/<target>/<pr>, git ls-remote): the branch names the
//     pull request and its value the commit to test. Polling backs off while
//     nothing is new (Options.PollMin doubling up to Options.PollMax) and
//     starts again from PollMin when something was; a value sent on
//     Options.Wake (a webhook receiver, a signal) polls at once.
//   - Each run is receive/checkrun's Run, unchanged in its rules: the lease
//     (a live check.started of another worker: not run), batch rules (a step
//     inside a group: not run), retries (none below a red step or on a
//     search step), the timeout. A run happens in a job slot: a bare
//     repository of its own under <git dir>/gitplus/check-worker/<name>/
//     that borrows the clone's objects (alternates) and fetches the hub refs
//     and the candidate into itself, so K jobs never write the same refs
//     and the clone itself is not written.
//   - A candidate is run while the queue's verdict of the step misses the
//     check (need.go): not once it is recorded, but again when an eviction
//     cited the recorded failure and the pull request came back to the
//     same candidate commit. A head is run while no success or failure of
//     it is recorded.
//   - Superseded runs are cancelled: while runs are active the worker
//     reads the candidate branches every Options.Tick (default 1 s); a run
//     whose branch moved or was deleted (the entry left the queue, or the
//     queue rebuilt the candidate) is cancelled: the command's process group
//     is killed and check.completed records cancelled.
//   - The lease (Options.Lease, default 2 minutes) is renewed while the
//     command runs (check.started again every third of it), so a run longer
//     than the lease keeps it, and a worker killed with SIGKILL leaves a
//     lease that expires within Options.Lease: another worker then takes
//     the candidate. A worker counts another's lease from when it first saw
//     the start (checkrun.Sightings, noted by every look and every run), so
//     neither holder's nor reader's clock being off stretches or cuts it
//     (docs/queue.md, "Clocks and leases").
//   - Stopping (the context ends, SIGTERM in the verb) cancels the running
//     commands, records them cancelled (closing their leases) and returns:
//     no lease is left behind.
//   - The check is also run at the heads of pull requests whose base
//     requires it without queue candidates (heads.go).
//   - Every command runs in checkrun's sandbox (Options.Sandbox, docs/ci.md),
//     decided once when the worker starts: under --sandbox required a
//     kernel without Landlock stops the worker there, and so does
//     --confine-reads (a lane candidate's reads confined to its
//     partition's inputs, checkrun's confine.go). The worker makes
//     itself non-dumpable and keeps its clone out of the commands' reach.
//   - The remote's password (a member token) is on no command line: its
//     git processes get the URL without it and the password through a
//     credential helper in their environment (credentials.go), since any
//     process reads any other's command line.
//   - check.completed carries the tail of the command's output (at most
//     hubrefs.MaxCheckOutput bytes, valid UTF-8) and Options.URL with {pr},
//     {rev} and {name} replaced.
package checkworker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/checkrun"
	"github.com/gitplus/gitplus/receive/gitio"
	"github.com/gitplus/gitplus/receive/repo"
	"github.com/gitplus/gitplus/receive/sandbox"
)

// CandidatePrefix is where the queue publishes candidates.
const CandidatePrefix = "refs/heads/queue/"

// Options say what a worker runs and how.
type Options struct {
	GitDir  string    // the worker's clone (its git directory)
	Remote  string    // a remote name of the clone, a URL or a path
	Key     *repo.Key // signs the records; its member needs hub.check:<Name>
	Name    string    // the check name
	Argv    []string  // the command
	Jobs    int       // runs at once (default 1)
	Retries int
	Timeout time.Duration
	Lease   time.Duration // default 2 minutes
	// EveryStep runs steps inside batch groups too (checkrun.Options).
	EveryStep bool
	// PollMin and PollMax bound the idle polling (defaults 1 s and 30 s);
	// Tick is the supersession check while runs are active (default 1 s).
	PollMin, PollMax, Tick time.Duration
	URL                    string // recorded in check.completed ({pr}, {rev}, {name})
	Wake                   <-chan struct{}
	Log                    io.Writer // one line per decision (nil: none)
	// Env is added to the environment of the worker's git processes.
	Env []string
	// NoHeads checks queue candidates only, not the heads of pull requests
	// whose base requires the check without queue candidates (heads.go).
	NoHeads bool
	// Sandbox is how every run's command is confined (checkrun.Sandbox,
	// docs/ci.md); the clone's git directory is kept out of its reach.
	Sandbox checkrun.Sandbox
}

// maxRunsPerCandidate bounds one worker's runs of one candidate commit: a
// pull request entered again after an eviction needs a second run of the
// same commit, a command that always times out should not loop forever.
const maxRunsPerCandidate = 3

// DefaultLease is a worker's lease.
const DefaultLease = 2 * time.Minute

type candidate struct {
	branch, pr, commit string
	head               bool // a pull request's head (heads.go), keyed by its ref; else a candidate branch
}

type outcome struct {
	branch, key string
	again       bool // not run because another worker's lease holds it, or a failure to read: look again
}

type running struct {
	c      candidate
	cancel context.CancelFunc
	why    string // why it was cancelled ("" while not)
}

// Run works until ctx ends, then cancels what runs and returns nil once
// every run is recorded.
func Run(ctx context.Context, o Options) error {
	if o.Jobs <= 0 {
		o.Jobs = 1
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.PollMin <= 0 {
		o.PollMin = time.Second
	}
	if o.PollMax < o.PollMin {
		o.PollMax = max(30*time.Second, o.PollMin)
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if len(o.Argv) == 0 || o.Name == "" || o.Key == nil {
		return errors.New("a check worker needs a check name, a signing key and a command")
	}
	url, err := remoteURL(o.GitDir, o.Remote)
	if err != nil {
		return err
	}
	// How the commands will run, said once: --sandbox required on a kernel
	// that cannot confine them stops the worker before it takes anything.
	box, err := o.Sandbox.Decide()
	if err != nil {
		return err
	}
	if !box.Off {
		if err := sandbox.ProtectSelf(); err != nil {
			return fmt.Errorf("making the worker non-dumpable: %w", err)
		}
	}
	o.Sandbox.Quiet = true
	o.Sandbox.Deny = append(o.Sandbox.Deny, o.GitDir)
	// The remote's password leaves every command line (credentials.go).
	bare, creds := hideCredentials(url, os.Getenv)
	if err := useCredentials(creds); err != nil {
		return err
	}
	w := &worker{o: o, url: bare, log: &lockedWriter{w: o.Log, secret: url, shown: redact(url)}, seen: checkrun.NewSightings(max(10*o.Lease, time.Hour))}
	w.logf("check worker %s: check %s from %s, %d job(s): %s", repo.Fingerprint(o.Key.Signer.PublicKey()), o.Name, url, o.Jobs, strings.Join(o.Argv, " "))
	w.logf("%s", o.Sandbox.Describe(box))
	return w.loop(ctx)
}

type worker struct {
	o    Options
	url  string
	log  *lockedWriter
	scan *scan // used by the loop's goroutine only
	// seen remembers when each check.started was first seen (the lease
	// counts from it: checkrun's lease.go); watching once a look succeeded.
	seen *checkrun.Sightings
}

// lockedWriter serialises the log lines of the runs, and writes the
// remote's URL with its password (a member token) hidden.
type lockedWriter struct {
	mu            sync.Mutex
	w             io.Writer
	secret, shown string
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := p
	if l.secret != l.shown {
		out = bytes.ReplaceAll(p, []byte(l.secret), []byte(l.shown))
	}
	if _, err := l.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *worker) logf(format string, a ...any) {
	fmt.Fprintf(w.log, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, a...))
}

func (w *worker) loop(ctx context.Context) error {
	slots := make(chan int, w.o.Jobs)
	for i := 0; i < w.o.Jobs; i++ {
		slots <- i
	}
	runs := map[string]*running{} // by branch
	finished := make(chan outcome, w.o.Jobs)
	later := map[string]time.Time{} // branch + commit held by another worker's lease: look again then
	ran := map[string]int{}         // runs of branch + commit by this worker
	idle := w.o.PollMin
	for {
		if ctx.Err() != nil {
			for _, r := range runs {
				r.why = "the worker is stopping"
				r.cancel()
			}
			for len(runs) > 0 {
				delete(runs, (<-finished).branch)
			}
			w.logf("check worker stopped")
			return nil
		}
		cands, need, err := w.look(ctx)
		if err != nil && ctx.Err() == nil {
			w.logf("reading the candidates at %s: %v", w.url, err)
		}
		if err == nil {
			w.seen.Watch() // what the first look read was there before this worker
		}
		if err == nil {
			for b, r := range runs {
				if r.why != "" {
					continue
				}
				if c, ok := cands[b]; !ok && r.c.head {
					r.why = "pull request " + r.c.pr + " is no longer open, or its head moved"
				} else if !ok {
					r.why = "its candidate branch " + b + " was deleted"
				} else if c.commit != r.c.commit {
					r.why = "its candidate branch " + b + " moved to " + c.commit
				}
				if r.why != "" {
					w.logf("cancelling the run of %s at %s: %s", r.c.pr, r.c.commit, r.why)
					r.cancel()
				}
			}
		}
		started := false
		for _, b := range sortedKeys(cands) {
			c := cands[b]
			key := b + " " + c.commit
			if runs[b] != nil || !need[b] || time.Now().Before(later[key]) || len(slots) == 0 {
				continue
			}
			if ran[key] >= maxRunsPerCandidate {
				if ran[key] == maxRunsPerCandidate {
					w.logf("%s at %s still needs check %s after %d runs here (timeouts?); leaving it to other workers", b, c.commit, w.o.Name, ran[key])
					ran[key]++
				}
				continue
			}
			retried := !later[key].IsZero()
			slot := <-slots
			rctx, cancel := context.WithCancel(ctx)
			r := &running{c: c, cancel: cancel}
			runs[b] = r
			started = started || !retried
			go func() {
				again := false
				defer func() { slots <- slot; cancel(); finished <- outcome{c.branch, key, again} }()
				again = w.runOne(rctx, slot, c)
			}()
		}
		wait := w.o.Tick
		switch {
		case started:
			idle = w.o.PollMin
		case len(runs) > 0:
			idle = w.o.PollMin
		default:
			wait = idle
			idle = min(idle*2, w.o.PollMax)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case f := <-finished:
			delete(runs, f.branch)
			if !f.again {
				ran[f.key]++
			}
			if f.again {
				later[f.key] = time.Now().Add(2 * w.o.PollMin)
			} else {
				delete(later, f.key)
				idle = w.o.PollMin
			}
		case <-w.o.Wake:
			w.logf("woken: looking for candidates now")
			idle = w.o.PollMin
		case <-timer.C:
		}
		timer.Stop()
	}
}

func sortedKeys(m map[string]candidate) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// runOne runs the check on candidate c in job slot n. It reports whether
// the candidate should be looked at again (another worker's lease held
// it, or something failed before the run).
func (w *worker) runOne(ctx context.Context, n int, c candidate) bool {
	slot, err := w.slot(n)
	if err != nil {
		w.logf("job slot %d: %v", n, err)
		return true
	}
	if c.head {
		if err := w.fetchCommit(ctx, slot, c.commit); err != nil {
			if ctx.Err() == nil {
				w.logf("fetching the head %s of pull request %s: %v", c.commit, c.pr, err)
			}
			return true
		}
	} else if err := gitio.Fetch(ctx, slot, w.url, w.o.Env, "+"+c.branch+":refs/check-worker/candidate"); err != nil {
		if ctx.Err() == nil {
			w.logf("fetching %s: %v", c.branch, err)
		}
		return true
	}
	if got, err := gitio.ReadRef(slot, "refs/check-worker/candidate"); !c.head && (err != nil || got != plumbing.NewHash(c.commit)) {
		w.logf("%s moved before its run began; the next look takes the new candidate", c.branch)
		return false
	}
	r, err := repo.Open(slot, w.url)
	if err != nil {
		w.logf("opening %s: %v", slot, err)
		return true
	}
	defer r.Close()
	s, err := repo.OpenSigning(r, w.o.Key, trust.CheckCap(w.o.Name))
	if err != nil {
		w.logf("%v", err)
		return true
	}
	st, _, err := r.PRState(c.pr, s.Trust)
	if err != nil {
		w.logf("pull request %s of %s: %v", c.pr, c.branch, err)
		return true
	}
	queues := map[string]*queue.State(nil)
	if !c.head {
		queues = queueStates(r, s.Trust)
	}
	if ok, why := needsRun(s.Trust, queues, st, w.o.Name, c.commit); !ok {
		w.logf("check %s at %s (pull request %s) needs no run: %s", w.o.Name, c.commit, c.pr, why)
		return false
	}
	tail := checkrun.NewTail(hubrefs.MaxCheckOutput)
	url := strings.NewReplacer("{pr}", c.pr, "{rev}", c.commit, "{name}", w.o.Name).Replace(w.o.URL)
	w.logf("running check %s on %s (pull request %s at %s)", w.o.Name, c.branch, c.pr, c.commit)
	res, err := checkrun.Run(s, checkrun.Options{PR: c.pr, Rev: c.commit, Name: w.o.Name, Argv: w.o.Argv,
		Timeout: w.o.Timeout, Retries: w.o.Retries, Lease: w.o.Lease, Seen: w.seen, Renew: w.o.Lease / 3, EveryStep: w.o.EveryStep,
		Context: ctx, URL: url, Output: tail.String, Stdout: tail, Stderr: tail, Log: w.log, Sandbox: w.o.Sandbox})
	switch {
	case err != nil:
		w.logf("check %s at %s: %v", w.o.Name, c.commit, err)
		return ctx.Err() == nil
	case res.Skipped != "":
		w.logf("check %s at %s not run: %s", w.o.Name, c.commit, res.Skipped)
		return res.Lease
	}
	w.logf("check %s at %s (pull request %s): %s", w.o.Name, c.commit, c.pr, res.Conclusion)
	return false
}

// fetchCommit brings commit into slot: by its id (a server that allows
// it), else with the remote's branches.
func (w *worker) fetchCommit(ctx context.Context, slot, commit string) error {
	has := func() bool {
		_, err := repo.Git(slot, "cat-file", "-e", commit+"^{commit}")
		return err == nil
	}
	if has() {
		return nil
	}
	if err := gitio.Fetch(ctx, slot, w.url, w.o.Env, commit); err == nil && has() {
		return nil
	}
	if err := gitio.Fetch(ctx, slot, w.url, w.o.Env, "+refs/heads/*:refs/check-worker/heads/*"); err != nil {
		return err
	}
	if !has() {
		return fmt.Errorf("commit %s is on no branch of %s", commit, w.url)
	}
	return nil
}

// slot makes (once) and returns job slot n's bare repository.
func (w *worker) slot(n int) (string, error) {
	return w.slotNamed(fmt.Sprintf("slot%d.git", n))
}

// slotNamed makes (once) and returns the worker's bare repository name.
func (w *worker) slotNamed(name string) (string, error) {
	dir := filepath.Join(w.o.GitDir, "gitplus", "check-worker", safeName(w.o.Name), name)
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		return dir, nil
	}
	if _, err := repo.Git("", "init", "-q", "--bare", dir); err != nil {
		return "", err
	}
	objects, err := filepath.Abs(filepath.Join(w.o.GitDir, "objects"))
	if err != nil {
		return "", err
	}
	alt := filepath.Join(dir, "objects", "info", "alternates")
	if err := os.WriteFile(alt, []byte(objects+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", alt, err)
	}
	return dir, nil
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// remoteURL is the URL of remote as seen from the clone at gitDir: a
// configured remote's url (a relative path made absolute), else remote
// itself.
func remoteURL(gitDir, remote string) (string, error) {
	if remote == "" {
		remote = "origin"
	}
	u, err := repo.Git(gitDir, "config", "--get", "remote."+remote+".url")
	if err != nil || strings.TrimSpace(u) == "" {
		u = remote
	}
	u = strings.TrimSpace(u)
	if !strings.Contains(u, "://") && !strings.Contains(u, ":") || strings.HasPrefix(u, ".") || strings.HasPrefix(u, "/") {
		if !filepath.IsAbs(u) {
			base := gitDir
			if filepath.Base(gitDir) == ".git" {
				base = filepath.Dir(gitDir)
			}
			u = filepath.Join(base, u)
		}
		if _, err := os.Stat(u); err != nil {
			return "", fmt.Errorf("remote %q of %s: %w", remote, gitDir, err)
		}
	}
	return u, nil
}

// redact hides the password (a member token) of a URL for the log.
func redact(u string) string {
	x, err := neturl.Parse(u)
	if err != nil || x.User == nil {
		return u
	}
	if _, ok := x.User.Password(); ok {
		x.User = neturl.UserPassword(x.User.Username(), "xxxxx")
	}
	return x.String()
}
