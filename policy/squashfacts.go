package policy

// Squash facts: the merge facts of squash steps (facts.go,
// docs/foldcache.md). A squash step's rule 3 — its tree is exactly the
// clean mergeTree of its parent and the head its trailers bind — is, like
// a merge step's, a pure function of the step's id and of
// mergetree.Algorithm (the id fixes the parent, the tree and the message
// holding the trailers). The hook records it when the queue publishes the
// step on its candidate branch, and the landing reads it instead of
// merging again. Only rule 3 is cached: the trailers, the pull request,
// its review and checks are judged at the landing against the hub refs as
// they are then, and the step's objects are checked at the landing as for
// any commit that is read (a squash step is always read: its message
// holds the trailers).
//
// Entry: "gpsf" 1 | key (20) | step id (20) | step tree (20) | parent (20)
// | head (20), under the key: the first 20 bytes of SHA-256("gitplus
// squash fact " + mergetree.Algorithm + "\n" + step id). Its own key space
// and magic, so a squash fact never reads as a merge fact (which would
// give the step two parents).

import (
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/mergetree"
)

var squashFactMagic = []byte("gpsf\x01")

// SquashFactKey is the fold-cache key of the squash fact of step id.
func SquashFactKey(id plumbing.Hash) plumbing.Hash {
	return derivedKey("gitplus squash fact "+mergetree.Algorithm+"\n", id[:])
}

func encodeSquashFact(id, tree, parent, head plumbing.Hash) []byte {
	b := appendEntryHeader(make([]byte, 0, len(squashFactMagic)+100), squashFactMagic, SquashFactKey(id))
	for _, h := range []plumbing.Hash{id, tree, parent, head} {
		b = append(b, h[:]...)
	}
	return b
}

// knownSquash reports whether the cache holds the squash fact of step c
// merging head onto parent.
func (j *judge) knownSquash(c *commit, parent, head plumbing.Hash) bool {
	if j.in.Cache == nil {
		return false
	}
	key := SquashFactKey(c.id)
	b, ok := j.in.Cache.Get(key)
	if !ok {
		return false
	}
	r, ok := openEntry(b, squashFactMagic, key)
	if !ok || len(r.b) != 80 {
		return false
	}
	id, tree, p, h := r.hash(), r.hash(), r.hash(), r.hash()
	return id == c.id && tree == c.tree && p == parent && h == head
}

// learnSquash records the squash fact of step c, pushed to a candidate
// branch of target (a squash branch), when it holds: one parent, trailers
// binding an open pull request on target at its head, and the clean merge
// of that head onto the parent is exactly c's tree. It never refuses.
func (j *judge) learnSquash(target string, c *commit) {
	if len(c.parents) != 1 {
		return
	}
	bind, ok := j.squashBindingOf(c)
	if !ok || j.knownSquash(c, c.parents[0], bind.Head) {
		return
	}
	j.foldPRs()
	open := func() bool {
		for _, st := range j.openHeads(target, bind.Head) {
			if st.ID == bind.PR {
				return true
			}
		}
		return false
	}
	if !open() {
		if !j.fromIndex {
			return
		}
		// The index may predate the pull request: read every ref.
		j.prsDone, j.allPRs = false, true
		j.foldPRs()
		if !open() {
			return
		}
	}
	j.learned++
	if fault, _, _, _ := candidateTree(j.in.Objects, c.parents[0], bind.Head, c.tree, j.merges); fault == treeOK {
		j.in.Cache.Put(SquashFactKey(c.id), encodeSquashFact(c.id, c.tree, c.parents[0], bind.Head))
	}
}
