package gitio

// A small inflater (RFC 1950/1951) that can stop early: commit readers need
// only an object's header (up to the first blank line), and the standard
// library's decompressor inflates a whole deflate block before it returns
// any byte of it. Anything this decoder does not like is reported as an
// error and the caller falls back to the full, checksummed path. It is
// kept, rather than compress/zlib, because a differential test against
// compress/zlib agrees and it is measurably cheaper for this job
// (docs/objects.md, "Our own inflater, and why it stays").

import (
	"errors"
	"hash/adler32"
	"sync"
)

var errInflate = errors.New("inflate: bad stream")

const fastBits = 9

// huffman is a canonical Huffman code: a table for codes of up to fastBits
// bits and the counts and symbols for decoding longer ones bit by bit.
type huffman struct {
	fast   [1 << fastBits]uint16 // symbol<<4 | length; 0: longer code or none
	count  [16]uint16
	symbol [320]uint16
	// need is how many bits must remain before a symbol is decoded: a
	// dynamic literal/length code's end-of-block length, since every block
	// ends with that code. compress/zlib refuses a stream shorter than
	// that as early, and the differential test wants the same bytes.
	need uint
}

func (h *huffman) build(lengths []uint8) error {
	h.count = [16]uint16{}
	h.need = 0
	for _, l := range lengths {
		h.count[l]++
	}
	h.count[0] = 0
	left := 1
	for l := 1; l < 16; l++ {
		left <<= 1
		left -= int(h.count[l])
		if left < 0 {
			return errInflate // over-subscribed
		}
	}
	var offs [16]uint16
	for l := 1; l < 15; l++ {
		offs[l+1] = offs[l] + h.count[l]
	}
	for s, l := range lengths {
		if l != 0 {
			h.symbol[offs[l]] = uint16(s)
			offs[l]++
		}
	}
	h.fast = [1 << fastBits]uint16{}
	var next [16]uint32
	code := uint32(0)
	for l := 1; l < 16; l++ {
		next[l] = code
		code = (code + uint32(h.count[l])) << 1
	}
	for s, l := range lengths {
		if l == 0 {
			continue
		}
		c := next[l]
		next[l]++
		if l > fastBits {
			continue
		}
		rev := reverseBits(c, uint(l))
		for i := rev; i < 1<<fastBits; i += 1 << l {
			h.fast[i] = uint16(s)<<4 | uint16(l)
		}
	}
	return nil
}

// incomplete reports a code that leaves bit patterns unused, which a
// dynamic block may not have (compress/zlib and git's zlib refuse it),
// except no code at all (a distance code the block never uses) and a
// single one-bit code. The fixed distance code is incomplete by design.
func (h *huffman) incomplete() bool {
	left, used := 1, 0
	for l := 1; l < 16; l++ {
		left = left<<1 - int(h.count[l])
		used += int(h.count[l])
	}
	return left != 0 && used != 0 && !(used == 1 && h.count[1] == 1)
}

func reverseBits(c uint32, n uint) uint32 {
	r := uint32(0)
	for i := uint(0); i < n; i++ {
		r = r<<1 | c&1
		c >>= 1
	}
	return r
}

type bitReader struct {
	src   []byte
	pos   int
	buf   uint64
	nbits uint
	over  uint // zero bytes padded past the end of src
}

func (b *bitReader) refill() {
	for b.nbits <= 56 {
		if b.pos < len(b.src) {
			b.buf |= uint64(b.src[b.pos]) << b.nbits
			b.pos++
		} else {
			b.over++
		}
		b.nbits += 8
	}
}

// bits consumes n (≤ 32) bits.
func (b *bitReader) bits(n uint) (uint32, error) {
	if b.nbits < n {
		b.refill()
	}
	v := uint32(b.buf & (1<<n - 1))
	b.buf >>= n
	b.nbits -= n
	if b.nbits < 8*b.over {
		return 0, errInflate // read past the end
	}
	return v, nil
}

func (b *bitReader) decode(h *huffman) (int, error) {
	if b.nbits < 16 {
		b.refill()
	}
	if int(b.nbits)-8*int(b.over) < int(h.need) {
		return 0, errInflate
	}
	if e := h.fast[b.buf&(1<<fastBits-1)]; e != 0 {
		l := uint(e & 15)
		b.buf >>= l
		b.nbits -= l
		if b.nbits < 8*b.over {
			return 0, errInflate
		}
		return int(e >> 4), nil
	}
	code, first, index := 0, 0, 0
	for l := 1; l < 16; l++ {
		code |= int(b.buf & 1)
		b.buf >>= 1
		b.nbits--
		count := int(h.count[l])
		if code-count < first {
			if b.nbits < 8*b.over {
				return 0, errInflate
			}
			return int(h.symbol[index+code-first]), nil
		}
		index += count
		first = (first + count) << 1
		code <<= 1
	}
	return 0, errInflate
}

var (
	lenBase   = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra  = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase  = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	clOrder   = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

	fixedOnce           sync.Once
	fixedLit, fixedDist huffman
)

func fixedCodes() (*huffman, *huffman) {
	fixedOnce.Do(func() {
		var l [288]uint8
		for i := range l {
			switch {
			case i < 144:
				l[i] = 8
			case i < 256:
				l[i] = 9
			case i < 280:
				l[i] = 7
			default:
				l[i] = 8
			}
		}
		_ = fixedLit.build(l[:])
		var d [30]uint8
		for i := range d {
			d[i] = 5
		}
		_ = fixedDist.build(d[:])
	})
	return &fixedLit, &fixedDist
}

type inflater struct {
	lit, dist huffman
	lens      [320]uint8
}

var inflaterPool = sync.Pool{New: func() any { return new(inflater) }}

// inflateHeader inflates the zlib stream src, whose content is size bytes,
// and stops as soon as the output holds a blank line ("\n\n"): it returns
// the content up to and including it, or all of it (then checked against
// the stream's checksum) when there is none.
func inflateHeader(src []byte, size int64) ([]byte, error) {
	return inflateUntil(src, size, true)
}

// inflateUntil is inflateHeader; with stop false it never stops early and
// returns the whole content (checked), as compress/zlib would: the
// differential test compares the two that way.
func inflateUntil(src []byte, size int64, stop bool) ([]byte, error) {
	if size < 0 || size > 1<<30 || len(src) < 2 {
		return nil, errInflate
	}
	if src[0]&0x0f != 8 || src[0]>>4 > 7 || (uint(src[0])<<8|uint(src[1]))%31 != 0 || src[1]&0x20 != 0 {
		return nil, errInflate
	}
	z := inflaterPool.Get().(*inflater)
	defer inflaterPool.Put(z)
	br := &bitReader{src: src[2:]}
	// A header read usually stops early; a whole read needs all of it (up
	// to a bound: size is the object's claim, not yet proved).
	room := min(size, 1024)
	if !stop {
		room = min(size, smallObject)
	}
	out := make([]byte, 0, int(room))
	grow := func(n int) {
		if len(out)+n > cap(out) {
			c := max(2*cap(out), len(out)+n)
			c = int(min(int64(c), size))
			nb := make([]byte, len(out), c)
			copy(nb, out)
			out = nb
		}
	}
	for {
		final, err := br.bits(1)
		if err != nil {
			return nil, err
		}
		typ, err := br.bits(2)
		if err != nil {
			return nil, err
		}
		var lit, dist *huffman
		switch typ {
		case 0:
			// Stored: skip to a byte boundary.
			if _, err := br.bits(br.nbits % 8); err != nil {
				return nil, err
			}
			v, err := br.bits(32)
			if err != nil {
				return nil, err
			}
			n := int(v & 0xffff)
			if uint16(v>>16) != ^uint16(n) || int64(len(out)+n) > size {
				return nil, errInflate
			}
			grow(n)
			start := len(out)
			for i := 0; i < n; i++ {
				c, err := br.bits(8)
				if err != nil {
					return nil, err
				}
				out = append(out, byte(c))
			}
			if i := blankLine(out, start); stop && i >= 0 {
				return out[:i], nil
			}
			if final == 1 {
				return finish(br, out, size)
			}
			continue
		case 1:
			lit, dist = fixedCodes()
		case 2:
			if err := z.readCodes(br); err != nil {
				return nil, err
			}
			lit, dist = &z.lit, &z.dist
		default:
			return nil, errInflate
		}
		for {
			sym, err := br.decode(lit)
			if err != nil {
				return nil, err
			}
			if sym < 256 {
				if int64(len(out)) >= size {
					return nil, errInflate
				}
				grow(1)
				out = append(out, byte(sym))
				if stop && sym == '\n' && len(out) > 1 && out[len(out)-2] == '\n' {
					return out, nil
				}
				continue
			}
			if sym == 256 {
				break
			}
			sym -= 257
			if sym >= 29 {
				return nil, errInflate
			}
			e, err := br.bits(uint(lenExtra[sym]))
			if err != nil {
				return nil, err
			}
			n := int(lenBase[sym]) + int(e)
			ds, err := br.decode(dist)
			if err != nil {
				return nil, err
			}
			if ds >= 30 {
				return nil, errInflate
			}
			de, err := br.bits(uint(distExtra[ds]))
			if err != nil {
				return nil, err
			}
			d := int(distBase[ds]) + int(de)
			if d > len(out) || int64(len(out)+n) > size {
				return nil, errInflate
			}
			grow(n)
			start := len(out)
			for i := 0; i < n; i++ {
				out = append(out, out[start-d+i])
			}
			if i := blankLine(out, start); stop && i >= 0 {
				return out[:i], nil
			}
		}
		if final == 1 {
			return finish(br, out, size)
		}
	}
}

// blankLine returns the end of the first "\n\n" that ends at or after
// out[from], or -1.
func blankLine(out []byte, from int) int {
	for i := max(from, 1); i < len(out); i++ {
		if out[i] == '\n' && out[i-1] == '\n' {
			return i + 1
		}
	}
	return -1
}

// finish checks a fully inflated stream: its size and its Adler-32.
func finish(br *bitReader, out []byte, size int64) ([]byte, error) {
	if int64(len(out)) != size {
		return nil, errInflate
	}
	if _, err := br.bits(br.nbits % 8); err != nil {
		return nil, err
	}
	var sum uint32
	for i := 0; i < 4; i++ {
		c, err := br.bits(8)
		if err != nil {
			return nil, err
		}
		sum = sum<<8 | c
	}
	if sum != adler32.Checksum(out) {
		return nil, errInflate
	}
	return out, nil
}

// readCodes reads a dynamic block's code tables.
func (z *inflater) readCodes(br *bitReader) error {
	v, err := br.bits(14)
	if err != nil {
		return err
	}
	nlit, ndist, ncl := int(v&31)+257, int(v>>5&31)+1, int(v>>10)+4
	if nlit > 286 || ndist > 30 {
		return errInflate
	}
	var cl [19]uint8
	for i := 0; i < ncl; i++ {
		x, err := br.bits(3)
		if err != nil {
			return err
		}
		cl[clOrder[i]] = uint8(x)
	}
	var clh huffman
	if err := clh.build(cl[:]); err != nil {
		return err
	}
	if clh.incomplete() {
		return errInflate
	}
	lens := z.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		sym, err := br.decode(&clh)
		if err != nil {
			return err
		}
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return errInflate
			}
			x, err := br.bits(2)
			if err != nil {
				return err
			}
			rep, val = 3+int(x), lens[i-1]
		case 17:
			x, err := br.bits(3)
			if err != nil {
				return err
			}
			rep = 3 + int(x)
		default:
			x, err := br.bits(7)
			if err != nil {
				return err
			}
			rep = 11 + int(x)
		}
		if i+rep > len(lens) {
			return errInflate
		}
		for ; rep > 0; rep-- {
			lens[i] = val
			i++
		}
	}
	if lens[256] == 0 {
		return errInflate
	}
	if err := z.lit.build(lens[:nlit]); err != nil {
		return err
	}
	if err := z.dist.build(lens[nlit:]); err != nil {
		return err
	}
	if z.lit.incomplete() || z.dist.incomplete() {
		return errInflate
	}
	z.lit.need = uint(lens[256])
	return nil
}
