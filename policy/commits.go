package policy

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/mergetree"
)

// commit is the part of a commit object the judgement reads.
type commit struct {
	id      plumbing.Hash
	tree    plumbing.Hash
	parents []plumbing.Hash
	time    int64 // committer time; orders walks only, never trusted
	raw     []byte
}

// commits reads and caches commits for one Judge call.
type commits struct {
	o Objects
	m map[plumbing.Hash]*commit
}

func newCommits(o Objects) *commits { return &commits{o: o, m: map[plumbing.Hash]*commit{}} }

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

func parseCommit(id plumbing.Hash, raw []byte) (*commit, error) {
	c := &commit{id: id, raw: raw}
	rest := raw
	for len(rest) > 0 {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			break
		}
		line := rest[:nl]
		rest = rest[nl+1:]
		if len(line) == 0 {
			break // end of headers
		}
		k, v, _ := bytes.Cut(line, []byte{' '})
		switch string(k) {
		case "tree":
			h, ok := hexHash(v)
			if !ok {
				return nil, refuse(CodeBadUpdate, "commit %s has a malformed tree header", id)
			}
			c.tree = h
		case "parent":
			h, ok := hexHash(v)
			if !ok {
				return nil, refuse(CodeBadUpdate, "commit %s has a malformed parent header", id)
			}
			c.parents = append(c.parents, h)
		case "committer":
			// "<name> <email> <unix> <tz>"
			if gt := bytes.LastIndexByte(v, '>'); gt >= 0 {
				f := bytes.Fields(v[gt+1:])
				if len(f) > 0 {
					c.time, _ = strconv.ParseInt(string(f[0]), 10, 64)
				}
			}
		}
	}
	if c.tree.IsZero() {
		return nil, refuse(CodeBadUpdate, "commit %s has no tree header", id)
	}
	return c, nil
}

func hexHash(b []byte) (plumbing.Hash, bool) {
	if len(b) != 40 {
		return plumbing.ZeroHash, false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return plumbing.ZeroHash, false
		}
	}
	return plumbing.NewHash(string(b)), true
}

// isAncestor reports whether a is an ancestor of (or equal to) b, exactly:
// a is then the one best common ancestor of a and b.
func (cs *commits) isAncestor(a, b plumbing.Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	bases, err := mergetree.MergeBases(cs.o, a, b)
	if errors.Is(err, mergetree.ErrUnrelated) {
		return false, nil
	}
	if err != nil {
		return false, objErr(plumbing.ZeroHash, err)
	}
	return len(bases) == 1 && bases[0] == a, nil
}

// Painting flags for introduced.
const (
	flagNew = 1 << iota
	flagOld
)

type pq []*commit

func (q pq) Len() int { return len(q) }
func (q pq) Less(i, j int) bool {
	if q[i].time != q[j].time {
		return q[i].time > q[j].time
	}
	return bytes.Compare(q[i].id[:], q[j].id[:]) < 0
}
func (q pq) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pq) Push(x any)   { *q = append(*q, x.(*commit)) }
func (q *pq) Pop() any     { o := *q; c := o[len(o)-1]; *q = o[:len(o)-1]; return c }

// introduced returns the commits reachable from newID and not from oldID
// (git rev-list new ^old), newest first. It paints both sides in committer
// date order and stops when only commits reachable from old remain queued.
// With skewed dates the result can only be a superset of the true set (a
// commit already on the branch judged as introduced), never a subset: a
// refusal, never a false acceptance.
func (cs *commits) introduced(newID, oldID plumbing.Hash) ([]*commit, error) {
	flags := map[plumbing.Hash]int{}
	q := &pq{}
	mark := func(id plumbing.Hash, f int) error {
		nf := flags[id] | f
		if nf == flags[id] {
			return nil
		}
		flags[id] = nf
		c, err := cs.get(id)
		if err != nil {
			return err
		}
		heap.Push(q, c)
		return nil
	}
	if err := mark(newID, flagNew); err != nil {
		return nil, err
	}
	if !oldID.IsZero() {
		if err := mark(oldID, flagOld); err != nil {
			return nil, err
		}
	}
	popped := map[plumbing.Hash]bool{}
	for q.Len() > 0 {
		interesting := false
		for _, c := range *q {
			if flags[c.id]&flagOld == 0 {
				interesting = true
				break
			}
		}
		if !interesting {
			break
		}
		c := heap.Pop(q).(*commit)
		popped[c.id] = true
		for _, p := range c.parents {
			if err := mark(p, flags[c.id]); err != nil {
				return nil, err
			}
		}
	}
	var out []*commit
	for id := range popped {
		if flags[id] == flagNew {
			out = append(out, cs.m[id])
		}
	}
	sort.Slice(out, func(i, j int) bool { return pq(out).Less(i, j) })
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
