package repo

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

// PauseQueue pauses the queue counting for target (queue.paused, docs/queue.md,
// "Pausing a queue"): its passes build and land nothing and the hook
// refuses candidate landings on target until ResumeQueue. It returns the
// queue as it was before and the event id.
func (s *Signing) PauseQueue(target, reason string) (*QueueLog, plumbing.Hash, error) {
	q, err := s.countingQueue(target)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	if q.State.Paused.On() {
		return nil, plumbing.ZeroHash, fmt.Errorf("queue %s of %s is already %s", q.State.ID, q.State.Target, q.State.Paused.Line())
	}
	id, err := s.WriteQueue(q.State.ID, q, hubrefs.QueuePaused{Base: s.base(hubrefs.TypeQueuePaused), Reason: reason})
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	return q, id, nil
}

// ResumeQueue lifts the pause of the queue counting for target
// (queue.resumed). It returns the queue as it was before and the event id.
func (s *Signing) ResumeQueue(target string) (*QueueLog, plumbing.Hash, error) {
	q, err := s.countingQueue(target)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	if !q.State.Paused.On() {
		return nil, plumbing.ZeroHash, fmt.Errorf("queue %s of %s is not paused", q.State.ID, q.State.Target)
	}
	id, err := s.WriteQueue(q.State.ID, q, s.base(hubrefs.TypeQueueResumed))
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	return q, id, nil
}

// countingQueue is the queue that counts for target (SelectLog).
func (s *Signing) countingQueue(target string) (*QueueLog, error) {
	ref, err := BranchRef(target)
	if err != nil {
		return nil, fmt.Errorf("--target: %w", err)
	}
	logs, _, err := s.Repo.QueueLogs(s.Trust)
	if err != nil {
		return nil, err
	}
	q := SelectLog(logs, ref)
	if q == nil {
		return nil, fmt.Errorf("no open queue for %s in %s (open one with `git+ queue open --target %s`)", ref, s.Repo.Where(), ref)
	}
	return q, nil
}
