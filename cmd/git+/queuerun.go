package main

// git+ queue run: one pass of the merge queue (docs/queue.md). The decisions
// are hubrefs/queue.PlanPass's; this file reads the refs it decides from and
// carries out its actions in order: settle, enter, land, evict, publish,
// delete.
//
// Decisions:
//   - Ordinary states exit 0 with the reason (text, or "idle" in --json): no
//     open queue for the target, queueCandidates off, requireProvenance on
//     (the pass refuses such a target by name, as docs/queue.md says, and still
//     exits 0 so a wake does not replay). A --queue id that does not exist, or
//     a queue whose target is not --target, exits 1.
//   - Candidates are built in builder mode straight into the repository's
//     object directory (receive.Objects), so the branch pushes and the landing
//     push carry them. With a remote other than ".", the target is fetched
//     first and every pull request head must already be local.
//   - The landing is one receive.Push of the target from C_0 to C_j with
//     expected old value C_0, so the receiving hooks judge it. A stale swap
//     appends queue.reset naming what the target now holds and re-plans on it,
//     at most three times. A hook refusal is reported under "refused"; the
//     landing candidates' branches are kept.
//   - Candidate branches are force-pushed with the branch's current value as
//     the expected old value; deletions likewise, and an absent branch is
//     not deleted.
//   - Authorization is checked once, up front: the signer must hold hub.queue
//     (every event the pass appends is a queue event or pr.merged, which
//     hub.queue allows). pr.merged is also judged with pr.Authorize.
//   - --no-notify passes the push option "gitplus.no-notify" on the pass's
//     pushes, for a post-receive chain to honour.
//   - TEST ONLY: GITPLUS_QUEUE_CRASH=<step>[:n] makes the pass exit 3 at the
//     n-th (default first) time it reaches step, and
//     GITPLUS_QUEUE_PAUSE=<step>:<dir> makes it create <dir>/paused there and
//     wait (up to a minute) for <dir>/go. They exist so the e2e tests can
//     kill a pass at every boundary and race the target (docs/queue.md: "a pass
//     may crash anywhere"); nothing else reads them, and a deployment never
//     sets them. Steps: settle-merged (pr.merged of a settle, before its
//     queue.left), settled, entered, before-swap, swap (target moved, no
//     record yet), merged (pr.merged of a landing, before its queue.left),
//     landed, reset, evicted, branch (candidate branch pushed, no
//     queue.candidate yet), candidate, deleted.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
)

const queueRunAttempts = 3

func queueRunCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run one pass of the queue for --target: settle, build, land the green prefix, evict, publish",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "target", Usage: "the branch (main or refs/heads/main)"},
			&cli.StringFlag{Name: "queue", Usage: "queue id (default: the queue counting for the target)"},
			&cli.BoolFlag{Name: "auto-enter", Usage: "enter approved open pull requests on the target that are not queued"},
			&cli.IntFlag{Name: "depth", Usage: "bound the chain (default: the rules' queueDepth)"},
			&cli.BoolFlag{Name: "no-notify", Usage: "ask the after-push chain not to announce this pass's pushes"},
			jsonFlag(), remoteFlag(),
		},
		Action: queueRun,
	}
}

// runReport is what a pass did.
type runReport struct {
	Queue     string          `json:"queue,omitempty"`
	Target    string          `json:"target"`
	Tip       string          `json:"tip,omitempty"`
	Idle      string          `json:"idle,omitempty"`
	Settled   []queue.Settle  `json:"settled"`
	Entered   []queue.Enter   `json:"entered"`
	Landed    []queue.Landed  `json:"landed"`
	Commit    string          `json:"commit,omitempty"` // what the target holds after the landing
	Evicted   []queue.Evict   `json:"evicted"`
	Published []queue.Publish `json:"published"`
	Deleted   []string        `json:"deleted"`
	Waiting   []queue.Wait    `json:"waiting"`
	Refused   []string        `json:"refused"`
	Resets    []string        `json:"resets"`
	// Undelivered: this pass's own deliveries (mirrors, webhooks) that did
	// not arrive within the bounded wait at its end (docs/delivery.md).
	Undelivered []string     `json:"undelivered"`
	Warnings    []string     `json:"warnings"`
	Chain       []queue.Step `json:"chain"`
}

func newRunReport(target string) *runReport {
	return &runReport{Target: target, Settled: []queue.Settle{}, Entered: []queue.Enter{}, Landed: []queue.Landed{},
		Evicted: []queue.Evict{}, Published: []queue.Publish{}, Deleted: []string{}, Waiting: []queue.Wait{},
		Refused: []string{}, Resets: []string{}, Warnings: []string{}, Chain: []queue.Step{}, Undelivered: []string{}}
}

// runner carries out one pass.
type runner struct {
	w        *queueWriter
	target   string
	pushOpts []string
	rep      *runReport
	anc      map[[2]plumbing.Hash]bool
	reached  map[string]int // test-only crash switch: times each step was reached
}

// boundary is where a test may kill or pause the pass (see the decisions
// above: GITPLUS_QUEUE_CRASH and GITPLUS_QUEUE_PAUSE are test-only).
func (r *runner) boundary(step string) {
	if r.reached == nil {
		r.reached = map[string]int{}
	}
	r.reached[step]++
	if v := os.Getenv("GITPLUS_QUEUE_CRASH"); v != "" {
		name, nth, _ := strings.Cut(v, ":")
		n, err := strconv.Atoi(nth)
		if err != nil || n < 1 {
			n = 1
		}
		if name == step && r.reached[step] == n {
			fmt.Fprintf(os.Stderr, "git+: GITPLUS_QUEUE_CRASH: exiting at %s:%d\n", step, n)
			os.Exit(3)
		}
	}
	if v := os.Getenv("GITPLUS_QUEUE_PAUSE"); v != "" {
		name, dir, _ := strings.Cut(v, ":")
		if name != step || r.reached[step] != 1 {
			return
		}
		_ = os.WriteFile(filepath.Join(dir, "paused"), nil, 0o644)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
				return
			}
		}
	}
}

func queueRun(c *cli.Context) error {
	if c.NArg() != 0 || (c.String("target") == "" && c.String("queue") == "") {
		return usageErr("usage: git+ queue run --target BRANCH [--queue ID] [--auto-enter] [--depth N] [--json] [--no-notify]")
	}
	since := time.Now() // its own deliveries are those recorded from now (awaitOwnDeliveries)
	w, err := queueContext(c)
	if err != nil {
		return fail(1, err)
	}
	var target string
	if c.String("target") != "" {
		if target, err = branchRef(c.String("target")); err != nil {
			return fail(1, fmt.Errorf("--target: %w", err))
		}
	}
	qid := c.String("queue")
	if qid != "" {
		q, err := w.h.queueLog(qid, w.t)
		if err != nil {
			return fail(1, err)
		}
		if target == "" {
			target = q.st.Target
		} else if q.st.Target != target {
			return fail(1, fmt.Errorf("queue %s lands on %s, not %s", qid, q.st.Target, target))
		}
	}
	r := &runner{w: w, target: target, rep: newRunReport(target), anc: map[[2]plumbing.Hash]bool{}}
	if c.Bool("no-notify") {
		r.pushOpts = []string{hooks.NoNotifyOption}
		// git drops the configured push options (the wake tag a wake rule's
		// process inherits) once a push names its own: carry the tag too.
		if tag := hooks.WakeTag(os.Getenv); tag != "" {
			r.pushOpts = append(r.pushOpts, tag)
		}
	}
	err = r.pass(qid, c.Int("depth"), c.Bool("auto-enter"))
	// The wait comes after the pass: no receiver holds its critical window.
	r.rep.Undelivered = append(r.rep.Undelivered, awaitOwnDeliveries(w.h, since)...)
	if err != nil {
		r.print(c)
		return fail(1, err)
	}
	return r.print(c)
}

func (r *runner) print(c *cli.Context) error {
	rep := r.rep
	if wantJSON(c) {
		return printJSON(c, rep)
	}
	out := c.App.Writer
	short := strings.TrimPrefix(rep.Target, "refs/heads/")
	if rep.Idle != "" {
		fmt.Fprintf(out, "queue run %s: nothing to do: %s\n", short, rep.Idle)
	}
	for _, s := range rep.Settled {
		fmt.Fprintf(out, "settled %s: %s (%s)\n", s.PR, s.Reason, s.Detail)
	}
	for _, e := range rep.Entered {
		fmt.Fprintf(out, "entered %s at %s\n", e.PR, e.Head)
	}
	for _, l := range rep.Landed {
		fmt.Fprintf(out, "landed %s: %s as %s\n", l.PR, l.Head, l.Commit)
	}
	if rep.Commit != "" {
		fmt.Fprintf(out, "%s is now %s\n", short, rep.Commit)
	}
	for _, e := range rep.Evicted {
		fmt.Fprintf(out, "evicted %s (%s): %s\n", e.PR, e.Reason, e.Detail)
	}
	for _, p := range rep.Published {
		fmt.Fprintf(out, "published %s: %s on %s\n", p.PR, p.Step, p.Branch)
	}
	for _, d := range rep.Deleted {
		fmt.Fprintf(out, "deleted %s\n", d)
	}
	for _, w := range rep.Waiting {
		fmt.Fprintf(out, "waiting %s: %s\n", w.PR, w.Reason)
	}
	for _, x := range rep.Refused {
		fmt.Fprintf(out, "refused: %s\n", x)
	}
	for _, x := range rep.Resets {
		fmt.Fprintf(out, "reset: %s\n", x)
	}
	for _, x := range rep.Warnings {
		fmt.Fprintf(out, "warning: %s\n", x)
	}
	for _, x := range rep.Undelivered {
		fmt.Fprintf(out, "undelivered: %s\n", x)
	}
	return nil
}

// pass runs up to queueRunAttempts plans: a stale swap re-plans.
func (r *runner) pass(qid string, depth int, autoEnter bool) error {
	w := r.w
	b, _ := w.t.Rules.For(r.target)
	switch {
	case b.RequireProvenance:
		r.rep.Idle = "refused: " + r.target + " requires provenance, and candidate commits carry none (land pull requests directly with `git+ pr merge`)"
		return nil
	case !b.QueueCandidates:
		r.rep.Idle = "queueCandidates is off for " + r.target + " (turn it on with `git+ rules set`)"
		return nil
	}
	// --depth only bounds: a chain deeper than the rules' queueDepth is one
	// the hook refuses to land ([chain-too-deep]), and the queue would stall.
	if b.QueueDepth > 0 && depth > b.QueueDepth {
		r.rep.Warnings = append(r.rep.Warnings, fmt.Sprintf("--depth %d is over %s's queueDepth %d: using %d", depth, r.target, b.QueueDepth, b.QueueDepth))
		depth = b.QueueDepth
	}
	for attempt := 0; attempt < queueRunAttempts; attempt++ {
		again, err := r.once(qid, b, depth, autoEnter)
		if err != nil || !again {
			return err
		}
	}
	r.rep.Warnings = append(r.rep.Warnings, fmt.Sprintf("%s kept moving: gave up after %d attempts; the next pass continues", r.target, queueRunAttempts))
	return nil
}

// once plans and carries out one plan; again reports a stale swap.
func (r *runner) once(qid string, b trust.Branch, depth int, autoEnter bool) (again bool, err error) {
	w, h := r.w, r.w.h
	if err := h.open(); err != nil { // re-read refs and objects
		return false, err
	}
	var q *queueLog
	if qid != "" {
		if q, err = h.queueLog(qid, w.t); err != nil {
			return false, err
		}
	} else {
		logs, warnings, err := h.queueLogs(w.t)
		if err != nil {
			return false, err
		}
		r.rep.Warnings = appendNew(r.rep.Warnings, warnings...)
		if q = selectLog(logs, r.target); q == nil {
			r.rep.Idle = "no open queue for " + r.target + " (open one with `git+ queue open --target " + r.target + "`)"
			return false, nil
		}
	}
	r.rep.Queue = q.st.ID

	if h.Remote != "." {
		if _, err := gitOut(h.GitDir, "fetch", "-q", h.Remote, r.target); err != nil {
			return false, fmt.Errorf("fetching %s from %s: %w", r.target, h.Remote, err)
		}
	}
	tip, err := prMergeRemoteRef(h, r.target)
	if err != nil {
		return false, err
	}
	if tip.IsZero() {
		r.rep.Idle = r.target + " does not exist yet: push it first"
		return false, nil
	}
	r.rep.Tip = tip.String()

	prs, approved, err := r.readPRs()
	if err != nil {
		return false, err
	}
	objs := receive.Objects{Store: h.objs.(*receive.Store)}
	titles := map[string]string{}
	for id, p := range prs {
		titles[id] = p.Title
	}
	plan, err := queue.PlanPass(queue.PlanInput{
		Queue: q.st, PRs: prs, Trust: w.t, Branch: b, Tip: tip,
		Contains: r.contains,
		Merge: func(parent, head plumbing.Hash, prID string) (plumbing.Hash, []string, error) {
			step, conflicts, err := queue.BuildCandidate(objs, objs, parent, head, prID, r.target, titles[prID])
			if err != nil {
				return plumbing.ZeroHash, nil, err
			}
			var paths []string
			for _, c := range conflicts {
				paths = append(paths, c.Path)
			}
			return step, paths, nil
		},
		Depth: depth, AutoEnter: autoEnter, Approved: approved,
		Ceiling: w.t.Rules.Ceilings.EventsPerRef,
	})
	if err != nil {
		return false, err
	}
	r.rep.Warnings = appendNew(r.rep.Warnings, plan.Warnings...)
	r.rep.Chain = plan.Chain
	r.rep.Waiting = plan.Waiting
	if plan.Idle != "" && plan.Appends() == 0 && len(plan.Delete) == 0 {
		r.rep.Idle = plan.Idle
	}
	qid = q.st.ID
	left := func(prID, head, reason, detail string) error {
		_, err := r.append(hubrefs.QueueRefPrefix+qid, hubrefs.QueueLeft{Base: w.base(hubrefs.TypeQueueLeft), PR: prID, Head: head, Reason: reason, Detail: detail})
		return err
	}

	// Settle.
	for _, s := range plan.Settle {
		if s.Merged != nil {
			if err := r.merged(prs[s.PR], s.PR, *s.Merged); err != nil {
				return false, err
			}
			r.boundary("settle-merged")
		}
		if err := left(s.PR, s.Head, s.Reason, s.Detail); err != nil {
			return false, err
		}
		r.boundary("settled")
		r.rep.Settled = append(r.rep.Settled, s)
	}
	// Enter.
	for _, e := range plan.Enter {
		if _, err := r.append(hubrefs.QueueRefPrefix+qid, hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: e.PR, Head: e.Head, BaseRef: e.Base}); err != nil {
			return false, err
		}
		r.rep.Entered = append(r.rep.Entered, e)
		r.boundary("entered")
	}
	// Land.
	keep := map[string]bool{}
	if l := plan.Land; l != nil {
		r.boundary("before-swap")
		_, err := receive.Push(context.Background(), receive.PushOptions{
			GitDir: h.GitDir, Remote: h.Remote, PushOptions: r.pushOpts,
			Updates: []receive.PushUpdate{{Ref: l.Ref, Old: plumbing.NewHash(l.Old), New: plumbing.NewHash(l.New)}},
		})
		var refused *receive.PushRefusedError
		switch {
		case errors.As(err, &refused) && !movedUnder(refused.Lines):
			msg := fmt.Sprintf("landing %s on %s (%s)", l.New, l.Ref, refused.Status)
			if len(refused.Lines) > 0 {
				msg += ": " + strings.Join(refused.Lines, "; ")
			}
			r.rep.Refused = append(r.rep.Refused, msg)
			for _, x := range l.Landed {
				keep[queue.Branch(q.st.Target, x.PR)] = true
			}
		case errors.Is(err, receive.ErrPushStale) || refused != nil:
			now, rerr := prMergeRemoteRef(h, r.target)
			if rerr != nil {
				return false, rerr
			}
			detail := fmt.Sprintf("%s moved from %s while landing %s", r.target, l.Old, l.New)
			if _, err := r.append(hubrefs.QueueRefPrefix+qid, hubrefs.QueueReset{Base: w.base(hubrefs.TypeQueueReset), Tip: now.String(), Detail: detail}); err != nil {
				return false, err
			}
			r.rep.Resets = append(r.rep.Resets, detail+"; rebuilt on "+now.String())
			r.boundary("reset")
			return true, nil
		case err != nil:
			return false, fmt.Errorf("landing %s on %s: %w", l.New, l.Ref, err)
		default:
			r.rep.Commit = l.New
			r.boundary("swap")
			for _, x := range l.Landed {
				if err := r.merged(prs[x.PR], x.PR, queue.Merged{Revision: x.Head, Branch: l.Ref, Commit: x.Commit}); err != nil {
					return false, err
				}
				r.boundary("merged")
				if err := left(x.PR, x.Head, queue.ReasonLanded, "landed as "+x.Commit); err != nil {
					return false, err
				}
				r.boundary("landed")
				r.rep.Landed = append(r.rep.Landed, x)
			}
		}
	}
	// Evict.
	for _, e := range plan.Evict {
		if err := left(e.PR, e.Head, e.Reason, e.Detail); err != nil {
			return false, err
		}
		r.rep.Evicted = append(r.rep.Evicted, e)
		r.boundary("evicted")
	}
	// Publish.
	for _, p := range plan.Publish {
		if err := r.setBranch(p.Branch, plumbing.NewHash(p.Step)); err != nil {
			return false, err
		}
		r.boundary("branch")
		if _, err := r.append(hubrefs.QueueRefPrefix+qid, hubrefs.QueueCandidate{Base: w.base(hubrefs.TypeQueueCandidate), PR: p.PR, Head: p.Head, Step: p.Step, Parents: p.Parents, Branch: p.Branch}); err != nil {
			return false, err
		}
		r.rep.Published = append(r.rep.Published, p)
		r.boundary("candidate")
	}
	// Delete exactly the branches of the entries this pass settled.
	for _, d := range plan.Delete {
		if keep[d] {
			continue
		}
		cur, err := prMergeRemoteRef(h, d)
		if err != nil {
			return false, err
		}
		if cur.IsZero() {
			continue
		}
		if err := r.setBranch(d, plumbing.ZeroHash); err != nil {
			return false, err
		}
		r.rep.Deleted = append(r.rep.Deleted, d)
		r.boundary("deleted")
	}
	// A runner racing this one with an older plan can leave a branch on
	// another step than the latest queue.candidate names (its push lands
	// after ours, our event after its): CI would test the wrong commit and
	// nothing would publish again. Put each chain step's branch back on it.
	r.restore(q, plan)
	// A pass that died between an entry's queue.left and its branch's
	// deletion (or a runner that published behind another's back) leaves a
	// branch nobody's plan names again: delete the candidate branches of
	// pull requests that have left this queue and are not active in it.
	// Branches of pull requests this queue never held are not touched.
	r.leftovers(q, plan.Delete, keep)
	return false, nil
}

// branches lists the candidate branches of target: ref -> id.
func (r *runner) branches(target string) (map[string]string, error) {
	h := r.w.h
	prefix := queue.Branch(target, "")
	var out string
	var err error
	if h.Remote == "." {
		out, err = gitOut(h.GitDir, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
	} else {
		out, err = gitOut(h.GitDir, "ls-remote", "--refs", h.Remote, prefix+"*")
	}
	if err != nil {
		return nil, fmt.Errorf("listing candidate branches: %w", err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && strings.HasPrefix(f[1], prefix) {
			m[f[1]] = f[0]
		}
	}
	return m, nil
}

// restore moves the branch of each chain step that this pass neither
// published nor landed back onto the step, when it holds something else;
// failures are warnings.
func (r *runner) restore(q *queueLog, plan queue.Plan) {
	skip := map[string]bool{}
	for _, p := range plan.Publish {
		skip[p.PR] = true
	}
	if plan.Land != nil {
		for _, x := range plan.Land.Landed {
			skip[x.PR] = true
		}
	}
	var have map[string]string
	for _, st := range plan.Chain {
		if skip[st.PR] || st.Commit == "" {
			continue
		}
		if have == nil {
			var err error
			if have, err = r.branches(q.st.Target); err != nil {
				r.rep.Warnings = append(r.rep.Warnings, err.Error())
				return
			}
		}
		ref := queue.Branch(q.st.Target, st.PR)
		if have[ref] == st.Commit {
			continue
		}
		if err := r.setBranch(ref, plumbing.NewHash(st.Commit)); err != nil {
			r.rep.Warnings = append(r.rep.Warnings, err.Error())
			continue
		}
		r.rep.Warnings = append(r.rep.Warnings, "restored "+ref+" to "+st.Commit)
	}
}

// leftovers deletes the candidate branches of pull requests that left queue
// q and are not active, other than those in done or keep; failures are
// warnings (the next pass tries again).
func (r *runner) leftovers(q *queueLog, done []string, keep map[string]bool) {
	left := map[string]bool{}
	for _, l := range q.st.Left {
		if _, active := q.st.Active(l.PR); !active {
			left[l.PR] = true
		}
	}
	if len(left) == 0 {
		return
	}
	skip := map[string]bool{}
	for _, d := range done {
		skip[d] = true
	}
	prefix := queue.Branch(q.st.Target, "")
	have, err := r.branches(q.st.Target)
	if err != nil {
		r.rep.Warnings = append(r.rep.Warnings, err.Error())
		return
	}
	refs := make([]string, 0, len(have))
	for ref := range have {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	for _, ref := range refs {
		if skip[ref] || keep[ref] || !left[strings.TrimPrefix(ref, prefix)] {
			continue
		}
		if err := r.setBranch(ref, plumbing.ZeroHash); err != nil {
			r.rep.Warnings = append(r.rep.Warnings, err.Error())
			continue
		}
		r.rep.Deleted = append(r.rep.Deleted, ref)
		r.boundary("deleted")
	}
}

// appendAttempts bounds the re-appends of one event whose ref moved under the
// push (see append).
const appendAttempts = 8

// movedUnder reports whether a hook refused an update only because the ref
// had moved since the push read it: with runners racing, receive-pack's
// pre-receive hook can see the new value before git's own compare-and-swap
// would report the push as stale, and says [ref-moved] "... is at X, not
// Y". That is a stale push, not a refusal.
func movedUnder(lines []string) bool {
	for _, l := range lines {
		if strings.Contains(l, "["+policy.CodeRefMoved+"]") {
			return true
		}
	}
	return false
}

// append appends a queue event; a push that kept losing races (hubrefs.Append
// gave up with ErrStale, or the hook saw the ref moved) is appended again on
// the new tip, up to appendAttempts times: three runners can race on one
// queue ref for longer than one Append's own retries.
func (r *runner) append(ref string, payload any) (plumbing.Hash, error) {
	w := r.w
	for attempt := 1; ; attempt++ {
		id, err := w.h.appendEvent(ref, payload, w.key, w.m.Name, w.t)
		var refused *hubrefs.RefusedError
		lost := errors.Is(err, hubrefs.ErrStale) || errors.As(err, &refused) && movedUnder(refused.Lines)
		if err == nil || attempt >= appendAttempts || !lost {
			return id, err
		}
	}
}

// setBranch force-moves (or deletes, with zero) a candidate branch, with its
// current value as the expected old value. Another runner moving it at the
// same time (stale push, or the hook's [ref-moved]) makes it read the branch
// again: holding the value wanted is done, else it pushes again.
func (r *runner) setBranch(ref string, to plumbing.Hash) error {
	h := r.w.h
	for attempt := 1; ; attempt++ {
		cur, err := prMergeRemoteRef(h, ref)
		if err != nil {
			return err
		}
		if cur == to {
			return nil
		}
		_, err = receive.Push(context.Background(), receive.PushOptions{
			GitDir: h.GitDir, Remote: h.Remote, PushOptions: r.pushOpts,
			Updates: []receive.PushUpdate{{Ref: ref, Old: cur, New: to}},
		})
		if err == nil {
			return nil
		}
		var refused *receive.PushRefusedError
		moved := errors.Is(err, receive.ErrPushStale) || errors.As(err, &refused) && movedUnder(refused.Lines)
		if !moved || attempt >= appendAttempts {
			what := "publishing " + to.String() + " on " + ref
			if to.IsZero() {
				what = "deleting " + ref
			}
			return fmt.Errorf("%s at %s: %w", what, h.where(), err)
		}
	}
}

// merged appends pr.merged to a pull request unless it already records it.
func (r *runner) merged(p *pr.State, id string, m queue.Merged) error {
	w := r.w
	if p == nil {
		return fmt.Errorf("pull request %s vanished during the pass", id)
	}
	for _, x := range p.Merged {
		if x.Revision == m.Revision && x.Branch == m.Branch {
			return nil
		}
	}
	for attempt := 1; ; attempt++ {
		pw := &prWriter{h: w.h, t: w.t, key: w.key, m: w.m, st: p}
		_, err := pw.write(id, hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: m.Revision, Branch: m.Branch, Commit: m.Commit})
		var refused *hubrefs.RefusedError
		if err == nil || attempt >= appendAttempts || !errors.As(err, &refused) {
			return err
		}
		// Another runner moved the pull request's ref (it may have recorded
		// this very landing): read it again and decide again.
		if err := w.h.open(); err != nil {
			return err
		}
		if p, _, err = w.h.prState(id, w.t); err != nil {
			return err
		}
		for _, x := range p.Merged {
			if x.Revision == m.Revision && x.Branch == m.Branch {
				return nil
			}
		}
	}
}

// readPRs folds every pull request; approved lists the open ones on the
// target, oldest first (UUIDv7 ids sort by creation time).
func (r *runner) readPRs() (map[string]*pr.State, []string, error) {
	h, t := r.w.h, r.w.t
	ids, err := h.prIDs()
	if err != nil {
		return nil, nil, err
	}
	prs := map[string]*pr.State{}
	var approved []string
	for _, id := range ids {
		p, _, err := h.prState(id, t)
		if err != nil {
			r.rep.Warnings = append(r.rep.Warnings, "skipped pull request: "+err.Error())
			continue
		}
		prs[id] = p
		if p.State == pr.Open && p.Base == r.target {
			approved = append(approved, id)
		}
	}
	sort.Strings(approved)
	return prs, approved, nil
}

// contains reports whether rev is tip or an ancestor of it.
func (r *runner) contains(tip, rev plumbing.Hash) bool {
	if tip == rev {
		return true
	}
	k := [2]plumbing.Hash{tip, rev}
	if v, ok := r.anc[k]; ok {
		return v
	}
	cmd := exec.Command("git", "--git-dir="+r.w.h.GitDir, "merge-base", "--is-ancestor", rev.String(), tip.String())
	v := cmd.Run() == nil
	r.anc[k] = v
	return v
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
