package policy

import (
	"bytes"
	"encoding/binary"
	"encoding/json"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

// Fold cache (docs/foldcache.md). An entry holds the decoded, verified
// events of a whole hub log, keyed by the id of its tip. Event ids are
// content hashes, so the events reachable from a tip never change: an entry
// can be stale only by being wrong, and one that does not describe its key
// (another tip, an event missing a parent, a broken DAG, an undecodable
// key) is ignored and the log is read again. Folds are not cached here:
// they depend on the trust state. What a branch push needs of each pull
// request, folded under one trust state, is kept apart, keyed by the trust
// tip (index.go). Like the logs, the index is exactly as trustworthy as
// the git directory that holds it: whoever can write there can move refs.

// Entry format (version 2), all integers unsigned varints unless noted:
//
//	"gpfc" 2 | tip (20 bytes) | event count |
//	per event: id (20) | parent count | parents (20 each) | type | repo |
//	           payload | time (signed varint) | signer key (SSH wire format;
//	           empty when unsigned)
//
// where type, repo, payload and key are a length followed by the bytes.
// Events are stored in causal order. Version 1 (JSON) entries read as misses
// and are rewritten. The decoder checks every length against what is left,
// so a damaged entry is a miss, never a panic or a huge allocation.

var cacheMagic = []byte("gpfc\x02")

func encodeLog(tip plumbing.Hash, evs []hubrefs.Event) []byte {
	b := appendEntryHeader(make([]byte, 0, encodedSize(evs)), cacheMagic, tip)
	return appendEvents(b, evs)
}

// encodedSize is about the size of evs encoded.
func encodedSize(evs []hubrefs.Event) int {
	n := len(cacheMagic) + 20 + 10
	for _, ev := range evs {
		n += 20 + 10 + 20*len(ev.Parents) + len(ev.Type) + len(ev.Repo) + len(ev.Payload) + 4*10 + 64
	}
	return n
}

// appendEvents appends a count, then each event.
func appendEvents(b []byte, evs []hubrefs.Event) []byte {
	b = binary.AppendUvarint(b, uint64(len(evs)))
	for _, ev := range evs {
		b = append(b, ev.ID[:]...)
		b = binary.AppendUvarint(b, uint64(len(ev.Parents)))
		for _, p := range ev.Parents {
			b = append(b, p[:]...)
		}
		b = appendBytes(b, []byte(ev.Type))
		b = appendBytes(b, []byte(ev.Repo))
		b = appendBytes(b, ev.Payload)
		b = binary.AppendVarint(b, ev.Time)
		var key []byte
		if ev.Signer != nil {
			key = ev.Signer.Marshal()
		}
		b = appendBytes(b, key)
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// appendEntryHeader starts an entry (a log or the pull request index):
// its format's magic, then the key it describes.
func appendEntryHeader(b, magic []byte, key plumbing.Hash) []byte {
	b = append(b, magic...)
	return append(b, key[:]...)
}

// openEntry checks an entry's magic and key and returns a reader of the
// rest; false when either does not match.
func openEntry(b, magic []byte, key plumbing.Hash) (*entryReader, bool) {
	if !bytes.HasPrefix(b, magic) {
		return nil, false
	}
	r := &entryReader{b: b[len(magic):]}
	if r.hash() != key || r.bad {
		return nil, false
	}
	return r, true
}

// entryReader reads an entry; any read past the end sets bad.
type entryReader struct {
	b   []byte
	bad bool
}

func (r *entryReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *entryReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *entryReader) hash() (h plumbing.Hash) {
	if len(r.b) < len(h) {
		r.bad = true
		return h
	}
	copy(h[:], r.b)
	r.b = r.b[len(h):]
	return h
}

func (r *entryReader) bytes() []byte {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// count reads a count of items each at least min bytes long.
func (r *entryReader) count(min int) int {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)/min) {
		r.bad = true
		return 0
	}
	return int(n)
}

// decodeLog returns the events of a cache entry for tip, or false when the
// entry is not a whole, well-formed log whose tip is tip.
func decodeLog(tip plumbing.Hash, b []byte) ([]hubrefs.Event, bool) {
	r, ok := openEntry(b, cacheMagic, tip)
	if !ok {
		return nil, false
	}
	evs, ok := r.events()
	if !ok || len(r.b) != 0 || len(evs) == 0 {
		return nil, false
	}
	ids := make(map[plumbing.Hash]bool, len(evs))
	for _, ev := range evs {
		ids[ev.ID] = true
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

// events reads a count, then each event (appendEvents); false when the
// entry is damaged or names an unknown type or an unparsable key.
func (r *entryReader) events() ([]hubrefs.Event, bool) {
	n := r.count(20 + 6)
	if r.bad {
		return nil, false
	}
	evs := make([]hubrefs.Event, n)
	keys := hubrefs.KeyCache{} // most events share a few signers
	for i := range evs {
		ev := &evs[i]
		ev.ID = r.hash()
		if np := r.count(20); np > 0 {
			ev.Parents = make([]plumbing.Hash, np)
			for k := range ev.Parents {
				ev.Parents[k] = r.hash()
			}
		}
		ev.Type = string(r.bytes())
		ev.Repo = string(r.bytes())
		ev.Payload = json.RawMessage(r.bytes())
		ev.Time = r.varint()
		key := r.bytes()
		if r.bad || !hubrefs.KnownType(ev.Type) {
			return nil, false
		}
		if len(key) > 0 {
			k, err := keys.Parse(key)
			if err != nil {
				return nil, false
			}
			ev.Signer = k
		}
	}
	return evs, true
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
	if evs, _, ok := cachedLog(j.in.Cache, tip); ok {
		j.logs[tip] = evs
		return evs, nil
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

// Dropper is implemented by a Cache that can delete an entry. Without it
// the cache keeps one entry per hub ref tip ever judged, and a long queue
// log of n events is stored n times over (each entry holds the whole log).
type Dropper interface {
	Drop(key plumbing.Hash)
}

// forget drops the cache entry for key, when the cache can.
func (j *judge) forget(key plumbing.Hash) {
	if d, ok := j.in.Cache.(Dropper); ok {
		d.Drop(key)
	}
}

// remember records a log judged whole and valid at tip (after a push's new
// events were admitted), so the next push need not read it again.
func (j *judge) remember(tip plumbing.Hash, evs []hubrefs.Event) {
	j.logs[tip] = evs
	if j.in.Cache != nil {
		j.in.Cache.Put(tip, encodeLog(tip, evs))
	}
}
