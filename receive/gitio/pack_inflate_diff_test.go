package gitio

import (
	"bytes"
	"compress/zlib"
	"io"
	"math/rand/v2"
	"testing"
)

// agreeWithZlib fails unless our inflater and compress/zlib agree on the
// stream src of claimed size: both refuse it, or both inflate it to the
// same bytes (inflateZlib reads exactly size bytes with compress/zlib,
// then the end of the stream and its checksum); and inflate, which tries
// ours first on a small object, gives compress/zlib's bytes or its error.
// The header-only read, when it succeeds, must be what compress/zlib
// produces first, up to and including
// the first blank line of it.
func agreeWithZlib(t *testing.T, src []byte, size int64) {
	t.Helper()
	own, oerr := inflateUntil(src, size, false)
	ref, rerr := inflateZlib(src, size)
	if got, err := inflate(src, size); (err == nil) != (rerr == nil) || !bytes.Equal(got, ref) {
		t.Fatalf("stream %x, size %d: inflate %q (%v), compress/zlib %q (%v)", src, size, got, err, ref, rerr)
	} else if err != nil && err.Error() != rerr.Error() {
		t.Fatalf("stream %x, size %d: inflate's error %v, compress/zlib's %v", src, size, err, rerr)
	}
	if (oerr == nil) != (rerr == nil) {
		t.Fatalf("stream %x, size %d: ours: %v, compress/zlib: %v", src, size, oerr, rerr)
	}
	if oerr == nil && !bytes.Equal(own, ref) {
		t.Fatalf("stream %x, size %d: ours %q, compress/zlib %q", src, size, own, ref)
	}
	head, herr := inflateUntil(src, size, true)
	if herr != nil {
		if rerr == nil {
			t.Fatalf("stream %x, size %d: header read failed (%v), compress/zlib inflates it", src, size, herr)
		}
		return
	}
	zr, err := zlib.NewReader(bytes.NewReader(src))
	if err != nil {
		t.Fatalf("stream %x: header read succeeded, compress/zlib refuses the stream: %v", src, err)
	}
	first := make([]byte, len(head))
	if n, err := io.ReadFull(zr, first); err != nil || !bytes.Equal(first, head) {
		t.Fatalf("stream %x, size %d: header read %q, compress/zlib gives %q (%v)", src, size, head, first[:n], err)
	}
	if !bytes.Equal(head, wantHeader(head)) {
		t.Fatalf("stream %x: header read %q goes past its first blank line", src, head)
	}
	if rerr == nil && !bytes.Equal(head, wantHeader(ref)) {
		t.Fatalf("stream %x, size %d: header read %q, want %q", src, size, head, wantHeader(ref))
	}
}

// mutants returns damaged copies of a zlib stream: truncated, with flipped
// bits, with bytes set to 0x00 or 0xff, with the trailer or the header
// bytes changed.
func mutants(r *rand.Rand, z []byte) [][]byte {
	var out [][]byte
	cp := func() []byte { return append([]byte(nil), z...) }
	for k := 0; k < 3; k++ {
		out = append(out, z[:r.IntN(len(z)+1)])
	}
	for k := 0; k < 4; k++ {
		m := cp()
		for j := 0; j <= k; j++ {
			m[r.IntN(len(m))] ^= 1 << r.IntN(8)
		}
		out = append(out, m)
	}
	m := cp()
	m[r.IntN(len(m))] = byte(0xff * r.IntN(2))
	out = append(out, m)
	m = cp()
	m[len(m)-1-r.IntN(4)]++
	out = append(out, m)
	m = cp()
	m[r.IntN(2)] ^= byte(1 << r.IntN(8))
	out = append(out, m)
	return out
}

// TestInflateAgreesWithZlib runs agreeWithZlib over streams compress/zlib
// wrote at every level (stored, fixed and dynamic blocks), with the right,
// a larger and a smaller size, with trailing bytes, and over damaged
// copies of them.
func TestInflateAgreesWithZlib(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	for i := 0; i < 300; i++ {
		data := randomText(r)
		level := []int{zlib.NoCompression, zlib.BestSpeed, zlib.DefaultCompression, zlib.BestCompression, zlib.HuffmanOnly}[i%5]
		z := deflateAt(t, data, level)
		n := int64(len(data))
		for _, size := range []int64{n, n + 1, max(n-1, 0), 0, n * 3} {
			agreeWithZlib(t, z, size)
		}
		agreeWithZlib(t, append(z[:len(z):len(z)], "trailing"...), n)
		for _, m := range mutants(r, z) {
			agreeWithZlib(t, m, n)
		}
	}
	for _, src := range handStreams() {
		for _, size := range []int64{0, 1, 2, 3, 5, 258, 300} {
			agreeWithZlib(t, src, size)
		}
	}
}

// handStreams are streams written by hand: empty stored and fixed blocks,
// a reserved block type, a distance past the start, a stored block whose
// length check fails, codes over-subscribed or incomplete, and the
// fixed-code symbols 286, 287 and distances 30, 31 that no stream may use.
func handStreams() [][]byte {
	bits := func(fields ...[2]uint32) []byte { // (value, width) pairs, LSB first
		var out []byte
		var acc uint64
		var n uint
		for _, f := range fields {
			acc |= uint64(f[0]) << n
			n += uint(f[1])
			for n >= 8 {
				out = append(out, byte(acc))
				acc >>= 8
				n -= 8
			}
		}
		if n > 0 {
			out = append(out, byte(acc))
		}
		return append([]byte{0x78, 0x9c}, out...)
	}
	rev := func(code, n uint32) uint32 { return reverseBits(code, uint(n)) }
	adler := func(d string) []byte {
		var a, b uint32 = 1, 0
		for _, c := range []byte(d) {
			a = (a + uint32(c)) % 65521
			b = (b + a) % 65521
		}
		s := b<<16 | a
		return []byte{byte(s >> 24), byte(s >> 16), byte(s >> 8), byte(s)}
	}
	with := func(b []byte, d string) []byte { return append(b, adler(d)...) }
	eob := [2]uint32{0, 7} // fixed code for 256
	lit := func(c byte) [2]uint32 { return [2]uint32{rev(0x30+uint32(c), 8), 8} }
	var out [][]byte
	out = append(out,
		with(bits([2]uint32{1, 1}, [2]uint32{1, 2}, eob), ""),                                                      // empty fixed block
		with(bits([2]uint32{1, 1}, [2]uint32{0, 2}, [2]uint32{0, 5}, [2]uint32{0, 16}, [2]uint32{0xffff, 16}), ""), // empty stored block
		bits([2]uint32{1, 1}, [2]uint32{0, 2}, [2]uint32{0, 5}, [2]uint32{1, 16}, [2]uint32{1, 16}),                // LEN/NLEN mismatch
		bits([2]uint32{1, 1}, [2]uint32{3, 2}),                                                                     // reserved type
		with(bits([2]uint32{1, 1}, [2]uint32{1, 2}, lit('a'), eob), "a"),
		// 'a', then length 3 (257: 7-bit code 1) at distance 2 (code 1): past the start
		bits([2]uint32{1, 1}, [2]uint32{1, 2}, lit('a'), [2]uint32{rev(1, 7), 7}, [2]uint32{rev(1, 5), 5}, eob),
		// 'a', length 3 at distance 1: "aaaa"
		with(bits([2]uint32{1, 1}, [2]uint32{1, 2}, lit('a'), [2]uint32{rev(1, 7), 7}, [2]uint32{rev(0, 5), 5}, eob), "aaaa"),
		// distance codes 30 and 31
		bits([2]uint32{1, 1}, [2]uint32{1, 2}, lit('a'), [2]uint32{rev(1, 7), 7}, [2]uint32{rev(30, 5), 5}, eob),
		bits([2]uint32{1, 1}, [2]uint32{1, 2}, lit('a'), [2]uint32{rev(1, 7), 7}, [2]uint32{rev(31, 5), 5}, eob),
		// length symbols 286 and 287 (8-bit codes 0xc6, 0xc7)
		bits([2]uint32{1, 1}, [2]uint32{1, 2}, lit('a'), [2]uint32{rev(0xc6, 8), 8}, [2]uint32{0, 5}, eob),
		bits([2]uint32{1, 1}, [2]uint32{1, 2}, lit('a'), [2]uint32{rev(0xc7, 8), 8}, [2]uint32{0, 5}, eob),
		// a non-final fixed block and nothing after it
		bits([2]uint32{0, 1}, [2]uint32{1, 2}, lit('a'), eob),
		// "\n\n" then a reserved block: the header read stops before the fault
		bits([2]uint32{0, 1}, [2]uint32{1, 2}, lit('\n'), lit('\n'), eob, [2]uint32{1, 1}, [2]uint32{3, 2}),
	)
	// Dynamic blocks: HLIT 257, HDIST 1, HCLEN 4+15; code-length code
	// lengths cl, then the literal/length and distance lengths as symbols
	// 0..15 of that code (all of length 4 here, cl = 4 for 0..15 would be
	// over-subscribed; use a complete code: two symbols of length 1).
	dyn := func(clLens map[int]uint32, syms []uint32, symBits map[uint32][2]uint32) []byte {
		f := [][2]uint32{{1, 1}, {2, 2}, {0, 5}, {0, 5}, {15, 4}}
		for _, o := range clOrder {
			f = append(f, [2]uint32{clLens[int(o)], 3})
		}
		for _, s := range syms {
			f = append(f, symBits[s])
		}
		return bits(f...)
	}
	// Code-length code: symbols 0 and 1 with one bit each (complete).
	cl := map[int]uint32{0: 1, 1: 1}
	sb := map[uint32][2]uint32{0: {0, 1}, 1: {1, 1}}
	// Literal/length lengths: only 256 has a length (1): incomplete, and
	// one distance code of length 1.
	syms := make([]uint32, 258)
	syms[256], syms[257] = 1, 1
	out = append(out, append(dyn(cl, syms, sb), 0), dyn(cl, syms, sb))
	// Over-subscribed code-length code: three symbols of length 1.
	out = append(out, dyn(map[int]uint32{0: 1, 1: 1, 2: 1}, syms, sb))
	// No end-of-block code.
	syms2 := make([]uint32, 258)
	syms2['a'], syms2[257] = 1, 1
	out = append(out, dyn(cl, syms2, sb))
	return out
}

func FuzzInflateAgainstZlib(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20; i++ {
		data := randomText(r)
		z := deflateAt(f, data, []int{0, 1, 6, 9, -2}[i%5])
		f.Add(z, uint32(len(data)))
		for _, m := range mutants(r, z)[:3] {
			f.Add(m, uint32(len(data)))
		}
	}
	for _, s := range handStreams() {
		f.Add(s, uint32(4))
	}
	f.Fuzz(func(t *testing.T, src []byte, size uint32) {
		agreeWithZlib(t, src, int64(size%(1<<20)))
	})
}
