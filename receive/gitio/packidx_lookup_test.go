package gitio

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestPackIndexLookup: every id of an index is found at its position, and
// ids that share a present id's first 8 bytes (the fast comparison) or sit
// between present ids are not found.
func TestPackIndexLookup(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	set := map[plumbing.Hash]bool{}
	var entries []idxEntry
	add := func(h plumbing.Hash) {
		if !set[h] {
			set[h] = true
			entries = append(entries, idxEntry{id: h, off: uint64(12 + len(entries))})
		}
	}
	random := func() (h plumbing.Hash) {
		for i := range h {
			h[i] = byte(rng.IntN(256))
		}
		return h
	}
	for i := 0; i < 2000; i++ {
		add(random())
	}
	// Clusters sharing their first 8 bytes, at both ends of the fanout.
	for _, first := range []byte{0x00, 0x7f, 0xff} {
		base := random()
		base[0] = first
		for k := 0; k < 20; k++ {
			h := base
			h[19] = byte(k * 3)
			h[8] = byte(k % 4)
			add(h)
		}
	}
	path := filepath.Join(t.TempDir(), "pack-x.idx")
	if err := os.WriteFile(path, encodeIdx(entries, plumbing.Hash{9}), 0o644); err != nil {
		t.Fatal(err)
	}
	x, err := OpenPackIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for h := range set {
		i, ok := x.Lookup(h)
		if !ok || x.HashAt(i) != h {
			t.Fatalf("Lookup(%s) = %d, %v", h, i, ok)
		}
		for _, miss := range []plumbing.Hash{tweak(h, 19, 1), tweak(h, 8, 1), tweak(h, 7, 1), tweak(h, 19, 255)} {
			if set[miss] {
				continue
			}
			if i, ok := x.Lookup(miss); ok {
				t.Fatalf("Lookup(%s) found it at %d (%s), but it is not in the index", miss, i, x.HashAt(i))
			}
		}
	}
}

func tweak(h plumbing.Hash, at int, by byte) plumbing.Hash {
	h[at] += by
	return h
}
