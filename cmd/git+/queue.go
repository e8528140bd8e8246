package main

// git+ queue {open,enter,leave,list,show,pause,resume,close}: the merge queue's records
// under refs/hub/queue/<uuid> (docs/queue.md); the writers are receive/repo's
// (its queue.go has the decisions). `queue run` is in queuerun.go.
//
// Decisions:
//   - `queue show` lists the active entries (state "queued", with their
//     position and latest candidate) and then every entry that left, in causal
//     order, with its reason and detail; then the server's wake rules that
//     are failing (wakeview.go). Without an id or --target it lists the
//     queues, as `queue list` does.

import (
	"fmt"

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
			Action: nargs(0, 0, "usage: git+ queue list [--json]", queueList),
		},
		&cli.Command{
			Name: "show", Usage: "show a queue's entries (by id, or the queue counting for --target; neither: list the queues)", ArgsUsage: "[ID]",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "target", Usage: "the branch whose queue to show"}, jsonFlag(), remoteFlag()},
			Action: queueShow,
		},
		queuePauseCommand(),
		queueResumeCommand(),
		&cli.Command{
			Name: "close", Usage: "close a queue (a fresh one takes over its branch)", ArgsUsage: "ID",
			Flags:  []cli.Flag{remoteFlag()},
			Action: nargs(1, 1, "usage: git+ queue close ID", queueClose),
		},
	))
}

// queueContext opens the signing context of the queue writers (hub.queue).
func queueContext(c *cli.Context) (*repo.Signing, error) { return openSigning(c, trust.CapQueue) }

func queueOpen(c *cli.Context) error {
	if c.NArg() != 0 || c.String("target") == "" {
		return usageErr("usage: git+ queue open --target BRANCH")
	}
	target, err := repo.BranchRef(c.String("target"))
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

func queueList(c *cli.Context) error {
	_, list, err := readQueues(c)
	if err != nil {
		return err
	}
	return printLines(c, list)
}

// readQueues reads the queues, saying on standard error what could not be
// read (queue list, and queue show without a queue).
func readQueues(c *cli.Context) (*repo.Repo, []repo.QueueSummary, error) {
	h, t, err := readTrust(c)
	if err != nil {
		return nil, nil, fail(1, err)
	}
	list, warnings, err := h.Queues(t)
	if err != nil {
		return nil, nil, fail(1, err)
	}
	printWarnings(c, warnings)
	return h, list, nil
}

// printWarnings names on standard error, one line each, what a listing
// left out because it could not be read.
func printWarnings(c *cli.Context, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintln(c.App.ErrWriter, "warning:", w)
	}
}

func queueShow(c *cli.Context) error {
	if c.NArg() > 1 || c.NArg() == 1 && c.String("target") != "" {
		return usageErr("usage: git+ queue show [ID | --target BRANCH] [--json]")
	}
	if c.NArg() == 0 && c.String("target") == "" {
		return queueShowAll(c) // no queue named: the list, as queue list
	}
	h, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	j, err := h.ShowQueue(t, c.Args().First(), c.String("target"))
	if err != nil {
		return fail(1, err)
	}
	// Why each entry waits: the page's reasons. Not read is an error, never
	// a list that silently says nothing of why.
	snap, err := webview.Load(h.GitDir)
	if err != nil {
		return fail(1, fmt.Errorf("reading why the entries wait: %w", err))
	}
	for _, w := range snap.Warnings { // records the reasons could not read: said, not dropped
		fmt.Fprintf(c.App.ErrWriter, "git+: warning: %s\n", w)
	}
	why := snap.Waiting(j.ID)
	for i := range j.Active {
		j.Active[i].Waiting = why[j.Active[i].PR]
	}
	j.WakeFailures = wakeFailures(h) // wakeview.go
	return printView(c, j)
}

// queueShowAll is `queue show` without a queue: the queues as queue list
// prints them, then the server's failing wake rules (text only; --json is
// queue list's array).
func queueShowAll(c *cli.Context) error {
	h, list, err := readQueues(c)
	if err != nil {
		return err
	}
	if len(list) == 0 && !wantJSON(c) {
		fmt.Fprintln(c.App.Writer, "no queues (git+ queue open --target BRANCH)")
	}
	if err := printLines(c, list); err != nil || wantJSON(c) {
		return err
	}
	for _, f := range wakeFailures(h) {
		fmt.Fprintln(c.App.Writer, f.Text)
	}
	return nil
}
