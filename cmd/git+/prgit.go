package main

// Pull requests as a git user expects them (docs/cli.md, "Pull requests"):
// pr checkout and pr diff bring a pull request into the work tree and
// compare it as `git diff A...B` (receive/repo fetches what is missing).

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
)

func prCheckoutCommand() *cli.Command {
	return &cli.Command{
		Name: "checkout", Usage: "check out a pull request's head as a local branch (default pr/ID8)", ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "branch", Usage: "the local branch to create or move (default: pr/ and the id's first 8 characters)"},
			&cli.BoolFlag{Name: "force", Usage: "move the branch when it exists at another commit"},
			remoteFlag(),
		},
		Action: prCheckout,
	}
}

func prDiffCommand() *cli.Command {
	return &cli.Command{
		Name: "diff", Usage: "diff a pull request against the merge base with its base branch (git diff BASE...HEAD)", ArgsUsage: "ID [-- GIT-DIFF-OPTIONS]",
		Flags:  []cli.Flag{jsonFlag(), remoteFlag()},
		Action: prDiff,
	}
}

func prCheckout(c *cli.Context) error {
	id, err := oneID(c, "checkout ID [--branch NAME] [--force]")
	if err != nil {
		return err
	}
	h, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	if h.Bare {
		return fail(1, fmt.Errorf("%s is a bare repository: run `git+ pr checkout` in a clone", h.GitDir))
	}
	st, _, err := h.PRState(id, t)
	if err != nil {
		return fail(1, err)
	}
	if err := h.EnsureHead(st.Head, st.Source); err != nil {
		return fail(1, err)
	}
	name := c.String("branch")
	if name == "" {
		name = "pr/" + id[:8]
	}
	ref, err := branchRef(name)
	if err != nil {
		return fail(1, fmt.Errorf("--branch: %w", err))
	}
	name = strings.TrimPrefix(ref, "refs/heads/")
	cur, _ := gitOut(h.GitDir, "rev-parse", "--verify", "--quiet", ref)
	args := []string{"checkout", "-q", "-b", name, st.Head}
	switch {
	case cur == st.Head:
		args = []string{"checkout", "-q", name}
	case cur != "" && !c.Bool("force"):
		return fail(1, fmt.Errorf("branch %s exists at %s, not at pull request %s's head %s: pass --force to move it, or --branch NAME", name, short(cur), id, short(st.Head)))
	case cur != "":
		args = []string{"checkout", "-q", "-B", name, st.Head}
	}
	// Run in the work tree: checkout needs it, and --git-dir alone would
	// take the current directory as the work tree.
	top := rootString(c, "repo")
	if top == "" {
		top = "."
	}
	cmd := exec.Command("git", append([]string{"-C", top}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fail(1, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out))))
	}
	if cur != st.Head {
		journal.refs = append(journal.refs, movedRef{Ref: ref, Old: cur, New: st.Head, Remote: "."})
	}
	fmt.Fprintf(c.App.ErrWriter, "switched to branch %s at %s (pull request %s: %s)\n", name, short(st.Head), id, st.Title)
	fmt.Fprintln(c.App.Writer, name)
	return nil
}

// prDiffJSON is pr diff --json.
type prDiffJSON struct {
	ID        string `json:"id"`
	Base      string `json:"base"`
	BaseTip   string `json:"baseTip"`
	Head      string `json:"head"`
	MergeBase string `json:"mergeBase"`
	Diff      string `json:"diff"`
}

func prDiff(c *cli.Context) error {
	if c.NArg() < 1 {
		return usageErr("usage: git+ pr diff ID [-- GIT-DIFF-OPTIONS]")
	}
	id, err := resolveArgID(c, hubrefs.PRRefPrefix, "pull request", c.Args().First())
	if err != nil {
		return err
	}
	extra := c.Args().Slice()[1:]
	h, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	st, _, err := h.PRState(id, t)
	if err != nil {
		return fail(1, err)
	}
	if err := h.EnsureHead(st.Head, st.Source); err != nil {
		return fail(1, err)
	}
	baseTip, err := h.BaseTip(st.Base)
	if err != nil {
		return fail(1, err)
	}
	mb, err := gitOut(h.GitDir, "merge-base", baseTip, st.Head)
	if err != nil {
		return fail(1, fmt.Errorf("pull request %s: its head %s and %s share no history: %w", id, short(st.Head), st.Base, err))
	}
	args := append([]string{"--git-dir=" + h.GitDir, "diff"}, extra...)
	args = append(args, baseTip+"..."+st.Head, "--")
	cmd := exec.Command("git", args...)
	if wantJSON(c) {
		out, err := cmd.Output()
		if err != nil {
			return fail(1, fmt.Errorf("git diff %s...%s: %w", short(baseTip), short(st.Head), err))
		}
		return printJSON(c, prDiffJSON{ID: id, Base: st.Base, BaseTip: baseTip, Head: st.Head, MergeBase: mb, Diff: string(out)})
	}
	cmd.Stdout, cmd.Stderr = c.App.Writer, c.App.ErrWriter
	if f, ok := c.App.Writer.(*os.File); ok {
		cmd.Stdout = f // git pages and colours for a terminal as it would itself
	}
	if err := cmd.Run(); err != nil {
		return fail(1, fmt.Errorf("git diff %s...%s: %w", short(baseTip), short(st.Head), err))
	}
	return nil
}
