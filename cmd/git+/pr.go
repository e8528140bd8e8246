package main

// git+ pr {open,update,retarget,review,thread,check,close,reopen,list,show}:
// pull requests under refs/hub/pr/<uuid> (docs/events.md). `pr merge` is the
// direct landing and lives elsewhere.

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/webview"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
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
				&cli.BoolFlag{Name: "draft", Usage: "open it as a draft: it cannot enter a queue nor land until git+ pr ready"},
				&cli.BoolFlag{Name: "create-base", Usage: "open it onto a --base the remote does not have yet (a protected branch needs no flag: its first commit lands this way)"},
				remoteFlag(),
			},
			Action: nargs(0, 0, "usage: git+ pr open --base BRANCH [--head REV] --title TITLE [--body BODY] [--source BRANCH] [--push] [--draft] [--create-base]", prOpen),
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
			Name: "draft", Usage: "make an open pull request a draft (opener or admin): it cannot enter a queue nor land", ArgsUsage: "ID",
			Flags:  []cli.Flag{remoteFlag()},
			Action: prDraftReady(hubrefs.TypePRDraft),
		},
		&cli.Command{
			Name: "ready", Usage: "mark a draft ready (opener or admin)", ArgsUsage: "ID",
			Flags:  []cli.Flag{remoteFlag()},
			Action: prDraftReady(hubrefs.TypePRReady),
		},
		&cli.Command{
			Name: "dismiss", Usage: "dismiss a changes request so it no longer blocks (needs hub.bypass)", ArgsUsage: "ID",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "review", Usage: "the review's event id (or a prefix of it; see pr show)"},
				&cli.StringFlag{Name: "reason", Usage: "why it no longer holds (recorded)"},
				remoteFlag(),
			},
			Action: prDismiss,
		},
		&cli.Command{
			Name: "bypass", Usage: "let the current head land directly (pr merge) whatever reviews and checks say; audited (needs hub.bypass)", ArgsUsage: "ID",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "reason", Usage: "why (recorded, listed by verify --branch)"},
				remoteFlag(),
			},
			Action: prBypass,
		},
		&cli.Command{
			Name: "list", Usage: "list open pull requests (--all: every one)",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "all"}, jsonFlag(), remoteFlag()},
			Action: nargs(0, 0, "usage: git+ pr list [--all] [--json]", prList),
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
	for _, f := range []string{"base", "title"} {
		if c.String(f) == "" {
			return usageErr("git+ pr open: --%s is required", f)
		}
	}
	if _, err := repo.BranchRef(c.String("base")); err != nil {
		return fail(1, fmt.Errorf("--base: %w", err))
	}
	s, err := openSigning(c)
	if err != nil {
		return fail(1, err)
	}
	p, head, base, err := s.OpenPR(repo.OpenPR{Base: c.String("base"), Head: c.String("head"), Title: c.String("title"),
		Body: c.String("body"), Source: c.String("source"), Push: c.Bool("push"), Draft: c.Bool("draft"), CreateBase: c.Bool("create-base")})
	if err != nil {
		return failed(err)
	}
	draft := ""
	if c.Bool("draft") {
		draft = " (a draft)"
	}
	fmt.Fprintf(c.App.ErrWriter, "opened pull request %s: %s onto %s%s\n", p.ID, head, base, draft)
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
	if _, err := repo.BranchRef(c.String("base")); err != nil {
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

func prDraftReady(typ string) cli.ActionFunc {
	return func(c *cli.Context) error {
		id, err := oneID(c, strings.TrimPrefix(typ, "pr.")+" ID")
		if err != nil {
			return err
		}
		return prWrite(c, id, func(p *repo.PR) (string, error) {
			if typ == hubrefs.TypePRDraft {
				return p.MarkDraft()
			}
			return p.Ready()
		})
	}
}

func prDismiss(c *cli.Context) error {
	id, err := oneID(c, "dismiss ID --review EVENT --reason TEXT")
	if err != nil {
		return err
	}
	if c.String("review") == "" || strings.TrimSpace(c.String("reason")) == "" {
		return usageErr("git+ pr dismiss: --review EVENT and --reason TEXT are required")
	}
	return prWrite(c, id, func(p *repo.PR) (string, error) { return p.Dismiss(c.String("review"), c.String("reason")) })
}

func prBypass(c *cli.Context) error {
	id, err := oneID(c, "bypass ID --reason TEXT")
	if err != nil {
		return err
	}
	if strings.TrimSpace(c.String("reason")) == "" {
		return usageErr("git+ pr bypass: --reason TEXT is required")
	}
	return prWrite(c, id, func(p *repo.PR) (string, error) { return p.Bypass(c.String("reason")) })
}

// prWrite folds pull request id for writing, writes with write and prints
// the event id.
func prWrite(c *cli.Context, id string, write func(*repo.PR) (string, error)) error {
	p, err := prContext(c, id)
	if err != nil {
		return fail(1, err)
	}
	before := len(journal.Events)
	evID, err := write(p)
	if err != nil || len(journal.Events) == before {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "%s on pull request %s\n", journal.Events[before].Type, id)
	fmt.Fprintln(c.App.Writer, evID)
	return nil
}

// ---- readers ----------------------------------------------------------------

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
	j := p.View()
	return printView(c, j)
}

func prList(c *cli.Context) error {
	h, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	if wantJSON(c) {
		out, warnings, err := h.PRs(t, c.Bool("all"))
		if err != nil {
			return fail(1, err)
		}
		printWarnings(c, warnings) // a pull request left out (docs/events.md, "Titles")
		return printJSON(c, out)
	}
	// The listing, through its memo (docs/scale.md, "The pr list memo"),
	// in one write.
	text, warnings, err := h.PRList(t, c.Bool("all"))
	if err != nil {
		return fail(1, err)
	}
	if _, err = c.App.Writer.Write(text); err != nil {
		return err
	}
	printWarnings(c, warnings)
	return nil
}
