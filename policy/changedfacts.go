package policy

// Changed-path facts (docs/foldcache.md, "Changed paths"): the files two
// trees differ in (mergetree.ChangedPaths) are a pure function of the two
// tree ids, so, like a merge fact, they are kept in the fold cache. The
// hook learns them where it learns merge facts — when the queue publishes
// a candidate of a target with path owners (learnCandidate): the step's
// diff against its first parent, computed from the trees its merge just
// decoded — and the landing that follows reads them instead of decoding
// every tree along the changed paths again. A landing never writes them.
// Like every fold-cache entry, one is exactly as trustworthy as the git
// directory that holds it; a damaged one, or one under another key, is a
// miss.
//
// Entry: "gpcp" 1 | key (20) | tree a (20) | tree b (20) | path count |
// paths, under the key: the first 20 bytes of SHA-256("gitplus changed
// paths v1\n" + tree a + tree b).

import (
	"encoding/binary"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/mergetree"
)

var changedMagic = []byte("gpcp\x01")

// ChangedPathsKey is the fold-cache key of the changed-path fact of trees
// a and b.
func ChangedPathsKey(a, b plumbing.Hash) plumbing.Hash { return changedKey(a, b) }

func changedKey(a, b plumbing.Hash) plumbing.Hash {
	return derivedKey("gitplus changed paths v1\n", a[:], b[:])
}

func encodeChanged(a, b plumbing.Hash, paths []string) []byte {
	out := appendEntryHeader(nil, changedMagic, changedKey(a, b))
	out = append(out, a[:]...)
	out = append(out, b[:]...)
	out = binary.AppendUvarint(out, uint64(len(paths)))
	for _, p := range paths {
		out = appendBytes(out, []byte(p))
	}
	return out
}

func decodeChanged(a, b plumbing.Hash, buf []byte) ([]string, bool) {
	r, ok := openEntry(buf, changedMagic, changedKey(a, b))
	if !ok || r.hash() != a || r.hash() != b {
		return nil, false
	}
	n := r.count(1)
	paths := make([]string, 0, n)
	for i := 0; i < n && !r.bad; i++ {
		paths = append(paths, string(r.bytes()))
	}
	if r.bad || len(r.b) != 0 {
		return nil, false
	}
	return paths, true
}

// changedPaths is mergetree.ChangedPaths(a, b) through the fold cache
// (nil: none): a fact when there is one, else computed (trees decoded
// through trees, nil: none).
func changedPaths(objs mergetree.Store, cache Cache, trees *mergetree.Cache, a, b plumbing.Hash) ([]string, error) {
	if cache != nil {
		if buf, ok := cache.Get(changedKey(a, b)); ok {
			if paths, ok := decodeChanged(a, b, buf); ok {
				return paths, nil
			}
		}
	}
	return mergetree.ChangedPaths(objs, a, b, trees)
}

// learnChanged records the changed-path fact of candidate c against its
// first parent, when the target's rules b have path owners (the only
// reader) — called by learnCandidate once c's merge holds.
func (j *judge) learnChanged(ownersOn bool, c *commit) {
	if !ownersOn || j.in.Cache == nil {
		return
	}
	p, err := j.commits.get(c.parents[0])
	if err != nil {
		return
	}
	paths, err := mergetree.ChangedPaths(j.in.Objects, p.tree, c.tree, j.merges)
	if err != nil {
		return
	}
	j.in.Cache.Put(changedKey(p.tree, c.tree), encodeChanged(p.tree, c.tree, paths))
}
