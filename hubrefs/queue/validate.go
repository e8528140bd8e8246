package queue

import (
	"fmt"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Priorities of queue.entered (absent is normal).
const (
	PriorityHigh   = "high"
	PriorityNormal = "normal"
)

// Validate is the one validation of a queue event's payload, shared by the
// boundary (package policy), Fold and verify (docs/events.md): a queue
// type, the payload decoded strictly into its type, its type and repository
// equal to the event's, and every field's rule. It returns the decoded
// payload: *hubrefs.QueueOpened, *hubrefs.QueueEntered,
// *hubrefs.QueueCandidate, *hubrefs.QueueLeft, *hubrefs.QueueReset,
// *hubrefs.QueuePaused, *Resumed (queue.resumed) or *hubrefs.Base
// (queue.closed). Errors wrap ErrMalformed and name the field.
func Validate(ev hubrefs.Event) (any, error) {
	var p any
	var base *hubrefs.Base
	switch ev.Type {
	case hubrefs.TypeQueueOpened:
		v := &hubrefs.QueueOpened{}
		p, base = v, &v.Base
	case hubrefs.TypeQueueEntered:
		v := &hubrefs.QueueEntered{}
		p, base = v, &v.Base
	case hubrefs.TypeQueueCandidate:
		v := &hubrefs.QueueCandidate{}
		p, base = v, &v.Base
	case hubrefs.TypeQueueLeft:
		v := &hubrefs.QueueLeft{}
		p, base = v, &v.Base
	case hubrefs.TypeQueueReset:
		v := &hubrefs.QueueReset{}
		p, base = v, &v.Base
	case hubrefs.TypeQueueClosed:
		v := &hubrefs.Base{}
		p, base = v, v
	case hubrefs.TypeQueuePaused:
		v := &hubrefs.QueuePaused{}
		p, base = v, &v.Base
	case hubrefs.TypeQueueResumed:
		v := &Resumed{}
		p, base = v, &v.Base
	default:
		return nil, fmt.Errorf("%w: %s is not a queue event", ErrMalformed, ev.Type)
	}
	if err := ev.PayloadInto(p); err != nil { // the value decoded at read time, if any (docs/scale.md, "Cold reads")
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if base.Type != ev.Type {
		return nil, fmt.Errorf("%w: payload type %q differs from the message's %q", ErrMalformed, base.Type, ev.Type)
	}
	if ev.Repo != "" && base.Repo != ev.Repo {
		return nil, fmt.Errorf("%w: payload repo %q differs from the event's %q", ErrMalformed, base.Repo, ev.Repo)
	}
	bad := func(field string, err error) error {
		if err == nil {
			return nil
		}
		return fmt.Errorf("%w: %s: %v", ErrMalformed, field, err)
	}
	var err error
	switch v := p.(type) {
	case *hubrefs.QueueOpened:
		err = first(bad("id", trust.ValidUUID(v.ID)), bad("target", trust.ValidBranch(v.Target)))
	case *hubrefs.QueueEntered:
		err = first(bad("pr", trust.ValidUUID(v.PR)), bad("head", pr.ValidOID(v.Head)), bad("base", trust.ValidBranch(v.BaseRef)))
		if err == nil && v.Priority != "" && v.Priority != PriorityHigh && v.Priority != PriorityNormal {
			err = fmt.Errorf("%w: priority %q: use high or normal", ErrMalformed, v.Priority)
		}
	case *hubrefs.QueueCandidate:
		err = first(bad("pr", trust.ValidUUID(v.PR)), bad("head", pr.ValidOID(v.Head)), bad("step", pr.ValidOID(v.Step)),
			bad("branch", trust.ValidRef(v.Branch)))
		if err == nil && len(v.Parents) != 2 && len(v.Parents) != 1 {
			err = fmt.Errorf("%w: parents: a candidate has the two parents [C_{i-1}, head] (a merge step) or the one parent [S_{i-1}] (a squash step), not %d", ErrMalformed, len(v.Parents))
		}
		if err == nil {
			err = bad("parents[0]", pr.ValidOID(v.Parents[0]))
		}
		if err == nil && len(v.Parents) == 2 {
			err = bad("parents[1]", pr.ValidOID(v.Parents[1]))
		}
		if err == nil && len(v.Parents) == 2 && v.Parents[1] != v.Head {
			err = fmt.Errorf("%w: parents[1] is %s, not the head %s: a candidate's parents are [C_{i-1}, head]", ErrMalformed, v.Parents[1], v.Head)
		}
		if err == nil && (v.GroupEnd != "" || v.GroupSize != 0) {
			err = validGroup(v)
		}
		if err == nil && v.Trial && v.GroupEnd == "" {
			err = fmt.Errorf("%w: trial without a group: a trial step names its group (groupEnd, groupSize)", ErrMalformed)
		}
		if err == nil && v.Run != "" {
			// A trial cites the run that made its group red; a red first
			// candidate published again on a red target cites its own
			// failed run (docs/queue.md, "A red target").
			err = bad("run", pr.ValidOID(v.Run))
		}
		if err == nil && v.Partition != "" {
			err = bad("partition", trust.ValidPartitionName(v.Partition))
		}
	case *hubrefs.QueueLeft:
		err = first(bad("pr", trust.ValidUUID(v.PR)), bad("head", pr.ValidOID(v.Head)))
		switch v.Reason {
		case ReasonLanded, ReasonFailed, ReasonConflict, ReasonStale, ReasonWithdrawn:
		default:
			err = first(err, fmt.Errorf("%w: reason %q: use landed, failed, conflict, stale or withdrawn", ErrMalformed, v.Reason))
		}
	case *hubrefs.QueueReset:
		err = bad("tip", pr.ValidOID(v.Tip))
	case *hubrefs.QueuePaused:
		err = validPause(v)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// validGroup checks a candidate's batch group (docs/queue.md, "Batch
// checks"): groupEnd a commit id, groupSize 1..trust.MaxCheckEvery, and a
// step that is not its group's end in a group of at least two.
func validGroup(v *hubrefs.QueueCandidate) error {
	if err := pr.ValidOID(v.GroupEnd); err != nil {
		return fmt.Errorf("%w: groupEnd: %v (groupEnd and groupSize go together)", ErrMalformed, err)
	}
	if v.GroupSize < 1 || v.GroupSize > trust.MaxCheckEvery {
		return fmt.Errorf("%w: groupSize %d: a group has 1 to %d steps (groupEnd and groupSize go together)", ErrMalformed, v.GroupSize, trust.MaxCheckEvery)
	}
	if v.GroupEnd != v.Step && v.GroupSize < 2 {
		return fmt.Errorf("%w: groupSize 1 with groupEnd %s other than the step %s: a group of one ends at its own step", ErrMalformed, v.GroupEnd, v.Step)
	}
	return nil
}

func first(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
