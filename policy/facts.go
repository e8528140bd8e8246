package policy

// Merge facts (DESIGN.md §6 "Cost", §8 "Candidate branches"). Rule 3 of a
// candidate — its tree is exactly the clean mergeTree of its two parents —
// is a pure function of the candidate's id and of mergetree.Algorithm:
// object ids are content hashes, so the id fixes the parents, the tree and
// everything below them. The hook therefore records that it holds, once,
// when the queue publishes the candidate (a push of its candidate branch
// refs/heads/queue/<target>/<pr id>), and the landing push that follows —
// the one every other push to the target waits behind — reads the fact
// instead of merging again. Rules 1, 2, 4 and 5 (parents, open pull
// request, approvals, checks) are never cached: they are judged at the
// landing against the hub refs as they are then.
//
// Decisions:
//   - A fact is learned only from a push that creates or moves a candidate
//     branch of a target whose rules take candidates (requirePullRequest,
//     queueCandidates, no requireProvenance), to a merge whose second
//     parent is the head of an open pull request on that target; at most
//     maxLearned per push. Such a push is never refused for its merge: the
//     branch is unprotected, and a candidate that does not merge cleanly to
//     its own tree simply gets no fact (its landing is refused as before).
//   - Only what holds is recorded. A landing with no fact for a step merges
//     it, as without a cache; a landing never writes facts (each is a file
//     the landing would wait for).
//   - Moving or deleting a candidate branch drops the old candidate's fact
//     (when the cache can drop): the queue deletes the branches of what it
//     landed, so facts live about as long as their branches.
//   - Like every fold-cache entry, a fact is exactly as trustworthy as the
//     git directory that holds it. An entry that is damaged, of another
//     format or algorithm, or for another commit or tree is ignored.
//
// Entry: "gpmf" 1 | key (20) | candidate id (20) | candidate tree (20),
// under the key: the first 20 bytes of SHA-256("gitplus merge fact " +
// mergetree.Algorithm + "\n" + candidate id).

import (
	"crypto/sha256"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/mergetree"
)

var factMagic = []byte("gpmf\x01")

// maxLearned bounds the merges one push computes for candidate branches
// (the deepest queue takes 32 steps; a pusher naming more branches than
// that gets no more facts, not a slower push).
const maxLearned = 64

// MergeFactKey is the fold-cache key of the merge fact of candidate id.
func MergeFactKey(id plumbing.Hash) plumbing.Hash {
	sum := sha256.Sum256(append([]byte("gitplus merge fact "+mergetree.Algorithm+"\n"), id[:]...))
	var k plumbing.Hash
	copy(k[:], sum[:])
	return k
}

func encodeFact(c *commit) []byte {
	b := appendEntryHeader(make([]byte, 0, len(factMagic)+60), factMagic, MergeFactKey(c.id))
	b = append(b, c.id[:]...)
	return append(b, c.tree[:]...)
}

// decodeFact returns the candidate id and tree a fact entry under key
// records; false when the entry is damaged or not a fact under key.
func decodeFact(key plumbing.Hash, b []byte) (id, tree plumbing.Hash, ok bool) {
	r, ok := openEntry(b, factMagic, key)
	if !ok || len(r.b) != 40 {
		return id, tree, false
	}
	copy(id[:], r.b[:20])
	copy(tree[:], r.b[20:])
	return id, tree, MergeFactKey(id) == key
}

// knownMerge reports whether the cache holds the merge fact of c.
func (j *judge) knownMerge(c *commit) bool {
	if j.in.Cache == nil {
		return false
	}
	key := MergeFactKey(c.id)
	b, ok := j.in.Cache.Get(key)
	if !ok {
		return false
	}
	id, tree, ok := decodeFact(key, b)
	return ok && id == c.id && tree == c.tree
}

// candidateTarget returns the target branch of candidate branch ref
// (refs/heads/queue/<target without refs/heads/>/<pr id>).
func candidateTarget(ref string) (string, bool) {
	rest, ok := strings.CutPrefix(ref, "refs/heads/queue/")
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 || i == len(rest)-1 {
		return "", false
	}
	return "refs/heads/" + rest[:i], true
}

// learnCandidate records the merge fact of a candidate pushed to its
// candidate branch by u, when it holds, and drops the fact of the candidate
// the branch held before. It never refuses and reports nothing: u is an
// unprotected branch.
func (j *judge) learnCandidate(u Update) {
	if j.in.Cache == nil {
		return
	}
	target, ok := candidateTarget(u.Ref)
	if !ok {
		return
	}
	if !u.Old.IsZero() {
		j.forget(MergeFactKey(u.Old))
	}
	b, ok := j.rules.For(target)
	if !ok || !b.RequirePullRequest || !b.QueueCandidates || b.RequireProvenance || u.New.IsZero() || j.learned >= maxLearned {
		return
	}
	c, err := j.commits.get(u.New)
	if err != nil || len(c.parents) != 2 || j.knownMerge(c) {
		return
	}
	j.foldPRs()
	if len(j.openHeads(target, c.parents[1])) == 0 {
		if !j.fromIndex {
			return
		}
		// The index may predate the pull request: read every ref.
		j.prsDone, j.allPRs = false, true
		j.foldPRs()
		if len(j.openHeads(target, c.parents[1])) == 0 {
			return
		}
	}
	j.learned++
	if j.mergeStep(0, c.parents[0], c, j.merges) == nil {
		j.in.Cache.Put(MergeFactKey(c.id), encodeFact(c))
	}
}
