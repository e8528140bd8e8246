package gitio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// ErrBadPackIndex reports a pack index (.idx) or reverse index (.rev) file
// that is not well formed. It is always wrapped with the file's name.
var ErrBadPackIndex = errors.New("malformed pack index")

const (
	idxHeaderLen  = 8
	idxFanoutLen  = 256 * 4
	idxTrailerLen = 2 * hashLen
	hashLen       = 20

	revHeaderLen = 12
)

var (
	idxMagic = []byte{0xff, 't', 'O', 'c'}
	revMagic = []byte{'R', 'I', 'D', 'X'}
)

// PackIndex is a pack's .idx (version 2) read lazily: the file is mapped, and
// each lookup is a binary search inside the fan-out bucket of the id's first
// byte. Nothing is decoded up front. Offset-to-id queries (FindHash,
// EntriesByOffset) use the pack's .rev file when one exists and otherwise
// build the reverse order once, on first use.
//
// PackIndex implements go-git's idxfile.Index. It is safe for concurrent use.
type PackIndex struct {
	name    string // for error messages
	revPath string // "" when no .rev is to be looked for
	data    []byte
	release func() error

	n      int
	fanout []byte
	names  []byte
	crcs   []byte
	offs32 []byte
	offs64 []byte
	pack   plumbing.Hash // checksum of the pack this index describes

	revOnce sync.Once
	rev     revOrder
	revErr  error
}

var _ idxfile.Index = (*PackIndex)(nil)

// revOrder lists index positions in pack-offset order, either as a mapped
// .rev table (big-endian uint32) or as a slice built in memory.
type revOrder struct {
	table   []byte
	built   []uint32
	release func() error
}

func (r *revOrder) len() int {
	if r.built != nil {
		return len(r.built)
	}
	return len(r.table) / 4
}

func (r *revOrder) at(i int) int {
	if r.built != nil {
		return int(r.built[i])
	}
	return int(binary.BigEndian.Uint32(r.table[4*i:]))
}

// OpenPackIndex maps the .idx file at path. A .rev file next to it (same name,
// extension .rev) is used for offset-to-id queries if present.
func OpenPackIndex(path string) (*PackIndex, error) {
	data, release, err := mapPath(path)
	if err != nil {
		return nil, fmt.Errorf("open pack index %s: %w", path, err)
	}
	idx, err := parsePackIndex(path, data)
	if err != nil {
		_ = release()
		return nil, err
	}
	idx.release = release
	if len(path) > 4 && path[len(path)-4:] == ".idx" {
		idx.revPath = path[:len(path)-4] + ".rev"
	}
	return idx, nil
}

// ParsePackIndex reads a version 2 .idx held in data, which must stay
// unchanged while the index is used. name labels errors.
func ParsePackIndex(name string, data []byte) (*PackIndex, error) {
	return parsePackIndex(name, data)
}

func parsePackIndex(name string, data []byte) (*PackIndex, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("pack index %s: %w: %s", name, ErrBadPackIndex, fmt.Sprintf(format, args...))
	}
	if len(data) < idxHeaderLen+idxFanoutLen+idxTrailerLen {
		return nil, bad("file too short (%d bytes)", len(data))
	}
	if !bytes.Equal(data[:4], idxMagic) {
		return nil, bad("not a version 2 index (no magic)")
	}
	if v := binary.BigEndian.Uint32(data[4:8]); v != 2 {
		return nil, bad("unsupported version %d", v)
	}
	fanout := data[idxHeaderLen : idxHeaderLen+idxFanoutLen]
	prev := uint32(0)
	for i := 0; i < 256; i++ {
		c := binary.BigEndian.Uint32(fanout[4*i:])
		if c < prev {
			return nil, bad("fan-out table decreases at byte %#02x", i)
		}
		prev = c
	}
	n := uint64(prev)
	body := uint64(len(data) - idxHeaderLen - idxFanoutLen - idxTrailerLen)
	if n*(hashLen+4+4) > body {
		return nil, bad("%d objects do not fit in %d bytes", n, len(data))
	}
	rest := body - n*(hashLen+4+4)
	if rest%8 != 0 {
		return nil, bad("large offset table of %d bytes is not a multiple of 8", rest)
	}
	idx := &PackIndex{name: name, data: data, n: int(n), fanout: fanout}
	p := uint64(idxHeaderLen + idxFanoutLen)
	idx.names = data[p : p+n*hashLen]
	p += n * hashLen
	idx.crcs = data[p : p+n*4]
	p += n * 4
	idx.offs32 = data[p : p+n*4]
	p += n * 4
	idx.offs64 = data[p : p+rest]
	p += rest
	copy(idx.pack[:], data[p:p+hashLen])
	return idx, nil
}

// Close releases the mapped files.
func (x *PackIndex) Close() error {
	var err error
	if x.release != nil {
		err = x.release()
		x.release = nil
	}
	if x.rev.release != nil {
		if e := x.rev.release(); err == nil {
			err = e
		}
		x.rev.release = nil
	}
	return err
}

// PackChecksum is the checksum of the pack file the index describes.
func (x *PackIndex) PackChecksum() plumbing.Hash { return x.pack }

// Len is the number of objects in the index.
func (x *PackIndex) Len() int { return x.n }

// Lookup returns the position of h in the index.
func (x *PackIndex) Lookup(h plumbing.Hash) (int, bool) {
	lo := 0
	if h[0] > 0 {
		lo = int(binary.BigEndian.Uint32(x.fanout[4*(int(h[0])-1):]))
	}
	hi := int(binary.BigEndian.Uint32(x.fanout[4*int(h[0]):]))
	// Ids compare as their first 8 bytes read big-endian (one load), then
	// the rest only on a tie: the hook looks up thousands of ids a push.
	key := binary.BigEndian.Uint64(h[:8])
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		name := x.names[mid*hashLen : mid*hashLen+hashLen]
		c := 0
		switch v := binary.BigEndian.Uint64(name); {
		case v < key:
			c = -1
		case v > key:
			c = 1
		default:
			c = bytes.Compare(name[8:], h[8:])
		}
		switch {
		case c == 0:
			return mid, true
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false
}

// HashAt returns the id at position i (0 ≤ i < Len()).
func (x *PackIndex) HashAt(i int) plumbing.Hash {
	var h plumbing.Hash
	copy(h[:], x.names[i*hashLen:])
	return h
}

// OffsetAt returns the pack offset of the object at position i.
func (x *PackIndex) OffsetAt(i int) (int64, error) {
	v := binary.BigEndian.Uint32(x.offs32[4*i:])
	if v&0x80000000 == 0 {
		return int64(v), nil
	}
	j := uint64(v & 0x7fffffff)
	if (j+1)*8 > uint64(len(x.offs64)) {
		return 0, fmt.Errorf("pack index %s: %w: large offset %d of object %s out of range", x.name, ErrBadPackIndex, j, x.HashAt(i))
	}
	o := binary.BigEndian.Uint64(x.offs64[j*8:])
	if o > 1<<62 {
		return 0, fmt.Errorf("pack index %s: %w: offset %d of object %s out of range", x.name, ErrBadPackIndex, o, x.HashAt(i))
	}
	return int64(o), nil
}

// CRC32At returns the CRC32 of the packed data of the object at position i.
func (x *PackIndex) CRC32At(i int) uint32 {
	return binary.BigEndian.Uint32(x.crcs[4*i:])
}

func (x *PackIndex) notFound(h plumbing.Hash) error {
	return fmt.Errorf("object %s not in pack index %s: %w", h, x.name, plumbing.ErrObjectNotFound)
}

// Contains implements idxfile.Index.
func (x *PackIndex) Contains(h plumbing.Hash) (bool, error) {
	_, ok := x.Lookup(h)
	return ok, nil
}

// FindOffset implements idxfile.Index.
func (x *PackIndex) FindOffset(h plumbing.Hash) (int64, error) {
	i, ok := x.Lookup(h)
	if !ok {
		return 0, x.notFound(h)
	}
	return x.OffsetAt(i)
}

// FindCRC32 implements idxfile.Index.
func (x *PackIndex) FindCRC32(h plumbing.Hash) (uint32, error) {
	i, ok := x.Lookup(h)
	if !ok {
		return 0, x.notFound(h)
	}
	return x.CRC32At(i), nil
}

// Count implements idxfile.Index.
func (x *PackIndex) Count() (int64, error) { return int64(x.n), nil }

// reverse loads or builds the offset order once.
func (x *PackIndex) reverse() (*revOrder, error) {
	x.revOnce.Do(func() {
		if x.revPath != "" {
			ok, err := x.loadRev(x.revPath)
			if err != nil {
				x.revErr = err
				return
			}
			if ok {
				return
			}
		}
		x.revErr = x.buildRev()
	})
	return &x.rev, x.revErr
}

// loadRev maps a .rev file; it reports false when there is none.
func (x *PackIndex) loadRev(path string) (bool, error) {
	data, release, err := mapPath(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("open reverse index %s: %w", path, err)
	}
	table, err := parseRev(path, data, x.n, x.pack)
	if err != nil {
		_ = release()
		return false, err
	}
	x.rev = revOrder{table: table, release: release}
	return true, nil
}

// parseRev validates a .rev file for an index of n objects describing the
// pack with checksum pack, and returns its position table.
func parseRev(name string, data []byte, n int, pack plumbing.Hash) ([]byte, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("reverse index %s: %w: %s", name, ErrBadPackIndex, fmt.Sprintf(format, args...))
	}
	if len(data) != revHeaderLen+4*n+2*hashLen {
		return nil, bad("size %d, want %d for %d objects", len(data), revHeaderLen+4*n+2*hashLen, n)
	}
	if !bytes.Equal(data[:4], revMagic) {
		return nil, bad("no magic")
	}
	if v := binary.BigEndian.Uint32(data[4:8]); v != 1 {
		return nil, bad("unsupported version %d", v)
	}
	if a := binary.BigEndian.Uint32(data[8:12]); a != 1 {
		return nil, bad("unsupported hash algorithm %d", a)
	}
	table := data[revHeaderLen : revHeaderLen+4*n]
	if !bytes.Equal(data[revHeaderLen+4*n:revHeaderLen+4*n+hashLen], pack[:]) {
		return nil, bad("describes another pack")
	}
	for i := 0; i < n; i++ {
		if binary.BigEndian.Uint32(table[4*i:]) >= uint32(n) {
			return nil, bad("position %d out of range", i)
		}
	}
	return table, nil
}

// buildRev sorts the index positions by offset in memory.
func (x *PackIndex) buildRev() error {
	offs := make([]int64, x.n)
	order := make([]uint32, x.n)
	for i := range order {
		o, err := x.OffsetAt(i)
		if err != nil {
			return err
		}
		offs[i] = o
		order[i] = uint32(i)
	}
	sort.Slice(order, func(a, b int) bool { return offs[order[a]] < offs[order[b]] })
	x.rev = revOrder{built: order}
	return nil
}

// FindHash implements idxfile.Index: the id of the object at pack offset o.
// The first call without a .rev file sorts all offsets once.
func (x *PackIndex) FindHash(o int64) (plumbing.Hash, error) {
	r, err := x.reverse()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	lo, hi := 0, r.len()
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		pos := r.at(mid)
		mo, err := x.OffsetAt(pos)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch {
		case mo == o:
			return x.HashAt(pos), nil
		case mo < o:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("no object at offset %d in pack index %s: %w", o, x.name, plumbing.ErrObjectNotFound)
}

// Entries implements idxfile.Index: all entries in id order.
func (x *PackIndex) Entries() (idxfile.EntryIter, error) {
	return &idxIter{x: x}, nil
}

// EntriesByOffset implements idxfile.Index: all entries in pack order.
func (x *PackIndex) EntriesByOffset() (idxfile.EntryIter, error) {
	r, err := x.reverse()
	if err != nil {
		return nil, err
	}
	return &idxIter{x: x, rev: r}, nil
}

type idxIter struct {
	x   *PackIndex
	rev *revOrder
	i   int
}

func (it *idxIter) Next() (*idxfile.Entry, error) {
	if it.i >= it.x.n {
		return nil, io.EOF
	}
	pos := it.i
	if it.rev != nil {
		pos = it.rev.at(it.i)
	}
	it.i++
	o, err := it.x.OffsetAt(pos)
	if err != nil {
		return nil, err
	}
	return &idxfile.Entry{Hash: it.x.HashAt(pos), CRC32: it.x.CRC32At(pos), Offset: uint64(o)}, nil
}

func (it *idxIter) Close() error { it.i = it.x.n; return nil }
