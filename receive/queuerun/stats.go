package queuerun

// `git+ queue stats` from Go: read every queue and pull request log of a
// repository and count (hubrefs/queue.ComputeStats, docs/queue.md "Stats").

import (
	"fmt"
	"strings"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
)

// Stats reads the queue and pull request logs of the repository at gitDir
// as they are (nothing is fetched) and returns the figures of the queues
// landing on target (a full branch ref), counting events at or after since
// (unix seconds; 0 counts all). t is the repository's trust state (as
// receive/repo.Repo.Trust reads it): the queues are folded against it, as
// `queue run` folds them, and its rules' ceilings bound the logs read.
func Stats(gitDir string, t *trust.State, target string, since int64) (queue.Stats, error) {
	queues, prs, err := ReadQueueAndPRLogs(gitDir, t)
	if err != nil {
		return queue.Stats{}, err
	}
	return queue.ComputeStats(target, since, t, queues, prs), nil
}

// ReadQueueAndPRLogs reads every queue log and every pull request log, by
// id, verified, within the ceilings of t's rules (those the hook enforced
// when it admitted them; docs/queue.md, "Stats"), through the fold cache the
// hook fills.
func ReadQueueAndPRLogs(gitDir string, t *trust.State) (queues, prs map[string][]hubrefs.Event, err error) {
	if t == nil {
		return nil, nil, fmt.Errorf("reading the queue logs of %s: no trust state given (fold %s first)", gitDir, hubrefs.TrustRef)
	}
	refs, err := receive.ReadRefsUnder(gitDir, []string{hubrefs.QueueRefPrefix, hubrefs.PRRefPrefix}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("listing refs in %s: %w", gitDir, err)
	}
	store, err := receive.OpenStore(gitDir, receive.QuarantineEnv{})
	if err != nil {
		return nil, nil, fmt.Errorf("opening the objects of %s: %w", gitDir, err)
	}
	defer store.Close()
	c := t.Rules.Ceilings
	rd := &policy.Reader{Objects: store, Cache: receive.NewDirCache(gitDir),
		Ceilings: hubrefs.Ceilings{EventsPerRef: c.EventsPerRef, EventBytes: c.EventBytes, Parents: c.ParentsPerEvent}}
	queues, prs = map[string][]hubrefs.Event{}, map[string][]hubrefs.Event{}
	for n, tip := range refs {
		into := prs
		if strings.HasPrefix(n, hubrefs.QueueRefPrefix) {
			into = queues
		}
		evs, err := rd.Log(tip)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s in %s: %w", n, gitDir, err)
		}
		into[n[strings.LastIndexByte(n, '/')+1:]] = evs
	}
	return queues, prs, nil
}
