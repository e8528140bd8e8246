package mergetree

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// prefixStore is a countingStore that is also a PrefixReader; it counts
// the prefix reads and the bytes they return.
type prefixStore struct {
	*countingStore
	prefixReads int
	prefixBytes int
}

func (p *prefixStore) ReadObjectPrefix(h plumbing.Hash, n int) (plumbing.ObjectType, []byte, error) {
	if p.hidden[h] {
		return plumbing.InvalidObject, nil, fmt.Errorf("%w: %s", ErrMissingObject, h)
	}
	t, b, err := p.s.ReadObject(h)
	if err != nil {
		return t, nil, err
	}
	b = b[:min(len(b), n)]
	p.prefixReads++
	p.prefixBytes += len(b)
	return t, b, nil
}

// TestBinaryByPrefix: with a PrefixReader the merge of a binary file reads
// only the first 8000 bytes of each version, and every merge — binary,
// text, a NUL just past the probe, a missing version — ends exactly as it
// does when each version is read whole.
func TestBinaryByPrefix(t *testing.T) {
	repo := newMTRepo(t)
	s := repo.store()
	text := strings.Repeat("some line of text\n", 1000) // 18,000 bytes
	nulAt := func(i int, tail string) string { return text[:i] + "\x00" + text[i+1:] + tail }
	type tc struct {
		name              string
		base, ours, their string // "" base: absent
		hide              string // "base", "ours" or "theirs": missing
		wantKind          string // "" clean
		wholeBlobReads    int    // with the PrefixReader
	}
	cases := []tc{
		{name: "all binary", base: nulAt(5, ""), ours: nulAt(5, "a"), their: nulAt(5, "b"), wantKind: KindBinary},
		{name: "theirs binary", base: text, ours: text + "a\n", their: nulAt(100, ""), wantKind: KindBinary},
		{name: "base binary only", base: nulAt(7999, ""), ours: text + "a\n", their: "b\n" + text, wantKind: KindBinary},
		{name: "added on both sides, binary", ours: nulAt(0, "a"), their: nulAt(0, "b"), wantKind: KindBinary},
		{name: "NUL at 8000 is text", base: text, ours: nulAt(8000, "a\n"), their: "b\n" + text, wholeBlobReads: 3},
		{name: "text conflict", base: text, ours: "a\n" + text, their: "b\n" + text, wantKind: KindContent, wholeBlobReads: 3},
		{name: "binary, theirs missing", base: text, ours: nulAt(1, ""), their: text + "x", hide: "theirs"},
		{name: "binary, base missing", base: nulAt(1, ""), ours: nulAt(2, ""), their: nulAt(3, ""), hide: "base"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var baseEntries []entry
			var baseID plumbing.Hash
			if c.base != "" {
				baseID = writeBlob(t, s, c.base)
				baseEntries = []entry{{name: "f.bin", mode: modeFile, id: baseID}}
			}
			oursID, theirsID := writeBlob(t, s, c.ours), writeBlob(t, s, c.their)
			base := rawCommit(t, s, writeTree(t, s, baseEntries...), int64(1000+i))
			ours := rawCommit(t, s, writeTree(t, s, entry{name: "f.bin", mode: modeFile, id: oursID}), int64(2000+i), base)
			theirs := rawCommit(t, s, writeTree(t, s, entry{name: "f.bin", mode: modeFile, id: theirsID}), int64(2000+i), base)
			hidden := map[string]plumbing.Hash{"base": baseID, "ours": oursID, "theirs": theirsID}
			whole := newCounting(s)
			pre := &prefixStore{countingStore: newCounting(s)}
			if c.hide != "" {
				whole.hidden[hidden[c.hide]] = true
				pre.hidden[hidden[c.hide]] = true
			}
			want, werr := Merge(whole, ours, theirs, Options{})
			got, gerr := Merge(pre, ours, theirs, Options{})
			if c.hide != "" {
				if !errors.Is(gerr, ErrMissingObject) || !errors.Is(werr, ErrMissingObject) || gerr.Error() != werr.Error() {
					t.Fatalf("missing %s: with prefixes %v, whole %v", c.hide, gerr, werr)
				}
				return
			}
			if werr != nil || gerr != nil {
				t.Fatalf("whole: %v; with prefixes: %v", werr, gerr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("with prefixes %+v, whole %+v", got, want)
			}
			kind := ""
			if len(got.Conflicts) > 0 {
				kind = got.Conflicts[0].Kind
			}
			if kind != c.wantKind {
				t.Fatalf("conflict kind %q, want %q (%+v)", kind, c.wantKind, got.Conflicts)
			}
			if n := pre.reads[plumbing.BlobObject]; n != c.wholeBlobReads {
				t.Fatalf("%d blobs read whole, want %d", n, c.wholeBlobReads)
			}
			if pre.prefixReads == 0 || pre.prefixBytes > pre.prefixReads*binaryProbe {
				t.Fatalf("%d prefix reads of %d bytes in all", pre.prefixReads, pre.prefixBytes)
			}
		})
	}
}
