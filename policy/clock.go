package policy

// The bound on record times (docs/events.md, "Record times and clocks").
//
// An event's time is its committer time, written by whoever signed it. It
// decides nothing about trust (which rules judge a landing follows the
// order of records, never a timestamp), but two readers take it as "when":
// a check.started holds its lease for a while after its time, and a
// queue.candidate starts the branch's checkTimeout. A writer whose clock
// is days off would stretch or cut those, so the hook bounds what a push
// may write, against the server's clock, which the I/O layer passes in
// (Input.Clock; judging stays a function of its inputs):
//
//   - Future: no new event may be dated more than the bound after the
//     server's clock. Safe for replicas too: what a primary accepted was
//     at most the bound ahead of its clock then, and a replica whose clock
//     agrees takes it at once (one whose clock lags takes it once its
//     clock has caught up within the bound).
//   - Past, causally: an update's newest event may not be dated more than
//     the bound before the event it follows (the ref's tip before the
//     push), or before the server's clock when that tip is dated later
//     still. A writer appends on the tip it has just read, so its record
//     comes after the tip's: a clock days behind is refused on any log
//     written in the last days — in particular on a pull request whose
//     check lease another worker renews. It is not a bound against the
//     server's clock alone, because replicas receive records written hours
//     or days ago (a mirror catching up after an outage): those follow
//     their own tips as they did on the primary, and are taken.
//   - Neither applies without Input.Clock: git+ verify audits history,
//     and a record's age says nothing about whether it was well written.
//
// What the rule cannot see: a writer whose clock is behind appending to a
// log nobody has written to for longer than its skew (its record then
// looks old to everyone). docs/events.md says what that costs.

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive/gitobj"
)

// CodeClockSkew refuses a new event dated too far from the server's clock
// or before the event it follows.
const CodeClockSkew = "clock-skew"

// Clock is the server's clock as the hook reads it, and the bound.
type Clock struct {
	Now  int64         // unix seconds
	Skew time.Duration // the bound; zero or negative: no bound
}

// recordTimes judges the times of an update's new events (fresh, which
// holds the event u.New) against in.Clock.
func (j *judge) recordTimes(u Update, fresh []hubrefs.Event) error {
	c := j.in.Clock
	if c == nil || c.Skew <= 0 {
		return nil
	}
	skew := int64(c.Skew / time.Second)
	if skew <= 0 {
		skew = 1
	}
	for _, ev := range fresh {
		if ev.Time > c.Now+skew {
			return refuse(CodeClockSkew, "%s: event %s (%s) is dated %s, %s after this server's clock (%s); a record may be at most %s ahead. The clock of the machine that wrote it is wrong: set it right (NTP) and write the record again",
				u.Ref, ev.ID, ev.Type, stamp(ev.Time), span(ev.Time-c.Now), stamp(c.Now), c.Skew)
		}
	}
	if u.Old.IsZero() {
		return nil
	}
	var tip *hubrefs.Event
	for i := range fresh {
		if fresh[i].ID == u.New {
			tip = &fresh[i]
		}
	}
	if tip == nil {
		return nil
	}
	prev, err := j.eventTime(u.Old)
	if err != nil {
		return &refusal{Code: CodeMissingObject, Reason: fmt.Sprintf("%s: reading the time of its tip %s: %v", u.Ref, u.Old, err), err: err}
	}
	floor := min(prev, c.Now) - skew
	if tip.Time >= floor {
		return nil
	}
	than := fmt.Sprintf("the event it follows (%s, dated %s)", short(u.Old), stamp(prev))
	if prev > c.Now {
		than = fmt.Sprintf("this server's clock (%s; the event it follows, %s, is dated later still, %s)", stamp(c.Now), short(u.Old), stamp(prev))
	}
	return refuse(CodeClockSkew, "%s: event %s (%s) is dated %s, %s before %s; a record may be at most %s older. The clock of the machine that wrote it is behind: set it right (NTP) and write the record again",
		u.Ref, tip.ID, tip.Type, stamp(tip.Time), span(min(prev, c.Now)-tip.Time), than, c.Skew)
}

// eventTime is the committer time of the commit id (an event).
func (j *judge) eventTime(id plumbing.Hash) (int64, error) {
	t, raw, err := j.in.Objects.ReadObject(id)
	if err != nil {
		return 0, err
	}
	if t != plumbing.CommitObject {
		return 0, errors.New("not a commit")
	}
	c, err := gitobj.ParseCommitHeader(raw)
	if err != nil {
		return 0, err
	}
	return c.CommitTime, nil
}

func stamp(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }

// span is a number of seconds as a duration, rounded for a message.
func span(s int64) time.Duration {
	d := time.Duration(s) * time.Second
	if d > time.Hour {
		return d.Round(time.Minute)
	}
	return d
}
