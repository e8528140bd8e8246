package mergetree

// This file holds the histogram diff as git 2.39's xdiff runs it for merges.
// Behaviour (learnt from git's documentation and from experiments with the
// git binary, see linemerge_*_test.go):
//
//   - No prefix/suffix trimming and no discarding of lines before it: the
//     whole of both files is one region.
//   - In a region, every line of the old side (A) is counted. Each line of B
//     that also occurs in A (at most 64 times so far allowed, see below) is
//     extended to the maximal common run around every occurrence in A. A run
//     replaces the current best when it is strictly longer, or when its
//     count (the lowest occurrence count in A of its lines, taken only while
//     that count stays above 1) is strictly lower. The allowed count drops
//     to the best count found, so rarer anchors win.
//   - The region is split around the best run and both halves are diffed
//     the same way (left half first).
//   - When the two sides share a line but no run with a count of at most 64
//     exists, the region falls back to xdiff's classic Myers diff run on the
//     region's lines as if they were two whole files (see xdiff_myers.go).
//   - When the sides share no line at all, everything is changed.
//
// Not reproduced: xdiff's histogram gives up with an error (and git fails
// the merge) when 64 distinct lines of one region land in the same bucket of
// its internal hash table. That needs a huge file and a region whose lines'
// internal numbers collide 64 times over: astronomically unlikely for real
// content. We return the diff instead.
//
// Checked against the git binary (linemerge_diff_test.go compares every
// diff with git's): trimming the common ends first gives different diffs,
// and so does preferring the later of two equally good anchors.
//
// Line numbers in this file are 1-based as in the description above; the
// change arrays carry a zero sentinel at index 0 and n+1, so line p's flag is
// chg[p].

// xdiffer holds the scratch space of the diffs of one merge; it is reused by
// every diff of the merge (the ids come from one lineSet).
type xdiffer struct {
	cnt   []int32 // per id: occurrences in the scanned A range (0 outside a scan)
	first []int32 // per id: first occurrence in the scanned A range
	next  []int32 // per A line: next occurrence of the same line, 0 = none
	kv    []int   // Myers diagonal vectors
	chg   []byte  // backing store of change arrays
}

func newXdiffer(nids int) *xdiffer {
	x := &xdiffer{}
	x.reset(nids)
	return x
}

// reset prepares the scratch space for nids distinct lines, reusing memory.
func (x *xdiffer) reset(nids int) {
	if cap(x.cnt) < nids {
		x.cnt = make([]int32, nids)
		x.first = make([]int32, nids)
	}
	x.cnt = x.cnt[:nids]
	x.first = x.first[:nids]
	clear(x.cnt)
	x.chg = x.chg[:0]
}

// changeArray returns a zeroed change array for n lines (with sentinels),
// carved from the differ's reusable buffer when it has room.
func (x *xdiffer) changeArray(n int) []byte {
	if len(x.chg)+n+2 > cap(x.chg) {
		return make([]byte, n+2)
	}
	c := x.chg[len(x.chg) : len(x.chg)+n+2]
	x.chg = x.chg[:len(x.chg)+n+2]
	clear(c)
	return c
}

// diffPair is one diff: old side a, new side b, and their change flags.
type diffPair struct {
	a, b   []int32
	ca, cb []byte
}

// diff computes the histogram diff of a → b (uncompacted).
func (x *xdiffer) diff(a, b []int32) *diffPair {
	d := &diffPair{a: a, b: b, ca: x.changeArray(len(a)), cb: x.changeArray(len(b))}
	if cap(x.next) < len(a)+1 {
		x.next = make([]int32, len(a)+1)
	}
	x.next = x.next[:len(a)+1]
	x.histogram(d, 1, len(a), 1, len(b))
	return d
}

type lcsRange struct{ begin1, end1, begin2, end2 int }

// maxChain is xdiff's limit on the occurrence count of an anchor line.
const maxChain = 64

func (x *xdiffer) histogram(d *diffPair, line1, count1, line2, count2 int) {
	for {
		if count1 <= 0 && count2 <= 0 {
			return
		}
		if count1 == 0 {
			for i := 0; i < count2; i++ {
				d.cb[line2+i] = 1
			}
			return
		}
		if count2 == 0 {
			for i := 0; i < count1; i++ {
				d.ca[line1+i] = 1
			}
			return
		}
		lcs, fallback := x.findLCS(d, line1, count1, line2, count2)
		if fallback {
			x.myersRegion(d, line1, count1, line2, count2)
			return
		}
		if lcs.begin1 == 0 && lcs.begin2 == 0 {
			for i := 0; i < count1; i++ {
				d.ca[line1+i] = 1
			}
			for i := 0; i < count2; i++ {
				d.cb[line2+i] = 1
			}
			return
		}
		x.histogram(d, line1, lcs.begin1-line1, line2, lcs.begin2-line2)
		end1, end2 := line1+count1-1, line2+count2-1
		count1, line1 = end1-lcs.end1, lcs.end1+1
		count2, line2 = end2-lcs.end2, lcs.end2+1
	}
}

// findLCS finds the anchor run of a region. It reports fallback when the
// sides have a common line but no usable anchor (all too frequent).
func (x *xdiffer) findLCS(d *diffPair, line1, count1, line2, count2 int) (lcs lcsRange, fallback bool) {
	a, b := d.a, d.b
	cnt, first, next := x.cnt, x.first, x.next
	end1, end2 := line1+count1-1, line2+count2-1

	// Count A's lines; chain equal lines in ascending order.
	for p := end1; p >= line1; p-- {
		id := a[p-1]
		if cnt[id] == 0 {
			cnt[id] = 1
			next[p] = 0
		} else {
			next[p] = first[id]
			cnt[id]++
		}
		first[id] = int32(p)
	}

	best := int32(maxChain + 1)
	hasCommon := false
	for bp := line2; bp <= end2; {
		bnext := bp + 1
		id := b[bp-1]
		c := cnt[id]
		switch {
		case c == 0:
		case c > best:
			hasCommon = true
		default:
			hasCommon = true
			as := int(first[id])
			for {
				np := int(next[as])
				bs, ae, be, rc := bp, as, bp, c
				for line1 < as && line2 < bs && a[as-2] == b[bs-2] {
					as--
					bs--
					if rc > 1 {
						rc = min(rc, cnt[a[as-1]])
					}
				}
				for ae < end1 && be < end2 && a[ae] == b[be] {
					ae++
					be++
					if rc > 1 {
						rc = min(rc, cnt[a[ae-1]])
					}
				}
				if bnext <= be {
					bnext = be + 1
				}
				if lcs.end1-lcs.begin1 < ae-as || rc < best {
					lcs = lcsRange{as, ae, bs, be}
					best = rc
				}
				if np == 0 {
					break
				}
				for np != 0 && np <= ae {
					np = int(next[np])
				}
				if np == 0 {
					break
				}
				as = np
			}
		}
		bp = bnext
	}

	for p := line1; p <= end1; p++ {
		cnt[a[p-1]] = 0
	}
	return lcs, hasCommon && best > maxChain
}
