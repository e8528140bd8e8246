package policy

// The pull request index (DESIGN.md §6 "Cost"). A branch push needs, of
// every pull request, only its id, state, base and head — to find the open
// pull requests whose head is the pushed commit or a candidate's second
// parent — and the full fold of just those. The index keeps that summary
// per pull request ref and tip, for one trust tip, in the fold cache:
//
//	key:   the first 20 bytes of SHA-256("gitplus pr index v1\n" + trust tip)
//	entry: "gpix" 1 | trust tip (20) | count |
//	       per pull request: ref | tip (20) | id | state | base | head
//
// (strings as in the log entries of cache.go: a varint length, the bytes).
// A summary is a pure function of the pull request's log (its tip) and the
// trust state (the trust tip), so an entry whose ref and tip match the ref
// read now is exact; others are folded again and the entry rewritten, with
// refs that no longer exist dropped. A pull request that cannot be read or
// folded is never indexed, so it is refused on every push as before.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/pr"
)

// prSummary is what the index keeps of one pull request.
type prSummary struct {
	Ref   string
	Tip   plumbing.Hash
	ID    string
	State string
	Base  string
	Head  string
}

func summarize(ref string, tip plumbing.Hash, st *pr.State) prSummary {
	return prSummary{Ref: ref, Tip: tip, ID: st.ID, State: st.State, Base: st.Base, Head: st.Head}
}

var indexMagic = []byte("gpix\x01")

// indexKey is the cache key of the index for trust tip t.
func indexKey(t plumbing.Hash) plumbing.Hash {
	sum := sha256.Sum256(append([]byte("gitplus pr index v1\n"), t[:]...))
	var k plumbing.Hash
	copy(k[:], sum[:])
	return k
}

func encodeIndex(t plumbing.Hash, sums []prSummary) []byte {
	b := append([]byte(nil), indexMagic...)
	b = append(b, t[:]...)
	b = binary.AppendUvarint(b, uint64(len(sums)))
	for _, s := range sums {
		b = appendBytes(b, []byte(s.Ref))
		b = append(b, s.Tip[:]...)
		b = appendBytes(b, []byte(s.ID))
		b = appendBytes(b, []byte(s.State))
		b = appendBytes(b, []byte(s.Base))
		b = appendBytes(b, []byte(s.Head))
	}
	return b
}

// decodeIndex returns the summaries of an index entry for trust tip t by
// ref, or false when the entry is damaged or for another trust tip.
func decodeIndex(t plumbing.Hash, b []byte) (map[string]prSummary, bool) {
	if !bytes.HasPrefix(b, indexMagic) {
		return nil, false
	}
	r := &entryReader{b: b[len(indexMagic):]}
	if r.hash() != t || r.bad {
		return nil, false
	}
	n := r.count(20 + 5)
	if r.bad {
		return nil, false
	}
	out := make(map[string]prSummary, n)
	for i := 0; i < n; i++ {
		var s prSummary
		s.Ref = string(r.bytes())
		s.Tip = r.hash()
		s.ID = string(r.bytes())
		s.State = string(r.bytes())
		s.Base = string(r.bytes())
		s.Head = string(r.bytes())
		if r.bad || s.Ref == "" || s.Tip.IsZero() {
			return nil, false
		}
		if _, dup := out[s.Ref]; dup {
			return nil, false
		}
		out[s.Ref] = s
	}
	if len(r.b) != 0 {
		return nil, false
	}
	return out, true
}
