package repo

// The queue writers: open, enter (with a priority), leave, close
// (docs/queue.md). `git+ queue run` is package receive/queuerun.
//
// Decisions:
//   - Every queue event needs hub.queue (OpenSigning with trust.CapQueue).
//     Before pushing, a writer judges the new event locally by applying it
//     to a clone of the queue's folded state (hubrefs/queue.State.Apply,
//     the same as folding the queue with the event appended): an event the
//     fold would ignore (already queued, queue closed, pull request not
//     queued) is refused with that reason and nothing is written.
//   - Enter records the pull request's current head and base; the queue is
//     the one that counts for that base (SelectLog) unless one is named.
//     Leave finds the queue the pull request is active in (the one named,
//     else the one counting for its base, else any open queue).
//   - Entering a queued pull request again at its head with another
//     priority changes its priority (the fold moves it to that class;
//     nothing is evicted, the next pass rebuilds the chain: docs/queue.md).

import (
	"crypto/sha1"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/uuid"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/receive/clock"
)

// WriteQueue judges payload by applying it to a clone of the queue's folded
// state (what folding the queue with it appended gives), then appends it to
// refs/hub/queue/<id>. q is nil for queue.opened.
func (s *Signing) WriteQueue(id string, q *QueueLog, payload any) (plumbing.Hash, error) {
	var tip plumbing.Hash
	if q != nil {
		tip = q.State.Tip
	}
	ev, err := NewEvent(payload, tip, s.Key, clock.Now())
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ev.ID = plumbing.Hash(sha1.Sum(append([]byte("trial "), ev.Payload...)))
	var trial *queue.State
	ignored := 0
	if q == nil {
		trial, err = queue.Fold([]hubrefs.Event{ev}, s.Trust)
	} else {
		trial, ignored = q.State.Clone(), len(q.State.Ignored)
		err = trial.Apply(ev, s.Trust)
	}
	switch {
	case err != nil:
		return plumbing.ZeroHash, fmt.Errorf("%s on queue %s refused, nothing written (signer %s): %w", ev.Type, id, s.Member.Name, err)
	case len(trial.Ignored) > ignored:
		return plumbing.ZeroHash, fmt.Errorf("%s on queue %s refused, nothing written (signer %s): %s", ev.Type, id, s.Member.Name, trial.Ignored[len(trial.Ignored)-1].Reason)
	}
	return s.Append(hubrefs.QueueRefPrefix+id, payload)
}

// OpenQueue opens a queue for target and returns its id, and the queue
// that counted for target before (nil if none), which keeps counting
// (smallest id) until it is closed.
func (s *Signing) OpenQueue(target string) (id string, counting *QueueLog, err error) {
	if target, err = BranchRef(target); err != nil {
		return "", nil, fmt.Errorf("--target: %w", err)
	}
	logs, _, err := s.Repo.QueueLogs(s.Trust)
	if err != nil {
		return "", nil, err
	}
	u, err := uuid.NewV7()
	if err != nil {
		return "", nil, err
	}
	id = u.String()
	if _, err := s.WriteQueue(id, nil, hubrefs.QueueOpened{Base: s.base(hubrefs.TypeQueueOpened), ID: id, Target: target}); err != nil {
		return "", nil, err
	}
	return id, SelectLog(logs, target), nil
}

// Entered is the outcome of EnterQueue.
type Entered struct {
	Queue *QueueLog // the queue as it was before
	Event plumbing.Hash
	Head  string
	// Requeued: the pull request was queued already and its priority
	// changed from WasPriority to Priority.
	Requeued              bool
	Priority, WasPriority string
}

// EnterQueue enters pull request prID at its current head and base into
// queueID ("" is the queue counting for its base) with priority
// (queue.PriorityHigh, queue.PriorityNormal, or "": normal, and no change
// for a queued entry).
func (s *Signing) EnterQueue(prID, queueID, priority string) (*Entered, error) {
	p, _, err := s.Repo.PRState(prID, s.Trust)
	if err != nil {
		return nil, err
	}
	if p.State != pr.Open {
		return nil, fmt.Errorf("pull request %s is %s: only open pull requests enter a queue", prID, p.State)
	}
	if p.Draft {
		return nil, fmt.Errorf("%w: pull request %s is a draft: mark it ready (`git+ pr ready %s`) before it enters a queue; nothing written", ErrDraft, p.ID, p.ID)
	}
	var q *QueueLog
	if queueID != "" {
		if q, err = s.Repo.QueueLog(queueID, s.Trust); err != nil {
			return nil, err
		}
		if q.State.Target != p.Base {
			return nil, fmt.Errorf("queue %s lands on %s but pull request %s is based on %s: retarget it or pick the queue for its base", queueID, q.State.Target, prID, p.Base)
		}
	} else {
		logs, _, err := s.Repo.QueueLogs(s.Trust)
		if err != nil {
			return nil, err
		}
		if q = SelectLog(logs, p.Base); q == nil {
			return nil, fmt.Errorf("no open queue for %s (pull request %s's base): open one with `git+ queue open --target %s`", p.Base, prID, p.Base)
		}
	}
	res := &Entered{Queue: q, Head: p.Head}
	i, queued := q.State.Active(prID)
	if queued {
		res.Requeued, res.WasPriority = true, q.State.Entries[i].Priority
		if priority == "" {
			priority = res.WasPriority // no priority never changes one: "already queued"
		}
	}
	res.Priority = priority
	res.Event, err = s.WriteQueue(q.State.ID, q, hubrefs.QueueEntered{Base: s.base(hubrefs.TypeQueueEntered), PR: prID, Head: p.Head, BaseRef: p.Base, Priority: priority})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// LeaveQueue withdraws pull request prID from queueID ("" is the queue it
// is active in) and returns the queue and the event id.
func (s *Signing) LeaveQueue(prID, queueID string) (*QueueLog, plumbing.Hash, error) {
	var q *QueueLog
	var err error
	if queueID != "" {
		if q, err = s.Repo.QueueLog(queueID, s.Trust); err != nil {
			return nil, plumbing.ZeroHash, err
		}
	} else {
		logs, _, err := s.Repo.QueueLogs(s.Trust)
		if err != nil {
			return nil, plumbing.ZeroHash, err
		}
		if p, _, err := s.Repo.PRState(prID, s.Trust); err == nil {
			if sel := SelectLog(logs, p.Base); sel != nil {
				if _, ok := sel.State.Active(prID); ok {
					q = sel
				}
			}
		}
		if q == nil {
			ids := make([]string, 0, len(logs))
			for id := range logs {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				if _, ok := logs[id].State.Active(prID); ok && !logs[id].State.Closed {
					q = logs[id]
					break
				}
			}
		}
		if q == nil {
			return nil, plumbing.ZeroHash, fmt.Errorf("pull request %s is in no open queue (see `git+ queue show --target BRANCH`)", prID)
		}
	}
	head := ""
	if i, ok := q.State.Active(prID); ok {
		head = q.State.Entries[i].Head
	}
	id, err := s.WriteQueue(q.State.ID, q, hubrefs.QueueLeft{Base: s.base(hubrefs.TypeQueueLeft), PR: prID, Head: head, Reason: queue.ReasonWithdrawn, Detail: "left by " + s.Member.Name})
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	return q, id, nil
}

// CloseQueue closes queue id (a fresh queue takes over its branch) and
// returns it as it was before, and the event id.
func (s *Signing) CloseQueue(id string) (*QueueLog, plumbing.Hash, error) {
	q, err := s.Repo.QueueLog(id, s.Trust)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	if q.State.Closed {
		return nil, plumbing.ZeroHash, fmt.Errorf("queue %s is already closed", q.State.ID)
	}
	evID, err := s.WriteQueue(q.State.ID, q, s.base(hubrefs.TypeQueueClosed))
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	return q, evID, nil
}
