package gitio

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/gitplus/gitplus/fixtures"
)

// benchRepo returns a generated repository: GITPLUS_BENCH_REPO if set, else
// one made by bench/genrepo.sh (GITPLUS_BENCH_FILES, GITPLUS_BENCH_COMMITS;
// default 20000 files, 10000 commits) and cached in the temp directory.
// Only benchmarks call it, so a plain `go test` never generates anything.
func benchRepo(b *testing.B) string {
	b.Helper()
	if dir := os.Getenv("GITPLUS_BENCH_REPO"); dir != "" {
		return dir
	}
	files, commits := envInt("GITPLUS_BENCH_FILES", 20000), envInt("GITPLUS_BENCH_COMMITS", 10000)
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("gitplus-bench-%d-%d.git", files, commits))
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		return dir
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "..", "..", "bench", "genrepo.sh")
	b.Logf("generating %s (%d files, %d commits)", dir, files, commits)
	cmd := exec.Command("sh", script, tmp, strconv.Itoa(files), strconv.Itoa(commits))
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("genrepo: %v", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	return dir
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func benchTip(b *testing.B, dir string) plumbing.Hash {
	b.Helper()
	h, err := ReadRef(dir, "refs/heads/main")
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// commitTree extracts the tree id from raw commit bytes.
func commitTree(data []byte) plumbing.Hash {
	if len(data) < 45 || !bytes.HasPrefix(data, []byte("tree ")) {
		return plumbing.ZeroHash
	}
	return plumbing.NewHash(string(data[5:45]))
}

// BenchmarkOpenReadCommitTree: the fixed cost a hook pays: open the object
// store cold, read the branch tip commit and its root tree.
func BenchmarkOpenReadCommitTree(b *testing.B) {
	dir := benchRepo(b)
	tip := benchTip(b, dir)

	b.Run("store", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s, err := OpenStore(dir, QuarantineEnv{})
			if err != nil {
				b.Fatal(err)
			}
			_, c, err := s.ReadRaw(tip)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := s.ReadRaw(commitTree(c)); err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
	b.Run("store-gogit-object", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s, err := OpenStore(dir, QuarantineEnv{})
			if err != nil {
				b.Fatal(err)
			}
			c, err := object.GetCommit(s, tip)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Tree(); err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
	b.Run("gogit-filesystem", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
			c, err := object.GetCommit(st, tip)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Tree(); err != nil {
				b.Fatal(err)
			}
			st.Close()
		}
	})
	b.Run("gogit-packfile-lazyidx", func(b *testing.B) {
		// go-git's own pack reader fed our lazy index: it needs offset → id
		// for every ofs-delta, so without a .rev file it sorts all offsets.
		open := lazyPackfile(b, dir)
		for i := 0; i < b.N; i++ {
			p, idx := open()
			o, err := p.Get(tip)
			if err != nil {
				b.Fatal(err)
			}
			c, err := object.DecodeCommit(nil, o)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.Get(c.TreeHash); err != nil {
				b.Fatal(err)
			}
			p.Close()
			idx.Close()
		}
	})
	b.Run("git-cat-file-batch", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			cmd := exec.Command("git", "cat-file", "--batch")
			cmd.Dir = dir
			cmd.Env = fixtures.GitEnv(dir)
			in, _ := cmd.StdinPipe()
			outPipe, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			out := bufio.NewReader(outPipe)
			read := func(h plumbing.Hash) []byte {
				fmt.Fprintf(in, "%s\n", h)
				line, err := out.ReadString('\n')
				if err != nil {
					b.Fatal(err)
				}
				f := strings.Fields(line)
				n, _ := strconv.Atoi(f[2])
				data := make([]byte, n+1)
				if _, err := io.ReadFull(out, data); err != nil {
					b.Fatal(err)
				}
				return data[:n]
			}
			read(commitTree(read(tip)))
			in.Close()
			cmd.Wait()
		}
	})
}

// BenchmarkReadAllTrees: warm throughput, reading the tip's whole tree
// (every tree object, no blobs) through an open store.
func BenchmarkReadAllTrees(b *testing.B) {
	dir := benchRepo(b)
	tip := benchTip(b, dir)
	walk := func(b *testing.B, read func(plumbing.Hash) (*object.Tree, error), root plumbing.Hash) int {
		n := 0
		var rec func(h plumbing.Hash)
		rec = func(h plumbing.Hash) {
			t, err := read(h)
			if err != nil {
				b.Fatal(err)
			}
			n++
			for _, e := range t.Entries {
				if e.Mode == 0o040000 {
					rec(e.Hash)
				}
			}
		}
		rec(root)
		return n
	}
	s, err := OpenStore(dir, QuarantineEnv{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c, err := object.GetCommit(s, tip)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("store", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n := walk(b, func(h plumbing.Hash) (*object.Tree, error) { return object.GetTree(s, h) }, c.TreeHash)
			b.ReportMetric(float64(n), "trees/op")
		}
	})
	b.Run("store-raw", func(b *testing.B) {
		// the merge engine's path: ReadRaw and a minimal entry scan
		for i := 0; i < b.N; i++ {
			n := 0
			var rec func(h plumbing.Hash)
			rec = func(h plumbing.Hash) {
				_, data, err := s.ReadRaw(h)
				if err != nil {
					b.Fatal(err)
				}
				n++
				for len(data) > 0 {
					nul := bytes.IndexByte(data, 0)
					if nul < 0 || nul+21 > len(data) {
						b.Fatal("bad tree")
					}
					if bytes.HasPrefix(data, []byte("40000 ")) {
						var id plumbing.Hash
						copy(id[:], data[nul+1:nul+21])
						rec(id)
					}
					data = data[nul+21:]
				}
			}
			rec(c.TreeHash)
			b.ReportMetric(float64(n), "trees/op")
		}
	})
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	defer st.Close()
	b.Run("gogit-filesystem", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n := walk(b, func(h plumbing.Hash) (*object.Tree, error) { return object.GetTree(st, h) }, c.TreeHash)
			b.ReportMetric(float64(n), "trees/op")
		}
	})
}

// BenchmarkOpenReadOldTree: like BenchmarkOpenReadCommitTree but for a tree
// of an old commit (main~6000:src/d07/d03), which git stores at the end of a
// delta chain (the newest version of an object is usually the full one):
// go-git's reader then needs offset → id for every ofs-delta base.
func BenchmarkOpenReadOldTree(b *testing.B) {
	dir := benchRepo(b)
	out, err := exec.Command("git", "--git-dir", dir, "rev-parse", "main~6000:src/d07/d03").Output()
	if err != nil {
		b.Skip("history too short")
	}
	tree := plumbing.NewHash(strings.TrimSpace(string(out)))
	b.Run("store", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s, err := OpenStore(dir, QuarantineEnv{})
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := s.ReadRaw(tree); err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
	b.Run("gogit-filesystem", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
			if _, err := object.GetTree(st, tree); err != nil {
				b.Fatal(err)
			}
			st.Close()
		}
	})
	b.Run("gogit-packfile-lazyidx", func(b *testing.B) {
		open := lazyPackfile(b, dir)
		for i := 0; i < b.N; i++ {
			p, idx := open()
			if _, err := p.Get(tree); err != nil {
				b.Fatal(err)
			}
			p.Close()
			idx.Close()
		}
	})
}

// lazyPackfile returns an opener of go-git's pack reader over the one pack
// of dir, fed our lazy index (the caller closes both); it skips b when dir
// has another number of packs.
func lazyPackfile(b *testing.B, dir string) func() (*packfile.Packfile, *PackIndex) {
	idxs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.idx"))
	if len(idxs) != 1 {
		b.Skip("want exactly one pack")
	}
	fs := osfs.New(filepath.Join(dir, "objects", "pack"))
	return func() (*packfile.Packfile, *PackIndex) {
		idx, err := OpenPackIndex(idxs[0])
		if err != nil {
			b.Fatal(err)
		}
		f, err := fs.Open(strings.TrimSuffix(filepath.Base(idxs[0]), ".idx") + ".pack")
		if err != nil {
			b.Fatal(err)
		}
		return packfile.NewPackfile(idx, fs, f, 0), idx
	}
}
