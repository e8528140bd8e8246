package mergetree

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// ChangedPaths returns the paths of the non-tree entries (files, symlinks,
// submodules) that differ between trees a and b — added, removed, or
// changed in mode or id — in git's tree order, as `git diff-tree -r
// --name-only a b` lists them (a zero id is the empty tree). Subtrees with
// the same id on both sides are not read. It is what path owners judge a
// landing by (docs/trust.md, "Path owners"): a pure function of the object
// store. Decoded trees are kept in c (nil: none), which the caller may
// share with its merges (Options.Cache): consecutive diffs along a chain
// read each tree once.
func ChangedPaths(s Store, a, b plumbing.Hash, c *Cache) ([]string, error) {
	var out []string
	if c != nil && len(c.trees) > maxCachedTrees {
		c.trees = map[plumbing.Hash][]entry{}
	}
	d := differ{s: s, c: c}
	err := d.diffTrees("", a, b, &out)
	return out, err
}

type differ struct {
	s Store
	c *Cache
}

func (d differ) readTreeEntries(h plumbing.Hash, path string) ([]entry, error) {
	if h.IsZero() || h == EmptyTree {
		return nil, nil
	}
	if d.c != nil {
		if es, ok := d.c.trees[h]; ok {
			return es, nil
		}
	}
	es, err := readTreeEntries(d.s, h, path)
	if err == nil && d.c != nil {
		d.c.trees[h] = es
	}
	return es, err
}

// readTreeEntries reads and parses tree h (at path, for messages): the
// merge's and the differ's one reader.
func readTreeEntries(s Store, h plumbing.Hash, path string) ([]entry, error) {
	t, data, err := s.ReadObject(h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s at %q: %w", h, displayPath(path), err)
	}
	if t != plumbing.TreeObject {
		return nil, fmt.Errorf("%w: %s at %q is a %s, not a tree", ErrCorrupt, h, displayPath(path), t)
	}
	es, err := parseTree(data)
	if err != nil {
		return nil, fmt.Errorf("%w: tree %s at %q: %w", ErrCorrupt, h, displayPath(path), err)
	}
	return es, nil
}

func (d differ) diffTrees(path string, a, b plumbing.Hash, out *[]string) error {
	if a == b {
		return nil
	}
	ea, err := d.readTreeEntries(a, path)
	if err != nil {
		return err
	}
	eb, err := d.readTreeEntries(b, path)
	if err != nil {
		return err
	}
	// One side's entry (or none) at each name; a file and a directory of
	// the same name are different entries (gitCmp tells them apart).
	side := func(e entry, other bool) error {
		p := join(path, e.name)
		if !e.isTree() {
			*out = append(*out, p)
			return nil
		}
		if other {
			return d.diffTrees(p, plumbing.ZeroHash, e.id, out)
		}
		return d.diffTrees(p, e.id, plumbing.ZeroHash, out)
	}
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		var c int
		switch {
		case i == len(ea):
			c = 1
		case j == len(eb):
			c = -1
		default:
			c = gitCmp(ea[i], eb[j])
		}
		switch {
		case c < 0:
			if err := side(ea[i], false); err != nil {
				return err
			}
			i++
		case c > 0:
			if err := side(eb[j], true); err != nil {
				return err
			}
			j++
		default:
			x, y := ea[i], eb[j]
			i, j = i+1, j+1
			if same(x, y) {
				continue
			}
			if x.isTree() && y.isTree() {
				if err := d.diffTrees(join(path, x.name), x.id, y.id, out); err != nil {
					return err
				}
				continue
			}
			*out = append(*out, join(path, x.name))
		}
	}
	return nil
}
