package mergetree

// The golden test binds the merge's output to Algorithm. Merge results are
// recorded outside this package under Algorithm's name (the hook's merge
// facts in the fold cache, docs/foldcache.md), and are believed whole when
// read back. So any change that gives a different tree or conflict list
// for some pair of commits must come with a new Algorithm, or a server
// would keep accepting candidates by facts its new code would not compute.
//
// TestGoldenMerges merges a fixed set of generated cases (seeded, no git
// binary, no clock) and compares one digest of every result (tree id, base,
// conflicts) with goldenDigest, recorded for goldenAlgorithm. If it fails:
// the change altered what merges produce. Bump Algorithm (in mergetree.go;
// this invalidates every cached merge fact, which is the point), then put
// the new Algorithm in goldenAlgorithm and the digest the failure prints in
// goldenDigest. See docs/merge.md and docs/foldcache.md.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

const (
	goldenAlgorithm = "gitplus-merge-1"
	goldenDigest    = "8f01b00d5710d0e22d99baf18beaf27087d69e4f2b1ba9bc521fa180f4ceaf03"
	goldenCases     = 400
	goldenSeed      = 16
)

// goldenStore is an in-memory object database (Store and ObjectWriter).
type goldenStore map[plumbing.Hash]goldenObject

type goldenObject struct {
	t plumbing.ObjectType
	b []byte
}

func (s goldenStore) ReadObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	o, ok := s[h]
	if !ok {
		return plumbing.InvalidObject, nil, fmt.Errorf("%w: %s", ErrMissingObject, h)
	}
	return o.t, o.b, nil
}

func (s goldenStore) WriteObject(t plumbing.ObjectType, b []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(t, b)
	s[h] = goldenObject{t, append([]byte(nil), b...)}
	return h, nil
}

// goldenFile is one path's entry in a flat snapshot.
type goldenFile struct {
	mode string // "100644", "100755", "120000"
	data string
}

type goldenSnap map[string]goldenFile

// tree writes snap as nested trees in git's order and returns the root id
// (the empty tree for an empty snapshot).
func (s goldenStore) tree(t *testing.T, snap goldenSnap) plumbing.Hash {
	t.Helper()
	type ent struct {
		name, mode string
		id         plumbing.Hash
	}
	var build func(prefix string) plumbing.Hash
	build = func(prefix string) plumbing.Hash {
		var ents []ent
		dirs := map[string]bool{}
		for p, f := range snap {
			if !strings.HasPrefix(p, prefix) {
				continue
			}
			rest := p[len(prefix):]
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				dirs[rest[:i]] = true
				continue
			}
			id, _ := s.WriteObject(plumbing.BlobObject, []byte(f.data))
			ents = append(ents, ent{rest, f.mode, id})
		}
		for d := range dirs {
			ents = append(ents, ent{d, "40000", build(prefix + d + "/")})
		}
		key := func(e ent) string {
			if e.mode == "40000" {
				return e.name + "/"
			}
			return e.name
		}
		sort.Slice(ents, func(i, j int) bool { return key(ents[i]) < key(ents[j]) })
		var b bytes.Buffer
		for _, e := range ents {
			fmt.Fprintf(&b, "%s %s\x00", e.mode, e.name)
			b.Write(e.id[:])
		}
		id, _ := s.WriteObject(plumbing.TreeObject, b.Bytes())
		return id
	}
	return build("")
}

// commit writes a commit of tree with parents, committed at time when.
func (s goldenStore) commit(tree plumbing.Hash, when int64, parents ...plumbing.Hash) plumbing.Hash {
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author G <g@golden.invalid> %d +0000\ncommitter G <g@golden.invalid> %d +0000\n\ngolden\n", when, when)
	id, _ := s.WriteObject(plumbing.CommitObject, []byte(b.String()))
	return id
}

// goldenGen makes the cases: small nested trees of text files over a small
// line alphabet (so both sides often edit the same lines), with edits,
// adds, deletes, mode changes, symlinks, binary content and missing final
// newlines, and NUL bytes either side of the binary probe's end.
type goldenGen struct{ r *rand.Rand }

var (
	goldenPaths = []string{"a", "b.txt", "d/a", "d/e/f", "d/e/g", "d.txt", "x/y", "x/z/w", "z"}
	goldenLines = []string{"alpha\n", "beta\n", "gamma\n", "delta\n", "alpha\n", "{\n", "}\n", "\n"}
)

func (g *goldenGen) text() string {
	var b strings.Builder
	n := g.r.IntN(12)
	for range n {
		b.WriteString(goldenLines[g.r.IntN(len(goldenLines))])
	}
	s := b.String()
	switch g.r.IntN(12) {
	case 0:
		s = strings.TrimSuffix(s, "\n")
	case 1:
		s += "bin\x00ary\n"
	case 2, 3: // a NUL at byte 7998, 7999, 8000 or 8001: either side of the binary probe's end
		s = strings.Repeat("pad line\n", 888) + strings.Repeat("p", 6+g.r.IntN(4)) + "\x00\n" + s
	}
	return s
}

// edit changes a few lines of s: replace, insert or delete.
func (g *goldenGen) edit(s string) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for range 1 + g.r.IntN(3) {
		i := g.r.IntN(len(lines) + 1)
		l := goldenLines[g.r.IntN(len(goldenLines))]
		switch g.r.IntN(3) {
		case 0:
			lines = append(lines[:i], append([]string{l}, lines[i:]...)...)
		case 1:
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		default:
			if i < len(lines) {
				lines[i] = l
			}
		}
	}
	return strings.Join(lines, "")
}

func (g *goldenGen) base() goldenSnap {
	snap := goldenSnap{}
	for _, p := range goldenPaths {
		if g.r.IntN(3) != 0 {
			continue
		}
		if goldenFits(snap, p) {
			snap[p] = goldenFile{"100644", g.text()}
		}
	}
	return snap
}

// goldenFits reports whether p can join snap without a file/directory clash.
func goldenFits(snap goldenSnap, p string) bool {
	for q := range snap {
		if strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
			return false
		}
	}
	return true
}

// side derives one side from base by a few operations.
func (g *goldenGen) side(base goldenSnap) goldenSnap {
	s := goldenSnap{}
	for p, f := range base {
		s[p] = f
	}
	for range 1 + g.r.IntN(4) {
		paths := make([]string, 0, len(s))
		for p := range s {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		var p string
		if len(paths) > 0 {
			p = paths[g.r.IntN(len(paths))]
		}
		switch op := g.r.IntN(10); {
		case op < 4 && p != "": // edit
			f := s[p]
			f.data = g.edit(f.data)
			s[p] = f
		case op < 6: // add (or re-add with other content)
			q := goldenPaths[g.r.IntN(len(goldenPaths))]
			if _, ok := s[q]; ok || goldenFits(s, q) {
				s[q] = goldenFile{"100644", g.text()}
			}
		case op < 7 && p != "": // delete
			delete(s, p)
		case op < 9 && p != "": // mode change
			f := s[p]
			if f.mode == "100644" {
				f.mode = "100755"
			} else {
				f.mode = "100644"
			}
			s[p] = f
		case p != "": // to a symlink
			s[p] = goldenFile{"120000", "target-" + p}
		}
	}
	return s
}

func goldenRun(t *testing.T) (digest string, clean, conflicts int, kinds map[string]int) {
	t.Helper()
	g := &goldenGen{r: rand.New(rand.NewPCG(goldenSeed, 0))}
	st := goldenStore{}
	d := sha256.New()
	kinds = map[string]int{}
	record := func(i int, res Result, err error) {
		fmt.Fprintf(d, "case %d\n", i)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		fmt.Fprintf(d, "tree %s base %s\n", res.Tree, res.Base)
		for _, c := range res.Conflicts {
			fmt.Fprintf(d, "conflict %s %s\n", c.Kind, c.Path)
			kinds[c.Kind]++
		}
		if res.Clean() {
			clean++
		} else {
			conflicts++
		}
	}
	for i := range goldenCases {
		base := g.base()
		ours, theirs := g.side(base), g.side(base)
		bt, ot, tt := st.tree(t, base), st.tree(t, ours), st.tree(t, theirs)
		if i%5 != 0 {
			if i%7 == 0 {
				bt = plumbing.ZeroHash // no base: every path an add
			}
			res, err := MergeTrees(st, bt, ot, tt, Options{})
			record(i, res, err)
			continue
		}
		// Through commits: a plain fork, or a criss-cross with two best
		// common ancestors (which one is chosen is part of the output).
		t0 := int64(1_700_000_000 + i)
		root := st.commit(bt, t0)
		if i%10 == 0 {
			b1 := st.commit(st.tree(t, g.side(base)), t0+1+int64(g.r.IntN(3)), root)
			b2 := st.commit(st.tree(t, g.side(base)), t0+1+int64(g.r.IntN(3)), root)
			o := st.commit(ot, t0+10, b1, b2)
			th := st.commit(tt, t0+10, b2, b1)
			res, err := Merge(st, o, th, Options{})
			record(i, res, err)
			continue
		}
		o := st.commit(ot, t0+1, root)
		th := st.commit(tt, t0+2, root)
		res, err := Merge(st, o, th, Options{})
		record(i, res, err)
	}
	// Fixed cases at the binary probe's end: a NUL at byte 7998 … 8001 of
	// the base, and two edits that keep it there (same-length lines at
	// both ends), clean as text and a conflict as binary.
	for k, at := range []int{7998, 7999, 8000, 8001} {
		pad := strings.Repeat("pad line\n", 888) // 7992 bytes
		body := pad + strings.Repeat("p", at-len(pad)) + "\x00\n" + "tail\n"
		base := goldenSnap{"bin": {"100644", body}}
		ours := goldenSnap{"bin": {"100644", "PAD LINE\n" + body[9:]}}
		theirs := goldenSnap{"bin": {"100644", body[:len(body)-5] + "TAIL\n"}}
		res, err := MergeTrees(st, st.tree(t, base), st.tree(t, ours), st.tree(t, theirs), Options{})
		record(goldenCases+k, res, err)
	}
	return hex.EncodeToString(d.Sum(nil)), clean, conflicts, kinds
}

func TestGoldenMerges(t *testing.T) {
	digest, clean, conflicts, kinds := goldenRun(t)
	// The set must exercise both outcomes and the main conflict kinds, or
	// the digest would guard little.
	if clean < goldenCases/5 || conflicts < goldenCases/5 {
		t.Fatalf("golden set too one-sided: %d clean, %d conflicted of %d", clean, conflicts, goldenCases)
	}
	for _, k := range []string{KindContent, KindAddAdd, KindModifyDelete, KindDistinctTypes, KindBinary} {
		if kinds[k] == 0 {
			t.Fatalf("golden set has no conflict of kind %q (kinds: %v)", k, kinds)
		}
	}
	if Algorithm != goldenAlgorithm {
		t.Fatalf("mergetree.Algorithm is %q but the golden digest was recorded for %q: "+
			"set goldenAlgorithm = %q and goldenDigest = %q in golden_test.go", Algorithm, goldenAlgorithm, Algorithm, digest)
	}
	if digest != goldenDigest {
		t.Fatalf("merge output changed while mergetree.Algorithm is still %q (digest %s, recorded %s; %d clean, %d conflicted).\n"+
			"Cached merge facts are keyed by Algorithm and believed whole, so a server would keep stale results.\n"+
			"If the change is intended: bump Algorithm in mergetree.go (this invalidates cached merge facts), "+
			"then set goldenAlgorithm to the new name and goldenDigest = %q in golden_test.go. See docs/foldcache.md.",
			Algorithm, digest, goldenDigest, clean, conflicts, digest)
	}
}

// TestGoldenMergesDeterministic: two runs in one process give one digest
// (no map order or shared state leaks into results).
func TestGoldenMergesDeterministic(t *testing.T) {
	a, _, _, _ := goldenRun(t)
	b, _, _, _ := goldenRun(t)
	if a != b {
		t.Fatalf("two runs of the golden set differ: %s vs %s", a, b)
	}
}
