package main

// git+ queue {open,enter,leave,list,show,close}: the merge queue's records
// under refs/hub/queue/<uuid> (docs/queue.md). `queue run` is in queuerun.go.
//
// Decisions:
//   - Every queue event needs hub.queue. Before pushing, the verb judges the
//     new event locally by folding the queue ref with the event appended
//     (hubrefs/queue.Fold): an event the fold would ignore (already queued,
//     queue closed, pull request not queued) is refused with that reason and
//     nothing is written.
//   - `queue enter` records the pull request's current head and base; the
//     queue is the one that counts for that base (SelectQueue) unless --queue
//     names another. `queue leave` finds the queue the pull request is active
//     in (--queue, else the one counting for its base, else any open queue).
//   - `queue enter --priority high|normal` writes the priority on
//     queue.entered. Entering a queued pull request again at its head with
//     another priority changes its priority (the fold moves it to that class;
//     nothing is evicted, the next pass rebuilds the chain: docs/queue.md).
//   - `queue show` lists the active entries (state "queued", with their
//     position and latest candidate) and then every entry that left, in causal
//     order, with its reason and detail.

import (
	"crypto/sha1"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/uuid"
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/webview"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
)

func init() {
	register(hubGroup("queue", "open, enter, run and inspect merge queues",
		&cli.Command{
			Name: "open", Usage: "open a queue for --target; prints its id on the last line",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "target", Usage: "the branch the queue lands on (main or refs/heads/main)"}, remoteFlag()},
			Action: queueOpen,
		},
		&cli.Command{
			Name: "enter", Usage: "enter a pull request at its current head and base; again with another --priority to change its priority", ArgsUsage: "PR_ID",
			Flags: []cli.Flag{&cli.StringFlag{Name: "queue", Usage: "queue id (default: the queue counting for the pull request's base)"},
				&cli.StringFlag{Name: "priority", Usage: "high or normal (default normal): high entries are planned ahead of normal ones"}, remoteFlag()},
			Action: queueEnter,
		},
		&cli.Command{
			Name: "leave", Usage: "withdraw a pull request from its queue", ArgsUsage: "PR_ID",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "queue", Usage: "queue id (default: the queue the pull request is in)"}, remoteFlag()},
			Action: queueLeave,
		},
		queueRunCommand(),
		queueStatsCommand(),
		&cli.Command{
			Name: "list", Usage: "list queues",
			Flags:  []cli.Flag{jsonFlag(), remoteFlag()},
			Action: queueList,
		},
		&cli.Command{
			Name: "show", Usage: "show a queue's entries (by id, or the queue counting for --target)", ArgsUsage: "[ID]",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "target", Usage: "the branch whose queue to show"}, jsonFlag(), remoteFlag()},
			Action: queueShow,
		},
		&cli.Command{
			Name: "close", Usage: "close a queue (a fresh one takes over its branch)", ArgsUsage: "ID",
			Flags:  []cli.Flag{remoteFlag()},
			Action: queueClose,
		},
	))
}

// queueWriter is what every writing queue verb needs.
type queueWriter struct {
	h   *hubRepo
	t   *trust.State
	key *hubKey
	m   *trust.Member
}

func queueContext(c *cli.Context) (*queueWriter, error) {
	s, err := openSigning(c, trust.CapQueue)
	if err != nil {
		return nil, err
	}
	return &queueWriter{h: s.h, t: s.t, key: s.key, m: s.m}, nil
}

// queueLog is one queue ref read and folded.
type queueLog struct {
	st  *queue.State
	evs []hubrefs.Event
}

// refIDs lists the names under prefix (ending in "/"), sorted. Refs are
// read with receive's reader, not go-git's: go-git reads git's transient
// <ref>.lock files as refs and fails on them ("ref file is empty") while
// another process updates a ref, which concurrent queue runners do.
func (h *hubRepo) refIDs(prefix string) ([]string, error) {
	refs, err := receive.ReadRefsUnder(h.GitDir, []string{prefix}, nil)
	if err != nil {
		return nil, fmt.Errorf("listing refs in %s: %w", h.GitDir, err)
	}
	ids := make([]string, 0, len(refs))
	for n := range refs {
		ids = append(ids, strings.TrimPrefix(n, prefix))
	}
	sort.Strings(ids)
	return ids, nil
}

// queueLog reads and folds refs/hub/queue/<id>; a missing ref is an error
// naming what to do.
func (h *hubRepo) queueLog(id string, t *trust.State) (*queueLog, error) {
	id, err := h.resolveID(hubrefs.QueueRefPrefix, "queue", id) // a full id or an unambiguous prefix
	if err != nil {
		return nil, err
	}
	ref := hubrefs.QueueRefPrefix + id
	tip, err := h.ref(ref)
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, fmt.Errorf("no queue %s in %s (no %s; see `git+ queue list`)", id, h.where(), ref)
	}
	evs, err := h.reader(eventCeilings(t)).Log(tip)
	if err != nil {
		return nil, fmt.Errorf("reading %s in %s: %w", ref, h.GitDir, err)
	}
	st, err := queue.Fold(evs, t)
	if err != nil {
		return nil, fmt.Errorf("folding %s in %s: %w", ref, h.GitDir, err)
	}
	if st.ID != id {
		return nil, fmt.Errorf("%s in %s holds queue %s, not %s", ref, h.GitDir, st.ID, id)
	}
	return &queueLog{st: st, evs: evs}, nil
}

// queueLogs reads every queue; one that cannot be read is skipped with a
// warning (a broken loser queue must not freeze a branch).
func (h *hubRepo) queueLogs(t *trust.State) (map[string]*queueLog, []string, error) {
	ids, err := h.refIDs(hubrefs.QueueRefPrefix)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]*queueLog{}
	var warnings []string
	for _, id := range ids {
		q, err := h.queueLog(id, t)
		if err != nil {
			warnings = append(warnings, "skipped: "+err.Error())
			continue
		}
		out[id] = q
	}
	return out, warnings, nil
}

// selectLog applies SelectQueue over logs.
func selectLog(logs map[string]*queueLog, target string) *queueLog {
	var states []*queue.State
	for _, q := range logs {
		states = append(states, q.st)
	}
	s := queue.SelectQueue(states, target)
	if s == nil {
		return nil
	}
	return logs[s.ID]
}

// write judges payload by folding the queue with it appended, then appends
// it to refs/hub/queue/<id>. q is nil for queue.opened.
func (w *queueWriter) write(id string, q *queueLog, payload any) (plumbing.Hash, error) {
	var tip plumbing.Hash
	var evs []hubrefs.Event
	ignored := 0
	if q != nil {
		tip, evs, ignored = q.st.Tip, q.evs, len(q.st.Ignored)
	}
	ev, err := newEvent(payload, tip, w.key, time.Now())
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ev.ID = plumbing.Hash(sha1.Sum(append([]byte("trial "), ev.Payload...)))
	trial, err := queue.Fold(append(append([]hubrefs.Event(nil), evs...), ev), w.t)
	switch {
	case err != nil:
		return plumbing.ZeroHash, fmt.Errorf("%s on queue %s refused, nothing written (signer %s): %w", ev.Type, id, w.m.Name, err)
	case len(trial.Ignored) > ignored:
		return plumbing.ZeroHash, fmt.Errorf("%s on queue %s refused, nothing written (signer %s): %s", ev.Type, id, w.m.Name, trial.Ignored[len(trial.Ignored)-1].Reason)
	}
	return w.h.appendEvent(hubrefs.QueueRefPrefix+id, payload, w.key, w.m.Name, w.t)
}

func (w *queueWriter) base(typ string) hubrefs.Base {
	return hubrefs.Base{Type: typ, Repo: w.t.RepoID}
}

func queueOpen(c *cli.Context) error {
	if c.NArg() != 0 || c.String("target") == "" {
		return usageErr("usage: git+ queue open --target BRANCH")
	}
	target, err := branchRef(c.String("target"))
	if err != nil {
		return fail(1, fmt.Errorf("--target: %w", err))
	}
	w, err := queueContext(c)
	if err != nil {
		return fail(1, err)
	}
	logs, _, err := w.h.queueLogs(w.t)
	if err != nil {
		return fail(1, err)
	}
	u, err := uuid.NewV7()
	if err != nil {
		return fail(1, err)
	}
	id := u.String()
	if _, err := w.write(id, nil, hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: id, Target: target}); err != nil {
		return fail(1, err)
	}
	if old := selectLog(logs, target); old != nil {
		fmt.Fprintf(c.App.ErrWriter, "warning: queue %s is already open for %s and keeps counting (smallest id); close it with `git+ queue close %s`\n", old.st.ID, target, old.st.ID)
	}
	fmt.Fprintf(c.App.ErrWriter, "opened queue %s for %s\n", id, target)
	fmt.Fprintln(c.App.Writer, id)
	return nil
}

// onePR reads the single PR_ID argument of a queue verb.
func onePR(c *cli.Context, usage string) (string, error) {
	return onePRArg(c, "git+ queue "+usage)
}

func queueEnter(c *cli.Context) error {
	prID, err := onePR(c, "enter PR_ID [--queue ID] [--priority high|normal]")
	if err != nil {
		return err
	}
	prio := c.String("priority")
	if prio != "" && prio != queue.PriorityHigh && prio != queue.PriorityNormal {
		return usageErr("--priority %q: use high or normal", prio)
	}
	w, err := queueContext(c)
	if err != nil {
		return fail(1, err)
	}
	p, _, err := w.h.prState(prID, w.t)
	if err != nil {
		return fail(1, err)
	}
	if p.State != pr.Open {
		return fail(1, fmt.Errorf("pull request %s is %s: only open pull requests enter a queue", prID, p.State))
	}
	var q *queueLog
	if qid := c.String("queue"); qid != "" {
		if q, err = w.h.queueLog(qid, w.t); err != nil {
			return fail(1, err)
		}
		if q.st.Target != p.Base {
			return fail(1, fmt.Errorf("queue %s lands on %s but pull request %s is based on %s: retarget it or pick the queue for its base", qid, q.st.Target, prID, p.Base))
		}
	} else {
		logs, _, err := w.h.queueLogs(w.t)
		if err != nil {
			return fail(1, err)
		}
		if q = selectLog(logs, p.Base); q == nil {
			return fail(1, fmt.Errorf("no open queue for %s (pull request %s's base): open one with `git+ queue open --target %s`", p.Base, prID, p.Base))
		}
	}
	i, queued := q.st.Active(prID)
	if queued && prio == "" {
		prio = q.st.Entries[i].Priority // no flag never changes a priority: "already queued"
	}
	evID, err := w.write(q.st.ID, q, hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: prID, Head: p.Head, BaseRef: p.Base, Priority: prio})
	if err != nil {
		return fail(1, err)
	}
	if queued {
		fmt.Fprintf(c.App.ErrWriter, "pull request %s in queue %s: priority %s (was %s)\n", prID, q.st.ID, prio, q.st.Entries[i].Priority)
	} else {
		fmt.Fprintf(c.App.ErrWriter, "pull request %s entered queue %s at %s\n", prID, q.st.ID, p.Head)
	}
	fmt.Fprintln(c.App.Writer, evID)
	return nil
}

func queueLeave(c *cli.Context) error {
	prID, err := onePR(c, "leave PR_ID [--queue ID]")
	if err != nil {
		return err
	}
	w, err := queueContext(c)
	if err != nil {
		return fail(1, err)
	}
	var q *queueLog
	if qid := c.String("queue"); qid != "" {
		if q, err = w.h.queueLog(qid, w.t); err != nil {
			return fail(1, err)
		}
	} else {
		logs, _, err := w.h.queueLogs(w.t)
		if err != nil {
			return fail(1, err)
		}
		if p, _, err := w.h.prState(prID, w.t); err == nil {
			if s := selectLog(logs, p.Base); s != nil {
				if _, ok := s.st.Active(prID); ok {
					q = s
				}
			}
		}
		if q == nil {
			ids := make([]string, 0, len(logs))
			for id := range logs {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				if _, ok := logs[id].st.Active(prID); ok && !logs[id].st.Closed {
					q = logs[id]
					break
				}
			}
		}
		if q == nil {
			return fail(1, fmt.Errorf("pull request %s is in no open queue (see `git+ queue show --target BRANCH`)", prID))
		}
	}
	head := ""
	if i, ok := q.st.Active(prID); ok {
		head = q.st.Entries[i].Head
	}
	evID, err := w.write(q.st.ID, q, hubrefs.QueueLeft{Base: w.base(hubrefs.TypeQueueLeft), PR: prID, Head: head, Reason: queue.ReasonWithdrawn, Detail: "left by " + w.m.Name})
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "pull request %s left queue %s (withdrawn)\n", prID, q.st.ID)
	fmt.Fprintln(c.App.Writer, evID)
	return nil
}

func queueClose(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErr("usage: git+ queue close ID")
	}
	w, err := queueContext(c)
	if err != nil {
		return fail(1, err)
	}
	q, err := w.h.queueLog(c.Args().First(), w.t)
	if err != nil {
		return fail(1, err)
	}
	if q.st.Closed {
		return fail(1, fmt.Errorf("queue %s is already closed", q.st.ID))
	}
	evID, err := w.write(q.st.ID, q, w.base(hubrefs.TypeQueueClosed))
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "closed queue %s (%s); %d active entries must re-enter a fresh queue\n", q.st.ID, q.st.Target, len(q.st.Entries))
	fmt.Fprintln(c.App.Writer, evID)
	return nil
}

// ---- readers ----------------------------------------------------------------

type queueSummaryJSON struct {
	ID      string `json:"id"`
	Target  string `json:"target"`
	Closed  bool   `json:"closed"`
	Counts  bool   `json:"counts"` // the queue that counts for its target
	Entries int    `json:"entries"`
	Events  int    `json:"events"`
}

type queueEntryJSON struct {
	PR        string `json:"pr"`
	Head      string `json:"head"`
	Base      string `json:"base,omitempty"`
	State     string `json:"state"` // queued or left
	Position  int    `json:"position,omitempty"`
	Priority  string `json:"priority,omitempty"` // queued: high or normal
	Reason    string `json:"reason,omitempty"`
	Detail    string `json:"detail,omitempty"`
	Candidate string `json:"candidate,omitempty"`
	Branch    string `json:"branch,omitempty"`
	// Waiting says why a queued entry has not landed yet: review missing,
	// a check pending or red on which candidate, or the entries ahead of
	// it (the page's reasons, hooks/webview).
	Waiting string `json:"waiting,omitempty"`
}

type queueJSON struct {
	queueSummaryJSON
	Tip     string           `json:"tip"`
	Active  []queueEntryJSON `json:"active"`
	Left    []queueEntryJSON `json:"left"`
	Resets  []string         `json:"resets"`
	Ignored int              `json:"ignored"`
	// TargetRed: why the queue believes the target is broken and stopped
	// evicting (docs/queue.md, "A red target"); empty otherwise.
	TargetRed string `json:"targetRed,omitempty"`
}

func queueSummary(q *queueLog, logs map[string]*queueLog) queueSummaryJSON {
	counts := false
	if s := selectLog(logs, q.st.Target); s != nil && s.st.ID == q.st.ID {
		counts = true
	}
	return queueSummaryJSON{ID: q.st.ID, Target: q.st.Target, Closed: q.st.Closed, Counts: counts, Entries: len(q.st.Entries), Events: q.st.Count}
}

func queueList(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ queue list [--json]")
	}
	h, err := openHub(c)
	if err != nil {
		return fail(1, err)
	}
	t, err := h.trust()
	if err != nil {
		return fail(1, err)
	}
	logs, warnings, err := h.queueLogs(t)
	if err != nil {
		return fail(1, err)
	}
	for _, w := range warnings {
		fmt.Fprintln(c.App.ErrWriter, "warning:", w)
	}
	ids := make([]string, 0, len(logs))
	for id := range logs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	list := []queueSummaryJSON{}
	for _, id := range ids {
		list = append(list, queueSummary(logs[id], logs))
	}
	if wantJSON(c) {
		return printJSON(c, list)
	}
	for _, s := range list {
		state := "open"
		if s.Closed {
			state = "closed"
		} else if !s.Counts {
			state = "open (not counting: another queue has a smaller id)"
		}
		fmt.Fprintf(c.App.Writer, "%s %s %s, %d entries, %d events\n", s.ID, strings.TrimPrefix(s.Target, "refs/heads/"), state, s.Entries, s.Events)
	}
	return nil
}

func queueShow(c *cli.Context) error {
	if c.NArg() > 1 || (c.NArg() == 1) == (c.String("target") != "") {
		return usageErr("usage: git+ queue show ID | --target BRANCH [--json]")
	}
	h, err := openHub(c)
	if err != nil {
		return fail(1, err)
	}
	t, err := h.trust()
	if err != nil {
		return fail(1, err)
	}
	logs, _, err := h.queueLogs(t)
	if err != nil {
		return fail(1, err)
	}
	var q *queueLog
	if c.NArg() == 1 {
		if q, err = h.queueLog(c.Args().First(), t); err != nil {
			return fail(1, err)
		}
	} else {
		target, err := branchRef(c.String("target"))
		if err != nil {
			return fail(1, fmt.Errorf("--target: %w", err))
		}
		if q = selectLog(logs, target); q == nil {
			return fail(1, fmt.Errorf("no open queue for %s in %s (open one with `git+ queue open --target %s`)", target, h.where(), target))
		}
	}
	j := queueJSON{queueSummaryJSON: queueSummary(q, logs), Tip: q.st.Tip.String(), Active: []queueEntryJSON{}, Left: []queueEntryJSON{}, Resets: []string{}, Ignored: len(q.st.Ignored)}
	why := map[string]string{} // pull request → why it waits
	if snap, err := webview.Load(h.GitDir); err == nil {
		for _, vq := range snap.Queues {
			if vq.ID != q.st.ID {
				continue
			}
			for _, e := range vq.Entries {
				why[e.PR] = e.Waiting
			}
		}
	}
	for i, e := range q.st.Entries {
		ej := queueEntryJSON{PR: e.PR, Head: e.Head, Base: e.Base, State: "queued", Position: i + 1, Priority: e.Priority, Waiting: why[e.PR]}
		if r, ok := q.st.LatestCandidate(e.PR); ok && r.Invalidated.IsZero() && r.Head == e.Head {
			ej.Candidate, ej.Branch = r.Step, r.Branch
		}
		j.Active = append(j.Active, ej)
	}
	for _, l := range q.st.Left {
		j.Left = append(j.Left, queueEntryJSON{PR: l.PR, Head: l.Head, State: "left", Reason: l.Reason, Detail: l.Detail})
	}
	for _, r := range q.st.Resets {
		j.Resets = append(j.Resets, r.Tip)
	}
	if tip, err := prMergeRemoteRef(h, q.st.Target); err == nil && !tip.IsZero() {
		j.TargetRed = queue.RedTarget(q.st, tip.String(), nil)
	}
	if wantJSON(c) {
		return printJSON(c, j)
	}
	out := c.App.Writer
	state := "open"
	if q.st.Closed {
		state = "closed"
	}
	fmt.Fprintf(out, "queue %s on %s (%s, %d events)\n", q.st.ID, q.st.Target, state, q.st.Count)
	if j.TargetRed != "" {
		fmt.Fprintf(out, "target red: %s\n", j.TargetRed)
	}
	if len(j.Active) == 0 {
		fmt.Fprintln(out, "no active entries")
	}
	for _, e := range j.Active {
		fmt.Fprintf(out, "%d. %s queued at %s", e.Position, e.PR, e.Head)
		if e.Priority == queue.PriorityHigh {
			fmt.Fprint(out, " (priority high)")
		}
		if e.Candidate != "" {
			fmt.Fprintf(out, ", candidate %s on %s", e.Candidate, e.Branch)
		}
		fmt.Fprintln(out)
		if e.Waiting != "" {
			fmt.Fprintf(out, "   waits: %s\n", e.Waiting)
		}
	}
	for _, e := range j.Left {
		fmt.Fprintf(out, "-  %s left (%s) at %s", e.PR, e.Reason, e.Head)
		if e.Detail != "" {
			fmt.Fprintf(out, ": %s", e.Detail)
		}
		fmt.Fprintln(out)
	}
	return nil
}
