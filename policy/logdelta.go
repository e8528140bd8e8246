package policy

// Queue pushes at a cost that does not grow with the queue (docs/scale.md,
// "Writes").
//
// A queue ref's log holds an event per entry ever made, so judging a push
// by reading the whole log, folding it and storing it whole again costs
// every push time in proportion to the queue. Two entries avoid that:
//
//   - A log delta: the events a push adds, stored under the new tip with
//     the tip they continue from (its base) and the number of deltas since
//     the last whole log. A reader resolves the chain of deltas down to a
//     whole log entry (cachedLog) and appends them in order. Hub logs are
//     linear, so a delta's events are the chain from the base up to its
//     tip, each the only parent of the next: anything else is a miss. The
//     hook writes a whole log again every maxDeltaDepth pushes (or when
//     the chain cannot be resolved), so a reader reads at most that many
//     small files more.
//
//	key:   the new tip
//	entry: "gpfd" 1 | tip (20) | base tip (20) | depth | events (as a log entry's)
//
//   - A queue summary: what judging a push to the queue needs of the log
//     already there, folded under one trust state: the queue's id and
//     number of events, and that it folds. Every other rule the fold
//     applies to new events looks at the new events alone (authorizeQueue:
//     signer, hub.queue, payload, no second root, linear from the tip), so
//     with the summary of the old tip the hook reads only the new events.
//
//	key:   the first 20 bytes of SHA-256("gitplus queue summary v1\n" +
//	       trust tip + queue tip)
//	entry: "gpqs" 1 | key (20) | queue tip (20) | trust tip (20) | id |
//	       events | delta depth
//
// Both are pure functions of their keys (tips are content hashes), so
// neither goes stale; like every entry they are trusted as the git
// directory is (docs/foldcache.md).

import (
	"encoding/binary"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

var (
	deltaMagic    = []byte("gpfd\x01")
	queueSumMagic = []byte("gpqs\x01")
)

// maxDeltaDepth is how many log deltas may follow a whole log entry (a
// variable for tests).
var maxDeltaDepth = 64

func encodeDelta(tip, base plumbing.Hash, depth int, fresh []hubrefs.Event) []byte {
	b := appendEntryHeader(make([]byte, 0, encodedSize(fresh)+40), deltaMagic, tip)
	b = append(b, base[:]...)
	b = binary.AppendUvarint(b, uint64(depth))
	return appendEvents(b, fresh)
}

// delta is one decoded log delta.
type delta struct {
	base  plumbing.Hash
	depth int
	evs   []hubrefs.Event
}

// decodeDelta reads a delta entry for tip: false unless its events are a
// chain from base up to tip.
func decodeDelta(tip plumbing.Hash, b []byte) (delta, bool) {
	r, ok := openEntry(b, deltaMagic, tip)
	if !ok {
		return delta{}, false
	}
	d := delta{base: r.hash()}
	depth := r.uvarint()
	if r.bad || depth == 0 || depth > uint64(maxDeltaDepth) {
		return delta{}, false
	}
	d.depth = int(depth)
	evs, ok := r.events()
	if !ok || len(r.b) != 0 || len(evs) == 0 || evs[len(evs)-1].ID != tip {
		return delta{}, false
	}
	prev := d.base
	for _, ev := range evs {
		if len(ev.Parents) != 1 || ev.Parents[0] != prev {
			return delta{}, false
		}
		prev = ev.ID
	}
	d.evs = evs
	return d, true
}

// cachedLog returns the log at tip from the cache: a whole log entry, or a
// chain of deltas down to one; and the number of deltas read. False when
// there is no cache or any link is missing or damaged.
func cachedLog(c Cache, tip plumbing.Hash) ([]hubrefs.Event, int, bool) {
	if c == nil {
		return nil, 0, false
	}
	var chain []delta
	at := tip
	for {
		b, ok := c.Get(at)
		if !ok {
			return nil, 0, false
		}
		if evs, ok := decodeLog(at, b); ok {
			if len(chain) == 0 {
				return evs, 0, true
			}
			n := len(evs)
			for _, d := range chain {
				n += len(d.evs)
			}
			all := make([]hubrefs.Event, 0, n)
			all = append(all, evs...)
			for i := len(chain) - 1; i >= 0; i-- {
				all = append(all, chain[i].evs...)
			}
			return all, len(chain), true
		}
		d, ok := decodeDelta(at, b)
		if !ok || len(chain) >= maxDeltaDepth || (len(chain) > 0 && d.depth != chain[len(chain)-1].depth-1) {
			return nil, 0, false
		}
		chain = append(chain, d)
		at = d.base
	}
}

// queueSum is a queue summary.
type queueSum struct {
	id     string
	events int
	depth  int // log deltas above the last whole log entry, at this tip
}

func queueSumKey(trustTip, queueTip plumbing.Hash) plumbing.Hash {
	return derivedKey("gitplus queue summary v1\n", trustTip[:], queueTip[:])
}

func encodeQueueSum(trustTip, queueTip plumbing.Hash, s queueSum) []byte {
	b := appendEntryHeader(nil, queueSumMagic, queueSumKey(trustTip, queueTip))
	b = append(b, queueTip[:]...)
	b = append(b, trustTip[:]...)
	b = appendBytes(b, []byte(s.id))
	b = binary.AppendUvarint(b, uint64(s.events))
	return binary.AppendUvarint(b, uint64(s.depth))
}

func decodeQueueSum(trustTip, queueTip plumbing.Hash, b []byte) (queueSum, bool) {
	r, ok := openEntry(b, queueSumMagic, queueSumKey(trustTip, queueTip))
	if !ok || r.hash() != queueTip || r.hash() != trustTip {
		return queueSum{}, false
	}
	s := queueSum{id: string(r.bytes())}
	events, depth := r.uvarint(), r.uvarint()
	if r.bad || len(r.b) != 0 || s.id == "" || events == 0 || events > 1<<30 || depth > uint64(maxDeltaDepth) {
		return queueSum{}, false
	}
	s.events, s.depth = int(events), int(depth)
	return s, true
}

// queueSummary returns the summary of the queue log at tip under the
// current trust tip, if the cache holds one.
func (j *judge) queueSummary(tip plumbing.Hash) (queueSum, bool) {
	if j.in.Cache == nil {
		return queueSum{}, false
	}
	trustTip := j.in.Refs[hubrefs.TrustRef]
	b, ok := j.in.Cache.Get(queueSumKey(trustTip, tip))
	if !ok {
		return queueSum{}, false
	}
	return decodeQueueSum(trustTip, tip, b)
}

// rememberQueue records an accepted queue push: the summary at the new tip
// and the new events as a delta on the old tip, or, every maxDeltaDepth
// pushes (or with no old tip), the whole log when all is known or can be
// resolved. The old tip's summary is dropped (its log entries are the new
// deltas' bases and stay until a whole log replaces them).
func (j *judge) rememberQueue(u Update, id string, before queueSum, fresh, all []hubrefs.Event) {
	if j.in.Cache == nil {
		return
	}
	trustTip := j.in.Refs[hubrefs.TrustRef]
	depth := before.depth + 1
	if u.Old.IsZero() || depth > maxDeltaDepth || all != nil {
		if all == nil {
			old, n, ok := cachedLog(j.in.Cache, u.Old)
			if !ok {
				var err error
				if old, err = j.readLog(u.Old); err != nil {
					return // the next push reads the log again
				}
			}
			all = append(append(make([]hubrefs.Event, 0, len(old)+len(fresh)), old...), fresh...)
			j.dropChain(u.Old, n)
		}
		j.remember(u.New, all)
		depth = 0
	} else {
		j.in.Cache.Put(u.New, encodeDelta(u.New, u.Old, depth, fresh))
	}
	if !u.Old.IsZero() {
		j.forget(queueSumKey(trustTip, u.Old))
	}
	j.in.Cache.Put(queueSumKey(trustTip, u.New), encodeQueueSum(trustTip, u.New, queueSum{id: id, events: before.events + len(fresh), depth: depth}))
}

// dropChain drops the log entries of tip and of the n deltas' bases below
// it (a whole log now replaces them).
func (j *judge) dropChain(tip plumbing.Hash, n int) {
	at := tip
	for i := 0; i < n; i++ {
		b, ok := j.in.Cache.Get(at)
		j.forget(at)
		if !ok {
			return
		}
		d, ok := decodeDelta(at, b)
		if !ok {
			return
		}
		at = d.base
	}
	j.forget(at)
}
