package mergetree

// Compaction of change groups, as git 2.39's xdiff does it without the
// indent heuristic (merges never use it). A group is a maximal run of
// changed lines in one file; the other file has a corresponding (possibly
// empty) group at the same position of the line-by-line alignment.
//
// For every non-empty group of the file being compacted, repeated until its
// size stops changing (it grows when it meets another group and merges):
//   - slide it up while the line above equals its last line;
//   - then slide it down while the line below equals its first line,
//     remembering the last position where the corresponding group of the
//     other file was non-empty;
// then, if it could move at all and it passed such a position, slide it
// back up to the lowest such position. A merge compacts the old file first,
// then the new file.
//
// Index convention: 0-based lines; chg has a zero sentinel at both ends, so
// line i's flag is chg[i+1].

type cfile struct {
	ids []int32
	chg []byte
}

func (f cfile) nrec() int         { return len(f.ids) }
func (f cfile) at(i int) bool     { return f.chg[i+1] != 0 }
func (f cfile) set(i int, v byte) { f.chg[i+1] = v }

type group struct{ start, end int }

func groupInit(f cfile) group {
	g := group{}
	for f.at(g.end) {
		g.end++
	}
	return g
}

func groupNext(f cfile, g *group) bool {
	if g.end == f.nrec() {
		return false
	}
	g.start = g.end + 1
	g.end = g.start
	for f.at(g.end) {
		g.end++
	}
	return true
}

func groupPrevious(f cfile, g *group) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	g.start = g.end
	for f.at(g.start - 1) {
		g.start--
	}
	return true
}

func groupSlideDown(f cfile, g *group) bool {
	if g.end < f.nrec() && f.ids[g.start] == f.ids[g.end] {
		f.set(g.start, 0)
		g.start++
		f.set(g.end, 1)
		g.end++
		for f.at(g.end) {
			g.end++
		}
		return true
	}
	return false
}

func groupSlideUp(f cfile, g *group) bool {
	if g.start > 0 && f.ids[g.start-1] == f.ids[g.end-1] {
		g.start--
		f.set(g.start, 1)
		g.end--
		f.set(g.end, 0)
		for f.at(g.start - 1) {
			g.start--
		}
		return true
	}
	return false
}

// compact compacts the groups of f, keeping o (the other file) in step.
// The group walk of both files stays in lockstep by construction; a broken
// step would be a bug in this package, so it panics.
func compact(f, o cfile) {
	g := groupInit(f)
	og := groupInit(o)
	for {
		if g.end != g.start {
			var earliestEnd int
			endMatchingOther := -1
			for {
				size := g.end - g.start
				endMatchingOther = -1
				for groupSlideUp(f, &g) {
					if !groupPrevious(o, &og) {
						panic("mergetree: group sync broken sliding up")
					}
				}
				earliestEnd = g.end
				if og.end > og.start {
					endMatchingOther = g.end
				}
				for groupSlideDown(f, &g) {
					if !groupNext(o, &og) {
						panic("mergetree: group sync broken sliding down")
					}
					if og.end > og.start {
						endMatchingOther = g.end
					}
				}
				if size == g.end-g.start {
					break
				}
			}
			if g.end != earliestEnd && endMatchingOther != -1 {
				for og.end == og.start {
					if !groupSlideUp(f, &g) {
						panic("mergetree: match disappeared")
					}
					if !groupPrevious(o, &og) {
						panic("mergetree: group sync broken sliding to match")
					}
				}
			}
		}
		if !groupNext(f, &g) {
			return
		}
		if !groupNext(o, &og) {
			panic("mergetree: group sync broken moving to next group")
		}
	}
}

// change is one hunk of a diff: lines [i1, i1+chg1) of the old file became
// lines [i2, i2+chg2) of the new file.
type change struct{ i1, i2, chg1, chg2 int }

// script turns the change flags of a diff into its hunks, in order.
func script(d *diffPair) []change {
	a := cfile{d.a, d.ca}
	b := cfile{d.b, d.cb}
	var out []change
	i1, i2 := a.nrec(), b.nrec()
	for i1 >= 0 || i2 >= 0 {
		if a.at(i1-1) || b.at(i2-1) {
			l1, l2 := i1, i2
			for a.at(i1 - 1) {
				i1--
			}
			for b.at(i2 - 1) {
				i2--
			}
			out = append(out, change{i1, i2, l1 - i1, l2 - i2})
		}
		i1--
		i2--
	}
	for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
		out[l], out[r] = out[r], out[l]
	}
	return out
}

// compactedScript compacts both sides of a diff (old file first, as git's
// merge does) and returns its hunks.
func compactedScript(d *diffPair) []change {
	a := cfile{d.a, d.ca}
	b := cfile{d.b, d.cb}
	compact(a, b)
	compact(b, a)
	return script(d)
}
