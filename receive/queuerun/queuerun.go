// Package queuerun is the executor of the merge queue: `git+ queue run` as
// an importable package. A pass reads the state once, asks the pure planner
// (hubrefs/queue.PlanPass) what to do, carries the whole plan out in one
// `git push --atomic` with an expected old value on every ref it moves, then
// reads the state again and plans again, until a plan has nothing to do
// (bounded by Options.MaxRounds, reported). docs/queue.md explains the
// rules; this comment lists the decisions of the code.
//
// Decisions:
//   - One phase, one push. The events a plan appends (queue.left,
//     queue.entered, queue.reset, queue.candidate on the queue ref; pr.merged
//     on pull request refs), the landing of the target and the candidate
//     branches it publishes, restores or deletes travel in a single atomic
//     push. Each hub ref gets a single chain of single-parent events on the
//     tip the plan was made from, and that tip is the push's expected old
//     value: a moved tip fails the whole push as stale, and the pass re-reads
//     and re-plans; it never re-appends a decision taken on old state. A
//     landing and its records therefore appear together or not at all, so no
//     other pass can see the target holding a head whose queue.left is not
//     written yet.
//   - The hook judges every update against the refs before the push, so the
//     pull requests a landing carries are still open when it judges the
//     target, and their pr.merged is judged on the same state.
//   - A hook refusal that names the target refuses the landing: it is
//     reported under Refused, the landing is left out of the plan for the rest
//     of the pass (its candidates stand) and the rest of the phase is pushed
//     again. Any other refusal stops the pass with an error.
//   - A push that fails in transport (broken pipe, a killed connection: git
//     exits without reporting the refs) is retried after re-reading, with
//     backoff and jitter, at most TransportRetries times; never fatal at once.
//   - queue.reset is appended only when the target moved to a commit that is
//     no candidate step this queue recorded (someone landed outside the
//     queue) and a step is republished because of it; never for a stale push
//     of our own, nor when another runner landed exactly our chain.
//   - One pass per queue at a time on a repository: an flock on
//     <gitdir>/gitplus/queue/<target>.lock. A pass that finds it held marks
//     <target>.dirty and exits 0 (Report.Deferred); the holder goes round once
//     more when it sees the mark, also after releasing the lock (it re-takes
//     the lock if nobody did), so no wake is lost. The kernel releases an flock
//     when its process dies, so a crashed pass's lock is taken over by the
//     next pass at once; the pid written in the file is informational.
//     Correctness never rests on the lock (Options.NoLock turns it off):
//     every append is a compare-and-swap.
//   - Crash points are Options.At: called at "locked", "read", "planned"
//     (objects written, nothing pushed) and "pushed" (the phase landed, not
//     yet re-read), or "memo" instead of "read" when the round ended from
//     the idle pass memo; an error returned stops the pass there, as a
//     crash would. The shipped binary passes none.
//   - An idle first round over exactly the refs, options and build of the
//     last idle first round, at a time the plan still stands for, ends as
//     that round did without reading the pull requests or planning
//     (memo.go; docs/scale.md, "The idle pass memo").
//   - The clock (Options.Now) stamps events and is handed to the planner for
//     checkTimeout; the planner itself reads no clock.
package queuerun

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/clock"
	"github.com/gitplus/gitplus/receive/gitio"
	"github.com/gitplus/gitplus/receive/gitobj"
)

// Sentinel errors.
var (
	// ErrNoQueue: Options.QueueID names no queue in the repository.
	ErrNoQueue = errors.New("no such queue")
	// ErrCrash is what a test's Options.At returns to stop a pass as a
	// crash would; Run returns it wrapped.
	ErrCrash = errors.New("crash point")
	// ErrRefused: the receiving hook refused a phase for a reason other than
	// the landing (the pass's own records).
	ErrRefused = errors.New("queue phase refused by the hook")
	// ErrTransport: pushes kept failing in transport.
	ErrTransport = errors.New("queue phase push kept failing")
)

// Defaults.
const (
	DefaultMaxRounds = 40
	TransportRetries = 6
)

// Options say which queue to run and how.
type Options struct {
	GitDir string // the repository (bare, or a clone with Remote)
	Remote string // "." (default) or the remote holding the refs
	Signer hubrefs.Signer
	Name   string // the signer's member name (author of the events)
	Target string // full branch ref, refs/heads/...
	// QueueID names the queue; empty: the queue counting for Target.
	QueueID   string
	Depth     int
	AutoEnter bool
	// PushOptions go on every push (--push-option).
	PushOptions []string
	// Now is the clock (default clock.Now).
	Now func() time.Time
	// MaxRounds bounds plan→act→re-read rounds (default DefaultMaxRounds).
	MaxRounds int
	// NoLock skips the per-queue lock (tests of cross-machine races).
	NoLock bool
	// At is called at each crash point (see the package doc); an error stops
	// the pass there.
	At func(point string) error
	// Sleep waits between retries (default time.Sleep).
	Sleep func(time.Duration)
	// Env is added to the environment of the git processes (inherited).
	Env []string
	// Sign signs the pass's pushes with the runner's key, so that a
	// receiver requiring a known pusher knows it (docs/serving.md; the
	// candidate branches need hub.queue or source.push, the landing
	// either of them too).
	Sign *gitio.PushSigning
}

// Report is what a pass did, over all its rounds.
type Report struct {
	Queue     string          `json:"queue,omitempty"`
	Target    string          `json:"target"`
	Tip       string          `json:"tip,omitempty"`
	Idle      string          `json:"idle,omitempty"`
	Deferred  string          `json:"deferred,omitempty"`
	TargetRed string          `json:"targetRed,omitempty"`
	Heal      string          `json:"heal,omitempty"` // a red first candidate published again (docs/queue.md, "A red target")
	Settled   []queue.Settle  `json:"settled"`
	Entered   []queue.Enter   `json:"entered"`
	Landed    []queue.Landed  `json:"landed"`
	Commit    string          `json:"commit,omitempty"`
	Evicted   []queue.Evict   `json:"evicted"`
	Published []queue.Publish `json:"published"`
	Deleted   []string        `json:"deleted"`
	Waiting   []queue.Wait    `json:"waiting"`
	Refused   []string        `json:"refused"`
	Resets    []string        `json:"resets"`
	Warnings  []string        `json:"warnings"`
	Chain     []queue.Step    `json:"chain"`
	// Undelivered: the pass's own deliveries (mirrors, webhooks) that did
	// not arrive within the bounded wait the caller makes after the pass
	// (docs/delivery.md); Run itself leaves it empty.
	Undelivered []string `json:"undelivered"`
	// Rounds counts plans made; Pushes the phases that took effect; Stale
	// the phases that lost a race and were re-planned; Retries the pushes
	// retried after a transport failure.
	Rounds  int `json:"rounds"`
	Pushes  int `json:"pushes"`
	Stale   int `json:"stale"`
	Retries int `json:"retries"`
}

// NewReport is an empty report for target.
func NewReport(target string) *Report {
	return &Report{Target: target, Settled: []queue.Settle{}, Entered: []queue.Enter{}, Landed: []queue.Landed{},
		Evicted: []queue.Evict{}, Published: []queue.Publish{}, Deleted: []string{}, Waiting: []queue.Wait{},
		Refused: []string{}, Resets: []string{}, Warnings: []string{}, Chain: []queue.Step{}, Undelivered: []string{}}
}

// Run runs the queue of o.Target: passes until a plan is empty, under the
// per-queue lock unless o.NoLock. The report is filled in as far as the pass
// got, also when it returns an error.
func Run(ctx context.Context, o Options) (*Report, error) {
	rep := NewReport(o.Target)
	if err := o.norm(); err != nil {
		return rep, err
	}
	r := &runner{o: o, rep: rep, anc: map[[2]plumbing.Hash]bool{}, ancSaved: map[plumbing.Hash]int{},
		ancNotKept: map[[2]plumbing.Hash]bool{}, refusedLand: map[string]bool{}}
	if o.NoLock {
		return rep, r.passes(ctx)
	}
	l := newLock(o.GitDir, o.Target)
	got, err := l.acquire()
	if err != nil {
		return rep, err
	}
	if !got {
		rep.Deferred = "another pass holds " + l.path + ": marked it dirty; that pass goes round once more"
		return rep, nil
	}
	defer l.release()
	if err := r.at("locked"); err != nil {
		return rep, err
	}
	for {
		l.clearDirty()
		if err := r.passes(ctx); err != nil {
			return rep, err
		}
		if l.dirty() {
			continue
		}
		l.release()
		if !l.dirty() {
			return rep, nil
		}
		if got, err := l.acquire(); err != nil || !got {
			return rep, err // the new holder goes round for that wake
		}
	}
}

func (o *Options) norm() error {
	if o.Remote == "" {
		o.Remote = "."
	}
	if o.Now == nil {
		o.Now = clock.Now
	}
	if o.Sleep == nil {
		o.Sleep = time.Sleep
	}
	if o.MaxRounds <= 0 {
		o.MaxRounds = DefaultMaxRounds
	}
	if !strings.HasPrefix(o.Target, "refs/heads/") {
		return fmt.Errorf("queue run: target %q is not a branch (refs/heads/...)", o.Target)
	}
	if o.Signer == nil || o.Name == "" {
		return errors.New("queue run: no signing key or member name")
	}
	gitDir, err := gitio.ResolveGitDir(o.GitDir)
	if err != nil {
		return err
	}
	o.GitDir = gitDir
	return nil
}

type runner struct {
	o           Options
	rep         *Report
	anc         map[[2]plumbing.Hash]bool
	ancSaved    map[plumbing.Hash]int     // per tip, the answers the cache holds
	ancNotKept  map[[2]plumbing.Hash]bool // answers of a failing git: not saved
	refusedLand map[string]bool           // landings (New) the hook refused in this pass
	transport   int
	now         int64 // o.Now() of the round, unix seconds
	// gitAnswered: an ancestry question was answered by git (a commit
	// unreadable in process); such a round is not memoised (memo.go).
	gitAnswered bool
}

func (r *runner) at(point string) error {
	if r.o.At == nil {
		return nil
	}
	if err := r.o.At(point); err != nil {
		return fmt.Errorf("%w at %s: %w", ErrCrash, point, err)
	}
	return nil
}

func (r *runner) warn(s ...string) { r.rep.Warnings = appendNew(r.rep.Warnings, s...) }

// passes runs rounds until a plan is empty or the bound is reached.
func (r *runner) passes(ctx context.Context) error {
	for round := 0; round < r.o.MaxRounds; round++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		more, err := r.round(ctx, round == 0 && r.rep.Rounds == 0)
		if err != nil || !more {
			return err
		}
	}
	r.warn(fmt.Sprintf("still finding work after %d rounds: stopped; the next pass continues", r.o.MaxRounds))
	return nil
}

// backoff sleeps before retry n (1-based): 20 ms doubling to 1 s, with
// jitter of up to the same again.
func (r *runner) backoff(n int) {
	d := 20 * time.Millisecond << min(n, 6)
	if d > time.Second {
		d = time.Second
	}
	r.o.Sleep(d + time.Duration(rand.Int63n(int64(d))))
}

// round reads, plans and carries out one plan; more is false when the plan
// had nothing to do.
func (r *runner) round(ctx context.Context, first bool) (more bool, err error) {
	r.now = r.o.Now().Unix()
	refs, err := r.readRefs(ctx)
	if err != nil {
		return false, err
	}
	// An idle pass over refs the last idle pass planned from ends as that
	// pass did (memo.go, docs/scale.md "The idle pass memo").
	m := r.memoFor(refs)
	if m.usable() {
		if hit, err := m.use(); hit || err != nil {
			return false, err
		}
	}
	st, err := r.read(refs)
	if err != nil {
		return false, err
	}
	if st.idle == "" {
		// From a clone: the heads the plan merges may not be here yet
		// (heads.go); fetched, they are read from a store opened anew.
		fetched, err := r.fetchHeads(ctx, st)
		if err == nil && fetched {
			st.objs.Store.Close()
			st, err = r.read(refs)
		}
		if err != nil {
			if st != nil && st.objs.Store != nil {
				st.objs.Store.Close()
			}
			return false, err
		}
	}
	if st.objs.Store != nil {
		defer st.objs.Store.Close()
	}
	if st.idle != "" {
		r.rep.Idle = st.idle
		return false, nil
	}
	readWarnings := len(r.rep.Warnings)
	if err := r.at("read"); err != nil {
		return false, err
	}
	r.rep.Rounds++
	r.rep.Queue, r.rep.Tip = st.q.ID, st.target.String()
	var clock queue.ClockRange
	plan, err := r.plan(st, &clock)
	if err != nil {
		return false, err
	}
	r.rep.Chain, r.rep.Waiting, r.rep.TargetRed = plan.Chain, plan.Waiting, plan.TargetRed
	if plan.Heal != "" {
		r.rep.Heal = plan.Heal
	}
	r.warn(plan.Warnings...)
	ph, err := r.build(st, &plan)
	if err != nil {
		return false, err
	}
	if ph.empty() {
		if first && plan.Idle != "" {
			r.rep.Idle = plan.Idle
		}
		if readWarnings == 0 && !r.gitAnswered {
			m.store(clock)
		}
		return false, nil
	}
	if err := r.at("planned"); err != nil {
		return false, err
	}
	_, err = gitio.Push(ctx, gitio.PushOptions{GitDir: r.o.GitDir, Remote: r.o.Remote, Updates: ph.updates, PushOptions: r.o.PushOptions, Env: r.o.Env, Sign: r.o.Sign})
	var refused *gitio.PushRefusedError
	errors.As(err, &refused)
	switch {
	case err == nil:
		r.rep.Pushes++
		r.record(st, plan, ph)
		r.deleteSources(ctx, st, plan) // sourcebranch.go
		if err := r.at("pushed"); err != nil {
			return false, err
		}
		return true, nil
	case errors.Is(err, gitio.ErrPushStale): // the hook's [ref-moved] included
		r.rep.Stale++
		r.backoff(r.rep.Stale)
		return true, nil
	case refused != nil && plan.Land != nil && namesRef(refused.Lines, plan.Land.Ref):
		msg := fmt.Sprintf("landing %s on %s (%s)", plan.Land.New, plan.Land.Ref, refused.Status)
		if len(refused.Lines) > 0 {
			msg += ": " + strings.Join(refused.Lines, "; ")
		}
		if len(refused.Host) > 0 {
			msg += "; remote: " + strings.Join(refused.Host, "; remote: ")
		}
		r.rep.Refused = append(r.rep.Refused, msg)
		r.refusedLand[plan.Land.New] = true
		return true, nil
	case refused != nil:
		return false, fmt.Errorf("%w: %w", ErrRefused, err)
	case ctx.Err() != nil:
		return false, err
	default:
		// Transport: git ended without reporting the refs. Whatever it did
		// is read back by the next round; the push's expected old values
		// make a repeat harmless.
		r.transport++
		r.rep.Retries++
		if r.transport > TransportRetries {
			return false, fmt.Errorf("%w: %d attempts: %w", ErrTransport, r.transport, err)
		}
		r.warn(fmt.Sprintf("push failed in transport (retried after re-reading): %v", err))
		r.backoff(r.transport)
		return true, nil
	}
}

// record adds what a phase that took effect did to the report.
func (r *runner) record(st *state, plan queue.Plan, ph *phase) {
	rep := r.rep
	rep.Settled = append(rep.Settled, plan.Settle...)
	rep.Entered = append(rep.Entered, plan.Enter...)
	if plan.Land != nil {
		rep.Landed = append(rep.Landed, plan.Land.Landed...)
		rep.Commit = plan.Land.New
	}
	rep.Evicted = append(rep.Evicted, plan.Evict...)
	rep.Published = append(rep.Published, plan.Publish...)
	rep.Deleted = append(rep.Deleted, ph.deleted...)
	rep.Resets = append(rep.Resets, ph.resets...)
	rep.Warnings = appendNew(rep.Warnings, ph.restored...)
}

// state is one read of everything a plan is made from.
type state struct {
	idle     string
	tested   plumbing.Hash // queue.TestedBranch's commit (zero: none)
	trust    *trust.State
	q        *queue.State
	target   plumbing.Hash
	prs      map[string]*pr.State
	approved []string
	branches map[string]plumbing.Hash // candidate branches of the target
	objs     receive.Objects
	branch   trust.Branch
}

// readRefs reads the refs a round is planned from: every hub ref, the
// target and its candidate branches (from the remote, fetched, when there
// is one).
func (r *runner) readRefs(ctx context.Context) (map[string]plumbing.Hash, error) {
	o := r.o
	prefix := queue.Branch(o.Target, "")
	if o.Remote != "." {
		return r.readRemote(ctx, prefix)
	}
	refs, err := gitio.ReadRefsUnder(o.GitDir, []string{"refs/hub/", prefix}, []string{o.Target, queue.TestedBranch(o.Target)})
	if err != nil {
		return nil, fmt.Errorf("reading refs of %s: %w", o.GitDir, err)
	}
	return refs, nil
}

// read folds trust, the queue and the pull requests of refs (readRefs):
// everything the state holds is read from refs and the objects they name.
func (r *runner) read(refs map[string]plumbing.Hash) (*state, error) {
	o := r.o
	prefix := queue.Branch(o.Target, "")
	store, err := gitio.OpenStore(o.GitDir, gitio.QuarantineEnv{})
	if err != nil {
		return nil, fmt.Errorf("opening the objects of %s: %w", o.GitDir, err)
	}
	ok := false
	defer func() {
		if !ok {
			store.Close()
		}
	}()
	st := &state{objs: receive.Objects{Store: store}, target: refs[o.Target], tested: refs[queue.TestedBranch(o.Target)], branches: map[string]plumbing.Hash{}}
	trustTip := refs[hubrefs.TrustRef]
	if trustTip.IsZero() {
		return nil, fmt.Errorf("%s has no %s: run `git+ init` first", o.GitDir, hubrefs.TrustRef)
	}
	// Logs, the trust state and the pull requests are read through the
	// fold cache the hook fills: a pass reads what changed since the last
	// one, not every signed event again (docs/scale.md).
	cache := receive.NewDirCache(o.GitDir)
	rd := &policy.Reader{Objects: store, Cache: cache, Ceilings: hubrefs.Ceilings{EventsPerRef: 1 << 20, EventBytes: 16 << 20, Parents: 64}}
	if st.trust, err = rd.Trust(trustTip); err != nil {
		return nil, fmt.Errorf("reading and folding %s: %w", hubrefs.TrustRef, err)
	}
	t := st.trust
	c := t.Rules.Ceilings
	rd = &policy.Reader{Objects: store, Cache: cache, Ceilings: hubrefs.Ceilings{EventsPerRef: c.EventsPerRef, EventBytes: c.EventBytes, Parents: c.ParentsPerEvent}}
	st.branch, _ = t.Rules.For(o.Target)
	var states []*queue.State
	for name, tip := range refs {
		if !strings.HasPrefix(name, hubrefs.QueueRefPrefix) {
			continue
		}
		id := strings.TrimPrefix(name, hubrefs.QueueRefPrefix)
		if o.QueueID != "" && id != o.QueueID {
			continue
		}
		// From the fold cache's state at the tip, or at a tip below it
		// plus the events above (docs/scale.md, "Writes").
		q, err := rd.Queue(trustTip, t, tip)
		if err != nil {
			if o.QueueID != "" {
				return nil, fmt.Errorf("reading %s: %w", name, err)
			}
			r.warn("queue " + id + " cannot be read (" + err.Error() + "): not considered")
			continue
		}
		states = append(states, q)
	}
	if o.QueueID != "" {
		if len(states) == 0 {
			return nil, fmt.Errorf("%w: %s in %s (see `git+ queue list`)", ErrNoQueue, o.QueueID, o.GitDir)
		}
		if states[0].Target != o.Target {
			return nil, fmt.Errorf("queue %s lands on %s, not %s", o.QueueID, states[0].Target, o.Target)
		}
		if states[0].Closed {
			st.q = states[0]
		}
	}
	if st.q == nil {
		st.q = queue.SelectQueue(states, o.Target)
	}
	if st.q == nil {
		// An unknown target is a mistake to report, not an idle pass
		// (docs/queue.md): name the targets that have open queues.
		var targets []string
		for _, q := range states {
			if !q.Closed && !slices.Contains(targets, q.Target) {
				targets = append(targets, q.Target)
			}
		}
		sort.Strings(targets)
		have := "no target has an open queue"
		if len(targets) > 0 {
			have = "open queues exist for " + strings.Join(targets, ", ")
		}
		return nil, fmt.Errorf("%w for %s (%s); open one with `git+ queue open --target %s`", ErrNoQueue, o.Target, have, o.Target)
	}
	switch {
	case st.branch.RequireProvenance:
		st.idle = "refused: " + o.Target + " requires provenance, and candidate commits carry none (land pull requests directly with `git+ pr merge`)"
		ok = true
		return st, nil
	case !st.branch.QueueCandidates:
		st.idle = "queueCandidates is off for " + o.Target + " (turn it on with `git+ rules set`)"
		ok = true
		return st, nil
	}
	if st.target.IsZero() {
		st.idle = o.Target + " does not exist yet, so a candidate has nothing to merge onto: its first commit lands directly, as an approved pull request's head, with `git+ pr merge ID` (docs/boundary.md \"The first commit of a protected branch\")"
		ok = true
		return st, nil
	}
	prRefs := make(map[string]plumbing.Hash, len(refs))
	for name := range refs {
		if strings.HasPrefix(name, hubrefs.PRRefPrefix) {
			prRefs[name] = refs[name]
		}
		if strings.HasPrefix(name, prefix) {
			st.branches[name] = refs[name]
		}
	}
	st.prs = make(map[string]*pr.State, len(prRefs)) // sized for them: 10,000 at scale
	for _, f := range rd.PRs(trustTip, t, prRefs) {
		id := strings.TrimPrefix(f.Ref, hubrefs.PRRefPrefix)
		if f.Err != nil {
			r.warn("skipped pull request " + id + ": " + f.Err.Error())
			continue
		}
		p := f.State
		st.prs[id] = p
		if p.State == pr.Open && p.Base == o.Target {
			st.approved = append(st.approved, id)
		}
	}
	ok = true
	return st, nil
}

// readRemote fetches the hub refs and the target from the remote and lists
// its candidate branches.
func (r *runner) readRemote(ctx context.Context, prefix string) (map[string]plumbing.Hash, error) {
	o := r.o
	local := "refs/gitplus/queue-target/" + strings.TrimPrefix(o.Target, "refs/heads/")
	if err := gitio.Fetch(ctx, o.GitDir, o.Remote, o.Env, "+refs/hub/*:refs/hub/*", "+"+o.Target+":"+local); err != nil {
		// A target the remote does not have (a typo, or a branch before
		// its first commit) is no fetch failure: the hub refs alone are
		// read, and read says what the target lacks.
		if have, lerr := gitio.LsRemote(ctx, o.GitDir, o.Remote, o.Env, o.Target); lerr != nil || !have[o.Target].IsZero() {
			return nil, fmt.Errorf("fetching from %s: %w", o.Remote, err)
		}
		if err := gitio.Fetch(ctx, o.GitDir, o.Remote, o.Env, "+refs/hub/*:refs/hub/*"); err != nil {
			return nil, fmt.Errorf("fetching from %s: %w", o.Remote, err)
		}
		_, _, _ = gitio.RunGit(ctx, "", o.Env, "--git-dir="+o.GitDir, "update-ref", "-d", local)
	}
	refs, err := gitio.ReadRefsUnder(o.GitDir, []string{"refs/hub/"}, []string{local})
	if err != nil {
		return nil, err
	}
	refs[o.Target] = refs[local]
	delete(refs, local)
	remote, err := gitio.LsRemote(ctx, o.GitDir, o.Remote, o.Env, prefix+"*", queue.TestedBranch(o.Target))
	if err != nil {
		return nil, fmt.Errorf("listing candidate branches on %s: %w", o.Remote, err)
	}
	for name, id := range remote {
		if strings.HasPrefix(name, prefix) || name == queue.TestedBranch(o.Target) {
			refs[name] = id
		}
	}
	return refs, nil
}

// plan asks the planner, leaving out a landing the hook refused.
// clock is given the range of the pass's time over which the plan stands
// (queue.ClockRange).
func (r *runner) plan(st *state, clock *queue.ClockRange) (queue.Plan, error) {
	titles := map[string]string{}
	for id, p := range st.prs {
		titles[id] = p.Title
	}
	o := r.o
	depth := o.Depth
	if b := st.branch; b.QueueDepth > 0 && depth > b.QueueDepth {
		r.warn(fmt.Sprintf("--depth %d is over %s's queueDepth %d: using %d", depth, o.Target, b.QueueDepth, b.QueueDepth))
		depth = b.QueueDepth
	}
	cache := receive.NewDirCache(o.GitDir)
	r.loadAncestry(cache, st.target)
	defer r.saveAncestry(cache, st.target)
	plan, err := queue.PlanPass(queue.PlanInput{
		Queue: st.q, PRs: st.prs, Trust: st.trust, Branch: st.branch, Tip: st.target,
		Contains: r.containsIn(st.objs),
		Merge: func(parent, head plumbing.Hash, prID string) (plumbing.Hash, []string, error) {
			build := queue.BuildCandidate
			if st.branch.Squash() { // mergeMethod squash (docs/queue.md, "Step shapes")
				build = queue.BuildSquash
			}
			return conflictPaths(build(st.objs, st.objs, parent, head, prID, o.Target, titles[prID]))
		},
		Changed: func(from, to plumbing.Hash) ([]string, error) { return policy.ChangedFiles(st.objs, from, to) },
		// Partition steps (docs/queue.md, "Partitions and lanes"): built
		// as the branch's method builds a step, judged by the hook's rule.
		BuildTested: func(parent, head, tested plumbing.Hash, prID string) (plumbing.Hash, []string, error) {
			return conflictPaths(queue.BuildTested(st.objs, st.objs, parent, head, tested, prID, o.Target, titles[prID], st.branch.Squash()))
		},
		Tested: func(prev, step, tested, head plumbing.Hash, prID string) (string, string, error) {
			part, _, reason, err := policy.TestedVerdict(st.objs, st.branch, policy.TestedStep{Prev: prev, Step: step, Tested: tested, Head: head, PR: prID, Squash: st.branch.Squash()})
			return part, reason, err
		},
		Depth: depth, AutoEnter: o.AutoEnter, Approved: st.approved,
		Ceiling: st.trust.Rules.Ceilings.EventsPerRef,
		Now:     r.now,
		Clock:   clock,
	})
	if err != nil {
		return plan, err
	}
	if l := plan.Land; l != nil && r.refusedLand[l.New] {
		keep := map[string]bool{}
		for _, x := range l.Landed {
			keep[queue.Branch(st.q.Target, x.PR)] = true
			plan.Waiting = append(plan.Waiting, queue.Wait{PR: x.PR, Head: x.Head, Reason: "green, but the hook refused the landing at " + l.New})
		}
		var del []string
		for _, d := range plan.Delete {
			if !keep[d] {
				del = append(del, d)
			}
		}
		plan.Delete, plan.Land = del, nil
	}
	return plan, nil
}

// phase is one plan turned into objects and ref updates.
type phase struct {
	updates  []gitio.PushUpdate
	deleted  []string
	resets   []string
	restored []string
}

func (p *phase) empty() bool { return len(p.updates) == 0 }

// build writes the plan's events (one chain per hub ref, on the tip read)
// and lists every ref update of the phase.
func (r *runner) build(st *state, plan *queue.Plan) (*phase, error) {
	o := r.o
	ph := &phase{}
	tips := map[string]plumbing.Hash{}
	olds := map[string]plumbing.Hash{}
	var order []string
	base := func(typ string) hubrefs.Base { return hubrefs.Base{Type: typ, Repo: st.trust.RepoID} }
	now := o.Now()
	add := func(ref string, old plumbing.Hash, payload any) error {
		if _, ok := tips[ref]; !ok {
			tips[ref], olds[ref] = old, old
			order = append(order, ref)
		}
		var parents []plumbing.Hash
		if cur := tips[ref]; !cur.IsZero() {
			parents = []plumbing.Hash{cur}
		}
		raw, err := hubrefs.EncodeEvent(payload, parents, o.Name, now, o.Signer)
		if err != nil {
			return fmt.Errorf("encoding an event for %s: %w", ref, err)
		}
		id, err := st.objs.WriteObject(plumbing.CommitObject, raw)
		if err != nil {
			return fmt.Errorf("writing an event for %s: %w", ref, err)
		}
		tips[ref] = id
		return nil
	}
	qref := hubrefs.QueueRefPrefix + st.q.ID
	qadd := func(payload any) error { return add(qref, st.q.Tip, payload) }
	merged := func(id string, m queue.Merged) error {
		p := st.prs[id]
		if p == nil {
			return fmt.Errorf("pull request %s vanished during the pass", id)
		}
		for _, x := range p.Merged {
			if x.Revision == m.Revision && x.Branch == m.Branch {
				return nil
			}
		}
		return add(hubrefs.PRRefPrefix+id, p.Tip, hubrefs.PRMerged{Base: base(hubrefs.TypePRMerged), Revision: m.Revision, Branch: m.Branch, Commit: m.Commit,
			Trust: st.trust.Tip.String()}) // the trust the pass read: a moved trust log is a lost race, re-read and re-planned
	}
	left := func(prID, head, reason, detail, step, run string) error {
		return qadd(hubrefs.QueueLeft{Base: base(hubrefs.TypeQueueLeft), PR: prID, Head: head, Reason: reason, Detail: detail, Step: step, Run: run})
	}
	for _, s := range plan.Settle {
		if s.Merged != nil {
			if err := merged(s.PR, *s.Merged); err != nil {
				return nil, err
			}
		}
		if err := left(s.PR, s.Head, s.Reason, s.Detail, "", ""); err != nil {
			return nil, err
		}
	}
	for _, e := range plan.Enter {
		if err := qadd(hubrefs.QueueEntered{Base: base(hubrefs.TypeQueueEntered), PR: e.PR, Head: e.Head, BaseRef: e.Base}); err != nil {
			return nil, err
		}
	}
	branchTo := map[string]plumbing.Hash{}
	var branchOrder []string
	setBranch := func(ref string, to plumbing.Hash) {
		if _, ok := branchTo[ref]; !ok {
			branchOrder = append(branchOrder, ref)
		}
		branchTo[ref] = to
	}
	if l := plan.Land; l != nil {
		for _, x := range l.Landed {
			if err := merged(x.PR, queue.Merged{Revision: x.Head, Branch: l.Ref, Commit: x.Commit}); err != nil {
				return nil, err
			}
			if err := left(x.PR, x.Head, queue.ReasonLanded, "landed as "+x.Commit, "", ""); err != nil {
				return nil, err
			}
		}
	}
	for _, e := range plan.Evict {
		if err := left(e.PR, e.Head, e.Reason, e.Detail, e.Step, e.Run); err != nil {
			return nil, err
		}
	}
	if len(plan.Publish) > 0 && r.needsReset(st, plan) {
		detail := fmt.Sprintf("%s moved to %s outside the queue", o.Target, st.target)
		if err := qadd(hubrefs.QueueReset{Base: base(hubrefs.TypeQueueReset), Tip: st.target.String(), Detail: detail}); err != nil {
			return nil, err
		}
		ph.resets = append(ph.resets, detail+"; rebuilt on "+st.target.String())
	}
	for _, p := range plan.Publish {
		if err := qadd(hubrefs.QueueCandidate{Base: base(hubrefs.TypeQueueCandidate), PR: p.PR, Head: p.Head, Step: p.Step, Parents: p.Parents, Branch: p.Branch,
			GroupEnd: p.GroupEnd, GroupSize: p.GroupSize, Trial: p.Trial, Run: p.Run, Partition: p.Partition}); err != nil {
			return nil, err
		}
		setBranch(p.Branch, plumbing.NewHash(p.Step))
	}
	for _, d := range plan.Delete {
		if !st.branches[d].IsZero() {
			setBranch(d, plumbing.ZeroHash)
		}
	}
	// Put each chain step's branch back on its step when something else
	// (a racing runner's older plan) left it elsewhere; CI must test what
	// the queue.candidate names.
	skip := map[string]bool{}
	if plan.Land != nil {
		for _, x := range plan.Land.Landed {
			skip[x.PR] = true
		}
	}
	for _, s := range plan.Chain {
		ref := queue.Branch(st.q.Target, s.PR)
		if _, set := branchTo[ref]; set || skip[s.PR] || s.Commit == "" {
			continue
		}
		if rec, ok := st.q.LatestCandidate(s.PR); !ok || rec.Step != s.Commit {
			continue // not announced yet: Publish does it
		}
		if st.branches[ref] != plumbing.NewHash(s.Commit) {
			setBranch(ref, plumbing.NewHash(s.Commit))
			ph.restored = append(ph.restored, "restored "+ref+" to "+s.Commit)
		}
	}
	// Delete the candidate branches of pull requests that left the queue and
	// are not active (a pass that crashed between leaving and deleting, in
	// the old sequential runner, or a branch pushed behind the queue's back).
	active := map[string]bool{}
	for _, e := range st.q.Entries {
		active[e.PR] = true
	}
	for _, e := range plan.Enter {
		active[e.PR] = true
	}
	leftPR := map[string]bool{}
	for _, l := range st.q.Left {
		leftPR[l.PR] = true
	}
	for _, s := range plan.Settle {
		leftPR[s.PR] = true
		active[s.PR] = false
	}
	prefix := queue.Branch(st.q.Target, "")
	var names []string
	for ref := range st.branches {
		names = append(names, ref)
	}
	sort.Strings(names)
	for _, ref := range names {
		id := strings.TrimPrefix(ref, prefix)
		if _, set := branchTo[ref]; set || !leftPR[id] || active[id] {
			continue
		}
		setBranch(ref, plumbing.ZeroHash)
	}
	if plan.Land != nil {
		ph.updates = append(ph.updates, gitio.PushUpdate{Ref: plan.Land.Ref, Old: plumbing.NewHash(plan.Land.Old), New: plumbing.NewHash(plan.Land.New)})
		u, err := r.keepTested(st, plan)
		if err != nil {
			return nil, err
		}
		if u != nil {
			ph.updates = append(ph.updates, *u)
		}
	}
	for _, ref := range order {
		ph.updates = append(ph.updates, gitio.PushUpdate{Ref: ref, Old: olds[ref], New: tips[ref]})
	}
	for _, ref := range branchOrder {
		to, cur := branchTo[ref], st.branches[ref]
		if to == cur {
			continue
		}
		ph.updates = append(ph.updates, gitio.PushUpdate{Ref: ref, Old: cur, New: to})
		if to.IsZero() {
			ph.deleted = append(ph.deleted, ref)
		}
	}
	return ph, nil
}

// keepTested is the update of queue.TestedBranch that keeps the
// candidates plan's partition steps were tested as (landed commits that
// are not the chain's steps themselves), in the landing's push; nil when
// it lands none.
func (r *runner) keepTested(st *state, plan *queue.Plan) (*gitio.PushUpdate, error) {
	step := map[string]string{}
	for _, s := range plan.Chain {
		step[s.PR] = s.Commit
	}
	var tested []plumbing.Hash
	for _, x := range plan.Land.Landed {
		if c := step[x.PR]; c != "" && c != x.Commit {
			tested = append(tested, plumbing.NewHash(c))
		}
	}
	if len(tested) == 0 {
		return nil, nil
	}
	raw := queue.Keeper(st.tested, tested, r.o.Now().Unix(), st.q.Target, plan.Land.New)
	id, err := st.objs.WriteObject(plumbing.CommitObject, raw)
	if err != nil {
		return nil, fmt.Errorf("writing the commit keeping tested candidates: %w", err)
	}
	return &gitio.PushUpdate{Ref: queue.TestedBranch(st.q.Target), Old: st.tested, New: id}, nil
}

// needsReset reports whether the target moved outside the queue under a
// standing chain: a step being published replaces a standing record of the
// same head that was built on another tip than the target's (the fold's
// reset rule, queue.State.MovedUnder), and no queue.reset names the tip yet.
// A republish on the same tip (re-entry after an eviction, a member ahead
// evicted) is no reset.
func (r *runner) needsReset(st *state, plan *queue.Plan) bool {
	tip := st.target.String()
	if n := len(st.q.Resets); n > 0 && st.q.Resets[n-1].Tip == tip {
		return false
	}
	if r.ownPartitionStep(st) {
		return false
	}
	for _, p := range plan.Publish {
		rec, ok := st.q.LatestCandidate(p.PR)
		if ok && rec.Head == p.Head && rec.Step != p.Step && st.q.MovedUnder(tip, p.PR) {
			return true
		}
	}
	return false
}

// ownPartitionStep reports whether the target's tip is a partition step of
// this queue: its Git-Plus-Tested trailer names a candidate step the queue
// recorded (docs/queue.md, "Partitions and lanes"). A lane that landed so
// moved the target within the queue: the other lanes' standing candidates
// on older tips are the planner's to keep or rebuild, and no queue.reset
// may invalidate them.
func (r *runner) ownPartitionStep(st *state) bool {
	if len(st.branch.Partitions) == 0 {
		return false
	}
	typ, raw, err := st.objs.ReadObject(st.target)
	if err != nil || typ != plumbing.CommitObject {
		return false
	}
	c, err := gitobj.ParseCommit(raw)
	if err != nil {
		return false
	}
	tested, found, err := queue.TestedTrailer(c.Message)
	return err == nil && found && st.q.IsStep(tested.String())
}

// containsIn reports whether rev is tip or an ancestor of it, from the
// objects in objs: a merge-base walk in process (mergetree.MergeBasesCached,
// exact whatever the committer dates), which stops at the common ancestors
// instead of walking the whole history, and costs no process per entry (the
// planner asks once per active entry: docs/scale.md). Should a commit be
// unreadable here, git decides, as before.
func (r *runner) containsIn(objs mergetree.Store) func(tip, rev plumbing.Hash) bool {
	mc := mergetree.NewCache()
	return func(tip, rev plumbing.Hash) bool {
		if tip == rev {
			return true
		}
		k := [2]plumbing.Hash{tip, rev}
		if v, ok := r.anc[k]; ok {
			return v
		}
		bases, err := mergetree.MergeBasesCached(objs, rev, tip, mc)
		var v bool
		switch {
		case err == nil:
			v = len(bases) == 1 && bases[0] == rev
		case errors.Is(err, mergetree.ErrUnrelated):
			v = false
		default:
			var sure bool
			v, sure = r.contains(tip, rev)
			r.gitAnswered = true
			if !sure {
				// git failed: "no" for this pass, never kept.
				if r.ancNotKept == nil {
					r.ancNotKept = map[[2]plumbing.Hash]bool{}
				}
				r.ancNotKept[k] = true
			}
		}
		r.anc[k] = v
		return v
	}
}

// The planner asks, once per active entry and pass, whether the target's
// tip contains the entry's head. The answers for one tip never change
// (commit ids name their whole history), so a pass keeps them in the fold
// cache under the tip, and an idle pass reads one file instead of walking
// once per entry (docs/scale.md):
//
//	key:   the first 20 bytes of SHA-256("gitplus ancestry v1\n" + tip)
//	entry: "gpan" 1 | tip (20) | per commit asked: id (20) | 0 or 1
var ancestryMagic = []byte("gpan\x01")

func ancestryKey(tip plumbing.Hash) plumbing.Hash {
	sum := sha256.Sum256(append([]byte("gitplus ancestry v1\n"), tip[:]...))
	var k plumbing.Hash
	copy(k[:], sum[:])
	return k
}

// loadAncestry adds to r.anc the answers the cache holds for tip; a damaged
// entry, or one for another tip, adds nothing.
func (r *runner) loadAncestry(c *receive.DirCache, tip plumbing.Hash) {
	if _, done := r.ancSaved[tip]; done {
		return
	}
	r.ancSaved[tip] = 0
	b, ok := c.Get(ancestryKey(tip))
	if !ok || !bytes.HasPrefix(b, ancestryMagic) || len(b) < len(ancestryMagic)+20 {
		return
	}
	b = b[len(ancestryMagic):]
	if plumbing.Hash(b[:20]) != tip || (len(b)-20)%21 != 0 {
		return
	}
	got := make(map[plumbing.Hash]bool, (len(b)-20)/21)
	for b = b[20:]; len(b) > 0; b = b[21:] {
		if b[20] > 1 {
			return
		}
		got[plumbing.Hash(b[:20])] = b[20] == 1
	}
	if len(r.anc) == 0 {
		r.anc = make(map[[2]plumbing.Hash]bool, len(got))
	}
	for rev, v := range got {
		r.anc[[2]plumbing.Hash{tip, rev}] = v
	}
	r.ancSaved[tip] = len(got)
}

// saveAncestry writes the answers known for tip, when there are more than
// the cache held.
func (r *runner) saveAncestry(c *receive.DirCache, tip plumbing.Hash) {
	var revs []plumbing.Hash
	for k := range r.anc {
		if k[0] == tip && !r.ancNotKept[k] {
			revs = append(revs, k[1])
		}
	}
	if len(revs) == 0 || len(revs) == r.ancSaved[tip] {
		return
	}
	sort.Slice(revs, func(i, j int) bool { return bytes.Compare(revs[i][:], revs[j][:]) < 0 })
	b := append(append([]byte(nil), ancestryMagic...), tip[:]...)
	for _, rev := range revs {
		v := byte(0)
		if r.anc[[2]plumbing.Hash{tip, rev}] {
			v = 1
		}
		b = append(append(b, rev[:]...), v)
	}
	c.Put(ancestryKey(tip), b)
	r.ancSaved[tip] = len(revs)
}

// contains reports whether rev is tip or an ancestor of it, asking git.
// sure is false when git gave no answer (it could not start, or exited
// with another status than 0, yes, or 1, no: a missing object, a killed
// process): the answer is then "no", and must not be kept in the ancestry
// entry, which would otherwise say "no" for that tip for good.
func (r *runner) contains(tip, rev plumbing.Hash) (v, sure bool) {
	if tip == rev {
		return true, true
	}
	_, _, err := gitio.RunGit(context.Background(), "", r.o.Env, "--git-dir="+r.o.GitDir, "merge-base", "--is-ancestor", rev.String(), tip.String())
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, true
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return false, true
	default:
		return false, false
	}
}

// namesRef reports whether a hook line refuses ref.
func namesRef(lines []string, ref string) bool {
	for _, l := range lines {
		if strings.Contains(l, "refused "+ref+":") {
			return true
		}
	}
	return false
}

func appendNew(list []string, xs ...string) []string {
	for _, x := range xs {
		dup := false
		for _, y := range list {
			dup = dup || x == y
		}
		if !dup {
			list = append(list, x)
		}
	}
	return list
}

// lock is the per-queue lock and dirty mark (see the package doc).
type lock struct {
	path, dirtyPath string
	f               *os.File
}

func newLock(gitDir, target string) *lock {
	name := strings.ReplaceAll(strings.TrimPrefix(target, "refs/heads/"), "/", "%")
	dir := filepath.Join(gitDir, "gitplus", "queue")
	return &lock{path: filepath.Join(dir, name+".lock"), dirtyPath: filepath.Join(dir, name+".dirty")}
}

// acquire marks the queue dirty, then tries the lock without waiting; got
// is false when another process holds it (the mark stays for it).
func (l *lock) acquire() (got bool, err error) {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return false, fmt.Errorf("queue lock: %w", err)
	}
	if err := os.WriteFile(l.dirtyPath, nil, 0o644); err != nil {
		return false, fmt.Errorf("queue lock: marking %s: %w", l.dirtyPath, err)
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return false, fmt.Errorf("queue lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return false, fmt.Errorf("queue lock %s: %w", l.path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	l.f = f
	return true, nil
}

func (l *lock) release() {
	if l.f != nil {
		_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
		l.f = nil
	}
}

func (l *lock) clearDirty() { _ = os.Remove(l.dirtyPath) }

func (l *lock) dirty() bool {
	_, err := os.Stat(l.dirtyPath)
	return err == nil
}

// conflictPaths turns a step builder's result into the planner's: the
// step, and the paths of its conflicts.
func conflictPaths(step plumbing.Hash, conflicts []mergetree.Conflict, err error) (plumbing.Hash, []string, error) {
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	var paths []string
	for _, c := range conflicts {
		paths = append(paths, c.Path)
	}
	return step, paths, nil
}
