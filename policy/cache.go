package policy

import (
	"encoding/json"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hubrefs"
)

// Fold cache (DESIGN.md §6 "Cost"). An entry holds the decoded, verified
// events of a whole hub log, keyed by the id of its tip. Event ids are
// content hashes, so the events reachable from a tip never change: an entry
// can be stale only by being wrong, and one that does not describe its key
// (another tip, an event missing a parent, a broken DAG, an undecodable
// key) is ignored and the log is read again. Folds are not cached: they
// depend on the trust state, and folding decoded events is cheap next to
// reading and verifying them.

type cachedEvent struct {
	ID      string          `json:"id"`
	Parents []string        `json:"parents,omitempty"`
	Type    string          `json:"type"`
	Repo    string          `json:"repo"`
	Payload json.RawMessage `json:"payload"`
	Time    int64           `json:"time"`
	Key     []byte          `json:"key,omitempty"` // signer's public key, SSH wire format
}

type cacheEntry struct {
	Version int           `json:"v"`
	Tip     string        `json:"tip"`
	Events  []cachedEvent `json:"events"`
}

const cacheVersion = 1

func encodeLog(tip plumbing.Hash, evs []hubrefs.Event) []byte {
	e := cacheEntry{Version: cacheVersion, Tip: tip.String(), Events: make([]cachedEvent, len(evs))}
	for i, ev := range evs {
		ce := cachedEvent{ID: ev.ID.String(), Type: ev.Type, Repo: ev.Repo, Payload: ev.Payload, Time: ev.Time}
		for _, p := range ev.Parents {
			ce.Parents = append(ce.Parents, p.String())
		}
		if ev.Signer != nil {
			ce.Key = ev.Signer.Marshal()
		}
		e.Events[i] = ce
	}
	b, _ := json.Marshal(e)
	return b
}

// decodeLog returns the events of a cache entry for tip, or false when the
// entry is not a whole, well-formed log whose tip is tip.
func decodeLog(tip plumbing.Hash, b []byte) ([]hubrefs.Event, bool) {
	var e cacheEntry
	if err := json.Unmarshal(b, &e); err != nil || e.Version != cacheVersion || e.Tip != tip.String() || len(e.Events) == 0 {
		return nil, false
	}
	evs := make([]hubrefs.Event, len(e.Events))
	ids := map[plumbing.Hash]bool{}
	for i, ce := range e.Events {
		id, ok := hexHash([]byte(ce.ID))
		if !ok || ce.Type == "" || !hubrefs.KnownType(ce.Type) {
			return nil, false
		}
		ev := hubrefs.Event{ID: id, Type: ce.Type, Repo: ce.Repo, Payload: ce.Payload, Time: ce.Time}
		for _, p := range ce.Parents {
			h, ok := hexHash([]byte(p))
			if !ok {
				return nil, false
			}
			ev.Parents = append(ev.Parents, h)
		}
		if len(ce.Key) > 0 {
			k, err := ssh.ParsePublicKey(ce.Key)
			if err != nil {
				return nil, false
			}
			ev.Signer = k
		}
		evs[i] = ev
		ids[id] = true
	}
	if !ids[tip] {
		return nil, false
	}
	for _, ev := range evs {
		for _, p := range ev.Parents {
			if !ids[p] {
				return nil, false
			}
		}
	}
	ordered, err := hubrefs.CausalOrder(evs)
	if err != nil {
		return nil, false
	}
	return ordered, true
}

// storedCeilings bound reading logs already stored: they passed the
// ceilings in force when they were pushed, and a later, lower ceiling must
// not make them unreadable (that would freeze the repository).
var storedCeilings = hubrefs.Ceilings{EventsPerRef: 1 << 20, EventBytes: 16 << 20, Parents: 1 << 10}

// readLog reads the whole log at tip through the cache.
func (j *judge) readLog(tip plumbing.Hash) ([]hubrefs.Event, error) {
	if evs, ok := j.logs[tip]; ok {
		return evs, nil
	}
	if j.in.Cache != nil {
		if b, ok := j.in.Cache.Get(tip); ok {
			if evs, ok := decodeLog(tip, b); ok {
				j.logs[tip] = evs
				return evs, nil
			}
		}
	}
	evs, err := hubrefs.ReadLog(j.in.Objects, tip, storedCeilings)
	if err != nil {
		return nil, err
	}
	j.logs[tip] = evs
	if j.in.Cache != nil {
		j.in.Cache.Put(tip, encodeLog(tip, evs))
	}
	return evs, nil
}

// remember records a log judged whole and valid at tip (after a push's new
// events were admitted), so the next push need not read it again.
func (j *judge) remember(tip plumbing.Hash, evs []hubrefs.Event) {
	j.logs[tip] = evs
	if j.in.Cache != nil {
		j.in.Cache.Put(tip, encodeLog(tip, evs))
	}
}
