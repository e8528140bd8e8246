package mergetree

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// countingStore counts reads by object type and can hide objects.
type countingStore struct {
	s      Store
	reads  map[plumbing.ObjectType]int
	hidden map[plumbing.Hash]bool
}

func newCounting(s Store) *countingStore {
	return &countingStore{s: s, reads: map[plumbing.ObjectType]int{}, hidden: map[plumbing.Hash]bool{}}
}

func (c *countingStore) ReadObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	if c.hidden[h] {
		return plumbing.InvalidObject, nil, fmt.Errorf("%w: %s", ErrMissingObject, h)
	}
	t, b, err := c.s.ReadObject(h)
	if err == nil {
		c.reads[t]++
	}
	return t, b, err
}

// recordingWriter records what a builder writes.
type recordingWriter struct {
	w       ObjectWriter
	written []plumbing.Hash
}

func (r *recordingWriter) WriteObject(t plumbing.ObjectType, b []byte) (plumbing.Hash, error) {
	h, err := r.w.WriteObject(t, b)
	r.written = append(r.written, h)
	return h, err
}

// rawCommit writes a commit with the given tree and parents.
func rawCommit(t *testing.T, w ObjectWriter, tree plumbing.Hash, when int64, parents ...plumbing.Hash) plumbing.Hash {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author t <t@example.invalid> %d +0000\ncommitter t <t@example.invalid> %d +0000\n\nc\n", when, when)
	h, err := w.WriteObject(plumbing.CommitObject, []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func writeTree(t *testing.T, w ObjectWriter, es ...entry) plumbing.Hash {
	t.Helper()
	h, err := w.WriteObject(plumbing.TreeObject, encodeTree(es))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func writeBlob(t *testing.T, w ObjectWriter, s string) plumbing.Hash {
	t.Helper()
	h, err := w.WriteObject(plumbing.BlobObject, []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestEmptyTrees: crafted trees with empty subtrees (git never writes them
// itself). git keeps an empty tree resolved trivially and drops one it
// merged entry by entry.
func TestEmptyTrees(t *testing.T) {
	repo := newMTRepo(t)
	s := repo.store()
	F, G := writeBlob(t, s, "f\n"), writeBlob(t, s, "g\n")
	E := writeTree(t, s)
	if E != EmptyTree {
		t.Fatalf("empty tree id %s", E)
	}
	TF := writeTree(t, s, entry{name: "f", mode: modeFile, id: F})
	TFE := writeTree(t, s, entry{name: "f", mode: modeFile, id: F}, entry{name: "e", mode: modeTree, id: E})
	x := func(id plumbing.Hash) entry { return entry{name: "x", mode: modeFile, id: id} }
	d := func(id plumbing.Hash) entry { return entry{name: "d", mode: modeTree, id: id} }
	type tc struct {
		name    string
		o, a, b []entry
		gitDiff bool // a documented deviation: we keep what git drops
	}
	cases := []tc{
		{"base=ours, theirs empties d", []entry{x(G), d(TF)}, []entry{x(G), d(TF)}, []entry{x(F), d(E)}, false},
		{"empty d added on one side", []entry{x(G)}, []entry{x(G), d(E)}, []entry{x(F)}, false},
		{"empty d added on both sides", []entry{x(G)}, []entry{x(G), d(E)}, []entry{x(F), d(E)}, false},
		{"empty d everywhere", []entry{x(G), d(E)}, []entry{x(G), d(E)}, []entry{x(F), d(E)}, false},
		{"both sides empty d", []entry{x(G), d(TF)}, []entry{x(G), d(E)}, []entry{x(F), d(E)}, false},
		{"empty d deleted on one side", []entry{x(G), d(E)}, []entry{x(G)}, []entry{x(F), d(E)}, false},
		{"empty subtree inside identical trees", []entry{x(G)}, []entry{x(G), d(TFE)}, []entry{x(F), d(TFE)}, true},
	}
	var pairs [][2]plumbing.Hash
	for i, c := range cases {
		base := rawCommit(t, s, writeTree(t, s, c.o...), int64(1000+i))
		pairs = append(pairs, [2]plumbing.Hash{
			rawCommit(t, s, writeTree(t, s, c.a...), int64(2000+i), base),
			rawCommit(t, s, writeTree(t, s, c.b...), int64(2000+i), base),
		})
	}
	gits := repo.mergeTreeStdin(pairs)
	for i, c := range cases {
		res, err := Merge(s, pairs[i][0], pairs[i][1], Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Clean() || !gits[i].clean {
			t.Errorf("%s: want clean, got %v (git clean=%v)", c.name, res.Conflicts, gits[i].clean)
			continue
		}
		if (res.Tree != gits[i].tree) != c.gitDiff {
			t.Errorf("%s: tree %s, git %s\n%s", c.name, res.Tree, gits[i].tree, repo.lsTree(gits[i].tree))
		}
	}
}

// TestBuilderAndVerifier: the same merge gives the same tree in both
// modes; the builder writes exactly the new objects (git can read them),
// the verifier writes nothing, and a conflicted merge writes nothing.
func TestBuilderAndVerifier(t *testing.T) {
	const lines = "1\n2\n3\n4\n5\n6\n"
	repo := newMTRepo(t)
	ids := repo.fastImport([]mtCase{
		{name: "clean",
			base:   mtTree{"d/f": f644(lines), "g": f644("g\n")},
			ours:   mtTree{"d/f": f644("x\n" + lines), "g": f644("g\n"), "h": f644("h\n")},
			theirs: mtTree{"d/f": f644(lines + "y\n"), "g": f644("g\n")}},
		{name: "conflict",
			base:   mtTree{"d/f": f644(lines)},
			ours:   mtTree{"d/f": f644("x\n" + lines)},
			theirs: mtTree{"d/f": f644("y\n" + lines)}},
	})
	s := repo.store()
	verified, err := Merge(s, ids[0][1], ids[0][2], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, code, _ := repo.gitCode(nil, "cat-file", "-e", verified.Tree.String()); code == 0 {
		t.Fatalf("verifier's tree %s exists before the builder ran", verified.Tree)
	}
	rw := &recordingWriter{w: s}
	built, err := Merge(s, ids[0][1], ids[0][2], Options{Writer: rw})
	if err != nil {
		t.Fatal(err)
	}
	if built.Tree != verified.Tree {
		t.Fatalf("builder %s, verifier %s", built.Tree, verified.Tree)
	}
	if len(rw.written) != 3 { // merged blob, d, root
		t.Errorf("builder wrote %d objects, want 3", len(rw.written))
	}
	if got := repo.lsTree(built.Tree); !strings.Contains(got, "\td/f\n") || !strings.Contains(got, "\th\n") {
		t.Errorf("git cannot read the built tree:\n%s", got)
	}
	blob := string(repo.git(nil, "cat-file", "-p", built.Tree.String()+":d/f"))
	if blob != "x\n"+lines+"y\n" {
		t.Errorf("merged blob %q", blob)
	}
	rw.written = nil
	res, err := Merge(s, ids[1][1], ids[1][2], Options{Writer: rw})
	if err != nil || res.Clean() {
		t.Fatalf("conflict case: %v %v", res, err)
	}
	if len(rw.written) != 0 {
		t.Errorf("a conflicted merge wrote %d objects", len(rw.written))
	}
}

// TestMissingObject: a missing commit, tree or blob is an error naming it
// (wrapping ErrMissingObject), never a partial tree.
func TestMissingObject(t *testing.T) {
	const lines = "1\n2\n3\n4\n5\n6\n"
	repo := newMTRepo(t)
	ids := repo.fastImport([]mtCase{{name: "m",
		base:   mtTree{"a/b/f": f644(lines), "a/c": f644("c\n")},
		ours:   mtTree{"a/b/f": f644("x\n" + lines), "a/c": f644("c\n"), "a/n": f644("n\n")},
		theirs: mtTree{"a/b/f": f644(lines + "y\n"), "a/c": f644("c\n")}}})
	gs := repo.store()
	id := ids[0]
	resolve := func(rev string) plumbing.Hash {
		return plumbing.NewHash(strings.TrimSpace(string(repo.git(nil, "rev-parse", rev))))
	}
	for _, name := range []string{id[2].String(), id[0].String(), id[1].String() + "^{tree}", id[1].String() + ":a", id[2].String() + ":a/b", id[0].String() + ":a/b/f", id[1].String() + ":a/b/f"} {
		h := resolve(name)
		cs := newCounting(gs)
		cs.hidden[h] = true
		res, err := Merge(cs, id[1], id[2], Options{})
		if !errors.Is(err, ErrMissingObject) || !strings.Contains(err.Error(), h.String()) {
			t.Errorf("hiding %s (%s): result %v, err %v", name, h, res, err)
		}
	}
	// Through the go-git adapter: a repository holding every object but one.
	h := resolve(id[2].String() + ":a/b")
	res, err := Merge(gs, id[1], id[2], Options{})
	if err != nil || !res.Clean() {
		t.Fatalf("before removal: %v %v", res, err)
	}
	fresh := newMTRepo(t)
	for _, o := range strings.Fields(string(repo.git(nil, "rev-list", "--objects", "--no-object-names", id[1].String(), id[2].String()))) {
		if o == h.String() {
			continue
		}
		typ := strings.TrimSpace(string(repo.git(nil, "cat-file", "-t", o)))
		body := repo.git(nil, "cat-file", typ, o)
		fresh.git(body, "hash-object", "-w", "-t", typ, "--stdin", "--literally")
	}
	_, err = Merge(fresh.store(), id[1], id[2], Options{})
	if !errors.Is(err, ErrMissingObject) || !strings.Contains(err.Error(), h.String()) {
		t.Errorf("go-git store without %s: err %v", h, err)
	}
}
