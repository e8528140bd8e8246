package trust

import "strings"

// Whether two path globs can match the same file (docs/trust.md,
// "Partitions": `rules set` refuses partitions whose paths overlap).
//
// The decision is exact over the pattern language of pathglob.go, read as
// sequences of path components: a glob matches a file when it matches the
// file's path or one of the directories leading to it, so it matches
// every file under whatever it matches. Two globs A and B therefore match
// a common file exactly when some component sequence a that A matches is
// a prefix of (or equal to) some sequence b that B matches, or the other
// way round: the file b (or b/x) is then matched by both. Each glob is a
// sequence of items — a segment pattern matching one component (`*`, `?`
// and literal bytes), or `**` matching any number of components (a
// trailing `**` is one component and then any number; an unanchored glob
// is `**` followed by its one segment) — so the question is whether the
// two sequences can be walked in step, one component at a time, until
// either is used up: a search over pairs of positions, each step needing
// one component both current items match (two segment patterns: a search
// over pairs of positions in them, one byte at a time, `*` staying put).
// Both searches are finite and visit every reachable pair, so "disjoint"
// is only ever said when no path can match both. The witness the search
// returns is checked with Match itself before "overlap" is said; the one
// imprecision left is on the safe side: a witness may need a component
// git never writes (".", "..", both refused as globs but spelt by `?` and
// `*`), in which case the globs are called overlapping although no tree
// can hold such a file.

// globItem is one item of a glob read as a component sequence.
type globItem struct {
	double bool // ** : zero or more components
	seg    seg
}

// globItems reads g as a component sequence (see above).
func globItems(g PathGlob) []globItem {
	if !g.anchored {
		return []globItem{{double: true}, {seg: g.base}}
	}
	var out []globItem
	for i, s := range g.segs {
		switch {
		case s.kind == segDouble && i == len(g.segs)-1:
			// a/** is what is inside a: one component, then any.
			out = append(out, globItem{seg: newSeg("*")}, globItem{double: true})
		case s.kind == segDouble:
			out = append(out, globItem{double: true})
		default:
			out = append(out, globItem{seg: s})
		}
	}
	return out
}

// GlobsOverlap reports whether some file path is matched by both a and b,
// with such a path (witness) when they do.
func GlobsOverlap(a, b PathGlob) (witness string, overlap bool) {
	comps, ok := overlapComps(globItems(a), globItems(b))
	if !ok {
		return "", false
	}
	if a.dirOnly || b.dirOnly {
		comps = append(comps, "f") // a file inside what both match
	}
	w := strings.Join(comps, "/")
	if !a.Match(w) || !b.Match(w) {
		// Not expected (the search follows Match's rules); said as an
		// overlap all the same, never as disjoint.
		return w, true
	}
	return w, true
}

// overlapComps searches the pairs of positions in x and y (see the file
// comment) and returns the components walked until either sequence was
// used up, completed to a sequence the other matches.
func overlapComps(x, y []globItem) ([]string, bool) {
	type pos struct{ i, j int }
	type from struct {
		prev pos
		name string // the component consumed to get here ("" for a ** skip)
	}
	seen := map[pos]from{{0, 0}: {}}
	queue := []pos{{0, 0}}
	var end pos
	found := false
	push := func(p pos, f from) {
		if _, ok := seen[p]; !ok {
			seen[p] = f
			queue = append(queue, p)
		}
	}
	for len(queue) > 0 && !found {
		p := queue[0]
		queue = queue[1:]
		if p.i == len(x) || p.j == len(y) {
			if p != (pos{0, 0}) {
				end, found = p, true
			}
			continue
		}
		xi, yj := x[p.i], y[p.j]
		// ** may match no component.
		if xi.double {
			push(pos{p.i + 1, p.j}, from{prev: p})
		}
		if yj.double {
			push(pos{p.i, p.j + 1}, from{prev: p})
		}
		// One component both items match.
		name, ok := itemsMeet(xi, yj)
		if !ok {
			continue
		}
		next := p
		if !xi.double {
			next.i++
		}
		if !yj.double {
			next.j++
		}
		if next == p {
			continue // ** against **: consuming more changes nothing
		}
		push(next, from{prev: p, name: name})
	}
	if !found {
		return nil, false
	}
	var comps []string
	for p := end; p != (pos{0, 0}); {
		f := seen[p]
		if f.name != "" {
			comps = append(comps, f.name)
		}
		p = f.prev
	}
	for l, r := 0, len(comps)-1; l < r; l, r = l+1, r-1 {
		comps[l], comps[r] = comps[r], comps[l]
	}
	// Complete the sequence not used up: one name per segment item, none
	// for a **.
	rest := y[end.j:]
	if end.i < len(x) {
		rest = x[end.i:]
	}
	for _, it := range rest {
		if !it.double {
			name, _ := segsMeet(it.seg.pat, "*")
			comps = append(comps, name)
		}
	}
	return comps, true
}

// itemsMeet returns a component both items match, if there is one.
func itemsMeet(a, b globItem) (string, bool) {
	pa, pb := "*", "*"
	if !a.double {
		pa = a.seg.pat
	}
	if !b.double {
		pb = b.seg.pat
	}
	return segsMeet(pa, pb)
}

// segsMeet returns a non-empty name that both segment patterns match
// (`*` any run of bytes, `?` one byte, anything else itself), if there is
// one: a search over pairs of positions, one byte at a time.
func segsMeet(a, b string) (string, bool) {
	// The bytes worth trying: every literal of either pattern, and one
	// that is neither's literal (standing for all the others).
	var lits []byte
	has := map[byte]bool{}
	for _, s := range []string{a, b} {
		for k := 0; k < len(s); k++ {
			if c := s[k]; c != '*' && c != '?' && !has[c] {
				has[c] = true
				lits = append(lits, c)
			}
		}
	}
	for _, c := range []byte("xyzqjkwv0123456789") {
		if !has[c] {
			lits = append(lits, c)
			break
		}
	}
	type pos struct {
		i, j int
		some bool // a byte was consumed
	}
	type from struct {
		prev pos
		c    byte
	}
	// closure skips the stars at i.
	closure := func(s string, i int) []int {
		out := []int{i}
		for i < len(s) && s[i] == '*' {
			i++
			out = append(out, i)
		}
		return out
	}
	step := func(s string, i int, c byte) (int, bool) {
		if i >= len(s) {
			return 0, false
		}
		switch s[i] {
		case '*':
			return i, true
		case '?':
			return i + 1, true
		}
		return i + 1, s[i] == c
	}
	start := pos{}
	seen := map[pos]from{start: {}}
	queue := []pos{start}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		ca, cb := closure(a, p.i), closure(b, p.j)
		if p.some && ca[len(ca)-1] == len(a) && cb[len(cb)-1] == len(b) {
			var out []byte
			for q := p; q != start; q = seen[q].prev {
				out = append(out, seen[q].c)
			}
			for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
				out[l], out[r] = out[r], out[l]
			}
			return string(out), true
		}
		for _, c := range lits {
			for _, i := range ca {
				ni, ok := step(a, i, c)
				if !ok {
					continue
				}
				for _, j := range cb {
					nj, ok := step(b, j, c)
					if !ok {
						continue
					}
					n := pos{ni, nj, true}
					if _, done := seen[n]; !done {
						seen[n] = from{prev: p, c: c}
						queue = append(queue, n)
					}
				}
			}
		}
	}
	return "", false
}
