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
//
// The table holds no pointers (offsets into the inputs instead), so the
// garbage collector never scans it; inputs are at most 1023 MiB (larger
// ones are binary), so int32 offsets suffice.
type lineSet struct {
	table []uint64 // open addressing: high 32 bits of the hash | id+1; 0 = empty
	refs  []lineRef
	srcs  [][]byte
	mask  uint64
}

// lineRef locates the first occurrence of a distinct line.
type lineRef struct{ src, start, end int32 }

// lineFile is one input split into lines.
type lineFile struct {
	data []byte
	off  []int32 // line i is data[off[i]:off[i+1]]; len(off) == n+1
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
	s := &lineSet{}
	s.reset(totalLines)
	return s
}

// reset empties the set for a merge of totalLines lines, reusing memory.
func (s *lineSet) reset(totalLines int) {
	size := 16
	for size < 2*totalLines {
		size <<= 1
	}
	if cap(s.table) >= size {
		s.table = s.table[:size]
		clear(s.table)
	} else {
		s.table = make([]uint64, size)
	}
	s.mask = uint64(size - 1)
	if cap(s.refs) < totalLines {
		s.refs = make([]lineRef, 0, totalLines)
	}
	s.refs = s.refs[:0]
	clear(s.srcs)
	s.srcs = s.srcs[:0]
}

// nids is the number of distinct lines seen so far.
func (s *lineSet) nids() int { return len(s.refs) }

// split splits data (of n lines) into lines and interns them.
func (s *lineSet) split(data []byte, n int) lineFile {
	return s.splitInto(data, n, make([]int32, 2*n+1))
}

// splitInto is split with the caller's buffer of 2n+1 int32s.
func (s *lineSet) splitInto(data []byte, n int, buf []int32) lineFile {
	src := int32(len(s.srcs))
	s.srcs = append(s.srcs, data)
	f := lineFile{data: data, off: buf[:n+1], ids: buf[n+1 : 2*n+1]}
	pos := 0
	for i := 0; i < n; i++ {
		end := bytes.IndexByte(data[pos:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += pos + 1
		}
		f.off[i] = int32(pos)
		f.ids[i] = s.intern(data[pos:end], src, pos, end)
		pos = end
	}
	f.off[n] = int32(len(data))
	return f
}

func (s *lineSet) intern(line []byte, src int32, start, end int) int32 {
	h := hashLine(line)
	tag := h &^ 0xFFFFFFFF
	i := h & s.mask
	for {
		e := s.table[i]
		if e == 0 {
			id := int32(len(s.refs))
			s.refs = append(s.refs, lineRef{src, int32(start), int32(end)})
			s.table[i] = tag | uint64(id+1)
			return id
		}
		if e&^0xFFFFFFFF == tag {
			id := int32(e&0xFFFFFFFF) - 1
			r := s.refs[id]
			if bytes.Equal(s.srcs[r.src][r.start:r.end], line) {
				return id
			}
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
