package policy

// Folded queue states in the fold cache, for the CLI's queue reads and
// writes and `queue run` (docs/scale.md, "Writes"; docs/foldcache.md).
//
// A queue's log holds an event per entry ever made, so reading a queue by
// folding its whole log costs every `queue enter` and every idle pass time
// in proportion to the queue. A folded state is a pure function of the
// queue's log (named by its tip, a content hash) and of the trust state it
// was folded under (named by the trust tip), so it is kept under both:
//
//	key:   the first 20 bytes of SHA-256("gitplus queue state v5\n" +
//	       trust tip + queue tip)
//	entry: "gpqv" 5 | key (20) | queue tip (20) | trust tip (20) |
//	       id | target | closed (1) | count | tip (20) |
//	       entries: pr | head | base | entered at (20) | seq | priority
//	       left:    pr | head | reason | detail | step | run | event (20)
//	       began:   as entries
//	       resets:  tip | detail | event (20)
//	       ignored: event (20) | type | reason
//	       latest candidate per pull request (by pull request id):
//	                pr | head | step | parents | branch | group end |
//	                group size | trial (1) | trial seq | run | cited | partition |
//	                event (20) | seq | time | invalidated (20)
//	       steps (sorted): step | first parent
//	       group end marks (sorted): step | size
//	       pause: by | at | reason | event (20; zero: running)
//
// Every list is a count then its items; strings are a length then bytes;
// numbers are varints. Reader.Queue reads the state at a queue tip from its
// entry; without one it walks back from the tip, one event at a time (each
// read and its signature verified), to the nearest tip that has an entry,
// and applies the events it walked to that state (queue.State.Apply): the
// same state as folding the whole log, because the fold reads each event
// once, in order, with nothing but the state before it and the trust state
// (TestQueueStateIncremental). With no entry within maxQueueWalk events,
// the log is folded whole. Like every entry, a state is as trustworthy as
// the git directory that holds it; `git+ verify` never reads one.

import (
	"encoding/binary"
	"maps"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

var queueStateMagic = []byte("gpqv\x05")

// maxQueueWalk is how many events Queue reads back from a tip looking for
// a folded state before it folds the whole log (a variable for tests).
var maxQueueWalk = 256

func queueStateKey(trustTip, queueTip plumbing.Hash) plumbing.Hash {
	return derivedKey("gitplus queue state v5\n", trustTip[:], queueTip[:])
}

// Queue returns the queue log at tip folded under t, the trust state at
// trustTip (queue.Fold of Log(tip)), through the fold cache: from the
// state stored for (trustTip, tip), else from the nearest stored state
// below tip and the events above it, else folded whole; the state is then
// stored for tip and the one it was computed from dropped. The caller owns
// the state returned (it may Apply events to it).
func (r *Reader) Queue(trustTip plumbing.Hash, t *trust.State, tip plumbing.Hash) (*queue.State, error) {
	if r.Cache == nil || trustTip.IsZero() {
		return r.foldQueue(t, tip)
	}
	if st, ok := r.cachedQueue(trustTip, tip); ok {
		return st, nil
	}
	st, from, err := r.queueFromBelow(trustTip, t, tip)
	if err != nil {
		return nil, err
	}
	if st == nil {
		if st, err = r.foldQueue(t, tip); err != nil {
			return nil, err
		}
	}
	r.Cache.Put(queueStateKey(trustTip, tip), encodeQueueState(trustTip, tip, st))
	if d, ok := r.Cache.(Dropper); ok && !from.IsZero() {
		d.Drop(queueStateKey(trustTip, from))
	}
	return st, nil
}

// foldQueue folds the whole log at tip.
func (r *Reader) foldQueue(t *trust.State, tip plumbing.Hash) (*queue.State, error) {
	evs, err := r.Log(tip)
	if err != nil {
		return nil, err
	}
	return queue.Fold(evs, t)
}

// cachedQueue is the state stored for (trustTip, tip), if any is whole.
func (r *Reader) cachedQueue(trustTip, tip plumbing.Hash) (*queue.State, bool) {
	b, ok := r.Cache.Get(queueStateKey(trustTip, tip))
	if !ok {
		return nil, false
	}
	return decodeQueueState(trustTip, tip, b, freshGets(r.Cache))
}

// queueFromBelow walks back from tip to the nearest tip with a stored
// state and applies the events above it: the state at tip and the tip it
// started from. A nil state (and no error) sends the read to the whole
// log: nothing stored within maxQueueWalk events, an event that cannot be
// read or is not linear, or a count past the ceiling, so that every error
// of those is the whole read's own.
func (r *Reader) queueFromBelow(trustTip plumbing.Hash, t *trust.State, tip plumbing.Hash) (*queue.State, plumbing.Hash, error) {
	c := r.Ceilings
	if c.EventsPerRef == 0 {
		c = storedCeilings
	}
	var fresh []hubrefs.Event
	at := tip
	var st *queue.State
	for len(fresh) < maxQueueWalk {
		ev, err := hubrefs.ReadEvent(r.Objects, at, c)
		if err != nil || len(ev.Parents) != 1 {
			return nil, plumbing.ZeroHash, nil
		}
		fresh = append(fresh, ev)
		at = ev.Parents[0]
		if s, ok := r.cachedQueue(trustTip, at); ok {
			st = s
			break
		}
	}
	if st == nil || st.Count+len(fresh) > c.EventsPerRef {
		return nil, plumbing.ZeroHash, nil
	}
	for i := len(fresh) - 1; i >= 0; i-- {
		if err := st.Apply(fresh[i], t); err != nil {
			return nil, plumbing.ZeroHash, err
		}
	}
	return st, at, nil
}

func encodeQueueState(trustTip, queueTip plumbing.Hash, s *queue.State) []byte {
	b := appendEntryHeader(make([]byte, 0, 256+160*len(s.Entries)+128*(len(s.Left)+len(s.Ignored))), queueStateMagic, queueStateKey(trustTip, queueTip))
	b = append(b, queueTip[:]...)
	b = append(b, trustTip[:]...)
	str := func(v string) { b = appendBytes(b, []byte(v)) }
	num := func(v int64) { b = binary.AppendVarint(b, v) }
	hash := func(h plumbing.Hash) { b = append(b, h[:]...) }
	count := func(n int) { b = binary.AppendUvarint(b, uint64(n)) }
	flag := func(v bool) {
		if v {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	str(s.ID)
	str(s.Target)
	flag(s.Closed)
	num(int64(s.Count))
	hash(s.Tip)
	entries := func(es []queue.Entry) {
		count(len(es))
		for _, e := range es {
			str(e.PR)
			str(e.Head)
			str(e.Base)
			hash(e.EnteredAt)
			num(int64(e.Seq))
			str(e.Priority)
		}
	}
	entries(s.Entries)
	count(len(s.Left))
	for _, l := range s.Left {
		for _, v := range []string{l.PR, l.Head, l.Reason, l.Detail, l.Step, l.Run} {
			str(v)
		}
		hash(l.Event)
	}
	entries(s.Began)
	count(len(s.Resets))
	for _, rs := range s.Resets {
		str(rs.Tip)
		str(rs.Detail)
		hash(rs.Event)
	}
	count(len(s.Ignored))
	for _, ig := range s.Ignored {
		hash(ig.Event)
		str(ig.Type)
		str(ig.Reason)
	}
	cands := s.Candidates()
	count(len(cands))
	for _, c := range cands {
		str(c.PR)
		str(c.Head)
		str(c.Step)
		b = appendStrings(b, c.Parents)
		str(c.Branch)
		str(c.GroupEnd)
		num(int64(c.GroupSize))
		flag(c.Trial)
		num(int64(c.TrialSeq))
		str(c.Run)
		b = appendStrings(b, c.Cited)
		str(c.Partition)
		hash(c.Event)
		num(int64(c.Seq))
		num(c.Time)
		hash(c.Invalidated)
	}
	steps := s.Steps()
	count(len(steps))
	for _, k := range slices.Sorted(maps.Keys(steps)) {
		str(k)
		str(steps[k])
	}
	marks := s.GroupEnds()
	count(len(marks))
	for _, k := range slices.Sorted(maps.Keys(marks)) {
		str(k)
		num(int64(marks[k]))
	}
	str(s.Paused.By)
	num(s.Paused.At)
	str(s.Paused.Reason)
	hash(s.Paused.Event)
	return b
}

// decodeQueueState returns the state an entry records for (trustTip,
// queueTip), or false when the entry is damaged, of another kind or
// version, or for another key. With fresh, b is the caller's alone and
// never written again, and the state's strings are views of it
// (sharedStrings).
func decodeQueueState(trustTip, queueTip plumbing.Hash, b []byte, fresh bool) (*queue.State, bool) {
	r, ok := openEntry(b, queueStateMagic, queueStateKey(trustTip, queueTip))
	if !ok || r.hash() != queueTip || r.hash() != trustTip {
		return nil, false
	}
	str, strs := sharedStrings(b, r, fresh)
	var s queue.State
	s.ID, s.Target = str(), str()
	s.Closed = r.flag()
	s.Count = r.int()
	s.Tip = r.hash()
	entries := func() []queue.Entry {
		n := r.count(20 + 5)
		if n == 0 {
			return nil
		}
		es := make([]queue.Entry, n)
		for i := range es {
			es[i] = queue.Entry{PR: str(), Head: str(), Base: str(), EnteredAt: r.hash(), Seq: r.int(), Priority: str()}
		}
		return es
	}
	s.Entries = entries()
	if n := r.count(20 + 6); n > 0 {
		s.Left = make([]queue.Left, n)
		for i := range s.Left {
			s.Left[i] = queue.Left{PR: str(), Head: str(), Reason: str(), Detail: str(), Step: str(), Run: str(), Event: r.hash()}
		}
	}
	s.Began = entries()
	if n := r.count(20 + 2); n > 0 {
		s.Resets = make([]queue.Reset, n)
		for i := range s.Resets {
			s.Resets[i] = queue.Reset{Tip: str(), Detail: str(), Event: r.hash()}
		}
	}
	if n := r.count(20 + 2); n > 0 {
		s.Ignored = make([]queue.Ignored, n)
		for i := range s.Ignored {
			s.Ignored[i] = queue.Ignored{Event: r.hash(), Type: str(), Reason: str()}
		}
	}
	cands := make([]queue.Recorded, r.count(2*20+14))
	for i := range cands {
		cands[i] = queue.Recorded{PR: str(), Head: str(), Step: str(), Parents: strs(), Branch: str(), GroupEnd: str(),
			GroupSize: r.int(), Trial: r.flag(), TrialSeq: r.int(), Run: str(), Cited: strs(), Partition: str(), Event: r.hash(), Seq: r.int(), Time: r.varint(), Invalidated: r.hash()}
	}
	ns := r.count(2)
	steps := make(map[string]string, ns)
	for i := 0; i < ns && !r.bad; i++ {
		k := str()
		steps[k] = str()
	}
	nm := r.count(2)
	marks := make(map[string]int, nm)
	for i := 0; i < nm && !r.bad; i++ {
		k := str()
		marks[k] = r.int()
	}
	s.Paused = queue.Pause{By: str(), At: r.varint(), Reason: str(), Event: r.hash()}
	if r.bad || len(r.b) != 0 || len(steps) != ns || len(marks) != nm || s.Count <= 0 || s.Tip != queueTip {
		return nil, false
	}
	st, err := queue.Restore(s, cands, steps, marks)
	if err != nil {
		return nil, false
	}
	return st, true
}
