package mergetree

// This file holds xdiff's classic (non-minimal) Myers diff, which git's
// histogram diff falls back to for a region whose common lines are all too
// frequent. The region's lines are diffed as if they were two whole files,
// so the region goes through the classic preparation first:
//
//   - trimming of the common prefix and suffix;
//   - discarding: a line of one side that does not occur on the other side
//     is changed outright; a line occurring at least min(isqrt(n), 1024)
//     times on the other side (isqrt as xdiff approximates it, n the line
//     count of its own side) is discarded (changed) when it sits inside a run
//     of such frequent and absent lines that is mostly absent lines (within a
//     window of 100 lines each way);
//   - the divide-and-conquer Myers search on the remaining lines, with
//     xdiff's cost limits: above 256 edits with a snake longer than 20 lines
//     it takes a good-looking diagonal, and above max(isqrt(lines), 256)
//     edits it gives up on minimality and splits at the furthest point.
//
// The result is only the change flags; compaction happens later for the
// whole file.

const (
	myersMaxCostMin = 256
	myersHeurMin    = 256
	myersSnakeCnt   = 20
	myersKHeur      = 4
	myersMaxEqLimit = 1024
	myersSimscanWin = 100
	myersKpdisRun   = 4
)

// bogosqrt is xdiff's square root approximation: the power of two
// 2^ceil(bits(n)/2).
func bogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// myersRegion runs the classic diff on lines [line1, line1+count1) of a and
// [line2, line2+count2) of b (1-based, both counts > 0) and writes their
// change flags.
func (x *xdiffer) myersRegion(d *diffPair, line1, count1, line2, count2 int) {
	a := d.a[line1-1 : line1-1+count1]
	b := d.b[line2-1 : line2-1+count2]
	ca := d.ca[line1 : line1+count1]
	cb := d.cb[line2 : line2+count2]
	for i := range ca {
		ca[i] = 0
	}
	for i := range cb {
		cb[i] = 0
	}
	x.myers(a, b, ca, cb)
}

// myers diffs a against b as whole files; ca/cb (no sentinels, zeroed) get
// the change flags.
func (x *xdiffer) myers(a, b []int32, ca, cb []byte) {
	n1, n2 := len(a), len(b)

	// Trim common ends.
	lim := min(n1, n2)
	s := 0
	for s < lim && a[s] == b[s] {
		s++
	}
	t := 0
	for t < lim-s && a[n1-1-t] == b[n2-1-t] {
		t++
	}
	dstart := s
	dend1, dend2 := n1-t-1, n2-t-1

	// Occurrence counts over the whole of each side. x.cnt and x.first are
	// free outside findLCS: use them as the two counters (cnt is all zero
	// there, first is not and is cleared first).
	len1, len2 := x.cnt, x.first
	for _, id := range a {
		len2[id] = 0
	}
	for _, id := range b {
		len2[id] = 0
	}
	for _, id := range a {
		len1[id]++
	}
	for _, id := range b {
		len2[id]++
	}

	dis1 := make([]byte, n1)
	dis2 := make([]byte, n2)
	mlim := min(bogosqrt(n1), myersMaxEqLimit)
	for i := dstart; i <= dend1; i++ {
		nm := int(len2[a[i]])
		dis1[i] = disClass(nm, mlim)
	}
	mlim = min(bogosqrt(n2), myersMaxEqLimit)
	for i := dstart; i <= dend2; i++ {
		nm := int(len1[b[i]])
		dis2[i] = disClass(nm, mlim)
	}
	for _, id := range a {
		len1[id] = 0
	}
	for _, id := range b {
		len2[id] = 0
	}

	ha1, ri1 := keepLines(a, dis1, ca, dstart, dend1)
	ha2, ri2 := keepLines(b, dis2, cb, dstart, dend2)

	m := &myersEnv{ha1: ha1, ha2: ha2, ri1: ri1, ri2: ri2, c1: ca, c2: cb}
	ndiags := len(ha1) + len(ha2) + 3
	if cap(x.kv) < 2*ndiags+2 {
		x.kv = make([]int, 2*ndiags+2)
	}
	kv := x.kv[:2*ndiags+2]
	m.kvdf = kv
	m.fo = len(ha2) + 1
	m.kvdb = kv[ndiags:]
	m.bo = len(ha2) + 1
	m.mxcost = max(bogosqrt(ndiags), myersMaxCostMin)
	m.recsCmp(0, len(ha1), 0, len(ha2), false)
}

func disClass(nm, mlim int) byte {
	switch {
	case nm == 0:
		return 0
	case nm >= mlim:
		return 2
	}
	return 1
}

// keepLines applies the discard decision to lines [s, e] and returns the
// kept lines' ids and original indexes; discarded lines are marked changed.
func keepLines(ids []int32, dis, chg []byte, s, e int) (ha []int32, ri []int) {
	for i := s; i <= e; i++ {
		if dis[i] == 1 || (dis[i] == 2 && !cleanMultimatch(dis, i, s, e)) {
			ha = append(ha, ids[i])
			ri = append(ri, i)
		} else {
			chg[i] = 1
		}
	}
	return ha, ri
}

// cleanMultimatch decides whether the frequent line i (dis[i] == 2) sits in
// a run, on both sides, of frequent or absent lines in which absent lines
// dominate; such a line is discarded.
func cleanMultimatch(dis []byte, i, s, e int) bool {
	if i-s > myersSimscanWin {
		s = i - myersSimscanWin
	}
	if e-i > myersSimscanWin {
		e = i + myersSimscanWin
	}
	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if dis[i-r] == 0 {
			rdis0++
		} else if dis[i-r] == 2 {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if dis[i+r] == 0 {
			rdis1++
		} else if dis[i+r] == 2 {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*myersKpdisRun < rpdis1+rdis1
}

type myersEnv struct {
	ha1, ha2   []int32
	ri1, ri2   []int
	c1, c2     []byte
	kvdf, kvdb []int
	fo, bo     int // offsets of diagonal 0 in kvdf / kvdb
	mxcost     int
}

func (m *myersEnv) recsCmp(off1, lim1, off2, lim2 int, needMin bool) {
	ha1, ha2 := m.ha1, m.ha2
	for off1 < lim1 && off2 < lim2 && ha1[off1] == ha2[off2] {
		off1++
		off2++
	}
	for off1 < lim1 && off2 < lim2 && ha1[lim1-1] == ha2[lim2-1] {
		lim1--
		lim2--
	}
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			m.c2[m.ri2[off2]] = 1
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			m.c1[m.ri1[off1]] = 1
		}
	default:
		i1, i2, minLo, minHi := m.split(off1, lim1, off2, lim2, needMin)
		m.recsCmp(off1, i1, off2, i2, minLo)
		m.recsCmp(i1, lim1, i2, lim2, minHi)
	}
}

const lineMax = int(^uint(0) >> 2)

// split finds the middle snake (or a heuristic split point) of the box.
func (m *myersEnv) split(off1, lim1, off2, lim2 int, needMin bool) (s1, s2 int, minLo, minHi bool) {
	ha1, ha2 := m.ha1, m.ha2
	kf, fo := m.kvdf, m.fo
	kb, bo := m.kvdb, m.bo
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax := fmid, fmid
	bmin, bmax := bmid, bmid

	kf[fo+fmid] = off1
	kb[bo+bmid] = lim1

	for ec := 1; ; ec++ {
		gotSnake := false

		if fmin > dmin {
			fmin--
			kf[fo+fmin-1] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			kf[fo+fmax+1] = -1
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			var i1 int
			if kf[fo+d-1] >= kf[fo+d+1] {
				i1 = kf[fo+d-1] + 1
			} else {
				i1 = kf[fo+d+1]
			}
			prev1 := i1
			i2 := i1 - d
			for i1 < lim1 && i2 < lim2 && ha1[i1] == ha2[i2] {
				i1++
				i2++
			}
			if i1-prev1 > myersSnakeCnt {
				gotSnake = true
			}
			kf[fo+d] = i1
			if odd && bmin <= d && d <= bmax && kb[bo+d] <= i1 {
				return i1, i2, true, true
			}
		}

		if bmin > dmin {
			bmin--
			kb[bo+bmin-1] = lineMax
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			kb[bo+bmax+1] = lineMax
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			var i1 int
			if kb[bo+d-1] < kb[bo+d+1] {
				i1 = kb[bo+d-1]
			} else {
				i1 = kb[bo+d+1] - 1
			}
			prev1 := i1
			i2 := i1 - d
			for i1 > off1 && i2 > off2 && ha1[i1-1] == ha2[i2-1] {
				i1--
				i2--
			}
			if prev1-i1 > myersSnakeCnt {
				gotSnake = true
			}
			kb[bo+d] = i1
			if !odd && fmin <= d && d <= fmax && i1 <= kf[fo+d] {
				return i1, i2, true, true
			}
		}

		if needMin {
			continue
		}

		if gotSnake && ec > myersHeurMin {
			best := 0
			for d := fmax; d >= fmin; d -= 2 {
				dd := d - fmid
				if dd < 0 {
					dd = -dd
				}
				i1 := kf[fo+d]
				i2 := i1 - d
				v := (i1 - off1) + (i2 - off2) - dd
				if v > myersKHeur*ec && v > best &&
					off1+myersSnakeCnt <= i1 && i1 < lim1 &&
					off2+myersSnakeCnt <= i2 && i2 < lim2 {
					for k := 1; ha1[i1-k] == ha2[i2-k]; k++ {
						if k == myersSnakeCnt {
							best = v
							s1, s2 = i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				return s1, s2, true, false
			}
			for d := bmax; d >= bmin; d -= 2 {
				dd := d - bmid
				if dd < 0 {
					dd = -dd
				}
				i1 := kb[bo+d]
				i2 := i1 - d
				v := (lim1 - i1) + (lim2 - i2) - dd
				if v > myersKHeur*ec && v > best &&
					off1 < i1 && i1 <= lim1-myersSnakeCnt &&
					off2 < i2 && i2 <= lim2-myersSnakeCnt {
					for k := 0; ha1[i1+k] == ha2[i2+k]; k++ {
						if k == myersSnakeCnt-1 {
							best = v
							s1, s2 = i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				return s1, s2, false, true
			}
		}

		if ec >= m.mxcost {
			fbest, fbest1 := -1, -1
			for d := fmax; d >= fmin; d -= 2 {
				i1 := min(kf[fo+d], lim1)
				i2 := i1 - d
				if lim2 < i2 {
					i1, i2 = lim2+d, lim2
				}
				if fbest < i1+i2 {
					fbest, fbest1 = i1+i2, i1
				}
			}
			bbest, bbest1 := lineMax, lineMax
			for d := bmax; d >= bmin; d -= 2 {
				i1 := max(off1, kb[bo+d])
				i2 := i1 - d
				if i2 < off2 {
					i1, i2 = off2+d, off2
				}
				if i1+i2 < bbest {
					bbest, bbest1 = i1+i2, i1
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return fbest1, fbest - fbest1, true, false
			}
			return bbest1, bbest - bbest1, false, true
		}
	}
}
