package policy

import "github.com/gitplus/gitplus/hubrefs/queue"

// CodeQueuePaused: the queue that counts for the branch is paused
// (queue.paused), and the push lands a candidate chain on it
// (docs/boundary.md, "A paused queue").
const CodeQueuePaused = "queue-paused"

// queuePaused refuses a candidate landing on u.Ref while the queue that
// counts for it (queue.SelectQueue, as the runner picks) is paused. A
// direct landing of a pull request head is not a candidate landing and is
// judged as ever.
func (j *judge) queuePaused(u Update) error {
	states, err := j.queues(u.Ref)
	if err != nil {
		return err
	}
	q := queue.SelectQueue(states, u.Ref)
	if q == nil || !q.Paused.On() {
		return nil
	}
	return refuse(CodeQueuePaused, "queue %s of %s is %s; candidates land again after git+ queue resume --target %s", q.ID, u.Ref, q.Paused.Line(), u.Ref)
}
