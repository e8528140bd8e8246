package queue

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Pausing a queue (docs/queue.md, "Pausing a queue"). queue.paused stops
// the queue: the planner builds and lands nothing (PlanPass answers Idle),
// and the boundary refuses a candidate landing on the target of the queue
// that counts for it. Entries keep their places; queue.resumed lifts the
// pause. Both are signed by a member holding hub.queue (repo.admin
// implies it, so an administrator can stop the landings too).

// MaxPauseReason bounds queue.paused's reason, in bytes.
const MaxPauseReason = 1024

// Resumed is the payload of queue.resumed: the common fields only. It is
// its own type so that Validate's result tells it from queue.closed.
type Resumed struct{ hubrefs.Base }

// Pause is the pause standing on a queue: who paused it (the signer's
// member name), when (the event's committer time, as written) and why.
// The zero Pause is a running queue.
type Pause struct {
	By     string        `json:"by"`
	At     int64         `json:"at"`
	Reason string        `json:"reason"`
	Event  plumbing.Hash `json:"-"`
}

// On reports whether the pause stands.
func (p Pause) On() bool { return !p.Event.IsZero() }

// Line says who paused the queue, when and why, for people.
func (p Pause) Line() string {
	if !p.On() {
		return ""
	}
	return fmt.Sprintf("paused by %s at %s: %s", p.By, time.Unix(p.At, 0).UTC().Format(time.RFC3339), p.Reason)
}

// validPause is Validate's rule for queue.paused: a reason, one line of
// printable text of at most MaxPauseReason bytes.
func validPause(v *hubrefs.QueuePaused) error {
	switch {
	case strings.TrimSpace(v.Reason) == "":
		return fmt.Errorf("%w: reason: a pause says why (--reason)", ErrMalformed)
	case len(v.Reason) > MaxPauseReason:
		return fmt.Errorf("%w: reason: %d bytes, at most %d", ErrMalformed, len(v.Reason), MaxPauseReason)
	case !utf8.ValidString(v.Reason) || strings.ContainsAny(v.Reason, "\n\r\x00"):
		return fmt.Errorf("%w: reason: one line of UTF-8 text", ErrMalformed)
	}
	return nil
}

// pause folds queue.paused and queue.resumed: a pause of a paused queue,
// a resume of a running one and either on a closed queue change nothing
// (ignored, with the reason).
func (s *State) pause(ev hubrefs.Event, payload any, t *trust.State) {
	switch p := payload.(type) {
	case *hubrefs.QueuePaused:
		switch {
		case s.Closed:
			s.ignore(ev, "queue is closed")
		case s.Paused.On():
			s.ignore(ev, "queue is already "+s.Paused.Line())
		default:
			by := ""
			if m, ok := t.MemberByKey(ev.Signer); ok {
				by = m.Name
			}
			s.Paused = Pause{By: by, At: ev.Time, Reason: p.Reason, Event: ev.ID}
		}
	case *Resumed:
		switch {
		case s.Closed:
			s.ignore(ev, "queue is closed")
		case !s.Paused.On():
			s.ignore(ev, "queue is not paused")
		default:
			s.Paused = Pause{}
		}
	}
}
