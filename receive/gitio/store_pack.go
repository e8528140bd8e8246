package gitio

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrCorruptObject reports object data (loose or packed) that cannot be
// decoded: bad zlib stream, size mismatch, bad delta. Wrapped with the object
// and the file.
var ErrCorruptObject = errors.New("corrupt object")

// maxDeltaChain bounds delta chains (git's default depth is 50; aggressive
// repacks use 250). A longer chain means a corrupt or hostile pack.
const maxDeltaChain = 10000

// Pack object type codes (gitformat-pack).
const (
	packCommit   = 1
	packTree     = 2
	packBlob     = 3
	packTag      = 4
	packOfsDelta = 6
	packRefDelta = 7
)

// pack is one pack file and its index, opened on first use.
type pack struct {
	idxPath, packPath string
	mtime             time.Time // of the .pack, when listed: the search order

	once    sync.Once
	openErr error
	idx     *PackIndex
	data    []byte // the mapped .pack
	release func() error
}

func (p *pack) open() error {
	p.once.Do(func() {
		idx, err := OpenPackIndex(p.idxPath)
		if err != nil {
			p.openErr = err
			return
		}
		data, release, err := mapPath(p.packPath)
		if err != nil {
			_ = idx.Close()
			p.openErr = fmt.Errorf("open pack %s: %w", p.packPath, err)
			return
		}
		if len(data) < 12+hashLen || !bytes.Equal(data[:4], []byte("PACK")) {
			_ = idx.Close()
			_ = release()
			p.openErr = fmt.Errorf("pack %s: %w: bad header", p.packPath, ErrCorruptObject)
			return
		}
		if v := binary.BigEndian.Uint32(data[4:8]); v != 2 && v != 3 {
			_ = idx.Close()
			_ = release()
			p.openErr = fmt.Errorf("pack %s: %w: unsupported version %d", p.packPath, ErrCorruptObject, v)
			return
		}
		if !bytes.Equal(data[len(data)-hashLen:], idx.pack[:]) {
			_ = idx.Close()
			_ = release()
			p.openErr = fmt.Errorf("pack %s: %w: checksum does not match its index %s", p.packPath, ErrCorruptObject, p.idxPath)
			return
		}
		p.idx, p.data, p.release = idx, data, release
	})
	return p.openErr
}

func (p *pack) close() error {
	if p.idx == nil {
		return nil
	}
	err := p.idx.Close()
	if e := p.release(); err == nil {
		err = e
	}
	p.idx, p.data = nil, nil
	return err
}

// entryHeader is the decoded header of the object at some pack offset.
type entryHeader struct {
	typ     int
	size    int64 // inflated size of the entry's data (the delta for deltas)
	dataOff int64 // where the zlib stream starts
	baseOff int64 // ofs-delta: base offset
	baseID  plumbing.Hash
}

func (p *pack) corrupt(off int64, format string, args ...any) error {
	return fmt.Errorf("pack %s at offset %d: %w: %s", p.packPath, off, ErrCorruptObject, fmt.Sprintf(format, args...))
}

// header decodes the entry header at off.
func (p *pack) header(off int64) (entryHeader, error) {
	end := int64(len(p.data) - hashLen)
	if off < 12 || off >= end {
		return entryHeader{}, p.corrupt(off, "offset outside the pack")
	}
	i := off
	c := p.data[i]
	i++
	h := entryHeader{typ: int(c>>4) & 7, size: int64(c & 0x0f)}
	shift := uint(4)
	for c&0x80 != 0 {
		if i >= end || shift > 56 {
			return h, p.corrupt(off, "bad size in entry header")
		}
		c = p.data[i]
		i++
		h.size |= int64(c&0x7f) << shift
		shift += 7
	}
	switch h.typ {
	case packCommit, packTree, packBlob, packTag:
	case packOfsDelta:
		if i >= end {
			return h, p.corrupt(off, "truncated delta offset")
		}
		c = p.data[i]
		i++
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= end || rel >= 1<<55 {
				return h, p.corrupt(off, "bad delta base offset")
			}
			c = p.data[i]
			i++
			rel = ((rel + 1) << 7) | int64(c&0x7f)
		}
		if rel <= 0 || rel > off {
			return h, p.corrupt(off, "delta base offset %d out of range", rel)
		}
		h.baseOff = off - rel
	case packRefDelta:
		if i+hashLen > end {
			return h, p.corrupt(off, "truncated delta base id")
		}
		copy(h.baseID[:], p.data[i:i+hashLen])
		i += hashLen
	default:
		return h, p.corrupt(off, "unknown entry type %d", h.typ)
	}
	h.dataOff = i
	return h, nil
}

var zlibPool sync.Pool

// smallObject bounds the objects inflate hands to our own inflater first.
const smallObject = 64 << 10

// inflate decompresses the zlib stream in src, which must inflate to exactly
// size bytes and end there (its checksum is verified). A small object (an
// event, a commit, most trees) is inflated by our own inflater, which
// agrees with compress/zlib (TestInflateAgreesWithZlib,
// FuzzInflateAgainstZlib) and costs about 5 µs instead of 8 for a commit,
// in one allocation instead of four; whatever it refuses, and every larger
// object, goes through compress/zlib, whose error is the one reported
// (docs/scale.md, "Cold reads").
func inflate(src []byte, size int64) ([]byte, error) {
	if size >= 0 && size <= smallObject {
		if out, err := inflateUntil(src, size, false); err == nil {
			return out, nil
		}
	}
	return inflateZlib(src, size)
}

// inflateZlib is inflate with compress/zlib alone.
func inflateZlib(src []byte, size int64) ([]byte, error) {
	zr, err := zlibReader(src)
	if err != nil {
		return nil, err
	}
	defer zlibPool.Put(zr)
	return readExactly(zr, size, len(src))
}

// deltaVarint reads a size from a delta header.
func deltaVarint(d []byte) (uint64, []byte, bool) {
	var v uint64
	var shift uint
	for i, c := range d {
		if shift > 63 {
			return 0, nil, false
		}
		v |= uint64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			return v, d[i+1:], true
		}
	}
	return 0, nil, false
}

// deltaTargetSize returns the size of the object a delta produces.
func deltaTargetSize(delta []byte) (int64, bool) {
	_, rest, ok := deltaVarint(delta)
	if !ok {
		return 0, false
	}
	t, _, ok := deltaVarint(rest)
	if !ok || t > 1<<62 {
		return 0, false
	}
	return int64(t), true
}

// applyDelta builds the target of delta applied to base.
func applyDelta(base, delta []byte) ([]byte, error) {
	src, d, ok := deltaVarint(delta)
	if !ok {
		return nil, errors.New("delta: bad source size")
	}
	if src != uint64(len(base)) {
		return nil, fmt.Errorf("delta: source size %d, base has %d bytes", src, len(base))
	}
	dst, d, ok := deltaVarint(d)
	if !ok || dst > 1<<40 {
		return nil, errors.New("delta: bad target size")
	}
	// The target size is believed up to maxTrustedSize; beyond it the
	// output grows as the delta's instructions prove the claim.
	out := make([]byte, 0, min(dst, uint64(maxTrustedSize)))
	for len(d) > 0 {
		op := d[0]
		d = d[1:]
		switch {
		case op&0x80 != 0:
			var off, n uint64
			for b := uint(0); b < 4; b++ {
				if op&(1<<b) != 0 {
					if len(d) == 0 {
						return nil, errors.New("delta: truncated copy")
					}
					off |= uint64(d[0]) << (8 * b)
					d = d[1:]
				}
			}
			for b := uint(0); b < 3; b++ {
				if op&(0x10<<b) != 0 {
					if len(d) == 0 {
						return nil, errors.New("delta: truncated copy")
					}
					n |= uint64(d[0]) << (8 * b)
					d = d[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(base)) || uint64(len(out))+n > dst {
				return nil, errors.New("delta: copy out of range")
			}
			out = append(out, base[off:off+n]...)
		case op != 0:
			n := uint64(op)
			if n > uint64(len(d)) || uint64(len(out))+n > dst {
				return nil, errors.New("delta: insert out of range")
			}
			out = append(out, d[:n]...)
			d = d[n:]
		default:
			return nil, errors.New("delta: reserved opcode 0")
		}
	}
	if uint64(len(out)) != dst {
		return nil, fmt.Errorf("delta: produced %d bytes, header says %d", len(out), dst)
	}
	return out, nil
}

func packTypeToObject(t int) plumbing.ObjectType {
	switch t {
	case packCommit:
		return plumbing.CommitObject
	case packTree:
		return plumbing.TreeObject
	case packBlob:
		return plumbing.BlobObject
	case packTag:
		return plumbing.TagObject
	}
	return plumbing.InvalidObject
}

// entrySize returns the type and size of the object at off without
// inflating more than the delta headers along its chain.
func (s *Store) packEntryInfo(p *pack, off int64, id plumbing.Hash) (plumbing.ObjectType, int64, error) {
	h, err := p.header(off)
	if err != nil {
		return 0, 0, err
	}
	size := int64(-1)
	for depth := 0; ; depth++ {
		if depth > maxDeltaChain {
			return 0, 0, p.corrupt(off, "delta chain longer than %d", maxDeltaChain)
		}
		switch h.typ {
		case packOfsDelta, packRefDelta:
			if size < 0 {
				// The target size is in the first bytes of the delta.
				sz, err := deltaHeadSize(p.data[h.dataOff : len(p.data)-hashLen])
				if err != nil {
					return 0, 0, fmt.Errorf("object %s: %w", id, p.corrupt(off, "%v", err))
				}
				size = sz
			}
			var base int64
			if h.typ == packOfsDelta {
				base = h.baseOff
			} else {
				i, ok := p.idx.Lookup(h.baseID)
				if !ok {
					t, _, err := s.info(h.baseID)
					return t, size, err
				}
				if base, err = p.idx.OffsetAt(i); err != nil {
					return 0, 0, err
				}
			}
			if h, err = p.header(base); err != nil {
				return 0, 0, err
			}
		default:
			if size < 0 {
				size = h.size
			}
			return packTypeToObject(h.typ), size, nil
		}
	}
}

// deltaHeadSize inflates just enough of a delta's zlib stream to read its
// target size.
func deltaHeadSize(src []byte) (int64, error) {
	zr, err := zlib.NewReader(bytes.NewReader(src))
	if err != nil {
		return 0, err
	}
	defer zr.Close()
	var buf [24]byte
	n, err := io.ReadAtLeast(zr, buf[:], 2)
	if err != nil && n == 0 {
		return 0, err
	}
	sz, ok := deltaTargetSize(buf[:n])
	if !ok {
		return 0, errors.New("bad delta header")
	}
	return sz, nil
}

// packObject reads the object at off in p, resolving its delta chain with
// the base cache. id names the object in errors.
func (s *Store) packObject(p *pack, off int64, id plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	if t, d, ok := s.cache.get(p, off); ok {
		return t, d, nil
	}
	type step struct {
		off  int64
		head entryHeader
	}
	var chain []step
	var (
		typ  plumbing.ObjectType
		data []byte
	)
	cur := off
	for depth := 0; ; depth++ {
		if depth > maxDeltaChain {
			return 0, nil, fmt.Errorf("object %s: %w", id, p.corrupt(off, "delta chain longer than %d", maxDeltaChain))
		}
		if depth > 0 {
			if t, d, ok := s.cache.get(p, cur); ok {
				typ, data = t, d
				break
			}
		}
		h, err := p.header(cur)
		if err != nil {
			return 0, nil, fmt.Errorf("object %s: %w", id, err)
		}
		if h.typ != packOfsDelta && h.typ != packRefDelta {
			data, err = inflate(p.data[h.dataOff:len(p.data)-hashLen], h.size)
			if err != nil {
				return 0, nil, fmt.Errorf("object %s: %w", id, p.corrupt(cur, "%v", err))
			}
			typ = packTypeToObject(h.typ)
			s.cache.put(p, cur, typ, data)
			break
		}
		chain = append(chain, step{cur, h})
		if h.typ == packOfsDelta {
			cur = h.baseOff
			continue
		}
		i, ok := p.idx.Lookup(h.baseID)
		if !ok {
			// A ref-delta whose base lives elsewhere (thin packs are
			// completed by index-pack, but stay safe): read it through the
			// whole store.
			typ, data, err = s.readRaw(h.baseID, depth+1)
			if err != nil {
				return 0, nil, fmt.Errorf("object %s: delta base: %w", id, err)
			}
			break
		}
		if cur, err = p.idx.OffsetAt(i); err != nil {
			return 0, nil, err
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		st := chain[i]
		delta, err := inflate(p.data[st.head.dataOff:len(p.data)-hashLen], st.head.size)
		if err != nil {
			return 0, nil, fmt.Errorf("object %s: %w", id, p.corrupt(st.off, "%v", err))
		}
		if data, err = applyDelta(data, delta); err != nil {
			return 0, nil, fmt.Errorf("object %s: %w", id, p.corrupt(st.off, "%v", err))
		}
		s.cache.put(p, st.off, typ, data)
	}
	return typ, data, nil
}

// ReadObjectHeader returns the type of object h and a prefix of its
// content holding at least everything up to and including its first blank
// line ("\n\n"), or all of it when it has none: the header of a commit or
// tag, usually without its message. A packed object stored whole is inflated only that
// far (and not cached); any other object is read as by ReadRaw. The
// prefix, unlike ReadRaw's content, is not covered by the stream checksum.
func (s *Store) ReadObjectHeader(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	loc, ok, _ := s.findPacked(h)
	if !ok {
		return s.ReadRaw(h)
	}
	if t, d, ok := s.cache.get(loc.p, loc.off); ok {
		return t, d, nil
	}
	hd, err := loc.p.header(loc.off)
	if err != nil || hd.typ == packOfsDelta || hd.typ == packRefDelta {
		return s.packObject(loc.p, loc.off, h)
	}
	data, err := inflateHeader(loc.p.data[hd.dataOff:len(loc.p.data)-hashLen], hd.size)
	if err != nil {
		return s.packObject(loc.p, loc.off, h) // the full path names the fault
	}
	return packTypeToObject(hd.typ), data, nil
}

// ReadObjectPrefix returns the type of object h and its first n bytes, or
// all of it when it is shorter: what a merge needs to tell a binary file
// (a NUL byte in the first 8000 bytes) without holding all of it. A loose
// object or a packed one stored whole is inflated only that far, so the
// prefix, unlike ReadRaw's content, is not covered by the stream checksum;
// a delta is resolved whole, as by ReadRaw. See docs/objects.md, "Reading
// large objects".
func (s *Store) ReadObjectPrefix(h plumbing.Hash, n int) (plumbing.ObjectType, []byte, error) {
	if n < 0 {
		n = 0
	}
	cut := func(t plumbing.ObjectType, d []byte, err error) (plumbing.ObjectType, []byte, error) {
		if err != nil {
			return 0, nil, err
		}
		return t, d[:min(len(d), n)], nil
	}
	return find(s, h, func(loc location) (plumbing.ObjectType, []byte, error) {
		if t, d, ok := s.cache.get(loc.p, loc.off); ok {
			return cut(t, d, nil)
		}
		hd, err := loc.p.header(loc.off)
		if err != nil || hd.typ == packOfsDelta || hd.typ == packRefDelta {
			return cut(s.packObject(loc.p, loc.off, h))
		}
		src := loc.p.data[hd.dataOff : len(loc.p.data)-hashLen]
		data, err := inflatePrefix(src, hd.size, n)
		if err != nil {
			return cut(s.packObject(loc.p, loc.off, h)) // the full path names the fault
		}
		return packTypeToObject(hd.typ), data, nil
	}, func(dir string) (plumbing.ObjectType, []byte, error) {
		return loosePrefix(dir, h, n)
	})
}

// inflatePrefix inflates the first min(n, size) bytes of the zlib stream
// src, whose content is size bytes.
func inflatePrefix(src []byte, size int64, n int) ([]byte, error) {
	if size < 0 || size/maxDeflateRatio > int64(len(src)) {
		return nil, fmt.Errorf("bad size %d", size)
	}
	zr, err := zlibReader(src)
	if err != nil {
		return nil, err
	}
	defer zlibPool.Put(zr)
	out := make([]byte, min(size, int64(n)))
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, fmt.Errorf("inflate %d bytes: %w", len(out), err)
	}
	return out, nil
}
