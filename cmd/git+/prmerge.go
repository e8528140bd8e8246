package main

// git+ pr merge ID: the direct landing (the queue of depth zero,
// docs/boundary.md rule 1, docs/cli.md). It pushes the pull request's current head onto
// its base with the base's current value as the expected old value, so the
// receiving hook judges the landing, then appends pr.merged.
//
// Decisions:
//   - Nothing is judged here that the boundary judges: the hook's refusal
//     lines are printed as they are and the verb exits 1. Only what the
//     hook cannot see is checked first (the pull request exists, is open,
//     and the signer may write pr.merged).
//   - The expected old value is read from the receiving side: the
//     repository itself for remote ".", else `git ls-remote`.
//   - A base that already holds the head (someone landed it) is not pushed
//     again; pr.merged is still appended when missing, so a crash between
//     the push and the append is repaired by running the verb again.
//   - pr.merged records revision = head, branch = base, commit = head.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
)

// prMergeCommand is `git+ pr merge`; the pr verb group lists it.
func prMergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "land the pull request's approved head on its base (the hook judges it), then record pr.merged",
		ArgsUsage: "ID",
		Description: "Pushes the head onto the base with the base's current value as the expected old\n" +
			"value; a refusal prints the hook's lines and exits 1.",
		Flags:  []cli.Flag{remoteFlag(), jsonFlag()},
		Action: prMergeAction,
	}
}

func prMergeAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErr("usage: git+ pr merge ID [--remote R]")
	}
	id, err := resolveArgID(c, hubrefs.PRRefPrefix, "pull request", c.Args().First())
	if err != nil {
		return err
	}
	since := time.Now() // its own deliveries are those recorded from now (awaitOwnDeliveries)
	sg, err := openSigning(c)
	if err != nil {
		return fail(1, err)
	}
	h, t, key, m := sg.h, sg.t, sg.key, sg.m
	if !m.Has(trust.CapSourcePush) && !m.Has(trust.CapQueue) {
		return fail(1, fmt.Errorf("member %s (key %s) may not record pr.merged: it needs %s or %s; ask an admin to run `git+ member change %s --cap ...`",
			m.Name, fingerprint(m.Key), trust.CapSourcePush, trust.CapQueue, m.Name))
	}
	st, _, err := h.prState(id, t)
	if err != nil {
		return fail(1, err)
	}
	head := plumbing.NewHash(st.Head)
	base := st.Base
	switch st.State {
	case pr.Open:
	case pr.Merged:
		if prMergedRecorded(st, st.Head, base) {
			return prMergeReport(c, id, base, head, true, "already merged", nil)
		}
	default:
		return fail(1, fmt.Errorf("pull request %s is %s: reopen it (`git+ pr reopen %s`) before merging", id, st.State, id))
	}

	old, err := prMergeRemoteRef(h, base)
	if err != nil {
		return fail(1, err)
	}
	pushed := false
	if old != head {
		if _, err := gitOut(h.GitDir, "cat-file", "-e", st.Head+"^{commit}"); err != nil {
			return fail(1, fmt.Errorf("pull request %s: its head %s is not in %s: fetch it (e.g. `git fetch %s`) and try again", id, st.Head, h.GitDir, h.Remote))
		}
		_, err := receive.Push(context.Background(), receive.PushOptions{
			GitDir:  h.GitDir,
			Remote:  h.Remote,
			Updates: []receive.PushUpdate{{Ref: base, Old: old, New: head}},
			Sign:    key.pushSigning(),
		})
		var refused *receive.PushRefusedError
		switch {
		case errors.As(err, &refused):
			for _, l := range refused.Lines {
				fmt.Fprintln(c.App.ErrWriter, l)
			}
			return fail(1, fmt.Errorf("pull request %s: landing %s on %s at %s was refused (%s)", id, head, base, h.where(), refused.Status))
		case errors.Is(err, receive.ErrPushStale):
			return fail(1, fmt.Errorf("pull request %s: %s moved while landing; run `git+ pr merge %s` again: %w", id, base, id, err))
		case err != nil:
			return fail(1, fmt.Errorf("pull request %s: landing %s on %s: %w", id, head, base, err))
		}
		pushed = true
	}

	if !prMergedRecorded(st, st.Head, base) {
		payload := hubrefs.PRMerged{
			Base:     hubrefs.Base{Type: hubrefs.TypePRMerged, Repo: t.RepoID},
			Revision: st.Head,
			Branch:   base,
			Commit:   st.Head,
		}
		if _, err := h.appendEvent(hubrefs.PRRefPrefix+id, payload, key, m.Name, t); err != nil {
			return fail(1, fmt.Errorf("pull request %s landed on %s but recording pr.merged failed (run `git+ pr merge %s` again to record it): %w", id, base, id, err))
		}
	}
	msg := "merged"
	if !pushed {
		msg = "base already held the head; recorded pr.merged"
	}
	return prMergeReport(c, id, base, head, pushed, msg, awaitOwnDeliveries(h, since))
}

// prMergeReport prints the outcome; undelivered lists the verb's own
// deliveries (mirrors, webhooks) that did not arrive within the wait.
func prMergeReport(c *cli.Context, id, base string, head plumbing.Hash, pushed bool, msg string, undelivered []string) error {
	if wantJSON(c) {
		return printJSON(c, map[string]any{"pr": id, "branch": base, "commit": head.String(), "pushed": pushed, "result": msg,
			"undelivered": append([]string{}, undelivered...)})
	}
	fmt.Fprintf(c.App.Writer, "%s %s %s: %s\n", id, strings.TrimPrefix(base, "refs/heads/"), head, msg)
	for _, u := range undelivered {
		fmt.Fprintf(c.App.Writer, "undelivered: %s\n", u)
	}
	return nil
}

// prMergedRecorded reports whether st already holds pr.merged for rev on
// branch.
func prMergedRecorded(st *pr.State, rev, branch string) bool {
	for _, r := range st.Merged {
		if r.Revision == rev && r.Branch == branch {
			return true
		}
	}
	return false
}

// prMergeRemoteRef reads ref on the receiving side: zero when absent.
func prMergeRemoteRef(h *hubRepo, ref string) (plumbing.Hash, error) {
	if h.Remote == "." {
		out, err := gitOut(h.GitDir, "for-each-ref", "--format=%(objectname)", ref)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		for _, l := range strings.Fields(out) {
			if plumbing.IsHash(l) {
				return plumbing.NewHash(l), nil
			}
		}
		return plumbing.ZeroHash, nil
	}
	out, err := gitOut(h.GitDir, "ls-remote", "--refs", h.Remote, ref)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("reading %s on %s (check the remote): %w", ref, h.Remote, err)
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[1] == ref && plumbing.IsHash(f[0]) {
			return plumbing.NewHash(f[0]), nil
		}
	}
	return plumbing.ZeroHash, nil
}
