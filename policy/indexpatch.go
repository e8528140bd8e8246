package policy

// The open pull request index, updated at a cost that does not grow with
// the pull requests open (docs/scale.md, "Writes").
//
// A push that moves pull request refs used to rewrite the whole open index
// (index.go): at 10,000 open pull requests, 1.7 MB read, decoded, encoded
// and written for every review or check recorded. Now it writes a patch:
// the summaries of the pull requests it moved, under the next patch number
// of the index. The index is a base and the patches after it:
//
//	base:  key SHA-256("gitplus open pr index v4\n" + trust tip)
//	       "gpio" 4 | trust tip (20) | first patch number | summaries
//	patch: key SHA-256("gitplus open pr index patch v3\n" + trust tip + n)
//	       "gpip" 3 | key (20) | summaries (a pull request no longer open
//	       is removed)
//	head:  key SHA-256("gitplus open pr index head v3\n" + trust tip)
//	       "gpih" 3 | key (20) | the base's first patch number | next free
//
// (v4/v3: summaries carry drafts, vetoes, approvers' teams and the
// conclusions of confined runs, index.go.)
//
// A reader takes the base and applies patches from its first number up to
// the first one missing. A writer reads the head, takes the first free
// number from there, writes its patch and moves the head on; every
// maxIndexPatches patches it folds them into a new base (and drops them).
// Two hooks writing at once may write the same number, and one patch is
// lost: that costs time only, as an index entry is only ever used for the
// exact ref tip it names (a record that is missing or names an older tip
// sends the judgement back to the pull request's log or to every ref), and
// never correctness.

import (
	"encoding/binary"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
)

var (
	indexPatchMagic = []byte("gpip\x03")
	indexHeadMagic  = []byte("gpih\x03")
)

// maxIndexPatches is how many patches a base may have before a writer folds
// them into a new base; a variable for tests.
var maxIndexPatches = 64

func indexPatchKey(t plumbing.Hash, n uint64) plumbing.Hash {
	return derivedKey("gitplus open pr index patch v3\n", t[:], binary.BigEndian.AppendUint64(nil, n))
}

func indexHeadKey(t plumbing.Hash) plumbing.Hash {
	return derivedKey("gitplus open pr index head v3\n", t[:])
}

// encodeOpenIndex is the base entry: the open summaries, patches from next.
func encodeOpenIndex(t plumbing.Hash, next uint64, sums []prSummary) []byte {
	b := encodeIndexAs(openIndexMagic, t, sums)
	// The patch number goes after the header so the summaries keep the
	// index's layout: "gpio" 4 | t | next | count | ...
	hdr := len(openIndexMagic) + len(t)
	out := make([]byte, 0, len(b)+10)
	out = append(out, b[:hdr]...)
	out = binary.AppendUvarint(out, next)
	return append(out, b[hdr:]...)
}

func decodeOpenIndex(t plumbing.Hash, b []byte) (map[string]prSummary, uint64, bool) {
	hdr := len(openIndexMagic) + len(t)
	if len(b) < hdr {
		return nil, 0, false
	}
	next, n := binary.Uvarint(b[hdr:])
	if n <= 0 {
		return nil, 0, false
	}
	rest := make([]byte, 0, len(b)-n)
	rest = append(append(rest, b[:hdr]...), b[hdr+n:]...)
	m, ok := decodeIndexAs(openIndexMagic, t, rest)
	return m, next, ok
}

type indexHead struct{ base, next uint64 }

func (j *judge) readIndexHead(t plumbing.Hash) (indexHead, bool) {
	b, ok := j.in.Cache.Get(indexHeadKey(t))
	if !ok {
		return indexHead{}, false
	}
	r, ok := openEntry(b, indexHeadMagic, indexHeadKey(t))
	if !ok {
		return indexHead{}, false
	}
	h := indexHead{base: r.uvarint(), next: r.uvarint()}
	if r.bad || len(r.b) != 0 || h.next < h.base {
		return indexHead{}, false
	}
	return h, true
}

func (j *judge) writeIndexHead(t plumbing.Hash, h indexHead) {
	b := appendEntryHeader(nil, indexHeadMagic, indexHeadKey(t))
	b = binary.AppendUvarint(b, h.base)
	j.in.Cache.Put(indexHeadKey(t), binary.AppendUvarint(b, h.next))
}

// readOpenIndex returns the open index of trust tip t, its patches
// applied, and the number of the first patch missing.
func (j *judge) readOpenIndex(t plumbing.Hash) (map[string]prSummary, uint64, bool) {
	b, ok := j.in.Cache.Get(openIndexKey(t))
	if !ok {
		return nil, 0, false
	}
	idx, n, ok := decodeOpenIndex(t, b)
	if !ok {
		return nil, 0, false
	}
	for ; ; n++ {
		k := indexPatchKey(t, n)
		b, ok := j.in.Cache.Get(k)
		if !ok {
			return idx, n, true
		}
		patch, ok := decodeIndexAs(indexPatchMagic, k, b)
		if !ok {
			return idx, n, true // a damaged patch ends the index there
		}
		applyPatch(idx, patch)
	}
}

func applyPatch(idx, patch map[string]prSummary) {
	for ref, s := range patch {
		if s.State == pr.Open {
			idx[ref] = s
		} else {
			delete(idx, ref)
		}
	}
}

// writeOpenIndex writes a new base holding sums (every open pull request,
// from every ref read now), after every patch written so far, and drops
// those patches.
func (j *judge) writeOpenIndex(t plumbing.Hash, sums []prSummary) {
	h, _ := j.readIndexHead(t)
	j.in.Cache.Put(openIndexKey(t), encodeOpenIndex(t, h.next, sums))
	j.writeIndexHead(t, indexHead{base: h.next, next: h.next})
	for n := h.base; n < h.next; n++ {
		j.forget(indexPatchKey(t, n))
	}
}

// flushIndex writes the summaries of the pull requests an accepted push
// moves as a patch of the open index of the current trust tip (dropping
// those no longer open), so that the landing that typically follows (right
// after a check result is recorded) finds them current and reads no other
// pull request ref. Nothing is written when there is no open index yet (the
// next judgement that reads every pull request ref builds it) or when the
// push also moves the trust log (its indexes are dropped). A patch written
// for a push that then fails in git names a tip its ref does not hold, and
// is read as stale. The full index is left to the next full read:
// rewriting it would cost every hub push time in proportion to every pull
// request ever opened.
func (j *judge) flushIndex() {
	if j.in.Cache == nil || len(j.reindexed) == 0 || j.trustMoved {
		return
	}
	t := j.in.Refs[hubrefs.TrustRef]
	h, ok := j.readIndexHead(t)
	if !ok {
		return
	}
	n := h.next
	for i := 0; i < maxIndexPatches; i++ { // another writer may have taken n
		if _, taken := j.in.Cache.Get(indexPatchKey(t, n)); !taken {
			break
		}
		n++
	}
	sums := append([]prSummary(nil), j.reindexed...)
	sort.Slice(sums, func(a, b int) bool { return sums[a].Ref < sums[b].Ref })
	k := indexPatchKey(t, n)
	j.in.Cache.Put(k, encodeIndexAs(indexPatchMagic, k, dedupe(sums)))
	h.next = n + 1
	if h.next-h.base < uint64(maxIndexPatches) {
		j.writeIndexHead(t, h)
		return
	}
	// Fold the patches into a new base.
	idx, next, ok := j.readOpenIndex(t)
	if !ok {
		return
	}
	all := make([]prSummary, 0, len(idx))
	for _, s := range idx {
		all = append(all, s)
	}
	sort.Slice(all, func(a, b int) bool { return all[a].Ref < all[b].Ref })
	j.in.Cache.Put(openIndexKey(t), encodeOpenIndex(t, next, all))
	j.writeIndexHead(t, indexHead{base: next, next: next})
	for m := h.base; m < next; m++ {
		j.forget(indexPatchKey(t, m))
	}
}

// dedupe keeps the last summary of each ref (sums sorted by ref, stably).
func dedupe(sums []prSummary) []prSummary {
	out := sums[:0]
	for i, s := range sums {
		if i+1 < len(sums) && sums[i+1].Ref == s.Ref {
			continue
		}
		out = append(out, s)
	}
	return out
}
