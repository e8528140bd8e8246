package mergetree

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestMergeBasesAgainstGit: random DAGs with merges (criss-crosses
// included) and tied dates; MergeBases must equal `git merge-base --all`
// as a set, ordered newest first then smallest id; MergeBase is the first.
func TestMergeBasesAgainstGit(t *testing.T) {
	repo := newMTRepo(t)
	s := repo.store()
	r := rand.New(rand.NewPCG(3, 4))
	tree := writeTree(t, s)
	var cs []plumbing.Hash
	root := rawCommit(t, s, tree, 1000)
	cs = append(cs, root)
	other := rawCommit(t, s, writeTree(t, s, entry{name: "x", mode: modeFile, id: writeBlob(t, s, "x")}), 1000)
	for i := 0; i < 150; i++ {
		when := int64(1000 + i/3) // ties on purpose
		p1 := cs[len(cs)-1-r.IntN(min(len(cs), 12))]
		if r.IntN(3) == 0 {
			p2 := cs[r.IntN(len(cs))]
			if p2 != p1 {
				cs = append(cs, rawCommit(t, s, tree, when, p1, p2))
				continue
			}
		}
		cs = append(cs, rawCommit(t, s, tree, when, p1))
	}
	multi := 0
	for k := 0; k < 60; k++ {
		a, b := cs[len(cs)-1-r.IntN(40)], cs[len(cs)-1-r.IntN(40)]
		got, err := MergeBases(s, a, b)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Fields(string(repo.git(nil, "merge-base", "--all", a.String(), b.String())))
		var gotS []string
		for _, h := range got {
			gotS = append(gotS, h.String())
		}
		sorted := append([]string(nil), gotS...)
		sort.Strings(sorted)
		sort.Strings(want)
		if strings.Join(sorted, " ") != strings.Join(want, " ") {
			t.Fatalf("merge-base %s %s: got %v, git %v", a, b, gotS, want)
		}
		if len(got) > 1 {
			multi++
		}
		cache := newCommits(s)
		for i := 1; i < len(got); i++ {
			x, _ := cache.get(got[i-1])
			y, _ := cache.get(got[i])
			if x.time < y.time || x.time == y.time && bytes.Compare(x.id[:], y.id[:]) > 0 {
				t.Fatalf("bases out of order: %v", gotS)
			}
		}
		one, err := MergeBase(s, a, b)
		if err != nil || one != got[0] {
			t.Fatalf("MergeBase %s, want %s (%v)", one, got[0], err)
		}
	}
	t.Logf("%d of 60 pairs had several merge bases", multi)
	if multi == 0 {
		t.Errorf("no pair with several bases: the test lost its point")
	}
	if _, err := MergeBase(s, cs[len(cs)-1], other); !errors.Is(err, ErrUnrelated) {
		t.Errorf("unrelated: %v", err)
	}
	if _, err := Merge(s, cs[len(cs)-1], other, Options{}); !errors.Is(err, ErrUnrelated) {
		t.Errorf("Merge of unrelated: %v", err)
	}
}

// FuzzParseTree: the raw tree decoder never panics, and what it accepts
// re-encodes (in git order, canonical modes) to bytes it decodes to the
// same entries.
func FuzzParseTree(f *testing.F) {
	f.Add(encodeTree([]entry{{name: "a", mode: modeFile}, {name: "b", mode: modeTree}, {name: "a.b", mode: modeSymlink}}))
	f.Add([]byte("100664 x\x00aaaaaaaaaaaaaaaaaaaa"))
	f.Add([]byte("040000 d\x00aaaaaaaaaaaaaaaaaaaa160000 s\x00bbbbbbbbbbbbbbbbbbbb"))
	f.Add([]byte("100644 \x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := parseTree(data)
		if err != nil {
			return
		}
		enc := encodeTree(append([]entry(nil), es...))
		again, err := parseTree(enc)
		if err != nil {
			t.Fatalf("re-encoded tree does not parse: %v", err)
		}
		if len(again) != len(es) {
			t.Fatalf("%d entries, then %d", len(es), len(again))
		}
		for i := 1; i < len(again); i++ {
			if !gitLess(again[i-1], again[i]) {
				t.Fatalf("not in git order: %q %q", again[i-1].name, again[i].name)
			}
		}
		if !bytes.Equal(encodeTree(again), enc) {
			t.Fatalf("encoding is not stable")
		}
	})
}

// FuzzParseCommit: the commit header parser never panics.
func FuzzParseCommit(f *testing.F) {
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ncommitter a <b> 12 +0000\n\nm"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseCommit(plumbing.ZeroHash, data, false)
		if err == nil && c.tree.IsZero() && !bytes.Contains(data, []byte("tree 0000000000000000000000000000000000000000")) {
			t.Fatalf("accepted a commit without its tree")
		}
	})
}
