package queuerun

import (
	"fmt"
	"io"
	"strings"
)

// WriteText prints rep as `git+ queue run` does without --json.
func (rep *Report) WriteText(out io.Writer) {
	short := strings.TrimPrefix(rep.Target, "refs/heads/")
	if rep.Deferred != "" {
		fmt.Fprintf(out, "queue run %s: deferred: %s\n", short, rep.Deferred)
	}
	if rep.Idle != "" {
		fmt.Fprintf(out, "queue run %s: nothing to do: %s\n", short, rep.Idle)
	}
	for _, s := range rep.Settled {
		fmt.Fprintf(out, "settled %s: %s (%s)\n", s.PR, s.Reason, s.Detail)
	}
	for _, e := range rep.Entered {
		fmt.Fprintf(out, "entered %s at %s\n", e.PR, e.Head)
	}
	for _, l := range rep.Landed {
		fmt.Fprintf(out, "landed %s: %s as %s\n", l.PR, l.Head, l.Commit)
	}
	if rep.Commit != "" {
		fmt.Fprintf(out, "%s is now %s\n", short, rep.Commit)
	}
	for _, e := range rep.Evicted {
		fmt.Fprintf(out, "evicted %s (%s): %s\n", e.PR, e.Reason, e.Detail)
	}
	for _, p := range rep.Published {
		trial := ""
		if p.Trial {
			trial = fmt.Sprintf(" (a trial of %d, aside from the chain)", p.GroupSize)
		}
		fmt.Fprintf(out, "published %s: %s on %s%s\n", p.PR, p.Step, p.Branch, trial)
	}
	for _, d := range rep.Deleted {
		fmt.Fprintf(out, "deleted %s\n", d)
	}
	for _, w := range rep.Waiting {
		fmt.Fprintf(out, "waiting %s: %s\n", w.PR, w.Reason)
	}
	if rep.TargetRed != "" {
		fmt.Fprintf(out, "target red: %s\n", rep.TargetRed)
	}
	if rep.Heal != "" {
		fmt.Fprintf(out, "heal: %s\n", rep.Heal)
	}
	for _, x := range rep.Refused {
		fmt.Fprintf(out, "refused: %s\n", x)
	}
	for _, x := range rep.Resets {
		fmt.Fprintf(out, "reset: %s\n", x)
	}
	for _, x := range rep.Warnings {
		fmt.Fprintf(out, "warning: %s\n", x)
	}
	for _, x := range rep.Undelivered {
		fmt.Fprintf(out, "undelivered: %s\n", x)
	}
	if rep.Rounds > 0 {
		fmt.Fprintf(out, "%d round(s), %d push(es), %d stale, %d transport retries\n", rep.Rounds, rep.Pushes, rep.Stale, rep.Retries)
	}
}
