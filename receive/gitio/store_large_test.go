package gitio

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
)

// looseFile writes a loose object file: header, then content, deflated.
func looseFile(t *testing.T, dir string, h plumbing.Hash, header string, content []byte) string {
	t.Helper()
	var b bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	zw.Write([]byte(header))
	zw.Write(content)
	zw.Close()
	path := loosePath(dir, h)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	return path
}

func noise(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestReadLooseSizes: a loose object is read whole only when its header's
// size is the truth; small, mapped (over looseMapAbove) and grown (over
// maxTrustedSize) buffers alike. Whatever the header claims, the object is
// the right bytes or an error wrapping ErrCorruptObject.
func TestReadLooseSizes(t *testing.T) {
	defer func(old int64) { maxTrustedSize = old }(maxTrustedSize)
	maxTrustedSize = 100 << 10 // so the 300 KB and 1.5 MB objects grow
	dir := t.TempDir()
	for _, n := range []int{0, 1, 5000, 100 << 10, 300 << 10, looseMapAbove + 500<<10} {
		content := noise(n, uint64(n))
		for _, tc := range []struct {
			claim int64
			ok    bool
		}{{int64(n), true}, {int64(n) + 1, false}, {int64(n) - 1, false}, {int64(n) * 2, false}, {1 << 40, false}} {
			if tc.claim < 0 || tc.claim == int64(n) && !tc.ok {
				continue
			}
			h := plumbing.ComputeHash(plumbing.BlobObject, append(content, byte(tc.claim)))
			looseFile(t, dir, h, fmt.Sprintf("blob %d\x00", tc.claim), content)
			typ, got, err := readLoose(dir, h)
			if tc.ok {
				if err != nil || typ != plumbing.BlobObject || !bytes.Equal(got, content) {
					t.Fatalf("%d bytes: got %s of %d bytes, %v", n, typ, len(got), err)
				}
				continue
			}
			if !errors.Is(err, ErrCorruptObject) || !strings.Contains(err.Error(), h.String()) {
				t.Fatalf("%d bytes claiming %d: got %d bytes, err %v", n, tc.claim, len(got), err)
			}
		}
	}
}

// TestLyingHeaderAllocates: a loose object whose header claims far more
// than it holds costs at most maxTrustedSize before the lie shows, and a
// claim its compressed bytes cannot hold costs nothing.
func TestLyingHeaderAllocates(t *testing.T) {
	defer func(old int64) { maxTrustedSize = old }(maxTrustedSize)
	maxTrustedSize = 1 << 20
	dir := t.TempDir()
	content := noise(200<<10, 3)
	for _, claim := range []int64{150 << 20, 1 << 40} {
		h := plumbing.ComputeHash(plumbing.BlobObject, append(content, byte(claim>>20)))
		looseFile(t, dir, h, fmt.Sprintf("blob %d\x00", claim), content)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, err := readLoose(dir, h)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrCorruptObject) {
			t.Fatalf("claim %d: err %v", claim, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
			t.Fatalf("claim %d over %d bytes: allocated %d bytes", claim, len(content), got)
		}
	}
}

// TestInflateSizes: the same for a packed entry's stream (inflate); and a
// prefix (inflatePrefix) is the first bytes of the content.
func TestInflateSizes(t *testing.T) {
	defer func(old int64) { maxTrustedSize = old }(maxTrustedSize)
	maxTrustedSize = 1000
	for _, n := range []int{0, 10, 999, 1000, 1001, 4000, 70000} {
		content := noise(n, uint64(n)+7)
		src := deflateAt(t, content, zlib.DefaultCompression)
		src = append(src, "next entry"...) // a pack goes on after the stream
		got, err := inflate(src, int64(n))
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("%d bytes: got %d, %v", n, len(got), err)
		}
		for _, claim := range []int64{int64(n) + 1, int64(n) - 1, 1 << 50} {
			if claim < 0 {
				continue
			}
			if got, err := inflate(src, claim); err == nil {
				t.Fatalf("%d bytes claiming %d: got %d bytes and no error", n, claim, len(got))
			}
		}
		if _, err := inflate(src, -1); err == nil {
			t.Fatal("a negative size was accepted")
		}
		for _, k := range []int{0, 1, 8000, n} {
			p, err := inflatePrefix(src, int64(n), k)
			if err != nil || !bytes.Equal(p, content[:min(k, n)]) {
				t.Fatalf("%d bytes, prefix %d: got %d bytes, %v", n, k, len(p), err)
			}
		}
	}
}

// checkPrefixes: ReadObjectPrefix agrees with git for every object.
func checkPrefixes(t *testing.T, s *Store, want map[plumbing.Hash]gitObject) {
	t.Helper()
	for id, w := range want {
		for _, n := range []int{0, 1, 100, 8000, len(w.data), len(w.data) + 1} {
			typ, p, err := s.ReadObjectPrefix(id, n)
			if err != nil || typ != w.typ || !bytes.Equal(p, w.data[:min(n, len(w.data))]) {
				t.Fatalf("ReadObjectPrefix(%s, %d) = %s of %d bytes, %v; git says %s of %d bytes", id, n, typ, len(p), err, w.typ, len(w.data))
			}
		}
	}
	missing := plumbing.NewHash(strings.Repeat("ab", 20))
	if _, _, err := s.ReadObjectPrefix(missing, 10); !errors.Is(err, plumbing.ErrObjectNotFound) {
		t.Fatalf("a missing object: %v", err)
	}
}

// TestReadObjectPrefix: over loose objects (the 2 MiB blob is mapped),
// ofs-deltas and ref-deltas, a prefix is the start of what git has.
func TestReadObjectPrefix(t *testing.T) {
	dir := t.TempDir()
	makeHistory(t, dir, 8)
	gitDir := filepath.Join(dir, ".git")
	want := catFileAll(t, gitDir)
	checkPrefixes(t, checkAll(t, gitDir, want), want)
	fixtures.GitRaw(t, dir, nil, "repack", "-adfq", "--window=50", "--depth=50")
	checkPrefixes(t, checkAll(t, gitDir, want), want)
	fixtures.GitRaw(t, dir, nil, "-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq", "--window=50", "--depth=50")
	checkPrefixes(t, checkAll(t, gitDir, want), want)
}

// TestLooseHeaderAgainstGit: the loose header's type and size are read as
// git reads them; git (the oracle) and the store agree on which headers
// parse: a size with a sign, a leading zero, a second space or no NUL does
// not.
func TestLooseHeaderAgainstGit(t *testing.T) {
	gitDir := filepath.Join(t.TempDir(), "r.git")
	fixtures.GitRaw(t, ".", nil, "init", "-q", "--bare", gitDir)
	dir := filepath.Join(gitDir, "objects")
	for _, header := range []string{"blob 3\x00", "blob 03\x00", "blob +3\x00", "blob  3\x00", "blob 3 \x00", "commit 3\x00", "Blob 3\x00", "blob 0x3\x00"} {
		content := []byte("abc")
		h := plumbing.ComputeHash(plumbing.BlobObject, append([]byte(header), content...))
		looseFile(t, dir, h, header, content)
		cmd := exec.Command("git", "--git-dir="+gitDir, "cat-file", "-t", h.String())
		cmd.Env = fixtures.GitEnv(gitDir)
		out, gitErr := cmd.Output()
		typ, _, err := readLoose(dir, h)
		switch {
		case (gitErr == nil) != (err == nil):
			t.Errorf("header %q: git says %q (%v), the store %v", header, out, gitErr, err)
		case err == nil && typ.String() != strings.TrimSpace(string(out)):
			t.Errorf("header %q: git reads a %s, the store a %s", header, out, typ)
		}
	}
}
