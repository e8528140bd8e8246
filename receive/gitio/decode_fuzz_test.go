package gitio

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func zlibOf(b []byte) []byte {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// FuzzDecodeLoose: the loose-object decoder either refuses a stream or
// returns exactly what compress/zlib inflates it to, split at the header:
// "<type> <size>\0<content>" with size the content's length. Seeds are
// well-formed objects and damaged ones (a size one off, no NUL, an unknown
// type, a truncated stream, trailing data).
func FuzzDecodeLoose(f *testing.F) {
	for _, s := range []string{
		"blob 3\x00abc", "blob 0\x00", "commit 5\x00hello", "tree 0\x00", "tag 1\x00x",
		"blob 4\x00abc", "blob 2\x00abc", "blob 3abc", "bolb 3\x00abc", "blob -1\x00", "blob 03\x00abc",
		"blob  3\x00abc", "blob +3\x00abc", "blob 99999999999999999999\x00",
	} {
		z := zlibOf([]byte(s))
		f.Add(z)
		f.Add(z[:len(z)-3])
		f.Add(append(append([]byte{}, z...), 'x'))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		typ, data, err := decodeLoose(raw)
		if err != nil {
			return
		}
		zr, zerr := zlib.NewReader(bytes.NewReader(raw))
		if zerr != nil {
			t.Fatalf("decoded (%s, %d bytes), but compress/zlib refuses the stream: %v", typ, len(data), zerr)
		}
		all, zerr := io.ReadAll(zr)
		if zerr != nil {
			t.Fatalf("decoded (%s, %d bytes), but compress/zlib fails: %v", typ, len(data), zerr)
		}
		want := fmt.Sprintf("%s %d\x00", typ, len(data))
		if !bytes.Equal(all, append([]byte(want), data...)) {
			t.Fatalf("decoded %q + %d bytes, compress/zlib read %q", want, len(data), all)
		}
		switch typ {
		case plumbing.BlobObject, plumbing.TreeObject, plumbing.CommitObject, plumbing.TagObject:
		default:
			t.Fatalf("decoded type %v", typ)
		}
	})
}

// FuzzPorcelain: every result parsePorcelain reports comes from one line
// "<flag>\t<from>:<ref>\t<summary>" of git push --porcelain's output, keyed
// by its ref.
func FuzzPorcelain(f *testing.F) {
	f.Add("To .\n!\tabc:refs/hub/x\t[rejected] (stale info)\nDone\n")
	f.Add("To /srv/r.git\n*\tabc:refs/heads/a\t[new reference]\n+\t1..2:refs/heads/b\t(forced update)\n-\t:refs/heads/c\t[deleted]\n=\tx:refs/heads/d\t[up to date]\nDone\n")
	f.Add("!\t:\t\n \ta:b:c\td\te\n")
	f.Fuzz(func(t *testing.T, out string) {
		for ref, r := range parsePorcelain([]byte(out)) {
			if r.Ref != ref {
				t.Fatalf("result keyed %q names %q", ref, r.Ref)
			}
			found := false
			for _, line := range strings.Split(out, "\n") {
				from, rest, ok := strings.Cut(strings.TrimPrefix(line, string([]byte{r.Flag, '\t'})), ":")
				if ok && len(line) > 1 && line[0] == r.Flag && rest == ref+"\t"+r.Status && !strings.Contains(from, "\t") {
					found = true
				}
			}
			if !found {
				t.Fatalf("result %+v is no line of %q", r, out)
			}
		}
	})
}
