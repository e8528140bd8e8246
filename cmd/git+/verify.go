package main

// git+ verify: offline verification (docs/architecture.md) on any replica.
//
//   git+ verify --ref R --old O --new N   judge one update as the hook would
//   git+ verify --branch B [--since REV]  audit B's first-parent history
//
// Decisions:
//   - --ref reads this repository's refs and objects only; it never
//     fetches, so what it says is about the replica as it is.
//   - --branch in a clone with a remote judges the remote's branch and
//     records: it fetches the branch (into its remote-tracking ref) and
//     refs/hub/* first, and says so on its first line (remote, URL, tip);
//     --no-fetch judges the clone's copy as it is, and says that instead.
//     origin/main or refs/remotes/origin/main name origin's main. A bare
//     repository or a mirror (no remote for it: ".") judges its own refs
//     (repo.ResolveAuditSource).
//   - --ref: --old and --new take a revision or 40 zeros (or "" for --old)
//     for a creation/deletion; R may be a short branch name. The verdict line
//     is the hook's refusal line, or "git+: accepted <ref>: <old> -> <new>".
//   - --branch: the judgement is policy.Audit (see its package doc for how a
//     landing is justified, which trust applies, and what is out of scope),
//     run by receive.AuditBranch; --ref is receive.VerifyUpdate.
//     --since REV must be on the branch's first-parent chain; it is not
//     judged itself. Without it the walk goes to the root commit.
//   - --branch lists every landing a bypass justified (who, why) and still
//     exits 0 for them; --strict exits 1 when there is one
//     (docs/trust.md, "An audited bypass").

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/repo"
)

func init() {
	register(hubVerb(&cli.Command{
		Name:  "verify",
		Usage: "judge one update as the hook would (--ref/--old/--new), or audit a branch's history (--branch)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ref", Usage: "the ref of the update to judge"},
			&cli.StringFlag{Name: "old", Usage: "the ref's value before the update (40 zeros or empty: the ref is created)"},
			&cli.StringFlag{Name: "new", Usage: "the proposed value (40 zeros: the ref is deleted)"},
			&cli.StringFlag{Name: "branch", Usage: "audit every landing on this branch's first-parent chain"},
			&cli.StringFlag{Name: "since", Usage: "audit only above this commit of the branch's first-parent chain (default: the root)"},
			&cli.BoolFlag{Name: "no-fetch", Usage: "with --branch in a clone: judge this clone's copy of the branch and records as they are, fetching nothing"},
			&cli.StringFlag{Name: "remote", Usage: "with --branch: the remote whose branch is judged (default: the current branch's upstream remote, then origin; . for this repository's own)"},
			&cli.BoolFlag{Name: "strict", Usage: "with --branch: exit 1 when a landing was bypassed (pr bypass), too"},
			jsonFlag(),
		},
		Action: verifyAction,
	}))
}

func verifyAction(c *cli.Context) error {
	const usage = "usage: git+ verify --ref R --old O --new N | git+ verify --branch B [--since REV] [--strict] [--no-fetch] [--remote R] [--json]"
	if c.NArg() != 0 {
		return usageErr("%s", usage)
	}
	ref, branch := c.String("ref"), c.String("branch")
	switch {
	case ref != "" && branch != "", ref == "" && branch == "":
		return usageErr("%s", usage)
	case ref != "" && (c.String("since") != "" || c.Bool("strict")):
		return usageErr("--since and --strict go with --branch; %s", usage)
	case ref != "" && (c.Bool("no-fetch") || c.IsSet("remote")):
		return usageErr("--no-fetch and --remote go with --branch (--ref never fetches); %s", usage)
	case branch != "" && (c.IsSet("old") || c.IsSet("new")):
		return usageErr("--old and --new go with --ref; %s", usage)
	case ref != "" && !c.IsSet("new"):
		return usageErr("--ref needs --new (and --old); %s", usage)
	}
	gitDir, bare, err := repo.FindGitDir(rootString(c, "repo"))
	if err != nil {
		return fail(1, err)
	}
	if ref != "" {
		return verifyUpdate(c, gitDir, ref)
	}
	return verifyBranch(c, gitDir, bare, branch)
}

func verifyUpdate(c *cli.Context, gitDir, ref string) error {
	if !strings.HasPrefix(ref, "refs/") {
		r, err := repo.BranchRef(ref)
		if err != nil {
			return usageErr("--ref: %v", err)
		}
		ref = r
	}
	old, err := repo.RevOrZero(gitDir, "old", c.String("old"))
	if err != nil {
		return fail(1, err)
	}
	nw, err := repo.RevOrZero(gitDir, "new", c.String("new"))
	if err != nil {
		return fail(1, err)
	}
	v, err := receive.VerifyUpdate(gitDir, ref, old, nw)
	if err != nil {
		return fail(1, err)
	}
	if wantJSON(c) {
		if err := printJSON(c, receive.NewVerifyUpdateJSON(v)); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(c.App.Writer, repo.VerdictLine(ref, old, nw, v))
	}
	if !v.Accepted() {
		return fail(1, errSilent)
	}
	return nil
}

func verifyBranch(c *cli.Context, gitDir string, bare bool, branch string) error {
	src, err := repo.ResolveAuditSource(context.Background(), gitDir, bare, branch, c.String("remote"), c.Bool("no-fetch"))
	if err != nil {
		return fail(1, err)
	}
	var since plumbing.Hash
	if s := c.String("since"); s != "" {
		if since, err = repo.RevOrZero(gitDir, "since", s); err != nil {
			return fail(1, err)
		}
	}
	rep, err := receive.AuditBranchAt(gitDir, src.Branch, src.Tip, since)
	if err != nil {
		return fail(1, err)
	}
	view := repo.NewAuditView(rep, src)
	if err := printView(c, view); err != nil {
		return err
	}
	if view.Failed(c.Bool("strict")) {
		return fail(1, errSilent)
	}
	return nil
}
