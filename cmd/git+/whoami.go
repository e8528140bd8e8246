package main

// git+ whoami: the signing key and what it may do here.

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

func init() {
	register(&cli.Command{
		Name:   "whoami",
		Usage:  "print the signing key's fingerprint, member name and capabilities (with --branch: the branch's protection and what this key may do there)",
		Flags:  []cli.Flag{jsonFlag(), remoteFlag(), &cli.StringFlag{Name: "branch", Usage: "also show this branch's protection and whether this key may push, land and run the queue on it"}},
		Action: whoamiAction,
	})
}

type whoamiJSON struct {
	Fingerprint string        `json:"fingerprint"`
	Key         string        `json:"key"`
	Source      string        `json:"source"`
	Member      string        `json:"member,omitempty"`
	Caps        []string      `json:"caps"`
	Branch      *whoamiBranch `json:"branch,omitempty"`
}

// whoamiBranch is a branch's protection (the rules for it, docs/trust.md) and
// what the key may do there. Decisions: mayPush is source.push (a direct
// push or `git+ pr merge` of an approved head; the boundary still judges the
// landing), mayQueue is hub.queue (`git+ queue run`); on an unprotected
// branch any push is accepted by the boundary (transport authentication is
// the server's), so mayPush is true there.
type whoamiBranch struct {
	Ref                    string   `json:"ref"`
	Protected              bool     `json:"protected"`
	RequirePullRequest     bool     `json:"requirePullRequest"`
	RequiredApprovals      int      `json:"requiredApprovals"`
	RequiredChecks         []string `json:"requiredChecks"`
	RequireResolvedThreads bool     `json:"requireResolvedThreads"`
	RequireProvenance      bool     `json:"requireProvenance"`
	QueueCandidates        bool     `json:"queueCandidates"`
	QueueDepth             int      `json:"queueDepth"`
	MayPush                bool     `json:"mayPush"`
	MayQueue               bool     `json:"mayQueue"`
}

func whoamiAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ whoami [--branch B] [--json]")
	}
	key, err := loadKey(c)
	if err != nil {
		return fail(1, err)
	}
	_, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	pub := key.Signer.PublicKey()
	out := whoamiJSON{Fingerprint: fingerprint(pub), Key: hubrefs.AuthorizedKey(pub), Source: key.Source, Caps: []string{}}
	if m, ok := t.MemberByKey(pub); ok {
		out.Member = m.Name
		out.Caps = append(out.Caps, m.Caps...)
	}
	if name := c.String("branch"); name != "" {
		ref, err := branchRef(name)
		if err != nil {
			return usageErr("--branch: %v", err)
		}
		b, protected := t.Rules.For(ref)
		wb := &whoamiBranch{Ref: ref, Protected: protected, RequiredChecks: []string{}}
		has := func(string) bool { return false }
		if m, ok := t.MemberByKey(pub); ok {
			has = m.Has
		}
		if protected {
			wb.RequirePullRequest, wb.RequiredApprovals = b.RequirePullRequest, b.RequiredApprovals
			wb.RequiredChecks = append(wb.RequiredChecks, b.RequiredChecks...)
			wb.RequireResolvedThreads, wb.RequireProvenance = b.RequireResolvedThreads, b.RequireProvenance
			wb.QueueCandidates, wb.QueueDepth = b.QueueCandidates, b.QueueDepth
			wb.MayPush = has(trust.CapSourcePush)
			wb.MayQueue = has(trust.CapQueue) && b.QueueCandidates && !b.RequireProvenance
		} else {
			wb.MayPush, wb.MayQueue = true, false
		}
		out.Branch = wb
	}
	if wantJSON(c) {
		return printJSON(c, out)
	}
	w := c.App.Writer
	if out.Member == "" {
		fmt.Fprintf(w, "%s not a member\n", out.Fingerprint)
	} else {
		fmt.Fprintf(w, "%s %s %s\n", out.Fingerprint, out.Member, strings.Join(out.Caps, ","))
	}
	if b := out.Branch; b != nil {
		if !b.Protected {
			fmt.Fprintf(w, "%s: not protected (any push is accepted)\n", b.Ref)
			return nil
		}
		checks := "none"
		if len(b.RequiredChecks) > 0 {
			checks = strings.Join(b.RequiredChecks, ",")
		}
		fmt.Fprintf(w, "%s: protected; pull request required: %s; approvals: %d; checks: %s; resolved threads: %s; provenance: %s\n",
			b.Ref, yesNo(b.RequirePullRequest), b.RequiredApprovals, checks, yesNo(b.RequireResolvedThreads), yesNo(b.RequireProvenance))
		if b.QueueCandidates && !b.RequireProvenance {
			fmt.Fprintf(w, "%s: takes queue candidates, chains up to %d deep\n", b.Ref, b.QueueDepth)
		} else {
			fmt.Fprintf(w, "%s: takes no queue candidates\n", b.Ref)
		}
		fmt.Fprintf(w, "this key may push/land (source.push): %s; may run the queue (hub.queue): %s\n", yesNo(b.MayPush), yesNo(b.MayQueue))
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
