package main

// git+ pr {open,update,retarget,review,thread,check,close,reopen,list,show}:
// pull requests under refs/hub/pr/<uuid> (docs/events.md). `pr merge` is the
// direct landing and lives elsewhere.

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/webview"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/repo"
)

func init() {
	register(hubGroup("pr", "open, review, check and list pull requests",
		&cli.Command{
			Name:  "open",
			Usage: "open a pull request of --head onto --base; prints its id on the last line",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "base", Usage: "the branch to land on (main or refs/heads/main)"},
				&cli.StringFlag{Name: "head", Usage: "the revision proposed (resolved to a commit id here; default: the current branch)"},
				&cli.StringFlag{Name: "title", Usage: "one line"},
				&cli.StringFlag{Name: "body", Usage: "description"},
				&cli.StringFlag{Name: "source", Usage: "the branch the head comes from (default: the branch --head names)"},
				&cli.BoolFlag{Name: "push", Usage: "push the head to its source branch on the remote first"},
				remoteFlag(),
			},
			Action: prOpen,
		},
		&cli.Command{
			Name: "update", Usage: "propose a new head (stales every approval)", ArgsUsage: "ID",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "head", Usage: "the new revision"}, remoteFlag()},
			Action: prUpdate,
		},
		&cli.Command{
			Name: "retarget", Usage: "change the base branch (stales every approval)", ArgsUsage: "ID",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "base", Usage: "the new base branch"}, remoteFlag()},
			Action: prRetarget,
		},
		&cli.Command{
			Name: "review", Usage: "review the current head and base", ArgsUsage: "ID",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "approve"},
				&cli.BoolFlag{Name: "request-changes"},
				&cli.BoolFlag{Name: "comment"},
				&cli.StringFlag{Name: "body"},
				remoteFlag(),
			},
			Action: prReview,
		},
		&cli.Command{
			Name: "thread", Usage: "open a review thread (prints its id) or resolve one", ArgsUsage: "ID",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "open", Usage: "open a new thread"},
				&cli.StringFlag{Name: "resolve", Usage: "the thread id to resolve"},
				&cli.StringFlag{Name: "body"},
				remoteFlag(),
			},
			Action: prThread,
		},
		&cli.Command{
			Name: "check", Usage: "record a check result (or its start) at a revision", ArgsUsage: "ID",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "name", Usage: "the check name (needs hub.check:NAME)"},
				&cli.StringFlag{Name: "rev", Usage: "the revision checked (default: the current head)"},
				&cli.StringFlag{Name: "conclusion", Usage: "success, failure or cancelled"},
				&cli.StringFlag{Name: "url", Usage: "where the run's log is"},
				&cli.BoolFlag{Name: "started", Usage: "record check.started instead of a result"},
				remoteFlag(),
			},
			Action: prCheck,
		},
		prMergeCommand(),
		prCheckoutCommand(),
		prDiffCommand(),
		&cli.Command{
			Name: "close", Usage: "close a pull request (opener or admin)", ArgsUsage: "ID",
			Flags:  []cli.Flag{remoteFlag()},
			Action: prCloseReopen(hubrefs.TypePRClosed),
		},
		&cli.Command{
			Name: "reopen", Usage: "reopen a closed pull request (opener or admin)", ArgsUsage: "ID",
			Flags:  []cli.Flag{remoteFlag()},
			Action: prCloseReopen(hubrefs.TypePRReopened),
		},
		&cli.Command{
			Name: "list", Usage: "list open pull requests (--all: every one)",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "all"}, jsonFlag(), remoteFlag()},
			Action: prList,
		},
		&cli.Command{
			Name: "show", Usage: "show a pull request: state, base, head, approvals, threads, checks", ArgsUsage: "ID",
			Flags:  []cli.Flag{jsonFlag(), remoteFlag()},
			Action: prShow,
		},
	))
}

// prContext opens the signing context and, with an id, folds that pull
// request for writing.
func prContext(c *cli.Context, id string) (*repo.PR, error) {
	s, err := openSigning(c)
	if err != nil || id == "" {
		return &repo.PR{Signing: s}, err
	}
	return s.PR(id)
}

// oneID reads the single ID argument of a pr verb.
func oneID(c *cli.Context, usage string) (string, error) {
	return onePRArg(c, "git+ pr "+usage)
}

// onePRArg reads a verb's single argument, a pull request id; usage is the
// verb's whole usage line.
func onePRArg(c *cli.Context, usage string) (string, error) {
	if c.NArg() != 1 {
		return "", usageErr("usage: %s", usage)
	}
	return resolveArgID(c, hubrefs.PRRefPrefix, "pull request", c.Args().First())
}

func prOpen(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ pr open --base BRANCH [--head REV] --title TITLE [--body BODY] [--source BRANCH] [--push]")
	}
	for _, f := range []string{"base", "title"} {
		if c.String(f) == "" {
			return usageErr("git+ pr open: --%s is required", f)
		}
	}
	if _, err := branchRef(c.String("base")); err != nil {
		return fail(1, fmt.Errorf("--base: %w", err))
	}
	s, err := openSigning(c)
	if err != nil {
		return fail(1, err)
	}
	p, head, base, err := s.OpenPR(repo.OpenPR{Base: c.String("base"), Head: c.String("head"), Title: c.String("title"),
		Body: c.String("body"), Source: c.String("source"), Push: c.Bool("push")})
	if err != nil {
		return failed(err)
	}
	fmt.Fprintf(c.App.ErrWriter, "opened pull request %s: %s onto %s\n", p.ID, head, base)
	fmt.Fprintln(c.App.Writer, p.ID)
	return nil
}

func prUpdate(c *cli.Context) error {
	id, err := oneID(c, "update ID --head REV")
	if err != nil {
		return err
	}
	if c.String("head") == "" {
		return usageErr("git+ pr update: --head REV is required")
	}
	return prWrite(c, id, func(p *repo.PR) (string, error) { return p.Update(c.String("head")) })
}

func prRetarget(c *cli.Context) error {
	id, err := oneID(c, "retarget ID --base BRANCH")
	if err != nil {
		return err
	}
	if c.String("base") == "" {
		return usageErr("git+ pr retarget: --base BRANCH is required")
	}
	if _, err := branchRef(c.String("base")); err != nil {
		return fail(1, fmt.Errorf("--base: %w", err))
	}
	return prWrite(c, id, func(p *repo.PR) (string, error) { return p.Retarget(c.String("base")) })
}

func prReview(c *cli.Context) error {
	id, err := oneID(c, "review ID --approve|--request-changes|--comment [--body BODY]")
	if err != nil {
		return err
	}
	var verdicts []string
	for flag, v := range map[string]string{"approve": pr.Approve, "request-changes": pr.Changes, "comment": pr.Comment} {
		if c.Bool(flag) {
			verdicts = append(verdicts, v)
		}
	}
	if len(verdicts) != 1 {
		return usageErr("git+ pr review: give exactly one of --approve, --request-changes, --comment")
	}
	return prWrite(c, id, func(p *repo.PR) (string, error) { return p.Review(verdicts[0], c.String("body")) })
}

func prThread(c *cli.Context) error {
	id, err := oneID(c, "thread ID --open [--body BODY] | --resolve THREAD")
	if err != nil {
		return err
	}
	open, thread := c.Bool("open"), c.String("resolve")
	if open == (thread != "") {
		return usageErr("git+ pr thread: give exactly one of --open, --resolve THREAD")
	}
	typ := hubrefs.TypeThreadResolved
	if open {
		typ = hubrefs.TypeThreadOpened
	} else if err := pr.ValidThreadID(thread); err != nil {
		return usageErr("--resolve: %v", err)
	}
	p, err := prContext(c, id)
	if err != nil {
		return fail(1, err)
	}
	var evID string
	if open {
		thread, evID, err = p.OpenThread(c.String("body"))
	} else {
		evID, err = p.ResolveThread(thread, c.String("body"))
	}
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "%s %s (event %s)\n", typ, thread, evID)
	fmt.Fprintln(c.App.Writer, thread)
	return nil
}

func prCheck(c *cli.Context) error {
	id, err := oneID(c, "check ID --name NAME [--rev REV] --conclusion success|failure|cancelled [--url URL] | --started")
	if err != nil {
		return err
	}
	ck := repo.Check{Name: c.String("name"), Rev: c.String("rev"), Conclusion: c.String("conclusion"), URL: c.String("url"), Started: c.Bool("started")}
	if ck.Name == "" {
		return usageErr("git+ pr check: --name NAME is required")
	}
	if err := trust.ValidCheckName(ck.Name); err != nil {
		return usageErr("--name: %v", err)
	}
	if ck.Started == (ck.Conclusion != "") {
		return usageErr("git+ pr check: give exactly one of --conclusion success|failure|cancelled, --started")
	}
	if concl := ck.Conclusion; !ck.Started && concl != pr.Success && concl != pr.Failure && concl != pr.Cancelled {
		return usageErr("--conclusion %q: want success, failure or cancelled", concl)
	}
	return prWrite(c, id, func(p *repo.PR) (string, error) { return p.Check(ck) })
}

func prCloseReopen(typ string) cli.ActionFunc {
	return func(c *cli.Context) error {
		id, err := oneID(c, strings.TrimPrefix(typ, "pr.")+" ID")
		if err != nil {
			return err
		}
		return prWrite(c, id, func(p *repo.PR) (string, error) {
			if typ == hubrefs.TypePRClosed {
				return p.Close()
			}
			return p.Reopen()
		})
	}
}

// prWrite folds pull request id for writing, writes with write and prints
// the event id.
func prWrite(c *cli.Context, id string, write func(*repo.PR) (string, error)) error {
	p, err := prContext(c, id)
	if err != nil {
		return fail(1, err)
	}
	before := len(journal.events)
	evID, err := write(p)
	if err != nil || len(journal.events) == before {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "%s on pull request %s\n", journal.events[before].Type, id)
	fmt.Fprintln(c.App.Writer, evID)
	return nil
}

// ---- readers ----------------------------------------------------------------

type prCheckJSON struct {
	Name       string `json:"name"`
	Revision   string `json:"revision"`
	Conclusion string `json:"conclusion"`
	AtHead     bool   `json:"atHead"`
}

type prThreadJSON struct {
	ID       string `json:"id"`
	Resolved bool   `json:"resolved"`
	// pr show only:
	Opener     string `json:"opener,omitempty"`
	Body       string `json:"body,omitempty"`
	ResolvedBy string `json:"resolvedBy,omitempty"`
	Resolution string `json:"resolution,omitempty"`
}

// prReviewJSON is one review (pr show).
type prReviewJSON struct {
	Reviewer string `json:"reviewer"`
	Verdict  string `json:"verdict"`
	Head     string `json:"head"`
	Current  bool   `json:"current"` // names the current head and base
	Body     string `json:"body,omitempty"`
	Time     int64  `json:"time"`
	Event    string `json:"event"`
}

// prRunJSON is one check run, started or completed (pr show).
type prRunJSON struct {
	Name       string `json:"name"`
	Revision   string `json:"revision"`
	Conclusion string `json:"conclusion,omitempty"` // "" for check.started
	By         string `json:"by"`
	Counts     bool   `json:"counts"` // its signer holds hub.check:<name> now
	URL        string `json:"url,omitempty"`
	Time       int64  `json:"time"`
}

// prQueueJSON is where the pull request stands in a queue (pr show).
type prQueueJSON struct {
	Queue     string        `json:"queue"`
	Target    string        `json:"target"`
	State     string        `json:"state"` // queued, or left
	Position  int           `json:"position,omitempty"`
	Candidate string        `json:"candidate,omitempty"`
	Checks    []prCheckJSON `json:"checks,omitempty"`
	Waiting   string        `json:"waiting,omitempty"`
	Reason    string        `json:"reason,omitempty"` // why it left: landed, failed, conflict, stale, withdrawn
	Detail    string        `json:"detail,omitempty"`
}

type prJSON struct {
	ID                string         `json:"id"`
	State             string         `json:"state"`
	Title             string         `json:"title"`
	Body              string         `json:"body,omitempty"`
	Base              string         `json:"base"`
	Head              string         `json:"head"`
	Opener            string         `json:"opener"`
	OpenerKey         string         `json:"openerFingerprint"`
	Heads             []string       `json:"heads"`
	Approvals         []string       `json:"approvals"`
	Threads           []prThreadJSON `json:"threads"`
	UnresolvedThreads int            `json:"unresolvedThreads"`
	Checks            []prCheckJSON  `json:"checks"`
	Merged            []prMergedJSON `json:"merged,omitempty"`
	Events            int            `json:"events"`
	Tip               string         `json:"tip"`
	Source            string         `json:"source,omitempty"`
	// pr show only:
	Reviews []prReviewJSON `json:"reviews,omitempty"`
	Runs    []prRunJSON    `json:"runs,omitempty"`
	Queue   *prQueueJSON   `json:"queue,omitempty"`
}

type prMergedJSON struct {
	Revision string `json:"revision"`
	Branch   string `json:"branch"`
	Commit   string `json:"commit"`
}

func prToJSON(st *pr.State, events int) prJSON {
	out := prJSON{
		ID: st.ID, State: st.State, Title: st.Title, Body: st.Body, Base: st.Base, Head: st.Head,
		Opener: st.Opener.Name, Heads: append([]string{}, st.Heads...),
		Approvals: append([]string{}, st.Approvals...), Threads: []prThreadJSON{},
		UnresolvedThreads: st.UnresolvedThreads, Checks: []prCheckJSON{}, Events: events, Tip: st.Tip.String(),
		Source: st.Source,
	}
	if st.Opener.Key != nil {
		out.OpenerKey = fingerprint(st.Opener.Key)
	}
	for th, resolved := range st.Threads {
		out.Threads = append(out.Threads, prThreadJSON{ID: th, Resolved: resolved})
	}
	sort.Slice(out.Threads, func(i, j int) bool { return out.Threads[i].ID < out.Threads[j].ID })
	for k, v := range st.Checks {
		out.Checks = append(out.Checks, prCheckJSON{Name: k.Name, Revision: k.Revision, Conclusion: v, AtHead: k.Revision == st.Head})
	}
	sort.Slice(out.Checks, func(i, j int) bool {
		a, b := out.Checks[i], out.Checks[j]
		if a.AtHead != b.AtHead {
			return a.AtHead
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Revision < b.Revision
	})
	for _, m := range st.Merged {
		out.Merged = append(out.Merged, prMergedJSON{Revision: m.Revision, Branch: m.Branch, Commit: m.Commit})
	}
	return out
}

func prShow(c *cli.Context) error {
	id, err := oneID(c, "show ID [--json]")
	if err != nil {
		return err
	}
	h, _, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	// The page's model: the same reading of reviews, threads, checks and
	// the queue as http://HOST/REPO/pr/ID shows.
	snap, err := webview.Load(h.GitDir)
	if err != nil {
		return fail(1, err)
	}
	p, ok := snap.PRs[id]
	if !ok {
		return fail(1, fmt.Errorf("no pull request %s in %s (see `git+ pr list --all`)", id, h.Where()))
	}
	j := prShowToJSON(p)
	if wantJSON(c) {
		return printJSON(c, j)
	}
	printPR(c.App.Writer, j)
	return nil
}

// prShowToJSON is prToJSON with the texts, runs and queue state.
func prShowToJSON(p *webview.PR) prJSON {
	j := prToJSON(p.State, p.Events)
	j.Threads = []prThreadJSON{}
	for _, th := range p.Threads {
		tj := prThreadJSON{ID: th.ID, Resolved: th.Resolved, Opener: th.Opened.Who, Body: th.Opened.Body}
		if th.Resolution != nil {
			tj.ResolvedBy, tj.Resolution = th.Resolution.Who, th.Resolution.Body
		}
		j.Threads = append(j.Threads, tj)
	}
	j.Reviews = []prReviewJSON{}
	for _, r := range p.Reviews {
		j.Reviews = append(j.Reviews, prReviewJSON{Reviewer: r.Who, Verdict: r.Verdict, Head: r.Head, Current: r.Current, Body: r.Body, Time: r.Time.Unix(), Event: r.Event})
	}
	j.Runs = []prRunJSON{}
	for _, rr := range p.RunsByRevision() {
		for _, r := range rr.Runs {
			j.Runs = append(j.Runs, prRunJSON{Name: r.Name, Revision: r.Revision, Conclusion: r.Conclusion, By: r.Who, Counts: r.Counts, URL: r.URL, Time: r.Time.Unix()})
		}
	}
	if q := p.Queue; q != nil {
		qj := &prQueueJSON{Queue: q.Queue, Target: q.Target, State: "left", Reason: q.Left, Detail: q.Detail}
		if q.Position > 0 {
			qj.State, qj.Position, qj.Candidate, qj.Waiting = "queued", q.Position, q.Candidate, q.Waiting
			for _, c := range q.Checks {
				qj.Checks = append(qj.Checks, prCheckJSON{Name: c.Name, Revision: q.Candidate, Conclusion: c.State})
			}
		}
		j.Queue = qj
	}
	return j
}

func printPR(wr io.Writer, j prJSON) {
	fmt.Fprintf(wr, "pull request %s [%s]\n", j.ID, j.State)
	fmt.Fprintf(wr, "title:     %s\n", j.Title)
	fmt.Fprintf(wr, "base:      %s\n", j.Base)
	if j.Source != "" {
		fmt.Fprintf(wr, "source:    %s\n", j.Source)
	}
	fmt.Fprintf(wr, "head:      %s\n", j.Head)
	opener := j.Opener
	if opener == "" {
		opener = "(no longer a member)"
	}
	fmt.Fprintf(wr, "opener:    %s %s\n", opener, j.OpenerKey)
	fmt.Fprintf(wr, "approvals: %d %s\n", len(j.Approvals), strings.Join(j.Approvals, ", "))
	if q := j.Queue; q != nil {
		if q.State == "queued" {
			fmt.Fprintf(wr, "queue:     #%d for %s: %s\n", q.Position, q.Target, q.Waiting)
			for _, c := range q.Checks {
				fmt.Fprintf(wr, "  candidate %s %s: %s\n", short(q.Candidate), c.Name, c.Conclusion)
			}
		} else {
			fmt.Fprintf(wr, "queue:     left the queue for %s: %s", q.Target, q.Reason)
			if q.Detail != "" {
				fmt.Fprintf(wr, " (%s)", q.Detail)
			}
			fmt.Fprintln(wr)
		}
	}
	for _, m := range j.Merged {
		fmt.Fprintf(wr, "merged:    %s into %s by %s\n", m.Revision, m.Branch, m.Commit)
	}
	if j.Body != "" {
		fmt.Fprintf(wr, "\n%s\n", indent(j.Body))
	}
	fmt.Fprintf(wr, "\nreviews:   %d\n", len(j.Reviews))
	for _, r := range j.Reviews {
		stale := ""
		if !r.Current {
			stale = " (an earlier head or base)"
		}
		fmt.Fprintf(wr, "  %s: %s at %s%s\n", r.Reviewer, r.Verdict, short(r.Head), stale)
		if r.Body != "" {
			fmt.Fprintf(wr, "%s\n", indent(r.Body))
		}
	}
	fmt.Fprintf(wr, "threads:   %d unresolved of %d\n", j.UnresolvedThreads, len(j.Threads))
	for _, th := range j.Threads {
		state := "open"
		if th.Resolved {
			state = "resolved by " + th.ResolvedBy
		}
		fmt.Fprintf(wr, "  thread %s by %s [%s]\n", th.ID, th.Opener, state)
		if th.Body != "" {
			fmt.Fprintf(wr, "%s\n", indent(th.Body))
		}
		if th.Resolution != "" {
			fmt.Fprintf(wr, "%s\n", indent("resolution: "+th.Resolution))
		}
	}
	fmt.Fprintf(wr, "checks:\n")
	rev := ""
	for _, r := range j.Runs {
		if r.Revision != rev {
			rev = r.Revision
			where := ""
			if rev == j.Head {
				where = " (head)"
			}
			fmt.Fprintf(wr, "  at %s%s\n", rev, where)
		}
		concl := r.Conclusion
		if concl == "" {
			concl = "started"
		}
		if !r.Counts {
			concl += " (does not count: signer lacks hub.check:" + r.Name + ")"
		}
		fmt.Fprintf(wr, "    %-12s %s by %s", r.Name, concl, r.By)
		if r.URL != "" {
			fmt.Fprintf(wr, " %s", r.URL)
		}
		fmt.Fprintln(wr)
	}
}

// indent prefixes every line of a free text with four spaces, so a body
// cannot pass for a field of the listing.
func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}

func prList(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ pr list [--all] [--json]")
	}
	h, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	// Every pull request ref, each folded from the fold cache's pull
	// request view when its ref has not moved (docs/scale.md).
	refs, err := receive.ReadRefsUnder(h.GitDir, []string{hubrefs.PRRefPrefix}, nil)
	if err != nil {
		return fail(1, fmt.Errorf("listing refs in %s: %w", h.GitDir, err))
	}
	out := []prJSON{}
	for _, f := range h.Reader(eventCeilings(t)).PRs(t.Tip, t, refs) {
		if f.Err != nil {
			return fail(1, fmt.Errorf("reading %s in %s: %w", f.Ref, h.GitDir, f.Err))
		}
		if f.State.State != pr.Open && !c.Bool("all") {
			continue
		}
		out = append(out, prToJSON(f.State, f.Events))
	}
	if wantJSON(c) {
		return printJSON(c, out)
	}
	for _, p := range out {
		fmt.Fprintf(c.App.Writer, "%s %-6s %s %.12s approvals=%d threads=%d  %s\n",
			p.ID, p.State, strings.TrimPrefix(p.Base, "refs/heads/"), p.Head, len(p.Approvals), p.UnresolvedThreads, p.Title)
	}
	return nil
}
