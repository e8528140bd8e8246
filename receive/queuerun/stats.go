package queuerun

// `git+ queue stats` from Go: read every queue and pull request log of a
// repository and count (hubrefs/queue.ComputeStats, docs/queue.md "Stats").

import (
	"fmt"
	"strings"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/receive"
)

// statsCeilings bound the logs Stats reads (those of the trust log: the
// figures come from events the hook already took).
var statsCeilings = hubrefs.Ceilings{EventsPerRef: 1 << 20, EventBytes: 16 << 20, Parents: 64}

// Stats reads the queue and pull request logs of the repository at gitDir
// as they are (nothing is fetched) and returns the figures of the queues
// landing on target (a full branch ref), counting events at or after since
// (unix seconds; 0 counts all).
func Stats(gitDir, target string, since int64) (queue.Stats, error) {
	queues, prs, err := ReadQueueAndPRLogs(gitDir)
	if err != nil {
		return queue.Stats{}, err
	}
	return queue.ComputeStats(target, since, queues, prs), nil
}

// ReadQueueAndPRLogs reads every queue log and every pull request log, by
// id, as written (no trust filtering).
func ReadQueueAndPRLogs(gitDir string) (queues, prs map[string][]hubrefs.Event, err error) {
	refs, err := receive.ReadRefsUnder(gitDir, []string{hubrefs.QueueRefPrefix, hubrefs.PRRefPrefix}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("listing refs in %s: %w", gitDir, err)
	}
	store, err := receive.OpenStore(gitDir, receive.QuarantineEnv{})
	if err != nil {
		return nil, nil, fmt.Errorf("opening the objects of %s: %w", gitDir, err)
	}
	defer store.Close()
	objs := receive.Objects{Store: store}
	queues, prs = map[string][]hubrefs.Event{}, map[string][]hubrefs.Event{}
	for n, tip := range refs {
		into := prs
		if strings.HasPrefix(n, hubrefs.QueueRefPrefix) {
			into = queues
		}
		evs, err := hubrefs.ReadLog(objs, tip, statsCeilings)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s in %s: %w", n, gitDir, err)
		}
		into[n[strings.LastIndexByte(n, '/')+1:]] = evs
	}
	return queues, prs, nil
}
