package mergetree

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/receive/gitobj"
)

// commit is the part of a commit object the merge needs.
type commit struct {
	id      plumbing.Hash
	tree    plumbing.Hash
	parents []plumbing.Hash
	time    int64 // committer time, seconds since the epoch

	pp      []*commit // parents resolved so far (nil until the first)
	walk    uint32    // the walk (commits.epoch) flags and inQueue belong to
	flags   uint8
	inQueue int32 // times queued in that walk and not yet popped
}

// parseCommit reads a raw commit with gitobj.ParseCommit, which refuses
// every commit git would read differently or git fsck refuses (see
// docs/objects.md), and keeps tree, parents and the committer time.
func parseCommit(id plumbing.Hash, data []byte, headerOnly bool) (*commit, error) {
	parse := gitobj.ParseCommit
	if headerOnly {
		parse = gitobj.ParseCommitHeader
	}
	gc, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: commit %s: %w", ErrCorrupt, id, err)
	}
	return &commit{id: id, tree: gc.Tree, parents: gc.Parents, time: gc.CommitTime}, nil
}

// commits caches parsed commits for one operation (or, through a Cache,
// for many). epoch numbers the walks over them: a commit's walk state is
// valid only while its walk field equals the current epoch, so a walk
// starts clean without clearing anything.
type commits struct {
	s     Store
	m     map[plumbing.Hash]*commit
	epoch *uint32
}

func newCommits(s Store) *commits {
	return &commits{s: s, m: map[plumbing.Hash]*commit{}, epoch: new(uint32)}
}

func (cs *commits) get(h plumbing.Hash) (*commit, error) {
	if c, ok := cs.m[h]; ok {
		return c, nil
	}
	var (
		t    plumbing.ObjectType
		data []byte
		err  error
	)
	headerOnly := false
	if hr, ok := cs.s.(HeaderReader); ok {
		t, data, err = hr.ReadObjectHeader(h)
		headerOnly = true
	}
	if data == nil || err != nil {
		t, data, err = cs.s.ReadObject(h)
		headerOnly = false
	}
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	if t != plumbing.CommitObject {
		return nil, fmt.Errorf("%w: %s is a %s, not a commit", ErrCorrupt, h, t)
	}
	c, err := parseCommit(h, data, headerOnly)
	if err != nil {
		return nil, err
	}
	cs.m[h] = c
	return c, nil
}

// parent returns c's i-th parent, remembering the pointer.
func (cs *commits) parent(c *commit, i int) (*commit, error) {
	if c.pp == nil {
		c.pp = make([]*commit, len(c.parents))
	}
	if pc := c.pp[i]; pc != nil {
		return pc, nil
	}
	pc, err := cs.get(c.parents[i])
	if err != nil {
		return nil, err
	}
	c.pp[i] = pc
	return pc, nil
}

const (
	flagP1 uint8 = 1 << iota
	flagP2
	flagStale
	flagResult
)

// walkItem is a queue entry: newest committer time first, then the order of
// insertion (a stable queue, like git's).
type walkItem struct {
	c   *commit
	seq int
}

func (x walkItem) before(y walkItem) bool {
	if x.c.time != y.c.time {
		return x.c.time > y.c.time
	}
	return x.seq < y.seq
}

// walkQueue is a binary heap of walk items.
type walkQueue []walkItem

func (q *walkQueue) push(it walkItem) {
	*q = append(*q, it)
	h := *q
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *walkQueue) pop() walkItem {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = walkItem{}
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].before(h[l]) {
			m = r
		}
		if !h[m].before(h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// painter paints commits reachable from one side (P1) and the other (P2),
// newest first, and stops as soon as every queued commit is known to be
// below a common ancestor (stale). It touches only the commits between the
// tips and their best common ancestors (plus the dating frontier), not the
// history below. The paint lives on the commits (see commits.epoch).
type painter struct {
	cs       *commits
	epoch    uint32
	q        walkQueue
	seq      int
	nonStale int
}

// state returns c's walk state, resetting it when it belongs to an older
// walk.
func (p *painter) state(c *commit) *commit {
	if c.walk != p.epoch {
		c.walk, c.flags, c.inQueue = p.epoch, 0, 0
	}
	return c
}

func (p *painter) push(c *commit) {
	p.seq++
	p.q.push(walkItem{c: c, seq: p.seq})
	p.state(c).inQueue++
	if c.flags&flagStale == 0 {
		p.nonStale++
	}
}

func (p *painter) addFlags(c *commit, f uint8) {
	p.state(c)
	if c.flags&flagStale == 0 && f&flagStale != 0 {
		p.nonStale -= int(c.inQueue)
	}
	c.flags |= f
}

// paintFlags returns the paint the last walk left on c.
func (cs *commits) paintFlags(c *commit) uint8 {
	if c.walk != *cs.epoch {
		return 0
	}
	return c.flags
}

// paint returns the common ancestors found from one against twos, after
// dropping those reachable from another result; the paint stays on the
// commits (paintFlags) until the next walk.
func paint(cs *commits, one *commit, twos []*commit) ([]*commit, error) {
	*cs.epoch++
	if *cs.epoch == 0 { // wrapped: forget every old walk
		for _, c := range cs.m {
			c.walk = 0
		}
		*cs.epoch = 1
	}
	p := &painter{cs: cs, epoch: *cs.epoch, q: make(walkQueue, 0, 64)}
	p.addFlags(one, flagP1)
	p.push(one)
	for _, t := range twos {
		if t.id == one.id {
			return []*commit{one}, nil
		}
		p.addFlags(t, flagP2)
		p.push(t)
	}
	var results []*commit
	for p.nonStale > 0 {
		c := p.q.pop().c
		c.inQueue--
		if c.flags&flagStale == 0 {
			p.nonStale--
		}
		f := c.flags & (flagP1 | flagP2 | flagStale)
		if f == flagP1|flagP2 {
			if c.flags&flagResult == 0 {
				c.flags |= flagResult
				results = append(results, c)
			}
			f |= flagStale
		}
		for i := range c.parents {
			pc, err := cs.parent(c, i)
			if err != nil {
				return nil, err
			}
			if p.state(pc).flags&f == f {
				continue
			}
			p.addFlags(pc, f)
			p.push(pc)
		}
	}
	var out []*commit
	for _, c := range results {
		if c.flags&flagStale == 0 {
			out = append(out, c)
		}
	}
	return out, nil
}

// MergeBases returns the best common ancestors of commits a and b, as
// `git merge-base --all` does, ordered newest committer date first, ties by
// smallest id. Commits with no common ancestor give ErrUnrelated.
func MergeBases(s Store, a, b plumbing.Hash) ([]plumbing.Hash, error) {
	return newCommits(s).mergeBases(a, b)
}

// MergeBasesCached is MergeBases keeping the commits it reads in c, which
// later merges given the same cache (Options.Cache) reuse. c is not safe
// for concurrent use.
func MergeBasesCached(s Store, a, b plumbing.Hash, c *Cache) ([]plumbing.Hash, error) {
	c = Options{Cache: c}.cache()
	return (&commits{s: s, m: c.commits, epoch: &c.epoch}).mergeBases(a, b)
}

// MergeBase returns the one merge base mergeTree uses (docs/merge.md): of
// the best common ancestors, the one with the newest committer date, then
// the smallest id. No virtual ancestor is built from several bases.
func MergeBase(s Store, a, b plumbing.Hash) (plumbing.Hash, error) {
	bs, err := MergeBases(s, a, b)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return bs[0], nil
}

func (cs *commits) mergeBases(a, b plumbing.Hash) ([]plumbing.Hash, error) {
	ca, err := cs.get(a)
	if err != nil {
		return nil, err
	}
	cb, err := cs.get(b)
	if err != nil {
		return nil, err
	}
	cands, err := paint(cs, ca, []*commit{cb})
	if err != nil {
		return nil, err
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("%w: %s and %s have no common ancestor", ErrUnrelated, a, b)
	}
	if len(cands) > 1 {
		if cands, err = removeRedundant(cs, cands); err != nil {
			return nil, err
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].time != cands[j].time {
			return cands[i].time > cands[j].time
		}
		return bytes.Compare(cands[i].id[:], cands[j].id[:]) < 0
	})
	out := make([]plumbing.Hash, len(cands))
	for i, c := range cands {
		out[i] = c.id
	}
	return out, nil
}

// removeRedundant drops every candidate that is an ancestor of another.
func removeRedundant(cs *commits, cands []*commit) ([]*commit, error) {
	redundant := make([]bool, len(cands))
	for i := range cands {
		if redundant[i] {
			continue
		}
		var others []*commit
		var idx []int
		for j := range cands {
			if j != i && !redundant[j] {
				others = append(others, cands[j])
				idx = append(idx, j)
			}
		}
		if len(others) == 0 {
			break
		}
		if _, err := paint(cs, cands[i], others); err != nil {
			return nil, err
		}
		if cs.paintFlags(cands[i])&flagP2 != 0 {
			redundant[i] = true
		}
		for k, o := range others {
			if cs.paintFlags(o)&flagP1 != 0 {
				redundant[idx[k]] = true
			}
		}
	}
	var out []*commit
	for i, c := range cands {
		if !redundant[i] {
			out = append(out, c)
		}
	}
	return out, nil
}
