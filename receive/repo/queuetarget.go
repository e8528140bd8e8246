package repo

import "fmt"

// QueueTarget is the branch `git+ queue run` passes over: target (a branch
// name, main or refs/heads/main) and, with a queue id, the branch that
// queue lands on, which must be target when both are given. An unknown
// queue, or a queue of another branch, is an error.
func (s *Signing) QueueTarget(target, queueID string) (string, error) {
	if target != "" {
		ref, err := BranchRef(target)
		if err != nil {
			return "", fmt.Errorf("--target: %w", err)
		}
		target = ref
	}
	if queueID == "" {
		return target, nil
	}
	q, err := s.Repo.QueueLog(queueID, s.Trust)
	if err != nil {
		return "", err
	}
	if target == "" {
		return q.State.Target, nil
	}
	if q.State.Target != target {
		return "", fmt.Errorf("queue %s lands on %s, not %s", queueID, q.State.Target, target)
	}
	return target, nil
}
