package mergetree

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func mtEnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// mtGen generates random three-way tree cases: paths in small nested
// directories whose names collide ("a" the file, "a/" the directory, "a.b"
// sorting between them), and files from small line alphabets (repeated
// lines, missing final newline, NUL bytes) so that both sides often edit
// the same file.
type mtGen struct {
	r   *rand.Rand
	seq int
}

var mtNames = []string{"a", "b", "a.b", "c"}

func (g *mtGen) path() string {
	depth := 1 + g.r.IntN(3)
	parts := make([]string, depth)
	for i := range parts {
		parts[i] = mtNames[g.r.IntN(len(mtNames))]
	}
	return strings.Join(parts, "/")
}

func (g *mtGen) lines(alpha []string, n int) []string {
	ls := make([]string, n)
	for i := range ls {
		ls[i] = alpha[g.r.IntN(len(alpha))]
	}
	return ls
}

func (g *mtGen) join(ls []string) string {
	s := strings.Join(ls, "")
	if len(s) > 0 && g.r.IntN(10) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

var mtAlpha = []string{"a\n", "b\n", "c\n", "x\n", "a\n", "b\n"}

func (g *mtGen) content() string {
	if g.r.IntN(12) == 0 {
		return ""
	}
	ls := g.lines(mtAlpha, 1+g.r.IntN(8))
	if g.r.IntN(30) == 0 {
		ls[g.r.IntN(len(ls))] = "n\x00ul\n"
	}
	return g.join(ls)
}

// fresh is content for a new path: unique lines, so that git's rename
// detection rarely pairs it with a deleted file.
func (g *mtGen) fresh() string {
	if g.r.IntN(10) == 0 {
		return ""
	}
	g.seq++
	n := 1 + g.r.IntN(4)
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "new %d.%d %x\n", g.seq, i, g.r.Uint32())
	}
	return b.String()
}

// edit changes a few lines of s.
func (g *mtGen) edit(s string) string {
	ls := strings.SplitAfter(s, "\n")
	if len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	for k := 1 + g.r.IntN(2); k > 0; k-- {
		i := g.r.IntN(len(ls) + 1)
		switch g.r.IntN(3) {
		case 0: // insert
			ls = append(ls[:i], append([]string{mtAlpha[g.r.IntN(len(mtAlpha))]}, ls[i:]...)...)
		case 1: // replace
			if i < len(ls) {
				ls[i] = mtAlpha[g.r.IntN(len(mtAlpha))]
			}
		case 2: // delete
			if i < len(ls) {
				ls = append(ls[:i], ls[i+1:]...)
			}
		}
	}
	out := strings.Join(ls, "")
	if g.r.IntN(8) == 0 {
		out = strings.TrimSuffix(out, "\n")
	}
	return out
}

func (g *mtGen) file() mtFile {
	switch n := g.r.IntN(20); {
	case n < 14:
		return mtFile{mode: modeFile, content: g.content()}
	case n < 16:
		return mtFile{mode: modeExec, content: g.content()}
	case n < 18:
		return mtFile{mode: modeSymlink, content: mtNames[g.r.IntN(len(mtNames))]}
	default:
		return mtFile{mode: modeGitlink, content: g.gitlink()}
	}
}

func (g *mtGen) gitlink() string {
	return fmt.Sprintf("%08x%032x", 1+g.r.IntN(4), 1) // never the null id (git asserts on it)
}

// fits reports whether p can be added to t without a file being a
// directory prefix of another path.
func fits(t mtTree, p string) bool {
	if _, ok := t[p]; ok {
		return false
	}
	for q := range t {
		if strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
			return false
		}
	}
	return true
}

func copyTree(t mtTree) mtTree {
	c := make(mtTree, len(t))
	for k, v := range t {
		c[k] = v
	}
	return c
}

func keys(t mtTree) []string {
	ks := make([]string, 0, len(t))
	for k := range t {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// op is one random change, applied with its own random source so that the
// same op can be replayed on both sides (identical changes).
func (g *mtGen) op(t mtTree, seed uint64) {
	saved := g.r
	g.r = rand.New(rand.NewPCG(seed, 7))
	defer func() { g.r = saved }()
	ks := keys(t)
	pick := func() (string, bool) {
		if len(ks) == 0 {
			return "", false
		}
		return ks[g.r.IntN(len(ks))], true
	}
	switch g.r.IntN(16) {
	case 0, 1, 2, 3, 4: // modify content
		if p, ok := pick(); ok {
			f := t[p]
			if f.mode == modeFile || f.mode == modeExec {
				f.content = g.edit(f.content)
			} else if f.mode == modeSymlink {
				f.content = "t" + f.content
			} else {
				f.content = g.gitlink()
			}
			t[p] = f
		}
	case 5: // chmod
		if p, ok := pick(); ok {
			f := t[p]
			switch f.mode {
			case modeFile:
				f.mode = modeExec
			case modeExec:
				f.mode = modeFile
			}
			t[p] = f
		}
	case 6, 7: // delete
		if p, ok := pick(); ok {
			delete(t, p)
		}
	case 8, 9: // add
		p := g.path()
		if fits(t, p) {
			f := g.file()
			if f.mode == modeFile || f.mode == modeExec {
				f.content = g.fresh()
			}
			t[p] = f
		}
	case 10: // file → directory
		if p, ok := pick(); ok {
			delete(t, p)
			t[p+"/"+mtNames[g.r.IntN(len(mtNames))]] = mtFile{mode: modeFile, content: g.fresh()}
		}
	case 11: // directory → file
		if p, ok := pick(); ok && strings.Contains(p, "/") {
			d := p[:strings.LastIndexByte(p, '/')]
			for _, q := range ks {
				if strings.HasPrefix(q, d+"/") {
					delete(t, q)
				}
			}
			t[d] = mtFile{mode: modeFile, content: g.fresh()}
		}
	case 12: // type change
		if p, ok := pick(); ok {
			t[p] = g.file()
		}
	case 13: // empty blob
		if p, ok := pick(); ok {
			t[p] = mtFile{mode: modeFile, content: ""}
		} else if p := g.path(); fits(t, p) {
			t[p] = mtFile{mode: modeFile, content: ""}
		}
	case 14, 15: // rewrite content
		if p, ok := pick(); ok {
			f := t[p]
			if f.mode == modeFile || f.mode == modeExec {
				f.content = g.content()
				t[p] = f
			}
		}
	}
}

func (g *mtGen) gen(i int) mtCase {
	base := mtTree{}
	for k := g.r.IntN(9); k > 0; k-- {
		if p := g.path(); fits(base, p) {
			base[p] = g.file()
		}
	}
	ours, theirs := copyTree(base), copyTree(base)
	for k := g.r.IntN(4); k > 0; k-- {
		g.op(ours, g.r.Uint64())
	}
	for k := g.r.IntN(4); k > 0; k-- {
		g.op(theirs, g.r.Uint64())
	}
	if g.r.IntN(4) == 0 { // an identical change on both sides
		s := g.r.Uint64()
		g.op(ours, s)
		g.op(theirs, s)
	}
	return mtCase{name: fmt.Sprint(i), base: base, ours: ours, theirs: theirs}
}

// needsLineMerge reports whether some path holds regular files on both
// sides that differ from each other and from the base: the cases whose
// verdict depends on MergeFile rather than on the tree rules alone.
func needsLineMerge(c mtCase) bool {
	for p, a := range c.ours {
		b, ok := c.theirs[p]
		if !ok || kind(a.mode) != kind(modeFile) || kind(b.mode) != kind(modeFile) || a.content == b.content {
			continue
		}
		if o, ok := c.base[p]; ok && (o.content == a.content || o.content == b.content) {
			continue
		}
		return true
	}
	return false
}

type diffCounts struct {
	cases, renameSkipped                                 int
	sameTree, bothConflict                               int
	cleanWhereGitConflicts, conflictWhereGitClean, diffs int
	pathsDiffer                                          int
}

func (d diffCounts) String() string {
	return fmt.Sprintf("cases=%d skipped(rename)=%d same-tree=%d both-conflict=%d clean-where-git-conflicts=%d conflict-where-git-clean=%d different-trees=%d (conflict path sets differ: %d)",
		d.cases, d.renameSkipped, d.sameTree, d.bothConflict, d.cleanWhereGitConflicts, d.conflictWhereGitClean, d.diffs, d.pathsDiffer)
}

// conflictPathsAgree compares our conflicted paths with git's index
// entries, mapping git's "path~branch" (a file moved aside) back to path.
func conflictPathsAgree(ours []Conflict, git []string, oursID, theirsID plumbing.Hash) bool {
	a := map[string]bool{}
	for _, c := range ours {
		a[c.Path] = true
	}
	b := map[string]bool{}
	for _, p := range git {
		if i := strings.LastIndex(p, "~"); i > 0 {
			suffix := p[i+1:]
			if suffix == oursID.String() || suffix == theirsID.String() {
				p = p[:i]
			}
		}
		b[p] = true
	}
	if len(a) != len(b) {
		return false
	}
	for p := range a {
		if !b[p] {
			return false
		}
	}
	return true
}

// TestMergeTreesDifferential compares Merge (verifier mode) with
// `git merge-tree --write-tree --stdin` over random three-way tree cases,
// skipping those where git sees a rename. GITPLUS_DIFF_CASES sets the
// number of cases (default 1500).
func TestMergeTreesDifferential(t *testing.T) {
	n := mtEnvInt("GITPLUS_DIFF_CASES", 1500)
	g := &mtGen{r: rand.New(rand.NewPCG(uint64(mtEnvInt("GITPLUS_DIFF_SEED", 1)), 2))}
	cases := make([]mtCase, n)
	for i := range cases {
		cases[i] = g.gen(i)
	}
	repo := newMTRepo(t)
	ids := repo.fastImport(cases)
	renamed := repo.renamesInvolved(ids)
	pairs := make([][2]plumbing.Hash, n)
	for i, c := range ids {
		pairs[i] = [2]plumbing.Hash{c[1], c[2]}
	}
	gits := repo.mergeTreeStdin(pairs)
	s := repo.store()

	var tree, line diffCounts // cases decided by tree rules only / needing a line merge
	shown := 0
	for i, c := range ids {
		d := &tree
		if needsLineMerge(cases[i]) {
			d = &line
		}
		gm := gits[i]
		if renamed[i] || gm.rename {
			d.renameSkipped++
			continue
		}
		d.cases++
		res, err := Merge(s, c[1], c[2], Options{})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if res.Base != c[0] {
			t.Fatalf("case %d: base %s, want %s", i, res.Base, c[0])
		}
		bad := ""
		switch {
		case res.Clean() && gm.clean && res.Tree == gm.tree:
			d.sameTree++
		case res.Clean() && gm.clean:
			d.diffs++
			bad = "different trees"
		case res.Clean():
			d.cleanWhereGitConflicts++
			bad = "clean where git conflicts"
		case gm.clean:
			d.conflictWhereGitClean++
			bad = fmt.Sprintf("conflict %v where git is clean", res.Conflicts)
		default:
			d.bothConflict++
			if !conflictPathsAgree(res.Conflicts, gm.paths, c[1], c[2]) {
				d.pathsDiffer++
				if shown < 3 {
					shown++
					t.Logf("case %d: conflict paths differ: ours %v, git %v\n%s", i, res.Conflicts, gm.paths, gm.messages)
				}
			}
		}
		if bad != "" && shown < 10 {
			shown++
			t.Errorf("case %d: %s\nbase %v\nours %v\ntheirs %v\ngit: %v %v\n%s", i, bad,
				cases[i].base, cases[i].ours, cases[i].theirs, gm.paths, gm.types, gm.messages)
			if gm.clean {
				t.Logf("git tree:\n%s", repo.lsTree(gm.tree))
			}
		}
	}
	t.Logf("tree-rule cases: %v", tree)
	t.Logf("line-merge cases: %v", line)
	for _, d := range []diffCounts{tree, line} {
		if d.cleanWhereGitConflicts+d.conflictWhereGitClean+d.diffs > 0 {
			t.Errorf("disagreements with git: %v", d)
		}
	}
	if tree.cases+line.cases < n/2 {
		t.Errorf("too many cases skipped: %v / %v", tree, line)
	}
}
