package policy

// Objects a protected-branch update introduces must be objects git reads
// as git+ reads them, and that git's fsck accepts (docs/objects.md): every
// commit the update introduces (git rev-list new ^old) and every tree
// object reachable from them that the branch did not already hold. A fault
// is refused with CodeBadObject, naming the object and the fault.
//
// Cost follows the change, not the tree size: each introduced commit's
// tree is walked against its first parent's tree, reading only subtrees
// whose id differs there. A tree the first parent holds at the same path
// is on the branch already, or is checked with that parent.
//
// A candidate chain's steps are covered by their merge facts (facts.go):
// a fact is recorded only after the same check passed on everything the
// candidate introduces over its first parent, so a warm landing reads no
// objects for it either.

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/receive/gitobj"
)

// CodeBadObject refuses an update that introduces a commit or tree git
// would read differently from git+, or that git fsck refuses.
const CodeBadObject = "bad-object"

// checkObjects checks every commit and tree the update old → new
// introduces. When old is reached from new by first parents (a candidate
// chain, a linear history) each step is checked against its own first
// parent, and steps with a merge fact are skipped; otherwise the whole of
// git rev-list new ^old is checked.
func (j *judge) checkObjects(newID, oldID plumbing.Hash) error {
	ck := &objChecker{j: j, trees: map[plumbing.Hash]bool{}}
	if oldID.IsZero() || !j.firstParentReaches(newID, oldID, firstParentProbe) {
		return ck.introduced(newID, oldID)
	}
	// Facts are consulted only as long as the commits walked came from
	// one, as in firstParentReaches: a pull request's commits never look.
	facts := true
	for id := newID; id != oldID; {
		c, err := j.walked(id, facts)
		if err != nil {
			return err
		}
		facts = c.raw == nil // built from a merge fact: covered by it
		if !facts {
			if err := ck.introduced(id, c.parents[0]); err != nil {
				return err
			}
		}
		id = c.parents[0]
	}
	return nil
}

// objects checks, for the audit (git+ verify), what landing c introduced
// over its first parent, as the hook checks it.
func (a *auditor) objects(c *commit) error {
	if a.objs == nil {
		a.objs = &objChecker{j: a.j, trees: map[plumbing.Hash]bool{}}
	}
	var p plumbing.Hash
	if len(c.parents) > 0 {
		p = c.parents[0]
	}
	return a.objs.introduced(c.id, p)
}

// checkCandidate checks what candidate c introduces over its first parent:
// what its merge fact then vouches for.
func (j *judge) checkCandidate(c *commit) error {
	ck := &objChecker{j: j, trees: map[plumbing.Hash]bool{}}
	return ck.introduced(c.id, c.parents[0])
}

// objChecker remembers the trees already checked in one judgement step.
type objChecker struct {
	j     *judge
	trees map[plumbing.Hash]bool
}

// introduced checks the commits reachable from newID and not from oldID.
func (ck *objChecker) introduced(newID, oldID plumbing.Hash) error {
	cs := ck.j.commits
	var list []*commit
	if c, err := cs.get(newID); err != nil {
		return err
	} else if len(c.parents) == 1 && c.parents[0] == oldID {
		list = []*commit{c} // the common case: one commit on top of old
	} else if list, err = cs.introduced(newID, oldID); err != nil {
		return err
	}
	for _, c := range list {
		base := plumbing.ZeroHash
		if len(c.parents) > 0 {
			p, ok := cs.m[c.parents[0]] // read already, or built from a fact
			var err error
			if !ok {
				p, err = cs.get(c.parents[0])
			}
			if err != nil {
				return err
			}
			base = p.tree
		}
		if err := ck.tree(c, c.tree, base, ""); err != nil {
			return err
		}
	}
	return nil
}

// tree checks tree id (at path in commit c's tree) and every subtree of it
// that base, the first parent's tree at the same path, does not hold.
func (ck *objChecker) tree(c *commit, id, base plumbing.Hash, path string) error {
	if id == base || ck.trees[id] {
		return nil
	}
	es, err := ck.read(c, id, path)
	if err != nil {
		return err
	}
	var bases []gitobj.Entry
	if !base.IsZero() {
		if t, raw, err := ck.j.commits.o.ReadObject(base); err == nil && t == plumbing.TreeObject {
			bases, _ = gitobj.ParseTree(raw) // a tree it cannot read holds nothing
		}
	}
	for _, e := range es {
		if e.Mode != gitobj.ModeTree {
			continue
		}
		var b plumbing.Hash
		if i, ok := findTree(bases, e.Name); ok {
			b = bases[i].ID
		}
		if err := ck.tree(c, e.ID, b, path+e.Name+"/"); err != nil {
			return err
		}
	}
	ck.trees[id] = true
	return nil
}

func (ck *objChecker) read(c *commit, id plumbing.Hash, path string) ([]gitobj.Entry, error) {
	t, raw, err := ck.j.commits.o.ReadObject(id)
	if err != nil {
		return nil, objErr(id, err)
	}
	where := "the root tree"
	if path != "" {
		where = fmt.Sprintf("tree %q", path)
	}
	if t != plumbing.TreeObject {
		return nil, refuse(CodeBadObject, "%s of commit %s, %s, is a %s, not a tree; git cannot check it out: rewrite the commit", where, short(c.id), id, t)
	}
	es, err := gitobj.ParseTree(raw)
	if err != nil {
		return nil, badObject(err, "%s %s of commit %s: %v; git fsck refuses it or git reads it differently: rewrite the commit without it", where, id, short(c.id), err)
	}
	return es, nil
}

// findTree returns the index of the tree entry called name in es (in git
// order).
func findTree(es []gitobj.Entry, name string) (int, bool) {
	lo, hi := 0, len(es)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if gitobj.EntryLess(es[m].Name, es[m].Mode, name, gitobj.ModeTree) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(es) && es[lo].Name == name && es[lo].Mode == gitobj.ModeTree {
		return lo, true
	}
	return 0, false
}

// badObject is a CodeBadObject refusal that wraps err.
func badObject(err error, format string, a ...any) error {
	r := refuse(CodeBadObject, format, a...)
	r.err = err
	return r
}

// isBadObject reports whether err is a malformed commit or tree.
func isBadObject(err error) bool {
	return errors.Is(err, gitobj.ErrMalformedCommit) || errors.Is(err, gitobj.ErrMalformedTree)
}
