package gitio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
)

// catFileAll returns every object of the repository at gitDir as git sees
// it: id → (type, content).
type gitObject struct {
	typ  plumbing.ObjectType
	data []byte
}

func catFileAll(t testing.TB, gitDir string) map[plumbing.Hash]gitObject {
	t.Helper()
	ids := strings.Fields(fixtures.GitRaw(t, gitDir, nil, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))
	if len(ids) == 0 {
		t.Fatalf("no objects in %s", gitDir)
	}
	out := fixtures.GitRaw(t, gitDir, []byte(strings.Join(ids, "\n")+"\n"), "cat-file", "--batch")
	r := bufio.NewReader(strings.NewReader(out))
	objs := map[plumbing.Hash]gitObject{}
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("cat-file: unexpected line %q", line)
		}
		size, _ := strconv.Atoi(f[2])
		data := make([]byte, size+1)
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatal(err)
		}
		typ, err := plumbing.ParseObjectType(f[1])
		if err != nil {
			t.Fatal(err)
		}
		objs[plumbing.NewHash(f[0])] = gitObject{typ, data[:size]}
	}
	if len(objs) != len(ids) {
		t.Fatalf("cat-file returned %d objects, want %d", len(objs), len(ids))
	}
	return objs
}

// makeHistory builds a non-bare repository with many similar versions of a
// few files (good delta material), a large blob, nested trees and a tag.
func makeHistory(t testing.TB, dir string, commits int) {
	t.Helper()
	fixtures.GitRaw(t, dir, nil, "init", "-q", "-b", "main")
	var body strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&body, "line %d of a file that changes a little in each commit\n", i)
	}
	big := make([]byte, 2<<20)
	x := uint32(12345)
	for i := range big {
		x = x*1103515245 + 12345
		big[i] = byte(x >> 16)
	}
	for c := 0; c < commits; c++ {
		text := strings.Replace(body.String(), fmt.Sprintf("line %d ", c*7%400), fmt.Sprintf("LINE %d changed in commit %d ", c*7%400, c), 1)
		body.Reset()
		body.WriteString(text)
		write(t, filepath.Join(dir, "a.txt"), text)
		write(t, filepath.Join(dir, "dir", "sub", "b.txt"), text+fmt.Sprintf("tail %d\n", c))
		write(t, filepath.Join(dir, "dir", fmt.Sprintf("f%d.txt", c%5)), fmt.Sprintf("small %d\n", c))
		if c%10 == 0 {
			big[c] ^= 0xff
			if err := os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fixtures.GitRaw(t, dir, nil, "add", "-A")
		fixtures.GitRaw(t, dir, nil, "commit", "-q", "-m", fmt.Sprintf("commit %d", c))
	}
	fixtures.GitRaw(t, dir, nil, "tag", "-a", "-m", "a tag", "v1")
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// packFiles lists the .idx files of a git directory.
func packFiles(t testing.TB, gitDir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "pack-*.idx"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// idxEntry is one object for encodeIdx.
type idxEntry struct {
	id  plumbing.Hash
	crc uint32
	off uint64
}

// encodeIdx writes a version 2 .idx for entries (test-only encoder, used for
// synthetic indexes and fuzz seeds). Offsets ≥ 2^31 go to the large table.
func encodeIdx(entries []idxEntry, packSum plumbing.Hash) []byte {
	es := append([]idxEntry(nil), entries...)
	sort.Slice(es, func(i, j int) bool { return bytes.Compare(es[i].id[:], es[j].id[:]) < 0 })
	var b bytes.Buffer
	b.Write(idxMagic)
	binary.Write(&b, binary.BigEndian, uint32(2))
	var fan [256]uint32
	for _, e := range es {
		for k := int(e.id[0]); k < 256; k++ {
			fan[k]++
		}
	}
	binary.Write(&b, binary.BigEndian, fan)
	for _, e := range es {
		b.Write(e.id[:])
	}
	for _, e := range es {
		binary.Write(&b, binary.BigEndian, e.crc)
	}
	var large []uint64
	for _, e := range es {
		if e.off >= 1<<31 {
			binary.Write(&b, binary.BigEndian, uint32(0x80000000|len(large)))
			large = append(large, e.off)
		} else {
			binary.Write(&b, binary.BigEndian, uint32(e.off))
		}
	}
	for _, o := range large {
		binary.Write(&b, binary.BigEndian, o)
	}
	b.Write(packSum[:])
	sum := plumbing.ComputeHash(plumbing.BlobObject, b.Bytes()) // any 20 bytes
	b.Write(sum[:])
	return b.Bytes()
}
