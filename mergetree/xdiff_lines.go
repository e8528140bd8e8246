package mergetree

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// lineSet is the per-merge line table: every file of a merge is split into
// lines once, and every distinct line gets a small integer id (in order of
// first appearance). Everything after this step (diff, compaction, merge)
// compares ids only, never bytes.
//
// A line is its bytes including the terminating '\n'; a last line without
// '\n' is a line of its own, different from the same text with '\n'. CR is
// ordinary content. This is exactly xdiff's record equality with no
// whitespace flags.
type lineSet struct {
	table []int32  // open addressing: id+1, 0 = empty slot
	hash  []uint64 // per id
	rep   [][]byte // per id: the line's bytes (a sub-slice of an input)
	mask  uint64
}

// lineFile is one input split into lines.
type lineFile struct {
	data []byte
	off  []int   // line i is data[off[i]:off[i+1]]; len(off) == n+1
	ids  []int32 // line i has id ids[i]
}

func (f *lineFile) n() int { return len(f.ids) }

// countLines returns the number of lines of b.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

func newLineSet(totalLines int) *lineSet {
	size := 16
	for size < 2*totalLines {
		size <<= 1
	}
	return &lineSet{
		table: make([]int32, size),
		hash:  make([]uint64, 0, totalLines),
		rep:   make([][]byte, 0, totalLines),
		mask:  uint64(size - 1),
	}
}

// nids is the number of distinct lines seen so far.
func (s *lineSet) nids() int { return len(s.rep) }

// split splits data into lines and interns them.
func (s *lineSet) split(data []byte, n int) lineFile {
	f := lineFile{data: data, off: make([]int, 0, n+1), ids: make([]int32, 0, n)}
	pos := 0
	for pos < len(data) {
		end := bytes.IndexByte(data[pos:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += pos + 1
		}
		f.off = append(f.off, pos)
		f.ids = append(f.ids, s.intern(data[pos:end]))
		pos = end
	}
	f.off = append(f.off, len(data))
	return f
}

func (s *lineSet) intern(line []byte) int32 {
	h := hashLine(line)
	i := h & s.mask
	for {
		e := s.table[i]
		if e == 0 {
			id := int32(len(s.rep))
			s.rep = append(s.rep, line)
			s.hash = append(s.hash, h)
			s.table[i] = id + 1
			return id
		}
		id := e - 1
		if s.hash[id] == h && bytes.Equal(s.rep[id], line) {
			return id
		}
		i = (i + 1) & s.mask
	}
}

const (
	hashK1 = 0x9E3779B97F4A7C15
	hashK2 = 0xC2B2AE3D27D4EB4F
)

// hashLine is a simple, fixed (seedless) 64-bit hash of a line; it only
// decides table placement, never the result.
func hashLine(b []byte) uint64 {
	h := uint64(len(b)) * hashK1
	for len(b) >= 8 {
		v := binary.LittleEndian.Uint64(b)
		h = bits.RotateLeft64(h^(v*hashK2), 31) * hashK1
		b = b[8:]
	}
	var t uint64
	for i, c := range b {
		t |= uint64(c) << (8 * i)
	}
	h = bits.RotateLeft64(h^(t*hashK2), 31) * hashK1
	h ^= h >> 29
	h *= hashK2
	h ^= h >> 32
	return h
}
