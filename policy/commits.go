package policy

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/receive/gitobj"
)

// commit is the part of a commit object the judgement reads.
type commit struct {
	id      plumbing.Hash
	tree    plumbing.Hash
	parents []plumbing.Hash
	time    int64  // committer time; orders walks only, never trusted
	raw     []byte // nil when built from a merge fact: see rawOf
}

// commits reads and caches commits for one Judge call.
type commits struct {
	o      Objects
	m      map[plumbing.Hash]*commit
	merges *mergetree.Cache // shared with the judgement's merges (isAncestor)
}

func newCommits(o Objects, merges *mergetree.Cache) *commits {
	return &commits{o: o, m: map[plumbing.Hash]*commit{}, merges: merges}
}

// get reads commit id. A missing object is a refusal naming it.
func (cs *commits) get(id plumbing.Hash) (*commit, error) {
	if c, ok := cs.m[id]; ok {
		return c, nil
	}
	t, raw, err := cs.o.ReadObject(id)
	if err != nil {
		return nil, objErr(id, err)
	}
	if t != plumbing.CommitObject {
		return nil, refuse(CodeBadUpdate, "%s is a %s, not a commit", id, t)
	}
	c, err := parseCommit(id, raw)
	if err != nil {
		return nil, err
	}
	cs.m[id] = c
	return c, nil
}

// rawOf returns c's whole object, reading it when c was built from a merge
// fact (facts.go).
func (cs *commits) rawOf(c *commit) ([]byte, error) {
	if c.raw != nil {
		return c.raw, nil
	}
	t, raw, err := cs.o.ReadObject(c.id)
	if err != nil {
		return nil, objErr(c.id, err)
	}
	if t != plumbing.CommitObject {
		return nil, refuse(CodeBadUpdate, "%s is a %s, not a commit", c.id, t)
	}
	c.raw = raw
	return raw, nil
}

// parseCommit reads a commit with gitobj.ParseCommit: anything git would
// read differently, or git fsck refuses, is a CodeBadObject refusal
// (docs/objects.md).
func parseCommit(id plumbing.Hash, raw []byte) (*commit, error) {
	gc, err := gitobj.ParseCommit(raw)
	if err != nil {
		return nil, badObject(err, "commit %s: %v; git fsck refuses it or git reads it differently: rewrite it with git commit", id, err)
	}
	return &commit{id: id, tree: gc.Tree, parents: gc.Parents, time: gc.CommitTime, raw: raw}, nil
}

// isAncestor reports whether a is an ancestor of (or equal to) b, exactly:
// a is then the one best common ancestor of a and b.
func (cs *commits) isAncestor(a, b plumbing.Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	bases, err := mergetree.MergeBasesCached(cs.o, a, b, cs.merges)
	if errors.Is(err, mergetree.ErrUnrelated) {
		return false, nil
	}
	if err != nil {
		return false, objErr(plumbing.ZeroHash, err)
	}
	return len(bases) == 1 && bases[0] == a, nil
}

// firstParentProbe bounds the first-parent walk that spares a merge-base
// computation when a push is a plain fast-forward (a candidate chain, a
// pull request's linear commits).
const firstParentProbe = 64

// introduced returns the commits reachable from newID and not from oldID
// (git rev-list new ^old), newest first. It walks from new and stops at
// every commit that is an ancestor of old, testing each exactly (merge base)
// rather than trusting committer dates: a date-ordered walk can take a
// commit already on the branch for a new one when dates are equal or skewed.
// A zero oldID means every commit reachable from new.
func (cs *commits) introduced(newID, oldID plumbing.Hash) ([]*commit, error) {
	seen := map[plumbing.Hash]bool{newID: true}
	queue := []plumbing.Hash{newID}
	var out []*commit
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if !oldID.IsZero() {
			old, err := cs.isAncestor(id, oldID)
			if err != nil {
				return nil, err
			}
			if old {
				continue
			}
		}
		c, err := cs.get(id)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
		for _, p := range c.parents {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].time != out[j].time {
			return out[i].time > out[j].time
		}
		return bytes.Compare(out[i].id[:], out[j].id[:]) < 0
	})
	return out, nil
}

// isMissing reports whether err says an object could not be read.
func isMissing(err error) bool {
	return errors.Is(err, mergetree.ErrMissingObject) || errors.Is(err, hubrefs.ErrMissing)
}

// objErr turns a read error into a refusal: missing-object when the object
// is missing, else the error as it is (a refusal already, or unexpected).
func objErr(id plumbing.Hash, err error) error {
	var r *refusal
	if errors.As(err, &r) {
		return err
	}
	if isBadObject(err) {
		return &refusal{Code: CodeBadObject, Reason: fmt.Sprintf("%v; git fsck refuses it or git reads it differently: rewrite the commits that hold it", err), err: err}
	}
	if isMissing(err) {
		if id.IsZero() {
			return &refusal{Code: CodeMissingObject, Reason: fmt.Sprintf("%v; fetch the missing objects or repair the repository", err), err: err}
		}
		return &refusal{Code: CodeMissingObject, Reason: fmt.Sprintf("object %s cannot be read (%v); fetch it or repair the repository", id, err), err: err}
	}
	return &refusal{Code: CodeMissingObject, Reason: fmt.Sprintf("reading %s: %v", id, err), err: err}
}

// refusal is an error carrying a verdict's code and reason.
type refusal struct {
	Code, Reason string
	err          error
}

func (r *refusal) Error() string { return "[" + r.Code + "] " + r.Reason }
func (r *refusal) Unwrap() error { return r.err }

func refuse(code, format string, a ...any) *refusal {
	return &refusal{Code: code, Reason: fmt.Sprintf(format, a...)}
}
