package policy

// Merge facts (docs/foldcache.md, docs/queue.md). Rule 3 of a
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
//     git directory that holds it: a well-formed fact of the commit asked
//     for is believed whole (tree and parents); one that is damaged, of
//     another format or algorithm, or for another commit is ignored.
//
// A fact also names the candidate's parents, so a landing whose every step
// has one walks its chain and checks rule 1 without reading the commits
// (no pack is opened, nothing inflated). Such a commit carries no raw
// bytes; what needs them (provenance) reads the object (commits.rawOf).
//
// A fact also says that everything the candidate introduces over its first
// parent passed the object checks of fsck.go: it is recorded only then.
//
// Entry: "gpmf" 3 | key (20) | candidate id (20) | candidate tree (20) |
// first parent (20) | second parent (20) [| changed paths], under the key:
// the first 20 bytes of SHA-256("gitplus merge fact " + mergetree.Algorithm
// + "\n" + candidate id). Entries of versions 1 (no parents) and 2
// (recorded before the object checks) read as misses. The optional
// trailer, for a target with path owners, holds the files the candidate
// changes against its first parent (changedfacts.go).

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/mergetree"
)

var factMagic = []byte("gpmf\x03")

// maxLearned bounds the merges one push computes for candidate branches
// (the deepest queue takes 32 steps; a pusher naming more branches than
// that gets no more facts, not a slower push).
const maxLearned = 64

// MergeFactKey is the fold-cache key of the merge fact of candidate id.
func MergeFactKey(id plumbing.Hash) plumbing.Hash {
	return derivedKey("gitplus merge fact "+mergetree.Algorithm+"\n", id[:])
}

func encodeFact(c *commit) []byte {
	b := appendEntryHeader(make([]byte, 0, len(factMagic)+100), factMagic, MergeFactKey(c.id))
	b = append(b, c.id[:]...)
	b = append(b, c.tree[:]...)
	for _, p := range c.parents {
		b = append(b, p[:]...)
	}
	return b
}

// decodeFact returns the candidate a fact entry under key records (id,
// tree and its two parents); false when the entry is damaged or not a fact
// under key.
func decodeFact(key plumbing.Hash, b []byte) (*commit, bool) {
	r, ok := openEntry(b, factMagic, key)
	if !ok || len(r.b) < 80 || len(r.b) > 80 && !validTrailer(r.b[80:]) {
		return nil, false
	}
	c := &commit{id: r.hash(), tree: r.hash(), parents: []plumbing.Hash{r.hash(), r.hash()}}
	return c, MergeFactKey(c.id) == key
}

// fact returns the candidate id as its merge fact records it, when the
// cache holds one (looked up once per judgement).
func (j *judge) fact(id plumbing.Hash) (*commit, bool) {
	if j.in.Cache == nil {
		return nil, false
	}
	if c, done := j.facts[id]; done {
		return c, c != nil
	}
	var c *commit
	key := MergeFactKey(id)
	if b, ok := j.in.Cache.Get(key); ok {
		if fc, ok := decodeFact(key, b); ok && fc.id == id {
			c = fc
			j.factChanged(id, b) // changedfacts.go
		}
	}
	if j.facts == nil {
		j.facts = map[plumbing.Hash]*commit{}
	}
	j.facts[id] = c
	return c, c != nil
}

// knownMerge reports whether the cache holds the merge fact of c.
func (j *judge) knownMerge(c *commit) bool {
	f, ok := j.fact(c.id)
	return ok && f.tree == c.tree && len(c.parents) == 2 && f.parents[0] == c.parents[0] && f.parents[1] == c.parents[1]
}

// firstParentReaches reports whether old is reached from newID in at most
// max first-parent steps. It reads through the judgement's commit cache
// (the chain rules walk the same commits next), and through merge facts as
// long as the commits walked came from one (a published chain is read from
// its facts alone; a pull request's commits never consult them). false
// says nothing: an unreadable commit or a longer path leaves the answer to
// isAncestor.
func (j *judge) firstParentReaches(newID, old plumbing.Hash, max int) bool {
	id, facts := newID, true
	for i := 0; i <= max; i++ {
		if id == old {
			return true
		}
		c, err := j.walked(id, facts)
		if err != nil || len(c.parents) == 0 {
			return false
		}
		facts = c.raw == nil // built from a fact
		id = c.parents[0]
	}
	return false
}

// walked is commit id as a first-parent walk from a candidate reads it
// (firstParentReaches, checkObjects): from its merge fact while
// every commit walked so far came from one (facts), else read.
func (j *judge) walked(id plumbing.Hash, facts bool) (*commit, error) {
	if facts {
		return j.candidate(id)
	}
	return j.commits.get(id)
}

// candidate returns commit id for a candidate chain's walk: from its merge
// fact when there is one (nothing read), else from the object store.
func (j *judge) candidate(id plumbing.Hash) (*commit, error) {
	if c, ok := j.commits.m[id]; ok {
		return c, nil
	}
	if f, ok := j.fact(id); ok {
		c := &commit{id: f.id, tree: f.tree, parents: f.parents}
		j.commits.m[id] = c
		return c, nil
	}
	return j.commits.get(id)
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
		j.forget(SquashFactKey(u.Old)) // squashfacts.go
	}
	b, ok := j.rules.For(target)
	if !ok || !b.RequirePullRequest || !b.QueueCandidates || b.RequireProvenance || u.New.IsZero() || j.learned >= maxLearned {
		return
	}
	c, err := j.commits.get(u.New)
	if err == nil && b.Squash() {
		j.learnSquash(target, c) // squashfacts.go
		return
	}
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
	if j.mergeStep(0, c.parents[0], c, j.merges) == nil && j.checkCandidate(c) == nil {
		j.in.Cache.Put(MergeFactKey(c.id), j.withChanged(encodeFact(c), len(b.Owners) > 0, c)) // changedfacts.go
	}
}
