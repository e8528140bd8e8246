package mergetree

import (
	"bytes"
	"container/heap"
	"fmt"
	"sort"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

// commit is the part of a commit object the merge needs.
type commit struct {
	id      plumbing.Hash
	tree    plumbing.Hash
	parents []plumbing.Hash
	time    int64 // committer time, seconds since the epoch
}

// parseCommit reads the header of a raw commit: tree, parents and the
// committer time. Anything else (signatures, encoding, message) is ignored.
func parseCommit(id plumbing.Hash, data []byte) (*commit, error) {
	c := &commit{id: id}
	haveTree, haveCommitter := false, false
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		var line []byte
		if nl < 0 {
			line, data = data, nil
		} else {
			line, data = data[:nl], data[nl+1:]
		}
		if len(line) == 0 {
			break // end of header
		}
		switch {
		case bytes.HasPrefix(line, []byte("tree ")):
			h, ok := parseHex(line[5:])
			if !ok || haveTree {
				return nil, fmt.Errorf("%w: commit %s: bad tree line", ErrCorrupt, id)
			}
			c.tree, haveTree = h, true
		case bytes.HasPrefix(line, []byte("parent ")):
			h, ok := parseHex(line[7:])
			if !ok {
				return nil, fmt.Errorf("%w: commit %s: bad parent line", ErrCorrupt, id)
			}
			c.parents = append(c.parents, h)
		case bytes.HasPrefix(line, []byte("committer ")):
			// "committer Name <email> <time> <tz>"
			gt := bytes.LastIndexByte(line, '>')
			if gt < 0 {
				return nil, fmt.Errorf("%w: commit %s: bad committer line", ErrCorrupt, id)
			}
			f := bytes.Fields(line[gt+1:])
			if len(f) >= 1 {
				t, err := strconv.ParseInt(string(f[0]), 10, 64)
				if err == nil {
					c.time = t
				}
			}
			haveCommitter = true
		}
	}
	if !haveTree {
		return nil, fmt.Errorf("%w: commit %s has no tree", ErrCorrupt, id)
	}
	_ = haveCommitter // a missing committer dates the commit at 0, as git does
	return c, nil
}

func parseHex(b []byte) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(b) != 40 {
		return h, false
	}
	for i := 0; i < 20; i++ {
		hi, ok1 := unhex(b[2*i])
		lo, ok2 := unhex(b[2*i+1])
		if !ok1 || !ok2 {
			return h, false
		}
		h[i] = hi<<4 | lo
	}
	return h, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// commits caches parsed commits for one operation.
type commits struct {
	s Store
	m map[plumbing.Hash]*commit
}

func newCommits(s Store) *commits { return &commits{s: s, m: map[plumbing.Hash]*commit{}} }

func (cs *commits) get(h plumbing.Hash) (*commit, error) {
	if c, ok := cs.m[h]; ok {
		return c, nil
	}
	t, data, err := cs.s.ReadObject(h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	if t != plumbing.CommitObject {
		return nil, fmt.Errorf("%w: %s is a %s, not a commit", ErrCorrupt, h, t)
	}
	c, err := parseCommit(h, data)
	if err != nil {
		return nil, err
	}
	cs.m[h] = c
	return c, nil
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

type walkQueue []walkItem

func (q walkQueue) Len() int { return len(q) }
func (q walkQueue) Less(i, j int) bool {
	if q[i].c.time != q[j].c.time {
		return q[i].c.time > q[j].c.time
	}
	return q[i].seq < q[j].seq
}
func (q walkQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *walkQueue) Push(x any)   { *q = append(*q, x.(walkItem)) }
func (q *walkQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// painter paints commits reachable from one side (P1) and the other (P2),
// newest first, and stops as soon as every queued commit is known to be
// below a common ancestor (stale). It touches only the commits between the
// tips and their best common ancestors (plus the dating frontier), not the
// history below.
type painter struct {
	cs       *commits
	flags    map[plumbing.Hash]uint8
	inQueue  map[plumbing.Hash]int
	q        walkQueue
	seq      int
	nonStale int
}

func (p *painter) push(c *commit) {
	p.seq++
	heap.Push(&p.q, walkItem{c: c, seq: p.seq})
	p.inQueue[c.id]++
	if p.flags[c.id]&flagStale == 0 {
		p.nonStale++
	}
}

func (p *painter) addFlags(id plumbing.Hash, f uint8) {
	old := p.flags[id]
	if old&flagStale == 0 && f&flagStale != 0 {
		p.nonStale -= p.inQueue[id]
	}
	p.flags[id] = old | f
}

// paint returns the common ancestors found from one against twos, after
// dropping those reachable from another result; p.flags holds the paint.
func paint(cs *commits, one *commit, twos []*commit) ([]*commit, map[plumbing.Hash]uint8, error) {
	p := &painter{cs: cs, flags: map[plumbing.Hash]uint8{}, inQueue: map[plumbing.Hash]int{}}
	p.addFlags(one.id, flagP1)
	p.push(one)
	for _, t := range twos {
		if t.id == one.id {
			return []*commit{one}, p.flags, nil
		}
		p.addFlags(t.id, flagP2)
		p.push(t)
	}
	var results []*commit
	for p.nonStale > 0 {
		it := heap.Pop(&p.q).(walkItem)
		c := it.c
		p.inQueue[c.id]--
		if p.flags[c.id]&flagStale == 0 {
			p.nonStale--
		}
		f := p.flags[c.id] & (flagP1 | flagP2 | flagStale)
		if f == flagP1|flagP2 {
			if p.flags[c.id]&flagResult == 0 {
				p.addFlags(c.id, flagResult)
				results = append(results, c)
			}
			f |= flagStale
		}
		for _, ph := range c.parents {
			if p.flags[ph]&f == f {
				continue
			}
			pc, err := cs.get(ph)
			if err != nil {
				return nil, nil, err
			}
			p.addFlags(ph, f)
			p.push(pc)
		}
	}
	var out []*commit
	for _, c := range results {
		if p.flags[c.id]&flagStale == 0 {
			out = append(out, c)
		}
	}
	return out, p.flags, nil
}

// MergeBases returns the best common ancestors of commits a and b, as
// `git merge-base --all` does, ordered newest committer date first, ties by
// smallest id. Commits with no common ancestor give ErrUnrelated.
func MergeBases(s Store, a, b plumbing.Hash) ([]plumbing.Hash, error) {
	return newCommits(s).mergeBases(a, b)
}

// MergeBase returns the one merge base mergeTree uses (DESIGN.md §7): of
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
	cands, _, err := paint(cs, ca, []*commit{cb})
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
		_, flags, err := paint(cs, cands[i], others)
		if err != nil {
			return nil, err
		}
		if flags[cands[i].id]&flagP2 != 0 {
			redundant[i] = true
		}
		for k, o := range others {
			if flags[o.id]&flagP1 != 0 {
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
