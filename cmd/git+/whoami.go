package main

// git+ whoami: the signing key and what it may do here.

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/receive/repo"
)

func init() {
	register(&cli.Command{
		Name:   "whoami",
		Usage:  "print the signing key's fingerprint, member name and capabilities (with --branch: the branch's protection and what this key may do there)",
		Flags:  []cli.Flag{jsonFlag(), remoteFlag(), &cli.StringFlag{Name: "branch", Usage: "also show this branch's protection and whether this key may push, land and run the queue on it"}},
		Action: whoamiAction,
	})
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
	out, err := repo.Whoami(t, key, c.String("branch"))
	if err != nil {
		return failed(err)
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
