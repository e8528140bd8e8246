package policy

import (
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
)

// CodeQueuePaused: the queue that counts for the branch is paused
// (queue.paused), and the push lands a candidate chain on it
// (docs/boundary.md, "A paused queue").
const CodeQueuePaused = "queue-paused"

// queuePaused refuses a candidate landing on u.Ref while the queue that
// counts for it (queue.SelectQueue, as the runner picks) is paused. A
// direct landing of a pull request head is not a candidate landing and is
// judged as ever.
func (j *judge) queuePaused(u Update) error {
	states, err := j.queueStates(u.Ref)
	if err != nil {
		return err
	}
	q := queue.SelectQueue(states, u.Ref)
	if q == nil || !q.Paused.On() {
		return nil
	}
	return refuse(CodeQueuePaused, "queue %s of %s is %s; candidates land again after git+ queue resume --target %s", q.ID, u.Ref, q.Paused.Line(), u.Ref)
}

// queueStates folds every queue ref whose target is ref, as queues does,
// but through the fold cache's queue states (queuestate.go): the state
// stored for (trust tip, queue tip) is taken whole, as the CLI and `queue
// run` take it, so a landing pushed by `queue run` reads the state the
// pass itself stored instead of folding every queue log again; a state
// folded here is stored for the next. A queue that does not fold is left
// out.
func (j *judge) queueStates(ref string) ([]*queue.State, error) {
	names, tips, err := j.queueTips()
	if err != nil {
		return nil, err
	}
	trustTip := j.in.Refs[hubrefs.TrustRef]
	cached := j.in.Cache != nil && !trustTip.IsZero()
	var states []*queue.State
	for _, name := range names {
		tip := tips[name]
		var st *queue.State
		if cached {
			if b, ok := j.in.Cache.Get(queueStateKey(trustTip, tip)); ok {
				st, _ = decodeQueueState(trustTip, tip, b, false)
			}
		}
		if st == nil {
			evs, err := j.readLog(tip)
			if err != nil {
				return nil, j.storedErr(CodeHubInvalid, name, err)
			}
			if st, err = queue.Fold(evs, j.trust); err != nil {
				continue
			}
			if cached {
				j.in.Cache.Put(queueStateKey(trustTip, tip), encodeQueueState(trustTip, tip, st))
			}
		}
		if st.Target == ref {
			states = append(states, st)
		}
	}
	return states, nil
}
