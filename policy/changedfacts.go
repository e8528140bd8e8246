package policy

// Changed paths in merge facts (docs/foldcache.md, "Changed paths"): path
// owners match the files each candidate step changes against its first
// parent (owners.go). Computing them decodes every tree along the changed
// paths of both sides — the trees a merge fact spares the landing — so,
// for a target whose rules have path owners, the hook records them in the
// candidate's merge fact when it learns it (learnCandidate), from the
// trees the publishing merge just decoded, and the landing reads them with
// the fact it reads anyway. They are a pure function of the candidate id
// (its tree and its first parent's), as the rest of the fact is.
//
// Trailer of a merge fact: path count + 1 | paths (strings as in the log
// entries of cache.go). Absent: not recorded (a target without owners when
// it was learned); a landing then computes the diff.

import (
	"encoding/binary"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/mergetree"
)

// withChanged appends to the merge fact entry of c the files c changes
// against its first parent, when ownersOn and they can be read.
func (j *judge) withChanged(entry []byte, ownersOn bool, c *commit) []byte {
	if !ownersOn {
		return entry
	}
	p, err := j.commits.get(c.parents[0])
	if err != nil {
		return entry
	}
	paths, err := mergetree.ChangedPaths(j.in.Objects, p.tree, c.tree, j.merges)
	if err != nil {
		return entry
	}
	entry = binary.AppendUvarint(entry, uint64(len(paths))+1)
	for _, s := range paths {
		entry = appendBytes(entry, []byte(s))
	}
	return entry
}

// readTrailer decodes a merge fact's trailer (the bytes after its 80 fixed
// ones); ok is false when it is damaged.
func readTrailer(b []byte) (paths []string, ok bool) {
	r := &entryReader{b: b}
	k := r.uvarint()
	if r.bad || k == 0 || k-1 > uint64(len(r.b)) {
		return nil, false
	}
	paths = make([]string, 0, k-1)
	for i := uint64(0); i < k-1 && !r.bad; i++ {
		paths = append(paths, string(r.bytes()))
	}
	return paths, !r.bad && len(r.b) == 0
}

func validTrailer(b []byte) bool { _, ok := readTrailer(b); return ok }

// factChanged notes the changed paths a merge fact entry of candidate id
// carries, for stepChanged.
func (j *judge) factChanged(id plumbing.Hash, entry []byte) {
	fixed := len(factMagic) + 20 + 80
	if len(entry) <= fixed {
		return
	}
	if paths, ok := readTrailer(entry[fixed:]); ok {
		if j.changedOf == nil {
			j.changedOf = map[plumbing.Hash][]string{}
		}
		j.changedOf[id] = paths
	}
}

// stepChanged is the changed files of candidate step c against its first
// parent: from its merge fact when that carries them, else computed.
func (j *judge) stepChanged(c *commit, fallback changedFn) changedFn {
	if paths, ok := j.changedOf[c.id]; ok {
		return func() ([]string, error) { return paths, nil }
	}
	return fallback
}
