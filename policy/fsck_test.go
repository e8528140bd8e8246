package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// rawTree stores a tree with the given entries ("mode name" → id) in the
// order given, as they are.
func rawTree(w *world, es ...any) plumbing.Hash {
	w.t.Helper()
	var b []byte
	for i := 0; i < len(es); i += 2 {
		id := es[i+1].(plumbing.Hash)
		b = append(append(append(b, es[i].(string)...), 0), id[:]...)
	}
	return w.storeRaw(plumbing.TreeObject, b)
}

func rawCommit(w *world, tree plumbing.Hash, parents ...plumbing.Hash) plumbing.Hash {
	w.t.Helper()
	s := "tree " + tree.String() + "\n"
	for _, p := range parents {
		s += "parent " + p.String() + "\n"
	}
	w.n++
	s += fmt.Sprintf("author A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\n\nchange %d\n", w.n)
	return w.storeRaw(plumbing.CommitObject, []byte(s))
}

// TestObjectChecks: a landing that introduces a malformed commit or tree
// is refused with CodeBadObject naming the object and the fault; the walk
// reads only the subtrees the change touches.
func TestObjectChecks(t *testing.T) {
	w := newWorld(t, rulesNoQueue)
	blob := w.storeRaw(plumbing.BlobObject, []byte("x\n"))
	var many []any
	for i := 0; i < 50; i++ {
		many = append(many, fmt.Sprintf("100644 f%02d", i), blob)
	}
	big := rawTree(w, many...)
	deep := func(content string) plumbing.Hash {
		leaf := rawTree(w, "100644 f", w.storeRaw(plumbing.BlobObject, []byte(content)))
		return rawTree(w, "40000 d", rawTree(w, "40000 e", leaf))
	}
	// main at c1: big/ and deep/ on it.
	c1 := rawCommit(w, rawTree(w, "40000 big", big, "40000 deep", deep("1")), w.c0)
	w.refs[main] = c1
	land := func(head plumbing.Hash) Verdict {
		t.Helper()
		w.ready(head)
		return w.judge(up(main, c1, head))[0]
	}

	t.Run("cost follows the change", func(t *testing.T) {
		objs := &counting{Objects: GoGitObjects(w.store), n: map[plumbing.Hash]int{}}
		h := rawCommit(w, rawTree(w, "40000 big", big, "40000 deep", deep("2")), c1)
		w.ready(h)
		if v := Judge(Input{Objects: objs, Refs: w.refs, Updates: []Update{up(main, c1, h)}}); v[0].Code != "" {
			t.Fatalf("well-formed landing refused: %+v", v[0])
		}
		if objs.n[big] != 0 {
			t.Fatalf("the unchanged subtree big/ was read %d times", objs.n[big])
		}
		if objs.n[deep("2")] == 0 {
			t.Fatal("the changed subtree deep/ was not read: the test cannot tell")
		}
	})

	for _, tc := range []struct {
		name, fault string
		tree        func() plumbing.Hash
	}{
		{".GIT at the root", "hasDotgit", func() plumbing.Hash {
			return rawTree(w, "100644 .GIT", blob, "40000 big", big, "40000 deep", deep("1"))
		}},
		{"duplicate deep in a changed subtree", "duplicateEntries", func() plumbing.Hash {
			return rawTree(w, "40000 big", big, "40000 deep", rawTree(w, "40000 d", rawTree(w, "100644 x", blob, "100644 x", blob)))
		}},
		{"mode 100664 in a new subtree", "badFilemode", func() plumbing.Hash {
			return rawTree(w, "40000 big", big, "40000 deep", deep("1"), "40000 new", rawTree(w, "100664 a", blob))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := tc.tree()
			v := land(rawCommit(w, tree, c1))
			if v.Code != CodeBadObject || !strings.Contains(v.Reason, tc.fault) {
				t.Fatalf("got %+v, want %s naming %s", v, CodeBadObject, tc.fault)
			}
		})
	}

	t.Run("a bad tree in an earlier commit of the pull request", func(t *testing.T) {
		bad := rawCommit(w, rawTree(w, "40000 big", big, "40000 deep", deep("1"), "40000 ..", big), c1)
		fixed := rawCommit(w, rawTree(w, "40000 big", big, "40000 deep", deep("3")), bad)
		if v := land(fixed); v.Code != CodeBadObject || !strings.Contains(v.Reason, "hasDotdot") {
			t.Fatalf("got %+v, want %s naming hasDotdot", v, CodeBadObject)
		}
	})

	t.Run("two tree lines", func(t *testing.T) {
		good := rawTree(w, "40000 big", big, "40000 deep", deep("4"))
		raw := fmt.Sprintf("tree %s\nparent %s\ntree %s\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n\nx\n", big, c1, good)
		h := w.storeRaw(plumbing.CommitObject, []byte(raw))
		if v := land(h); v.Code != CodeBadObject || !strings.Contains(v.Reason, h.String()) || !strings.Contains(v.Reason, "missingAuthor") {
			t.Fatalf("got %+v, want %s naming %s and missingAuthor", v, CodeBadObject, h)
		}
	})
}
