package main

// Pull requests as a git user expects them (docs/cli.md, "Pull requests"):
// pr open checks that the head is on the remote it writes to (or pushes it
// with --push) and records the source branch; pr checkout and pr diff bring
// a pull request into the work tree and compare it as `git diff A...B`.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive"
)

// ErrHeadNotOnRemote is a pull request head the remote does not have.
var ErrHeadNotOnRemote = errors.New("the head is not on the remote")

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

// headSource works out the branch --head names, for pr open: a local branch
// (feat, refs/heads/feat) or a remote-tracking one (origin/feat) gives
// refs/heads/feat; a commit id gives "".
func (h *hubRepo) headSource(rev string) string {
	if strings.HasPrefix(rev, "refs/heads/") {
		return rev
	}
	if _, err := gitOut(h.GitDir, "rev-parse", "--verify", "--quiet", "refs/heads/"+rev); err == nil {
		return "refs/heads/" + rev
	}
	if h.Remote != "." {
		if b, ok := strings.CutPrefix(rev, h.Remote+"/"); ok {
			if _, err := gitOut(h.GitDir, "rev-parse", "--verify", "--quiet", "refs/remotes/"+rev); err == nil {
				return "refs/heads/" + b
			}
		}
	}
	return ""
}

// currentBranch is the branch HEAD names in a work tree ("" when detached
// or bare).
func (h *hubRepo) currentBranch() string {
	if h.Bare {
		return ""
	}
	b, err := gitOut(h.GitDir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return b
}

// remoteRefs lists the remote's refs (ls-remote), name → id.
func (h *hubRepo) remoteRefs() (map[string]string, error) {
	out, err := gitOut(h.GitDir, "ls-remote", h.Remote)
	if err != nil {
		return nil, fmt.Errorf("listing the refs of remote %s: %w", h.Remote, err)
	}
	refs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasSuffix(f[1], "^{}") {
			refs[f[1]] = f[0]
		}
	}
	return refs, nil
}

// headOnRemote reports whether head is on the remote: some ref of the
// remote is head, or a remote branch this repository has the commit of
// contains it. One `git rev-list head --not <those commits>` decides the
// latter: it lists nothing when head is reachable from one of them
// (--ignore-missing skips the commits this repository lacks).
func (h *hubRepo) headOnRemote(head string, refs map[string]string) bool {
	var stdin strings.Builder
	stdin.WriteString(head + "\n")
	for name, v := range refs {
		if v == head {
			return true
		}
		if !strings.HasPrefix(name, "refs/hub/") {
			stdin.WriteString("^" + v + "\n")
		}
	}
	cmd := exec.Command("git", "--git-dir="+h.GitDir, "rev-list", "--ignore-missing", "--max-count=1", "--stdin")
	cmd.Stdin = strings.NewReader(stdin.String())
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == ""
}

func (h *hubRepo) hasCommit(oid string) bool {
	_, err := gitOut(h.GitDir, "cat-file", "-e", oid+"^{commit}")
	return err == nil
}

// ensureHead makes sure head is in this repository: fetched from the
// remote (the source branch first, then the id itself) when missing.
func (h *hubRepo) ensureHead(head, source string) error {
	if h.hasCommit(head) {
		return nil
	}
	if h.Remote == "." {
		return fmt.Errorf("%w: commit %s is not in %s", ErrHeadNotOnRemote, head, h.GitDir)
	}
	if source != "" {
		if _, err := gitOut(h.GitDir, "fetch", "-q", h.Remote, source); err == nil && h.hasCommit(head) {
			return nil
		}
	}
	if _, err := gitOut(h.GitDir, "fetch", "-q", h.Remote, head); err == nil && h.hasCommit(head) {
		return nil
	}
	return fmt.Errorf("%w: commit %s cannot be fetched from %s (its source branch %q moved or was deleted?): fetch it by hand", ErrHeadNotOnRemote, head, h.Remote, source)
}

// prOpenHead settles pr open's head: resolves --head (default: the current
// branch), pushes it with --push, and checks that the remote has it.
// It returns the commit id and the source branch (refs/heads/..., or "").
func prOpenHead(c *cli.Context, h *hubRepo, key *hubKey) (head, source string, err error) {
	rev := c.String("head")
	if rev == "" {
		if rev = h.currentBranch(); rev == "" {
			return "", "", usageErr("git+ pr open: --head REV is required (HEAD is detached or the repository is bare)")
		}
	}
	head, err = h.resolveCommitID(rev)
	if err != nil {
		return "", "", fail(1, fmt.Errorf("--head: %w", err))
	}
	source = h.headSource(rev)
	if s := c.String("source"); s != "" {
		if source, err = branchRef(s); err != nil {
			return "", "", fail(1, fmt.Errorf("--source: %w", err))
		}
	}
	if h.Remote == "." {
		if c.Bool("push") {
			return "", "", usageErr("git+ pr open --push: %s is the repository itself; there is nothing to push to (pass --remote)", h.GitDir)
		}
		return head, source, nil
	}
	refs, err := h.remoteRefs()
	if err != nil {
		return "", "", fail(1, err)
	}
	if c.Bool("push") {
		if source == "" {
			return "", "", usageErr("git+ pr open --push: --head %s names no branch; give --source BRANCH to push it to", rev)
		}
		old := refs[source]
		if old != head {
			// Signed with the verb's key: the pusher must be known
			// (docs/serving.md "git+ verbs identify themselves").
			if _, err := receive.Push(context.Background(), receive.PushOptions{
				GitDir: h.GitDir, Remote: h.Remote, Sign: key.pushSigning(),
				Updates: []receive.PushUpdate{{Ref: source, Old: plumbing.NewHash(old), New: plumbing.NewHash(head)}},
			}); err != nil {
				return "", "", fail(1, fmt.Errorf("pushing %s to %s on %s: %w", short(head), source, h.Remote, err))
			}
			journal.refs = append(journal.refs, movedRef{Ref: source, Old: old, New: head, Remote: h.Remote})
			fmt.Fprintf(c.App.ErrWriter, "pushed %s to %s on %s\n", short(head), source, h.Remote)
		}
		return head, source, nil
	}
	if !h.headOnRemote(head, refs) {
		push := "git push " + h.Remote + " " + strings.TrimPrefix(source, "refs/heads/")
		if source == "" {
			push = "git push " + h.Remote + " " + head + ":refs/heads/BRANCH"
		}
		return "", "", fail(1, fmt.Errorf("%w: %s (--head %s) is not on remote %s, so nobody could review or land it: push it first (`%s`) or pass --push; nothing written",
			ErrHeadNotOnRemote, head, rev, h.Remote, push))
	}
	return head, source, nil
}

func short(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
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
	st, _, err := h.prState(id, t)
	if err != nil {
		return fail(1, err)
	}
	if err := h.ensureHead(st.Head, st.Source); err != nil {
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
	st, _, err := h.prState(id, t)
	if err != nil {
		return fail(1, err)
	}
	if err := h.ensureHead(st.Head, st.Source); err != nil {
		return fail(1, err)
	}
	baseTip, err := h.baseTip(st.Base)
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

// baseTip is the base branch's commit on the remote (fetched), or here.
func (h *hubRepo) baseTip(base string) (string, error) {
	if h.Remote == "." {
		out, err := gitOut(h.GitDir, "rev-parse", "--verify", "--quiet", base+"^{commit}")
		if err != nil {
			return "", fmt.Errorf("base branch %s does not exist in %s", base, h.GitDir)
		}
		return out, nil
	}
	if _, err := gitOut(h.GitDir, "fetch", "-q", h.Remote, base); err != nil {
		return "", fmt.Errorf("fetching base branch %s from %s: %w", base, h.Remote, err)
	}
	out, err := gitOut(h.GitDir, "rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("fetching base branch %s from %s: no commit fetched", base, h.Remote)
	}
	return out, nil
}
