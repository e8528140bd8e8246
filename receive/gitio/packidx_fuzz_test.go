package gitio

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// FuzzParsePackIndex feeds arbitrary bytes to the .idx decoder and exercises
// every query on what it accepts: nothing may panic.
func FuzzParsePackIndex(f *testing.F) {
	var es []idxEntry
	for i := 0; i < 40; i++ {
		h := plumbing.ComputeHash(plumbing.BlobObject, []byte{byte(i)})
		off := uint64(12 + 100*i)
		if i%7 == 0 {
			off += 1 << 33
		}
		es = append(es, idxEntry{id: h, crc: uint32(i), off: off})
	}
	f.Add(encodeIdx(es, plumbing.ZeroHash))
	f.Add(encodeIdx(es[:1], plumbing.ZeroHash))
	f.Add(encodeIdx(nil, plumbing.ZeroHash))
	f.Add([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := ParsePackIndex("fuzz", data)
		if err != nil {
			return
		}
		probe := []plumbing.Hash{plumbing.ZeroHash, plumbing.NewHash("ffffffffffffffffffffffffffffffffffffffff")}
		for i := 0; i < x.Len() && i < 64; i++ {
			probe = append(probe, x.HashAt(i))
			if off, err := x.OffsetAt(i); err == nil {
				_, _ = x.FindHash(off)
			}
			_ = x.CRC32At(i)
		}
		for _, h := range probe {
			_, _ = x.Contains(h)
			_, _ = x.FindOffset(h)
			_, _ = x.FindCRC32(h)
		}
		_, _ = x.FindHash(-1)
		if it, err := x.Entries(); err == nil {
			for k := 0; k < 100; k++ {
				if _, err := it.Next(); err != nil {
					break
				}
			}
			it.Close()
		}
		if it, err := x.EntriesByOffset(); err == nil {
			for k := 0; k < 100; k++ {
				if _, err := it.Next(); err != nil {
					break
				}
			}
			it.Close()
		}
	})
}

// FuzzApplyDelta: arbitrary deltas against a fixed base never panic, and a
// result always has the size the delta header announces.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte{10, 4, 0x91, 2, 3, 1, 'x'})
	f.Add([]byte{10, 10, 0x90, 10})
	f.Fuzz(func(t *testing.T, delta []byte) {
		base := []byte("0123456789")
		out, err := applyDelta(base, delta)
		if err != nil {
			return
		}
		if want, ok := deltaTargetSize(delta); !ok || int64(len(out)) != want {
			t.Fatalf("result of %d bytes, header says %d", len(out), want)
		}
	})
}
