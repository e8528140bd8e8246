package mergetree

import (
	"bytes"
	"sync"
)

// scratch is the reusable working memory of one MergeFile call. It holds
// no reference to the inputs once returned to the pool.
type scratch struct {
	ls  lineSet
	x   xdiffer
	i32 []int32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooledLines bounds what the pool keeps: scratch for huge inputs is
// left to the garbage collector.
const maxPooledLines = 1 << 20

func getScratch(nb, no, nt int) *scratch {
	sc := scratchPool.Get().(*scratch)
	total := nb + no + nt
	sc.ls.reset(total)
	if need := 2*total + 3; cap(sc.i32) < need {
		sc.i32 = make([]int32, need)
	} else {
		sc.i32 = sc.i32[:need]
	}
	if need := 2*(nb+2) + no + nt + 4; cap(sc.x.chg) < need {
		sc.x.chg = make([]byte, 0, need)
	}
	return sc
}

func putScratch(sc *scratch) {
	clear(sc.ls.srcs)
	if len(sc.i32) > 2*maxPooledLines {
		return
	}
	scratchPool.Put(sc)
}

// binaryProbe is how many leading bytes git inspects for a NUL byte.
const binaryProbe = 8000

// maxTextSize is git's ceiling for a text merge (1023 MiB); larger content
// is merged as binary.
const maxTextSize = 1023 << 20

// IsBinary reports whether git treats content as binary for merging: a NUL
// byte within its first 8000 bytes, or a size over 1023 MiB.
func IsBinary(b []byte) bool {
	if len(b) > maxTextSize {
		return true
	}
	return bytes.IndexByte(b[:min(len(b), binaryProbe)], 0) >= 0
}

// MergeFile merges two versions of a regular file's content against their
// base, line by line, the way git 2.39's merge-ort does with an empty config
// (`git merge-tree --write-tree`). It returns the merged bytes and true when
// the merge is clean; on a conflict the bytes are nil and clean is false.
// A short-circuit result is one of the inputs itself (not a copy). Safe for
// concurrent use; the inputs are only read.
//
// Decisions, in order:
//   - ours == theirs or base == theirs → ours; base == ours → theirs. These
//     come first, as merge-ort compares blob ids before merging content, so
//     they hold for binary content too.
//   - Binary content (IsBinary of any of the three) → conflict.
//   - Otherwise git's line merge: histogram diffs base→ours and base→theirs
//     (xdiff_histogram.go, xdiff_myers.go), compaction of both
//     (xdiff_compact.go), then the zealous merge of the two hunk lists:
//     hunks that overlap or merely touch (one ends where the other starts,
//     including two insertions at one point) form a conflict region unless
//     both sides made exactly the same change. Such a region is still clean
//     when its ours text and theirs text are identical and neither is
//     empty; any other region is a conflict.
//   - Clean output: ours is the backbone; the hunks only theirs made are
//     copied in verbatim. Nothing is added or normalised (a missing final
//     newline stays missing, CR stays).
func MergeFile(base, ours, theirs []byte) (merged []byte, clean bool) {
	switch {
	case bytes.Equal(ours, theirs), bytes.Equal(base, theirs):
		return ours, true
	case bytes.Equal(base, ours):
		return theirs, true
	}
	if IsBinary(base) || IsBinary(ours) || IsBinary(theirs) {
		return nil, false
	}
	nb, no, nt := countLines(base), countLines(ours), countLines(theirs)
	sc := getScratch(nb, no, nt)
	defer putScratch(sc)
	ls := &sc.ls
	fb := ls.splitInto(base, nb, sc.i32[0:2*nb+1])
	fo := ls.splitInto(ours, no, sc.i32[2*nb+1:2*(nb+no)+2])
	ft := ls.splitInto(theirs, nt, sc.i32[2*(nb+no)+2:])

	x := &sc.x
	x.reset(ls.nids())
	s1 := compactedScript(x.diff(fb.ids, fo.ids))
	s2 := compactedScript(x.diff(fb.ids, ft.ids))
	if len(s1) == 0 {
		return theirs, true
	}
	if len(s2) == 0 {
		return ours, true
	}
	regions, ok := mergeHunks(s1, s2, fb.n(), fo.ids, ft.ids)
	if !ok {
		return nil, false
	}
	return render(regions, &fo, &ft), true
}

// Merge region modes, as in xdiff: 1 = ours only, 2 = theirs only, 0 =
// conflict, 4 = both sides identical after refinement.
const (
	modeConflict = 0
	modeOurs     = 1
	modeTheirs   = 2
	modeSame     = 4
)

// region is a merge region: base lines [i0, i0+chg0), ours lines
// [i1, i1+chg1), theirs lines [i2, i2+chg2).
type region struct {
	mode                         int
	i0, chg0, i1, chg1, i2, chg2 int
}

// appendRegion adds a region, joining it into the previous one when it
// starts at or before that one's end on either side (so touching regions
// join; joining regions of different modes makes a conflict).
func appendRegion(rs []region, r region) []region {
	if n := len(rs); n > 0 {
		m := &rs[n-1]
		if r.i1 <= m.i1+m.chg1 || r.i2 <= m.i2+m.chg2 {
			if r.mode != m.mode {
				m.mode = modeConflict
			}
			m.chg0 = r.i0 + r.chg0 - m.i0
			m.chg1 = r.i1 + r.chg1 - m.i1
			m.chg2 = r.i2 + r.chg2 - m.i2
			return rs
		}
	}
	return append(rs, r)
}

// mergeHunks walks the hunks of base→ours (x1) and base→theirs (x2) in base
// order and builds the merge regions. It returns ok=false as soon as a
// conflict is certain. n0 is the base's line count; ours/theirs are the
// line ids of the two sides.
func mergeHunks(x1, x2 []change, n0 int, ours, theirs []int32) ([]region, bool) {
	var rs []region
	p, q := 0, 0
	for p < len(x1) && q < len(x2) {
		a, b := x1[p], x2[q]
		if a.i1+a.chg1 < b.i1 {
			rs = appendRegion(rs, region{modeOurs,
				a.i1, a.chg1, a.i2, a.chg2, b.i2 - b.i1 + a.i1, a.chg1})
			p++
			continue
		}
		if b.i1+b.chg1 < a.i1 {
			rs = appendRegion(rs, region{modeTheirs,
				b.i1, b.chg1, a.i2 - a.i1 + b.i1, b.chg1, b.i2, b.chg2})
			q++
			continue
		}
		if a.i1 != b.i1 || a.chg1 != b.chg1 || a.chg2 != b.chg2 ||
			!equalIDs(ours[a.i2:a.i2+a.chg2], theirs[b.i2:b.i2+b.chg2]) {
			off := a.i1 - b.i1
			ffo := off + a.chg1 - b.chg1
			i0, i1, i2 := a.i1, a.i2, b.i2
			if off > 0 {
				i0 -= off
				i1 -= off
			} else {
				i2 += off
			}
			chg0 := a.i1 + a.chg1 - i0
			chg1 := a.i2 + a.chg2 - i1
			chg2 := b.i2 + b.chg2 - i2
			if ffo < 0 {
				chg0 -= ffo
				chg1 -= ffo
			} else {
				chg2 += ffo
			}
			rs = appendRegion(rs, region{modeConflict, i0, chg0, i1, chg1, i2, chg2})
		}
		e1, e2 := a.i1+a.chg1, b.i1+b.chg1
		if e1 >= e2 {
			q++
		}
		if e2 >= e1 {
			p++
		}
	}
	for ; p < len(x1); p++ {
		a := x1[p]
		rs = appendRegion(rs, region{modeOurs,
			a.i1, a.chg1, a.i2, a.chg2, a.i1 + len(theirs) - n0, a.chg1})
	}
	for ; q < len(x2); q++ {
		b := x2[q]
		rs = appendRegion(rs, region{modeTheirs,
			b.i1, b.chg1, b.i1 + len(ours) - n0, b.chg1, b.i2, b.chg2})
	}

	// Zealous refinement: a conflict region whose two sides are identical
	// is clean; one with an empty side is never refined.
	for k := range rs {
		r := &rs[k]
		if r.mode != modeConflict {
			continue
		}
		if r.chg1 == 0 || r.chg2 == 0 ||
			!equalIDs(ours[r.i1:r.i1+r.chg1], theirs[r.i2:r.i2+r.chg2]) {
			return nil, false
		}
		r.mode = modeSame
	}
	return rs, true
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// render writes the clean result: ours with the theirs-only regions
// substituted.
func render(rs []region, ours, theirs *lineFile) []byte {
	oo, to := ours.off, theirs.off
	size := len(ours.data)
	for _, r := range rs {
		if r.mode == modeTheirs {
			size += int(to[r.i2+r.chg2]-to[r.i2]) - int(oo[r.i1+r.chg1]-oo[r.i1])
		}
	}
	out := make([]byte, 0, size)
	i := 0
	for _, r := range rs {
		switch r.mode {
		case modeOurs:
			out = append(out, ours.data[oo[i]:oo[r.i1+r.chg1]]...)
		case modeTheirs:
			out = append(out, ours.data[oo[i]:oo[r.i1]]...)
			out = append(out, theirs.data[to[r.i2]:to[r.i2+r.chg2]]...)
		default:
			continue
		}
		i = r.i1 + r.chg1
	}
	return append(out, ours.data[oo[i]:]...)
}
