package trust

import (
	"errors"
	"fmt"
	"strings"
)

// Path globs of rules "owners" (docs/trust.md, "Path owners"): the
// gitignore pattern language without negation, character classes or
// escapes, judged the way `git check-ignore` judges a file:
//
//   - `*` matches any run of characters within one path segment, `?` one
//     character other than '/';
//   - a segment that is exactly `**` matches any number of whole segments:
//     `**/x` x at any depth, `a/**/b` zero or more directories between, and
//     a trailing `a/**` everything inside a (but not a itself); any other
//     run of asterisks is a plain `*`;
//   - a pattern with a '/' at its start or in its middle is anchored at the
//     repository's root (a leading '/' only anchors); one without matches
//     a file or directory name at any depth;
//   - a trailing '/' matches only a directory;
//   - a pattern that matches a directory matches every file under it.
//
// The matcher is tested against git check-ignore as the oracle
// (pathglob_test.go).

// ErrBadGlob is a path glob the rules cannot take.
var ErrBadGlob = errors.New("invalid path glob")

// PathGlob is one compiled path pattern.
type PathGlob struct {
	segs     []seg // anchored: the segments, "**" a multi-segment wildcard
	base     seg   // unanchored: the one segment matched against any name
	anchored bool
	dirOnly  bool
	double   bool // anchored with a "**" segment
}

// seg is one segment pattern with its shape, so that the common shapes
// (a name, *.ext, prefix*, *) match without the general matcher: a hook
// matches every changed file of every step against every owners entry.
type seg struct {
	pat  string
	kind uint8
	lit  string // segLiteral: pat; segSuffix: after the *; segPrefix: before it
}

const (
	segGeneral uint8 = iota
	segLiteral
	segSuffix
	segPrefix
	segAny // "*"
	segDouble
)

func newSeg(p string) seg {
	switch {
	case p == "**":
		return seg{pat: p, kind: segDouble}
	case p == "*":
		return seg{pat: p, kind: segAny}
	case !strings.ContainsAny(p, "*?"):
		return seg{pat: p, kind: segLiteral, lit: p}
	case p[0] == '*' && !strings.ContainsAny(p[1:], "*?"):
		return seg{pat: p, kind: segSuffix, lit: p[1:]}
	case p[len(p)-1] == '*' && !strings.ContainsAny(p[:len(p)-1], "*?"):
		return seg{pat: p, kind: segPrefix, lit: p[:len(p)-1]}
	}
	return seg{pat: p, kind: segGeneral}
}

func (s seg) match(name string) bool {
	switch s.kind {
	case segLiteral:
		return name == s.lit
	case segSuffix:
		return strings.HasSuffix(name, s.lit)
	case segPrefix:
		return strings.HasPrefix(name, s.lit)
	case segAny:
		return true
	}
	return segMatch(s.pat, name)
}

// CompilePathGlob compiles one pattern of an owners entry's "paths".
func CompilePathGlob(p string) (PathGlob, error) {
	switch {
	case p == "":
		return PathGlob{}, fmt.Errorf("%w: empty pattern", ErrBadGlob)
	case strings.TrimSpace(p) != p:
		return PathGlob{}, fmt.Errorf("%w %q: leading or trailing white space", ErrBadGlob, p)
	case strings.HasPrefix(p, "!"):
		return PathGlob{}, fmt.Errorf("%w %q: negation (!) is not supported; list the paths that need the owners instead", ErrBadGlob, p)
	case strings.HasPrefix(p, "#"):
		return PathGlob{}, fmt.Errorf("%w %q: a leading # would be a comment in gitignore", ErrBadGlob, p)
	case strings.ContainsAny(p, "[]\\"):
		return PathGlob{}, fmt.Errorf("%w %q: character classes and escapes are not supported; use * and ?", ErrBadGlob, p)
	case strings.ContainsAny(p, "\x00\n\r"):
		return PathGlob{}, fmt.Errorf("%w %q: control character", ErrBadGlob, p)
	}
	g := PathGlob{}
	body := p
	if strings.HasSuffix(body, "/") {
		g.dirOnly = true
		body = strings.TrimSuffix(body, "/")
	}
	if strings.Contains(body, "/") {
		g.anchored = true
		body = strings.TrimPrefix(body, "/")
	}
	if body == "" {
		return PathGlob{}, fmt.Errorf("%w %q: matches nothing; write a path such as docs/ or docs/**", ErrBadGlob, p)
	}
	segs := strings.Split(body, "/")
	for i, s := range segs {
		switch {
		case s == "":
			return PathGlob{}, fmt.Errorf("%w %q: empty segment (//)", ErrBadGlob, p)
		case s == "." || s == "..":
			return PathGlob{}, fmt.Errorf("%w %q: segment %q never names a file in a tree", ErrBadGlob, p, s)
		case s != "**":
			segs[i] = collapseStars(s)
		}
	}
	if !g.anchored {
		base := segs[0]
		if base == "**" {
			base = "*"
		}
		g.base = newSeg(base)
		return g, nil
	}
	for _, p := range segs {
		sg := newSeg(p)
		g.double = g.double || sg.kind == segDouble
		g.segs = append(g.segs, sg)
	}
	return g, nil
}

// collapseStars turns every run of asterisks in a segment into one.
func collapseStars(s string) string {
	for strings.Contains(s, "**") {
		s = strings.ReplaceAll(s, "**", "*")
	}
	return s
}

// Match reports whether the file at path (slash-separated, from the root
// of the tree, as a tree diff names it) is matched: the path itself or one
// of the directories leading to it.
func (g *PathGlob) Match(path string) bool { return g.MatchSplit(strings.Split(path, "/")) }

// MatchSplit is Match of a path already split at its slashes.
func (g *PathGlob) MatchSplit(comps []string) bool {
	n := len(comps)
	if g.dirOnly {
		n-- // only the directories leading to the file
	}
	if !g.anchored {
		for _, c := range comps[:n] {
			if g.base.match(c) {
				return true
			}
		}
		return false
	}
	if !g.double { // only the prefix as long as the pattern can match
		return len(g.segs) <= n && segsMatch(g.segs, comps[:len(g.segs)])
	}
	for k := 1; k <= n; k++ {
		if segsMatch(g.segs, comps[:k]) {
			return true
		}
	}
	return false
}

// segsMatch matches pattern segments against path components exactly. A
// "**" matches zero or more components, except as the last segment, where
// it matches one or more (a/** is what is inside a).
func segsMatch(segs []seg, comps []string) bool {
	for len(segs) > 0 {
		if segs[0].kind == segDouble {
			if len(segs) == 1 {
				return len(comps) >= 1
			}
			for i := 0; i <= len(comps); i++ {
				if segsMatch(segs[1:], comps[i:]) {
					return true
				}
			}
			return false
		}
		if len(comps) == 0 || !segs[0].match(comps[0]) {
			return false
		}
		segs, comps = segs[1:], comps[1:]
	}
	return len(comps) == 0
}

// segMatch matches one segment pattern (`*` and `?`) against one name.
func segMatch(pat, name string) bool {
	// Iterative wildcard matching with backtracking to the last '*'.
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(pat) && (pat[p] == '?' || pat[p] == name[n]):
			p++
			n++
		case p < len(pat) && pat[p] == '*':
			star, mark = p, n
			p++
		case star >= 0:
			mark++
			p, n = star+1, mark
		default:
			return false
		}
	}
	for p < len(pat) && pat[p] == '*' {
		p++
	}
	return p == len(pat)
}

// MatchAny reports whether any of globs matches path.
func MatchAny(globs []PathGlob, path string) bool {
	return matchAnySplit(globs, strings.Split(path, "/"))
}

func matchAnySplit(globs []PathGlob, comps []string) bool {
	for i := range globs {
		if globs[i].MatchSplit(comps) {
			return true
		}
	}
	return false
}
