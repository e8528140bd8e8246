package gitio

import (
	"bytes"
	"compress/zlib"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func deflateAt(t testing.TB, data []byte, level int) []byte {
	var b bytes.Buffer
	w, err := zlib.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// wantHeader is what inflateHeader must return for content data.
func wantHeader(data []byte) []byte {
	if i := bytes.Index(data, []byte("\n\n")); i >= 0 {
		return data[:i+2]
	}
	return data
}

// randomText makes content with repeats (long matches), rare blank lines
// and, sometimes, binary noise.
func randomText(r *rand.Rand) []byte {
	words := []string{"tree ", "parent ", "author A U Thor <a@b.c> 1234 +0000", "\n", "Signed-off-by: x", "abc", "\x00\xff", " "}
	var b bytes.Buffer
	n := r.IntN(5000)
	for b.Len() < n {
		switch r.IntN(10) {
		case 0:
			b.WriteByte(byte(r.IntN(256)))
		case 1:
			if b.Len() > 10 {
				s := r.IntN(b.Len())
				b.Write(append([]byte(nil), b.Bytes()[s:s+r.IntN(b.Len()-s)]...))
			}
		default:
			w := words[r.IntN(len(words))]
			if w == "\n" && r.IntN(4) != 0 && b.Len() > 0 && b.Bytes()[b.Len()-1] == '\n' {
				continue
			}
			b.WriteString(w)
		}
	}
	return b.Bytes()
}

func TestInflateHeaderMatchesZlib(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for i := 0; i < 3000; i++ {
		data := randomText(r)
		level := []int{zlib.NoCompression, zlib.BestSpeed, zlib.DefaultCompression, zlib.BestCompression, zlib.HuffmanOnly}[i%5]
		z := deflateAt(t, data, level)
		got, err := inflateHeader(z, int64(len(data)))
		if err != nil {
			t.Fatalf("case %d (level %d, %d bytes): %v", i, level, len(data), err)
		}
		if !bytes.Equal(got, wantHeader(data)) {
			t.Fatalf("case %d (level %d): got %d bytes, want %d", i, level, len(got), len(wantHeader(data)))
		}
		// A wrong size or a damaged stream is an error, never other bytes.
		if _, err := inflateHeader(z, int64(len(data))+1); err == nil && !bytes.Contains(data, []byte("\n\n")) {
			t.Fatalf("case %d: size one too large accepted", i)
		}
		bad := append([]byte(nil), z...)
		bad[len(bad)-1] ^= 1
		if got, err := inflateHeader(bad, int64(len(data))); err == nil && !bytes.Equal(got, wantHeader(data)) {
			t.Fatalf("case %d: damaged checksum gave other bytes", i)
		}
	}
}

func FuzzInflateHeader(f *testing.F) {
	f.Add(deflateAt(f, []byte("tree x\nparent y\n\nmsg"), 6), int64(20))
	f.Fuzz(func(t *testing.T, src []byte, size int64) {
		got, err := inflateHeader(src, size%100000)
		if err != nil {
			return
		}
		zr, err := zlib.NewReader(bytes.NewReader(src))
		if err != nil {
			t.Fatalf("accepted a stream zlib refuses: %v", err)
		}
		full := make([]byte, len(got))
		n, _ := readFullish(zr, full)
		if n == len(got) && !bytes.Equal(full, got) {
			t.Fatalf("prefix differs from zlib's output")
		}
	})
}

func readFullish(zr interface{ Read([]byte) (int, error) }, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := zr.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// TestReadObjectHeaderRealPack: over a real repository's pack (when
// GITPLUS_BENCH_REPO names one), every commit's header read is a prefix of
// its full content that holds the whole header.
func TestReadObjectHeaderRealPack(t *testing.T) {
	repo := os.Getenv("GITPLUS_BENCH_REPO")
	if repo == "" {
		t.Skip("GITPLUS_BENCH_REPO not set")
	}
	s, err := OpenStore(repo, QuarantineEnv{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checked := 0
	for _, d := range s.dirs() {
		for _, p := range d.packList() {
			if err := p.open(); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < p.idx.Len(); i++ {
				h := p.idx.HashAt(i)
				if typ, _, err := s.info(h); err != nil || typ != plumbing.CommitObject {
					continue
				}
				t1, head, err := s.ReadObjectHeader(h)
				if err != nil {
					t.Fatal(err)
				}
				if t1 != plumbing.CommitObject {
					continue
				}
				fresh := newObjectCache(1 << 20)
				old := s.cache
				s.cache = fresh
				t2, full, err := s.ReadRaw(h)
				s.cache = old
				if err != nil || t2 != t1 || !bytes.HasPrefix(full, head) || !bytes.HasPrefix(head, wantHeader(full)) {
					t.Fatalf("%s: header %q, full starts %q (%v)", h, head, wantHeader(full), err)
				}
				checked++
			}
		}
	}
	t.Logf("%d commits checked", checked)
}
