package queue

import "github.com/gitplus/gitplus/hubrefs/pr"

// Retrying a failed candidate (docs/queue.md, "Retries below a red step"):
// a candidate is built on the steps below it, so when one of them fails a
// check, the candidate fails it too whatever its own pull request does, and
// running it again cannot turn it green. `git+ check run --retries` asks
// Below before each retry: a failure explained by a red step below is
// recorded at once instead of retried, and while a step below is still
// running it waits for that step's verdict rather than spend a run that the
// verdict may make pointless.

// BelowVerdict is what the checked steps below a candidate say about a
// failure of the candidate.
type BelowVerdict int

const (
	// BelowClear: every checked step below concluded success for the
	// check (or there is none): the failure is the candidate's own, or a
	// flake; a retry may pass.
	BelowClear BelowVerdict = iota
	// BelowPending: no checked step below failed, but one has no
	// conclusion yet: its verdict decides whether a retry is worth a run.
	BelowPending
	// BelowRed: a checked step below failed the check: the candidate holds
	// that failure, and a retry cannot pass.
	BelowRed
)

// Below walks the first parents of candidate step down through the steps
// q's standing queue.candidate records name, to the first commit that is
// no such step (the target, or a chain this queue no longer stands for).
// Of those steps it reads the ones CI runs — every step under strict
// checks, a group's last step under batch checks (docs/queue.md, "Batch
// checks") — through conclusion, which returns the latest conclusion of the
// check in question at a step of a pull request (pr.State.Check), and
// reports the nearest failure ("failure"; a cancelled run says nothing
// about the tree and counts as no conclusion) as BelowRed with that step,
// else BelowPending with the nearest step without a success, else
// BelowClear.
func Below(q *State, step string, conclusion func(prID, step string) (string, bool)) (BelowVerdict, string) {
	if q == nil {
		return BelowClear, ""
	}
	byStep := make(map[string]*Recorded, len(q.latest))
	for _, rec := range q.latest {
		if rec.Invalidated.IsZero() {
			byStep[rec.Step] = rec
		}
	}
	verdict, at := BelowClear, ""
	cur, ok := q.StepParent(step)
	// A first-parent walk over recorded steps; the bound keeps a corrupt
	// (cyclic) record set from looping.
	for n := 0; ok && n <= len(byStep); n++ {
		rec := byStep[cur]
		if rec == nil {
			break
		}
		if rec.GroupEnd == "" || rec.GroupEnd == rec.Step {
			c, done := conclusion(rec.PR, cur)
			switch {
			case done && c == pr.Failure:
				return BelowRed, cur
			case (!done || c != pr.Success) && verdict == BelowClear:
				verdict, at = BelowPending, cur
			}
		}
		cur, ok = q.StepParent(cur)
	}
	return verdict, at
}
