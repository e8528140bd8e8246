package gitio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/matryer/is"

	"github.com/gitplus/gitplus/fixtures"
)

// checkAll reads every object git knows through a fresh store and compares.
func checkAll(t *testing.T, gitDir string, want map[plumbing.Hash]gitObject) *Store {
	t.Helper()
	s, err := OpenStore(gitDir, QuarantineEnv{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for id, w := range want {
		typ, data, err := s.ReadRaw(id)
		if err != nil {
			t.Fatalf("ReadRaw %s: %v", id, err)
		}
		if typ != w.typ || !bytes.Equal(data, w.data) {
			t.Fatalf("object %s: got %s of %d bytes, git says %s of %d bytes", id, typ, len(data), w.typ, len(w.data))
		}
		if got := plumbing.ComputeHash(typ, data); got != id {
			t.Fatalf("object %s: content hashes to %s", id, got)
		}
		t2, size, err := s.ObjectInfo(id)
		if err != nil || t2 != w.typ || size != int64(len(w.data)) {
			t.Fatalf("ObjectInfo %s = %s %d %v, want %s %d", id, t2, size, err, w.typ, len(w.data))
		}
		if ok, err := s.HasObject(id); !ok || err != nil {
			t.Fatalf("HasObject %s = %v %v", id, ok, err)
		}
	}
	return s
}

// entryTypes counts the pack entry types of every pack in gitDir.
func entryTypes(t *testing.T, gitDir string) map[int]int {
	t.Helper()
	counts := map[int]int{}
	for _, idxPath := range packFiles(t, gitDir) {
		p := &pack{idxPath: idxPath, packPath: strings.TrimSuffix(idxPath, ".idx") + ".pack"}
		if err := p.open(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < p.idx.Len(); i++ {
			off, err := p.idx.OffsetAt(i)
			if err != nil {
				t.Fatal(err)
			}
			h, err := p.header(off)
			if err != nil {
				t.Fatal(err)
			}
			counts[h.typ]++
		}
		p.close()
	}
	return counts
}

func TestStoreLooseAndPackedMatchGit(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	makeHistory(t, dir, 40)
	gitDir := filepath.Join(dir, ".git")
	want := catFileAll(t, gitDir)

	is.Equal(len(packFiles(t, gitDir)), 0) // all loose so far
	checkAll(t, gitDir, want)

	// ofs-deltas (the default)
	fixtures.GitRaw(t, dir, nil, "repack", "-adfq", "--window=50", "--depth=50")
	types := entryTypes(t, gitDir)
	if types[packOfsDelta] < 40 {
		t.Fatalf("want many ofs-deltas, got %v", types)
	}
	checkAll(t, gitDir, want)

	// ref-deltas, with a .rev file
	fixtures.GitRaw(t, dir, nil, "-c", "repack.useDeltaBaseOffset=false", "-c", "pack.writeReverseIndex=true", "repack", "-adfq", "--window=50", "--depth=50")
	types = entryTypes(t, gitDir)
	if types[packRefDelta] < 40 || types[packOfsDelta] != 0 {
		t.Fatalf("want only ref-deltas, got %v", types)
	}
	revs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.rev"))
	is.Equal(len(revs), 1)
	s := checkAll(t, gitDir, want)

	// go-git reads through the store
	head := plumbing.NewHash(fixtures.Git(t, dir, "rev-parse", "HEAD"))
	c, err := object.GetCommit(s, head)
	is.NoErr(err)
	is.Equal(c.Message, "commit 39\n")
	files, err := c.Files()
	is.NoErr(err)
	n := 0
	is.NoErr(files.ForEach(func(f *object.File) error { n++; return nil }))
	is.Equal(n, len(strings.Split(fixtures.Git(t, dir, "ls-tree", "-r", "HEAD"), "\n")))
	tag, err := object.GetTag(s, plumbing.NewHash(fixtures.Git(t, dir, "rev-parse", "v1")))
	is.NoErr(err)
	is.Equal(tag.Target, head)

	// Concurrent cold reads through one store agree with git.
	cs, err := OpenStore(gitDir, QuarantineEnv{})
	is.NoErr(err)
	defer cs.Close()
	ids := make([]plumbing.Hash, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func(g int) {
			for i := range ids {
				id := ids[(i*7+g*13)%len(ids)]
				_, data, err := cs.ReadRaw(id)
				if err == nil && !bytes.Equal(data, want[id].data) {
					err = errors.New("content differs for " + id.String())
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(g)
	}
	for g := 0; g < 4; g++ {
		is.NoErr(<-errs)
	}

	// A new pack written after the store opened is found (rescan on miss).
	write(t, filepath.Join(dir, "late.txt"), "late\n")
	fixtures.GitRaw(t, dir, nil, "add", "late.txt")
	fixtures.GitRaw(t, dir, nil, "commit", "-q", "-m", "late")
	fixtures.GitRaw(t, dir, nil, "repack", "-dq")
	late := plumbing.NewHash(fixtures.Git(t, dir, "rev-parse", "HEAD"))
	_, data, err := cs.ReadRaw(late)
	is.NoErr(err)
	is.True(bytes.Contains(data, []byte("late")))
}

func TestStoreCorruptPack(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	makeHistory(t, dir, 4)
	gitDir := filepath.Join(dir, ".git")
	fixtures.GitRaw(t, dir, nil, "repack", "-adq")
	head := plumbing.NewHash(fixtures.Git(t, dir, "rev-parse", "HEAD"))
	idxPath := packFiles(t, gitDir)[0]
	x, err := OpenPackIndex(idxPath)
	is.NoErr(err)
	off, err := x.FindOffset(head)
	is.NoErr(err)
	x.Close()
	packPath := strings.TrimSuffix(idxPath, ".idx") + ".pack"
	data, err := os.ReadFile(packPath)
	is.NoErr(err)
	data[off+8] ^= 0x55 // inside the commit's zlib stream
	is.NoErr(os.Chmod(packPath, 0o644))
	is.NoErr(os.WriteFile(packPath, data, 0o644))
	s, err := OpenStore(gitDir, QuarantineEnv{})
	is.NoErr(err)
	defer s.Close()
	_, _, err = s.ReadRaw(head)
	is.True(errors.Is(err, ErrCorruptObject))
	is.True(strings.Contains(err.Error(), head.String()))
	is.True(!errors.Is(err, plumbing.ErrObjectNotFound)) // corrupt is not "absent"
}

func TestStoreMixedLayersAndAlternates(t *testing.T) {
	is := is.New(t)
	base := t.TempDir()
	makeHistory(t, base, 12)
	fixtures.GitRaw(t, base, nil, "repack", "-adq")
	// a second repository borrowing base's objects, with loose objects of its own
	other := t.TempDir()
	fixtures.GitRaw(t, other, nil, "init", "-q", "--bare")
	// unclean path, like receive-pack's "…/./objects"
	alt := filepath.Join(base, ".git", ".", "objects")
	write(t, filepath.Join(other, "objects", "info", "alternates"), alt+"\n")
	fixtures.GitRaw(t, base, nil, "push", "-q", other, "main")
	want := catFileAll(t, other) // includes the alternate's objects
	s := checkAll(t, other, want)
	is.Equal(len(s.ObjectDirs()), 2)
}

func TestStoreMissingObject(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	makeHistory(t, dir, 3)
	fixtures.GitRaw(t, dir, nil, "repack", "-adq")
	s, err := OpenStore(filepath.Join(dir, ".git"), QuarantineEnv{})
	is.NoErr(err)
	defer s.Close()
	missing := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	_, _, err = s.ReadRaw(missing)
	is.True(errors.Is(err, plumbing.ErrObjectNotFound))
	is.True(strings.Contains(err.Error(), missing.String()))
	_, err = object.GetCommit(s, missing)
	is.True(errors.Is(err, plumbing.ErrObjectNotFound))
	is.True(errors.Is(s.HasEncodedObject(missing), plumbing.ErrObjectNotFound))
	ok, err := s.HasObject(missing)
	is.NoErr(err)
	is.True(!ok)
	_, err = s.EncodedObjectSize(missing)
	is.True(errors.Is(err, plumbing.ErrObjectNotFound))
	// wrong type is "not found" too, as the interface asks
	head := plumbing.NewHash(fixtures.Git(t, dir, "rev-parse", "HEAD"))
	_, err = s.EncodedObject(plumbing.BlobObject, head)
	is.True(errors.Is(err, plumbing.ErrObjectNotFound))
}

func TestStoreWritesLooseOutsideQuarantineOnly(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	fixtures.GitRaw(t, dir, nil, "init", "-q", "--bare")
	s, err := OpenStore(dir, QuarantineEnv{})
	is.NoErr(err)
	o := s.NewEncodedObject()
	o.SetType(plumbing.BlobObject)
	w, _ := o.Writer()
	w.Write([]byte("hello store\n"))
	w.Close()
	h, err := s.SetEncodedObject(o)
	is.NoErr(err)
	is.Equal(strings.TrimSpace(fixtures.GitRaw(t, dir, []byte("hello store\n"), "hash-object", "--stdin")), h.String())
	is.Equal(fixtures.GitRaw(t, dir, nil, "cat-file", "blob", h.String()), "hello store\n")
	_, err = os.Stat(filepath.Join(dir, "objects", h.String()[:2], h.String()[2:]))
	is.NoErr(err)
	// writing it again is a no-op
	h2, err := s.WriteRaw(plumbing.BlobObject, []byte("hello store\n"))
	is.NoErr(err)
	is.Equal(h2, h)
	// a commit built by go-git and stored, read back by git
	c := &object.Commit{
		Author:   object.Signature{Name: "A", Email: "a@x"},
		Message:  "m\n",
		TreeHash: plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904"),
	}
	_, err = s.WriteRaw(plumbing.TreeObject, nil)
	is.NoErr(err)
	mo := s.NewEncodedObject()
	is.NoErr(c.Encode(mo))
	ch, err := s.SetEncodedObject(mo)
	is.NoErr(err)
	is.Equal(fixtures.GitRaw(t, dir, nil, "cat-file", "-t", ch.String()), "commit\n")

	q := t.TempDir()
	qs, err := OpenStore(dir, QuarantineEnv{QuarantinePath: q, ObjectDirectory: q, AlternateObjectDirectories: filepath.Join(dir, "objects")})
	is.NoErr(err)
	_, err = qs.WriteRaw(plumbing.BlobObject, []byte("nope"))
	is.True(errors.Is(err, ErrQuarantineWrite))
	_, err = qs.SetEncodedObject(o)
	is.True(errors.Is(err, ErrQuarantineWrite))
	// and the quarantine store still reads the main objects
	_, data, err := qs.ReadRaw(h)
	is.NoErr(err)
	is.Equal(string(data), "hello store\n")
}

func TestQuarantineFromEnviron(t *testing.T) {
	is := is.New(t)
	e := QuarantineFromEnviron([]string{
		"PATH=/bin",
		"GIT_QUARANTINE_PATH=/r.git/./objects/tmp_objdir-incoming-x",
		"GIT_OBJECT_DIRECTORY=/r.git/./objects/tmp_objdir-incoming-x",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=/r.git/./objects:/other/objects",
		"BROKEN",
	})
	is.True(e.InQuarantine())
	is.Equal(e.ObjectDirectory, "/r.git/./objects/tmp_objdir-incoming-x")
	is.Equal(e.AlternateObjectDirectories, "/r.git/./objects:/other/objects")
	is.True(!QuarantineFromEnviron([]string{"HOME=/x"}).InQuarantine())
}

func TestPackIndexMatchesGoGitAndRev(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	makeHistory(t, dir, 20)
	gitDir := filepath.Join(dir, ".git")
	fixtures.GitRaw(t, dir, nil, "repack", "-adq")
	idxs := packFiles(t, gitDir)
	is.Equal(len(idxs), 1)
	raw, err := os.ReadFile(idxs[0])
	is.NoErr(err)
	mem := idxfile.NewMemoryIndex()
	is.NoErr(idxfile.NewDecoder(bytes.NewReader(raw)).Decode(mem))

	lazy, err := OpenPackIndex(idxs[0])
	is.NoErr(err)
	defer lazy.Close()
	memIter, _ := mem.Entries()
	lazyIter, _ := lazy.Entries()
	n := 0
	for {
		a, errA := memIter.Next()
		b, errB := lazyIter.Next()
		if errA != nil || errB != nil {
			is.Equal(errA, errB)
			break
		}
		is.Equal(*a, *b)
		off, err := lazy.FindOffset(a.Hash)
		is.NoErr(err)
		is.Equal(uint64(off), a.Offset)
		crc, _ := lazy.FindCRC32(a.Hash)
		is.Equal(crc, a.CRC32)
		h, err := lazy.FindHash(off) // built reverse order (no .rev yet)
		is.NoErr(err)
		is.Equal(h, a.Hash)
		n++
	}
	c, _ := lazy.Count()
	is.Equal(int64(n), c)
	is.True(n > 50)
	_, err = lazy.FindHash(1)
	is.True(errors.Is(err, plumbing.ErrObjectNotFound))
	_, err = lazy.FindOffset(plumbing.NewHash("ffffffffffffffffffffffffffffffffffffffff"))
	is.True(errors.Is(err, plumbing.ErrObjectNotFound))

	// The same pack with a .rev: FindHash and EntriesByOffset agree.
	fixtures.GitRaw(t, dir, nil, "index-pack", "--rev-index", strings.TrimSuffix(idxs[0], ".idx")+".pack")
	_, err = os.Stat(strings.TrimSuffix(idxs[0], ".idx") + ".rev")
	is.NoErr(err)
	withRev, err := OpenPackIndex(idxs[0])
	is.NoErr(err)
	defer withRev.Close()
	it, _ := withRev.EntriesByOffset()
	last := int64(-1)
	count := 0
	for {
		e, err := it.Next()
		if err != nil {
			break
		}
		is.True(int64(e.Offset) > last)
		last = int64(e.Offset)
		h, err := withRev.FindHash(int64(e.Offset))
		is.NoErr(err)
		is.Equal(h, e.Hash)
		count++
	}
	is.Equal(count, n)
	is.True(withRev.rev.table != nil) // answered from the .rev file
}

func TestLargeOffsetTable(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	makeHistory(t, dir, 10)
	fixtures.GitRaw(t, dir, nil, "repack", "-adq")
	gitDir := filepath.Join(dir, ".git")
	want := catFileAll(t, gitDir)
	idx := packFiles(t, gitDir)[0]
	packPath := strings.TrimSuffix(idx, ".idx") + ".pack"
	// Re-index so that every object past offset 64 uses the 64-bit table.
	other := t.TempDir()
	is.NoErr(os.MkdirAll(filepath.Join(other, "objects", "pack"), 0o755))
	data, err := os.ReadFile(packPath)
	is.NoErr(err)
	newPack := filepath.Join(other, "objects", "pack", filepath.Base(packPath))
	is.NoErr(os.WriteFile(newPack, data, 0o644))
	fixtures.GitRaw(t, other, nil, "index-pack", "--index-version=2,64", newPack)
	lazy, err := OpenPackIndex(strings.TrimSuffix(newPack, ".pack") + ".idx")
	is.NoErr(err)
	is.True(len(lazy.offs64) > 8*10) // really uses the large table
	lazy.Close()
	checkAll(t, other, want)

	// Synthetic: offsets beyond 4 GiB survive the round trip.
	var es []idxEntry
	for i := 0; i < 300; i++ {
		h := plumbing.ComputeHash(plumbing.BlobObject, []byte{byte(i), byte(i >> 8)})
		es = append(es, idxEntry{id: h, crc: uint32(i), off: uint64(i) << 25})
	}
	x, err := ParsePackIndex("synthetic", encodeIdx(es, plumbing.ZeroHash))
	is.NoErr(err)
	for _, e := range es {
		off, err := x.FindOffset(e.id)
		is.NoErr(err)
		is.Equal(uint64(off), e.off)
		h, err := x.FindHash(off)
		is.NoErr(err)
		is.Equal(h, e.id)
	}
}

func TestPackIndexRejectsMalformed(t *testing.T) {
	is := is.New(t)
	good := encodeIdx([]idxEntry{{id: plumbing.NewHash("11"), off: 12}}, plumbing.ZeroHash)
	_, err := ParsePackIndex("good", good)
	is.NoErr(err)
	for name, mut := range map[string]func([]byte) []byte{
		"short":     func(b []byte) []byte { return b[:100] },
		"magic":     func(b []byte) []byte { b[0] = 0; return b },
		"version":   func(b []byte) []byte { b[7] = 3; return b },
		"fanout":    func(b []byte) []byte { b[8+4*0x20+3] = 9; return b },
		"truncated": func(b []byte) []byte { return b[:len(b)-4] },
	} {
		b := mut(append([]byte(nil), good...))
		_, err := ParsePackIndex(name, b)
		if !errors.Is(err, ErrBadPackIndex) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	// a large-offset reference past the table is an error, not a panic
	bad := append([]byte(nil), good...)
	p := 8 + 1024 + 20 + 4
	copy(bad[p:], []byte{0x80, 0, 0, 5})
	x, err := ParsePackIndex("bad", bad)
	is.NoErr(err)
	_, err = x.FindOffset(plumbing.NewHash("11"))
	is.True(errors.Is(err, ErrBadPackIndex))
}

func TestApplyDeltaRejectsBadInput(t *testing.T) {
	is := is.New(t)
	base := []byte("0123456789")
	// src 10, dst 4, copy off 2 len 3, insert "x"
	out, err := applyDelta(base, []byte{10, 4, 0x91, 2, 3, 1, 'x'})
	is.NoErr(err)
	is.Equal(string(out), "234x")
	for _, d := range [][]byte{
		{9, 4, 0x91, 2, 3, 1, 'x'},  // wrong source size
		{10, 5, 0x91, 2, 3, 1, 'x'}, // short result
		{10, 4, 0x91, 9, 3, 1, 'x'}, // copy out of range
		{10, 4, 0},                  // reserved opcode
		{10, 4, 5, 'x'},             // truncated insert
		{10},
	} {
		_, err := applyDelta(base, d)
		is.True(err != nil)
	}
}

// TestEveryReadRescansOnMiss: each way of reading an object (ReadRaw,
// ObjectInfo, HasObject, ReadObjectPrefix, ReadObjectHeader) finds an
// object that was loose when the store opened and has since moved into a
// new pack, and one written and packed after the store opened: a miss in
// the packs and the loose files rescans the pack directories once.
func TestEveryReadRescansOnMiss(t *testing.T) {
	dir := t.TempDir()
	makeHistory(t, dir, 2)
	fixtures.GitRaw(t, dir, nil, "repack", "-adq")
	packed := plumbing.NewHash(fixtures.Git(t, dir, "rev-parse", "HEAD"))
	write(t, filepath.Join(dir, "loose.txt"), "loose\n")
	fixtures.GitRaw(t, dir, nil, "add", "loose.txt")
	fixtures.GitRaw(t, dir, nil, "commit", "-q", "-m", "loose")
	moved := plumbing.NewHash(fixtures.Git(t, dir, "rev-parse", "HEAD"))
	reads := map[string]func(*Store, plumbing.Hash) error{
		"ReadRaw": func(s *Store, h plumbing.Hash) error {
			typ, data, err := s.ReadRaw(h)
			if err == nil && (typ != plumbing.CommitObject || plumbing.ComputeHash(typ, data) != h) {
				err = fmt.Errorf("read a %s that hashes to %s", typ, plumbing.ComputeHash(typ, data))
			}
			return err
		},
		"ObjectInfo": func(s *Store, h plumbing.Hash) error {
			typ, size, err := s.ObjectInfo(h)
			if err == nil && (typ != plumbing.CommitObject || size <= 0) {
				err = fmt.Errorf("a %s of %d bytes", typ, size)
			}
			return err
		},
		"HasObject": func(s *Store, h plumbing.Hash) error {
			ok, err := s.HasObject(h)
			if err == nil && !ok {
				err = errors.New("not found")
			}
			return err
		},
		"ReadObjectPrefix": func(s *Store, h plumbing.Hash) error {
			typ, data, err := s.ReadObjectPrefix(h, 4)
			if err == nil && (typ != plumbing.CommitObject || string(data) != "tree") {
				err = fmt.Errorf("a %s starting %q", typ, data)
			}
			return err
		},
		"ReadObjectHeader": func(s *Store, h plumbing.Hash) error {
			typ, data, err := s.ReadObjectHeader(h)
			if err == nil && (typ != plumbing.CommitObject || !bytes.HasPrefix(data, []byte("tree "))) {
				err = fmt.Errorf("a %s starting %q", typ, data)
			}
			return err
		},
	}
	stores := map[string]*Store{}
	for name := range reads {
		s, err := OpenStore(filepath.Join(dir, ".git"), QuarantineEnv{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if _, _, err := s.ReadRaw(packed); err != nil { // the store lists its packs
			t.Fatal(err)
		}
		stores[name] = s
	}
	write(t, filepath.Join(dir, "late.txt"), "late\n")
	fixtures.GitRaw(t, dir, nil, "add", "late.txt")
	fixtures.GitRaw(t, dir, nil, "commit", "-q", "-m", "late")
	late := plumbing.NewHash(fixtures.Git(t, dir, "rev-parse", "HEAD"))
	fixtures.GitRaw(t, dir, nil, "repack", "-dq") // both commits into a new pack, their loose files removed
	if _, err := os.Stat(loosePath(filepath.Join(dir, ".git", "objects"), moved)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("commit %s is still loose after git repack -d: %v", moved, err)
	}
	for name, read := range reads {
		for _, h := range []plumbing.Hash{moved, late} {
			if err := read(stores[name], h); err != nil {
				t.Errorf("%s %s after a repack: %v", name, h, err)
			}
		}
	}
}
