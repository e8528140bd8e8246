package policy

import (
	"errors"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/mergetree"
)

// Path owners (docs/trust.md, "Path owners"): the rule is
// pr.State.OwnersAt; this file gives it the files a landing changes, read
// from the object store, and turns an unmet entry into the refusal
// CodeOwners. The files a landing changes are its tree diff against the
// branch's previous tip: for a candidate step that is its first parent
// (the step below it), for a direct landing the tip it fast-forwards (in
// the audit, the newest landing the landed head brings: auditfrom.go). The
// hook, the planner (queue run, through ChangedFiles) and verify compute
// the same set, with no merge base.

// CodeOwners: an owners entry the landing triggers lacks its approvals.
const CodeOwners = "owners"

func init() {
	// An owners refusal, like not-approved, is one a pull request the
	// index does not know could turn into an acceptance.
	dependsOnPRs[CodeOwners] = true
}

// ChangedFiles returns the files that differ between the trees of commits
// from and to (from zero: every file of to), what an owners entry is
// matched against.
func ChangedFiles(objs mergetree.Store, from, to plumbing.Hash) ([]string, error) {
	var ta plumbing.Hash
	if !from.IsZero() {
		t, err := commitTree(objs, from)
		if err != nil {
			return nil, err
		}
		ta = t
	}
	tb, err := commitTree(objs, to)
	if err != nil {
		return nil, err
	}
	return mergetree.ChangedPaths(objs, ta, tb, nil)
}

// commitTree reads the tree id of commit id.
func commitTree(objs mergetree.Store, id plumbing.Hash) (plumbing.Hash, error) {
	typ, data, err := objs.ReadObject(id)
	if err != nil {
		return plumbing.ZeroHash, objErr(id, err)
	}
	if typ != plumbing.CommitObject || len(data) < 45 || string(data[:5]) != "tree " {
		return plumbing.ZeroHash, objErr(id, errors.New("not a commit with a tree"))
	}
	return plumbing.NewHash(string(data[5:45])), nil
}

// changedFn computes the changed files of a landing once, when first asked.
type changedFn func() ([]string, error)

// lazyChanged is the changed files between commit from (zero: none) and
// commit to, each given with its tree when the caller knows it (zero:
// read from the commit), computed with decoded trees kept in trees (nil:
// none).
func lazyChanged(objs mergetree.Store, trees *mergetree.Cache, from, fromTree, to, toTree plumbing.Hash) changedFn {
	var (
		done  bool
		paths []string
		err   error
	)
	return func() ([]string, error) {
		if done {
			return paths, err
		}
		done = true
		if fromTree.IsZero() && !from.IsZero() {
			if fromTree, err = commitTree(objs, from); err != nil {
				return nil, err
			}
		}
		if toTree.IsZero() {
			if toTree, err = commitTree(objs, to); err != nil {
				return nil, err
			}
		}
		paths, err = mergetree.ChangedPaths(objs, fromTree, toTree, trees)
		return paths, err
	}
}

// owners refuses unless every owners entry of b the landing triggers is
// met for st at rev (pr.State.OwnersAt, the one rule). changed is read only
// when b has owners; nil changed judges nothing (the audit judges owners
// once it knows where a landing starts).
func owners(st *pr.State, b trust.Branch, rev string, changed changedFn) error {
	if len(b.Owners) == 0 || changed == nil {
		return nil
	}
	paths, err := changed()
	if err != nil {
		return err
	}
	unmet := pr.OwnersUnmet(st.OwnersAt(b, rev, paths))
	if len(unmet) == 0 {
		return nil
	}
	parts := make([]string, len(unmet))
	for i, n := range unmet {
		parts[i] = n.String()
	}
	return refuse(CodeOwners, "pull request %s lacks path owners' approvals of %s: %s; ask them to git+ pr review %s --approve", st.ID, rev[:12], strings.Join(parts, "; "), st.ID)
}

// owners judges, in the audit, the path owners of landing c whose pull
// request state v judged justified (or pending a group end): a candidate
// or squash step by its diff against its first parent, a direct landing by
// its diff from the tip it fast-forwarded, as the hook judged it
// (auditfrom.go: the newest landing it brings, not its fork point when its
// head merged the branch in). A direct landing whose owners refuse is
// justified by a bypass that names it (landDirect's rule).
func (a *auditor) owners(c *commit, v stateVerdict, kind string) error {
	o := v.own
	if len(v.b.Owners) == 0 || o.st == nil {
		return nil
	}
	var changed changedFn
	if kind == LandingDirect {
		froms, err := a.directFrom(c) // auditfrom.go
		if err != nil {
			return err
		}
		changed = unionChanged(a.j.in.Objects, a.j.merges, froms, c)
	} else {
		from := c.parents[0]
		var fromTree plumbing.Hash
		if p, err := a.j.commits.get(from); err == nil {
			fromTree = p.tree
		}
		changed = lazyChanged(a.j.in.Objects, a.j.merges, from, fromTree, c.id, c.tree)
	}
	err := owners(o.st, v.b, o.rev, changed)
	var r *refusal
	if err != nil && kind == LandingDirect && errors.As(err, &r) && o.bypass != nil {
		return &bypassed{bp: *o.bypass}
	}
	return err
}

// unionChanged is the files c changes against any of froms (one, but for a
// history whose newest landing the audit cannot tell apart: auditfrom.go).
func unionChanged(objs mergetree.Store, trees *mergetree.Cache, froms []plumbing.Hash, c *commit) changedFn {
	fns := make([]changedFn, len(froms))
	for i, f := range froms {
		fns[i] = lazyChanged(objs, trees, f, plumbing.ZeroHash, c.id, c.tree)
	}
	if len(fns) == 1 {
		return fns[0]
	}
	return func() ([]string, error) {
		seen := map[string]bool{}
		var out []string
		for _, fn := range fns {
			paths, err := fn()
			if err != nil {
				return nil, err
			}
			for _, p := range paths {
				if !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
		sort.Strings(out)
		return out, nil
	}
}

// ownersInput is what the audit's owners judgement reads of a pull
// request as it stood when judged: its approvals and the bypass of the
// head landed. A copy, since the audit may go on folding the state.
type ownersInput struct {
	st     *pr.State
	rev    string
	bypass *pr.Bypass
}

func snapOwners(st *pr.State, foldErr error, b trust.Branch, rev plumbing.Hash) ownersInput {
	if len(b.Owners) == 0 || st == nil || foldErr != nil {
		return ownersInput{}
	}
	in := ownersInput{rev: rev.String(), st: &pr.State{ID: st.ID, Head: st.Head,
		Approvals: slices.Clone(st.Approvals), ApproverTeams: maps.Clone(st.ApproverTeams)}}
	if bp, ok := st.BypassAt(b, in.rev); ok {
		in.bypass = &bp
	}
	return in
}
