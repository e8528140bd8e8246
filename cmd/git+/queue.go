package main

// git+ queue {open,enter,leave,list,show,close}: the merge queue's records
// under refs/hub/queue/<uuid> (docs/queue.md); the writers are receive/repo's
// (its queue.go has the decisions). `queue run` is in queuerun.go.
//
// Decisions:
//   - `queue show` lists the active entries (state "queued", with their
//     position and latest candidate) and then every entry that left, in causal
//     order, with its reason and detail.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/webview"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/repo"
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

// queueContext opens the signing context of the queue writers (hub.queue).
func queueContext(c *cli.Context) (*repo.Signing, error) { return openSigning(c, trust.CapQueue) }

func queueOpen(c *cli.Context) error {
	if c.NArg() != 0 || c.String("target") == "" {
		return usageErr("usage: git+ queue open --target BRANCH")
	}
	target, err := branchRef(c.String("target"))
	if err != nil {
		return fail(1, fmt.Errorf("--target: %w", err))
	}
	s, err := queueContext(c)
	if err != nil {
		return fail(1, err)
	}
	id, old, err := s.OpenQueue(target)
	if err != nil {
		return fail(1, err)
	}
	if old != nil {
		fmt.Fprintf(c.App.ErrWriter, "warning: queue %s is already open for %s and keeps counting (smallest id); close it with `git+ queue close %s`\n", old.State.ID, target, old.State.ID)
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
	s, err := queueContext(c)
	if err != nil {
		return fail(1, err)
	}
	e, err := s.EnterQueue(prID, c.String("queue"), prio)
	if err != nil {
		return fail(1, err)
	}
	if e.Requeued {
		fmt.Fprintf(c.App.ErrWriter, "pull request %s in queue %s: priority %s (was %s)\n", prID, e.Queue.State.ID, e.Priority, e.WasPriority)
	} else {
		fmt.Fprintf(c.App.ErrWriter, "pull request %s entered queue %s at %s\n", prID, e.Queue.State.ID, e.Head)
	}
	fmt.Fprintln(c.App.Writer, e.Event)
	return nil
}

func queueLeave(c *cli.Context) error {
	prID, err := onePR(c, "leave PR_ID [--queue ID]")
	if err != nil {
		return err
	}
	s, err := queueContext(c)
	if err != nil {
		return fail(1, err)
	}
	q, evID, err := s.LeaveQueue(prID, c.String("queue"))
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "pull request %s left queue %s (withdrawn)\n", prID, q.State.ID)
	fmt.Fprintln(c.App.Writer, evID)
	return nil
}

func queueClose(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErr("usage: git+ queue close ID")
	}
	s, err := queueContext(c)
	if err != nil {
		return fail(1, err)
	}
	q, evID, err := s.CloseQueue(c.Args().First())
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "closed queue %s (%s); %d active entries must re-enter a fresh queue\n", q.State.ID, q.State.Target, len(q.State.Entries))
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
	if s := repo.SelectLog(logs, q.State.Target); s != nil && s.State.ID == q.State.ID {
		counts = true
	}
	return queueSummaryJSON{ID: q.State.ID, Target: q.State.Target, Closed: q.State.Closed, Counts: counts, Entries: len(q.State.Entries), Events: q.State.Count}
}

func queueList(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ queue list [--json]")
	}
	h, err := openHub(c)
	if err != nil {
		return fail(1, err)
	}
	t, err := h.Trust()
	if err != nil {
		return fail(1, err)
	}
	logs, warnings, err := h.QueueLogs(t)
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
	t, err := h.Trust()
	if err != nil {
		return fail(1, err)
	}
	logs, _, err := h.QueueLogs(t)
	if err != nil {
		return fail(1, err)
	}
	var q *queueLog
	if c.NArg() == 1 {
		if q, err = h.QueueLog(c.Args().First(), t); err != nil {
			return fail(1, err)
		}
	} else {
		target, err := branchRef(c.String("target"))
		if err != nil {
			return fail(1, fmt.Errorf("--target: %w", err))
		}
		if q = repo.SelectLog(logs, target); q == nil {
			return fail(1, fmt.Errorf("no open queue for %s in %s (open one with `git+ queue open --target %s`)", target, h.Where(), target))
		}
	}
	j := queueJSON{queueSummaryJSON: queueSummary(q, logs), Tip: q.State.Tip.String(), Active: []queueEntryJSON{}, Left: []queueEntryJSON{}, Resets: []string{}, Ignored: len(q.State.Ignored)}
	why := map[string]string{} // pull request → why it waits
	if snap, err := webview.Load(h.GitDir); err == nil {
		for _, vq := range snap.Queues {
			if vq.ID != q.State.ID {
				continue
			}
			for _, e := range vq.Entries {
				why[e.PR] = e.Waiting
			}
		}
	}
	for i, e := range q.State.Entries {
		ej := queueEntryJSON{PR: e.PR, Head: e.Head, Base: e.Base, State: "queued", Position: i + 1, Priority: e.Priority, Waiting: why[e.PR]}
		if r, ok := q.State.LatestCandidate(e.PR); ok && r.Invalidated.IsZero() && r.Head == e.Head {
			ej.Candidate, ej.Branch = r.Step, r.Branch
		}
		j.Active = append(j.Active, ej)
	}
	for _, l := range q.State.Left {
		j.Left = append(j.Left, queueEntryJSON{PR: l.PR, Head: l.Head, State: "left", Reason: l.Reason, Detail: l.Detail})
	}
	for _, r := range q.State.Resets {
		j.Resets = append(j.Resets, r.Tip)
	}
	if tip, err := h.RemoteRef(q.State.Target); err == nil && !tip.IsZero() {
		j.TargetRed = queue.RedTarget(q.State, tip.String(), nil)
	}
	if wantJSON(c) {
		return printJSON(c, j)
	}
	out := c.App.Writer
	state := "open"
	if q.State.Closed {
		state = "closed"
	}
	fmt.Fprintf(out, "queue %s on %s (%s, %d events)\n", q.State.ID, q.State.Target, state, q.State.Count)
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
