package queuerun

// The idle pass memo (docs/scale.md, "The idle pass memo"). A round is
// decided from the refs it reads (readRefs: every hub ref, the target, its
// candidate branches), the objects they name, the pass's options, the code
// that plans, and the pass's time. Of these the objects are content named
// by the refs, and the time matters only where the planner compares it
// with a checkTimeout (queue.ClockRange says over which times the plan
// stands). So a round that read exactly the refs an earlier round read,
// under the same options and the same build, at a time in that round's
// clock range, makes the same plan; when that plan was empty (an idle
// pass), the round ends as that one did, with the report it left, and
// reads no pull request, queue state or trust state at all.
//
// The fold cache keeps, per target and queue option, the last idle round:
//
//	key:   the first 20 bytes of SHA-256("gitplus queue run memo v1\n" +
//	       target + "\n" + queue id)
//	entry: "gpqm" 1 | digest (32) | clock from, until (varint) | report
//	digest: SHA-256 over the build (buildID), the options (target, queue
//	       id, depth, auto-enter, name, environment) and every ref read,
//	       in name order (name, NUL, id)
//	report: queue, tip, idle, target red | chain | waiting | warnings
//
// The memo is used and written only by the first round of a pass (a fresh
// report: no landing refused, nothing pushed) on the repository's own refs
// (not through a remote), and written only for a round whose phase was
// empty, whose reads warned of nothing (a pull request or queue that could
// not be read might read tomorrow) and whose ancestry questions were all
// answered in process (git's answer for an unreadable commit is not kept).
// A damaged entry, one of another digest or another layout is a miss: the
// round is read and planned in full and the entry written again. Like every
// fold cache entry it is trusted as the git directory is
// (docs/foldcache.md).

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
)

var memoMagic = []byte("gpqm\x01")

const memoPrefix = "gitplus queue run memo v1\n"

// buildID names the code that plans (receive.BuildID); a variable, so
// tests can stand in another build.
var buildID = receive.BuildID

// memo is the memo of one round: its entry's key and the digest of what the
// round reads; ok is false when the round may not use or write a memo.
type memo struct {
	r      *runner
	cache  *receive.DirCache
	key    plumbing.Hash
	digest [32]byte
	ok     bool
}

func memoKey(target, queueID string) plumbing.Hash {
	sum := sha256.Sum256([]byte(memoPrefix + target + "\n" + queueID))
	var k plumbing.Hash
	copy(k[:], sum[:])
	return k
}

// memoFor is the memo of a round that read refs.
func (r *runner) memoFor(refs map[string]plumbing.Hash) *memo {
	m := &memo{r: r}
	id := buildID()
	rep := r.rep
	fresh := rep.Rounds == 0 && rep.Pushes == 0 && rep.Stale == 0 && rep.Retries == 0 && rep.Idle == "" &&
		len(rep.Warnings) == 0 && len(r.refusedLand) == 0
	if id == nil || !fresh || r.o.Remote != "." {
		return m
	}
	o := r.o
	m.digest = receive.RefsDigest(append([]string{memoPrefix, string(id), o.Target, o.QueueID, strconv.Itoa(o.Depth),
		strconv.FormatBool(o.AutoEnter), o.Name, strconv.Itoa(len(o.Env))}, o.Env...), refs)
	m.cache, m.key, m.ok = receive.NewDirCache(o.GitDir), memoKey(o.Target, o.QueueID), true
	return m
}

func (m *memo) usable() bool { return m.ok }

// use ends the round from the memo when the entry is for this digest and
// the round's time is in its clock range: hit is true and the report holds
// what the memoised round left in it.
func (m *memo) use() (hit bool, err error) {
	b, ok := m.cache.Get(m.key)
	if !ok {
		return false, nil
	}
	// The buffer is the one DirCache.Get read the file into, ours alone and
	// never written again: the report's strings may share it.
	e, ok := decodeMemo(b, m.digest, true)
	if !ok || m.r.now < e.from || m.r.now >= e.until {
		return false, nil
	}
	if err := m.r.at("memo"); err != nil {
		return false, err
	}
	rep := m.r.rep
	rep.Rounds++
	rep.Queue, rep.Tip, rep.Idle, rep.TargetRed = e.rep.Queue, e.rep.Tip, e.rep.Idle, e.rep.TargetRed
	rep.Chain, rep.Waiting, rep.Warnings = e.rep.Chain, e.rep.Waiting, e.rep.Warnings
	return true, nil
}

// store writes the memo of the round that just ended idle, valid for the
// times in clock.
func (m *memo) store(clock queue.ClockRange) {
	if !m.ok || clock.From > m.r.now || clock.Until <= m.r.now {
		return
	}
	m.cache.Put(m.key, encodeMemo(m.digest, clock, m.r.rep))
}

// memoEntry is a decoded memo.
type memoEntry struct {
	from, until int64
	rep         Report
}

func encodeMemo(digest [32]byte, clock queue.ClockRange, rep *Report) []byte {
	b := make([]byte, 0, 256+100*len(rep.Waiting)+200*len(rep.Chain))
	b = append(append(b, memoMagic...), digest[:]...)
	b = binary.AppendVarint(b, clock.From)
	b = binary.AppendVarint(b, clock.Until)
	str := func(s string) { b = policy.AppendString(b, s) }
	strs := func(ss []string) { b = policy.AppendStrings(b, ss) }
	for _, s := range []string{rep.Queue, rep.Tip, rep.Idle, rep.TargetRed} {
		str(s)
	}
	b = binary.AppendUvarint(b, uint64(len(rep.Chain)))
	for _, s := range rep.Chain {
		for _, v := range []string{s.PR, s.Head, s.Parent, s.Commit, s.Verdict, s.GroupEnd} {
			str(v)
		}
		strs(s.Failed)
		strs(s.Missing)
		b = binary.AppendVarint(b, int64(s.GroupSize))
	}
	b = binary.AppendUvarint(b, uint64(len(rep.Waiting)))
	for _, w := range rep.Waiting {
		str(w.PR)
		str(w.Head)
		str(w.Reason)
	}
	strs(rep.Warnings)
	return b
}

// decodeMemo decodes an entry for digest; false when it is damaged, of
// another layout or for another digest. With owned, b belongs to the
// caller alone and is never written again, and the strings decoded are
// views of it instead of a copy (a megabyte at 10,000 waiting entries).
func decodeMemo(b []byte, digest [32]byte, owned bool) (memoEntry, bool) {
	var e memoEntry
	if !bytes.HasPrefix(b, memoMagic) || len(b) < len(memoMagic)+32 || !bytes.Equal(b[len(memoMagic):len(memoMagic)+32], digest[:]) {
		return e, false
	}
	r := policy.NewEntryDecoder(b[len(memoMagic)+32:], owned)
	e.from, e.until = r.Varint(), r.Varint()
	rep := NewReport("")
	rep.Queue, rep.Tip, rep.Idle, rep.TargetRed = r.Str(), r.Str(), r.Str(), r.Str()
	if n := r.Count(7); n > 0 {
		rep.Chain = make([]queue.Step, n)
		for i := range rep.Chain {
			s := &rep.Chain[i]
			s.PR, s.Head, s.Parent, s.Commit, s.Verdict, s.GroupEnd = r.Str(), r.Str(), r.Str(), r.Str(), r.Str(), r.Str()
			s.Failed, s.Missing = r.Strs(), r.Strs()
			s.GroupSize = r.Int()
		}
	}
	if n := r.Count(3); n > 0 {
		rep.Waiting = make([]queue.Wait, n)
		for i := range rep.Waiting {
			rep.Waiting[i] = queue.Wait{PR: r.Str(), Head: r.Str(), Reason: r.Str()}
		}
	}
	if ws := r.Strs(); ws != nil {
		rep.Warnings = ws
	}
	if !r.Done() || e.from >= e.until {
		return e, false
	}
	e.rep = *rep
	return e, true
}
