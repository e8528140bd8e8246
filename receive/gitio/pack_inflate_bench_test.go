package gitio

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/mergetree"
)

// benchCommits returns n deflated commits (zlib's default level, as git
// packs them) and their sizes: a header of about 250 bytes and messages
// of 60 bytes (half of them) to 2,000 bytes with a body and trailers.
func benchCommits(b *testing.B, n int) ([][]byte, []int64) {
	r := rand.New(rand.NewPCG(1, 2))
	var zs [][]byte
	var sizes []int64
	for i := 0; i < n; i++ {
		var c strings.Builder
		fmt.Fprintf(&c, "tree %040x\nparent %040x\n", r.Uint64(), r.Uint64())
		fmt.Fprintf(&c, "author A U Thor <author@example.com> %d +0100\ncommitter C O Mitter <committer@example.com> %d +0100\n\n", 1700000000+i, 1700000100+i)
		c.WriteString("subsystem: fix the thing that was broken in some way\n")
		if r.IntN(2) == 0 {
			for c.Len() < 300+r.IntN(1800) {
				c.WriteString("\nA paragraph of explanation about why the change is needed and what it does,\nwrapped at seventy-two columns like most commit messages are.\n")
			}
			c.WriteString("\nSigned-off-by: A U Thor <author@example.com>\n")
		}
		zs = append(zs, deflateAt(b, []byte(c.String()), zlib.DefaultCompression))
		sizes = append(sizes, int64(c.Len()))
	}
	return zs, sizes
}

// inflateHeaderZlib is inflateHeader done with compress/zlib: inflate in
// small steps and stop at the first blank line (zlib returns output a
// DEFLATE block, or 32 KiB, at a time, so a commit is usually inflated
// whole anyway).
func inflateHeaderZlib(src []byte, size int64) ([]byte, error) {
	zr, err := zlibReader(src)
	if err != nil {
		return nil, err
	}
	defer zlibPool.Put(zr)
	out := make([]byte, 0, min(size, 1024))
	for {
		if len(out) == cap(out) {
			out = append(out, 0)[:len(out)]
		}
		n, err := zr.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if i := bytes.Index(out, []byte("\n\n")); i >= 0 {
			return out[:i+2], nil
		}
		if err == io.EOF {
			if int64(len(out)) != size {
				return nil, errInflate
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// BenchmarkCommitHeader: reading the header of a packed commit, as the
// merge-base walk does, with our own inflater (stops at the blank line),
// compress/zlib inflating the whole commit (inflate, as for any object),
// and compress/zlib stopping as early as it can. ns/op is per commit.
func BenchmarkCommitHeader(b *testing.B) {
	zs, sizes := benchCommits(b, 1000)
	for _, v := range []struct {
		name string
		f    func([]byte, int64) ([]byte, error)
	}{{"own", inflateHeader}, {"zlib-whole", inflateZlib}, {"own-whole", inflate}, {"zlib-stop", inflateHeaderZlib}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k := i % len(zs)
				h, err := v.f(zs[k], sizes[k])
				if err != nil || !bytes.HasPrefix(h, []byte("tree ")) {
					b.Fatalf("commit %d: %v", k, err)
				}
			}
		})
	}
}

// storeObjects is a Store as a mergetree.Store (receive.Objects, without
// its mapping of missing objects).
type storeObjects struct{ *Store }

func (o storeObjects) ReadObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return o.ReadRaw(h)
}

// wholeObjects is a mergetree.Store without ReadObjectHeader: commits are
// read whole (compress/zlib), as they would be without our inflater.
type wholeObjects struct{ s *Store }

func (w wholeObjects) ReadObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return w.s.ReadRaw(h)
}

// BenchmarkMergeBaseWalk: the merge-base walk over a packed linear history
// of 5,000 commits (messages as in benchCommits), from a fresh store each
// time: the place the header-only read is for.
func BenchmarkMergeBaseWalk(b *testing.B) {
	dir := b.TempDir()
	fixtures.GitRaw(b, dir, nil, "init", "-q", "--bare")
	var fi bytes.Buffer
	r := rand.New(rand.NewPCG(3, 4))
	const n = 5000
	for i := 0; i < n; i++ {
		var msg strings.Builder
		msg.WriteString("subsystem: fix the thing that was broken in some way\n")
		if r.IntN(2) == 0 {
			for msg.Len() < 300+r.IntN(1800) {
				msg.WriteString("\nA paragraph of explanation about why the change is needed and what it does,\nwrapped at seventy-two columns like most commit messages are.\n")
			}
			msg.WriteString("\nSigned-off-by: A U Thor <author@example.com>\n")
		}
		fmt.Fprintf(&fi, "commit refs/heads/main\nmark :%d\ncommitter C O Mitter <c@example.com> %d +0000\ndata %d\n%s\n", i+1, 1700000000+i, msg.Len(), msg.String())
		if i == 0 {
			fmt.Fprintf(&fi, "M 100644 inline f\ndata 2\nx\n\n")
		} else {
			fmt.Fprintf(&fi, "from :%d\n\n", i)
		}
	}
	fmt.Fprintf(&fi, "commit refs/heads/side\ncommitter C O Mitter <c@example.com> 1600000000 +0000\ndata 5\nside\nfrom :1\n\n")
	fixtures.GitRaw(b, dir, fi.Bytes(), "fast-import", "--quiet")
	fixtures.GitRaw(b, dir, nil, "repack", "-adq")
	tip := plumbing.NewHash(fixtures.Git(b, dir, "rev-parse", "main"))
	side := plumbing.NewHash(fixtures.Git(b, dir, "rev-parse", "side"))
	for _, v := range []string{"own", "zlib-whole", "zlib-stop"} {
		b.Run(v, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s, err := OpenStore(dir, QuarantineEnv{})
				if err != nil {
					b.Fatal(err)
				}
				var st mergetree.Store = storeObjects{s}
				switch v {
				case "zlib-whole":
					st = wholeObjects{s}
				case "zlib-stop":
					st = zlibHeaderObjects{storeObjects{s}}
				}
				if _, err := mergetree.MergeBases(st, tip, side); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

// zlibHeaderObjects is storeObjects with ReadObjectHeader done by
// inflateHeaderZlib instead of our inflater.
type zlibHeaderObjects struct{ storeObjects }

func (o zlibHeaderObjects) ReadObjectHeader(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	s := o.Store
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
	data, err := inflateHeaderZlib(loc.p.data[hd.dataOff:len(loc.p.data)-hashLen], hd.size)
	if err != nil {
		return s.packObject(loc.p, loc.off, h)
	}
	return packTypeToObject(hd.typ), data, nil
}
