package repo

// The readers' text, as the CLI prints it: the same words for a program
// that shows a pull request, a queue or an identity. Record text is
// written as recorded; the CLI's writers escape what a terminal would act
// on (receive/termtext, docs/cli.md "Text on a terminal"), and a program
// writing this text to a terminal wraps its writer in termtext.NewWriter.

import (
	"fmt"
	"io"
	"strings"

	"github.com/gitplus/gitplus/hubrefs/queue"
)

// Line is the pull request's line in `git+ pr list`.
func (p PRView) Line() string {
	return fmt.Sprintf("%s %-6s %s %.12s approvals=%d threads=%d  %s",
		p.ID, p.State, strings.TrimPrefix(p.Base, "refs/heads/"), p.Head, len(p.Approvals), p.UnresolvedThreads, p.Title)
}

// WriteText writes the view as `git+ pr show` prints it.
func (j PRView) WriteText(wr io.Writer) {
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
	if j.Draft {
		fmt.Fprintf(wr, "draft:     yes; it cannot enter a queue nor land until `git+ pr ready %s`\n", j.ID)
	}
	if len(j.ChangesRequested) > 0 {
		fmt.Fprintf(wr, "changes requested: %s\n", strings.Join(j.ChangesRequested, ", "))
	}
	for _, b := range j.Bypasses {
		fmt.Fprintf(wr, "bypassed:  %s by %s: %s\n", Short(b.Head), b.By, b.Reason)
	}
	writeOwners(wr, j.Owners, j.OwnersNote) // owners.go
	if q := j.Queue; q != nil {
		if q.State == "queued" {
			fmt.Fprintf(wr, "queue:     #%d for %s: %s\n", q.Position, q.Target, q.Waiting)
			for _, c := range q.Checks {
				fmt.Fprintf(wr, "  candidate %s %s: %s\n", Short(q.Candidate), c.Name, c.Conclusion)
			}
		} else {
			fmt.Fprintf(wr, "queue:     left the queue for %s: %s\n", q.Target, leftWhy(q.Reason, q.Detail))
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
		if r.Dismissed {
			stale += " (dismissed)"
		}
		fmt.Fprintf(wr, "  %s: %s at %s%s, event %s\n", r.Reviewer, r.Verdict, Short(r.Head), stale, Short(r.Event))
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
		if r.Sandbox != "" {
			fmt.Fprintf(wr, " (sandbox %s)", r.Sandbox)
		}
		fmt.Fprintln(wr)
		if r.Output != "" && r.Conclusion != "" && r.Conclusion != "success" {
			// What a failure printed last, as the check recorded it:
			// indented, so it cannot pass for a field of the listing.
			fmt.Fprintf(wr, "%s\n", indent("output (tail):\n"+strings.TrimRight(r.Output, "\n")))
		}
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

// Line is the queue's line in `git+ queue list`.
func (s QueueSummary) Line() string {
	state := "open"
	if s.Closed {
		state = "closed"
	} else if !s.Counts {
		state = "open (not counting: another queue has a smaller id)"
	}
	return fmt.Sprintf("%s %s %s, %d entries, %d events", s.ID, strings.TrimPrefix(s.Target, "refs/heads/"), state, s.Entries, s.Events)
}

// WriteText writes the view as `git+ queue show` prints it.
func (j *QueueView) WriteText(out io.Writer) {
	state := "open"
	if j.Closed {
		state = "closed"
	}
	fmt.Fprintf(out, "queue %s on %s (%s, %d events)\n", j.ID, j.Target, state, j.Events)
	if j.Paused != nil {
		fmt.Fprintf(out, "%s; nothing lands until git+ queue resume\n", j.Paused.Line())
	}
	if j.TargetRed != "" {
		fmt.Fprintf(out, "target red: %s\n", j.TargetRed)
	}
	for _, f := range j.WakeFailures {
		fmt.Fprintln(out, f.Text)
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
		if e.Lane != "" {
			fmt.Fprintf(out, ", lane %s", e.Lane)
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
}

// WriteText writes the identity as `git+ whoami` prints it.
func (out *Identity) WriteText(w io.Writer) {
	if out.Member == "" {
		fmt.Fprintf(w, "%s not a member\n", out.Fingerprint)
	} else {
		fmt.Fprintf(w, "%s %s %s\n", out.Fingerprint, out.Member, strings.Join(out.Caps, ","))
	}
	if b := out.Branch; b != nil {
		if !b.Protected {
			fmt.Fprintf(w, "%s: not protected (any push is accepted)\n", b.Ref)
			return
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
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// leftWhy says why an entry left its queue in one phrase: the reason, and
// the detail after it unless the detail already begins with the reason
// ("failed: ci at C", never "failed (failed: ci at C)").
func leftWhy(reason, detail string) string {
	switch {
	case detail == "":
		return reason
	case reason == "" || strings.HasPrefix(detail, reason+":"):
		return detail
	}
	return reason + " (" + detail + ")"
}
