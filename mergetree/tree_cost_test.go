package mergetree

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// importStream runs one fast-import over a hand-written stream and returns
// the marks.
func (r *mtRepo) importStream(stream []byte) map[int]plumbing.Hash {
	r.t.Helper()
	marks := filepath.Join(r.home, "marks-stream")
	r.git(stream, "fast-import", "--quiet", "--export-marks="+marks)
	b, err := os.ReadFile(marks)
	if err != nil {
		r.t.Fatal(err)
	}
	ids := map[int]plumbing.Hash{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		n, _ := strconv.Atoi(strings.TrimPrefix(f[0], ":"))
		ids[n] = plumbing.NewHash(f[1])
	}
	return ids
}

// TestCostFollowsTheChange: in a 100,000-file tree (10×10×10 directories of
// 100 files), merging two one-file changes reads a number of trees bounded
// by the depth of the paths the two sides share, and no blob.
func TestCostFollowsTheChange(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100,000-file tree")
	}
	repo := newMTRepo(t)
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	fmt.Fprintf(w, "blob\nmark :1\ndata 5\nsame\n\n")
	fmt.Fprintf(w, "blob\nmark :2\ndata 4\nnew\n\n")
	fmt.Fprintf(w, "commit refs/heads/base\nmark :10\ncommitter t <t@example.invalid> 1600000000 +0000\ndata 4\nbase\n")
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(w, "M 100644 :1 d%d/d%d/d%d/f%d\n", i/10000, i/1000%10, i/100%10, i%100)
	}
	change := func(mark int, branch, path string) {
		fmt.Fprintf(w, "\ncommit refs/heads/%s\nmark :%d\ncommitter t <t@example.invalid> 1600000001 +0000\ndata 2\nc\nfrom :10\nM 100644 :2 %s\n", branch, mark, path)
	}
	change(11, "deep-ours", "d0/d0/d0/f0")   // shares d0/d0 with deep-theirs
	change(12, "deep-theirs", "d0/d0/d1/f5") //
	change(13, "far-ours", "d1/d2/d3/f4")    // shares nothing below the root
	change(14, "far-theirs", "d9/d8/d7/f6")  //
	w.WriteString("\n")
	w.Flush()
	ids := repo.importStream(buf.Bytes())
	s := repo.store()
	gits := repo.mergeTreeStdin([][2]plumbing.Hash{{ids[11], ids[12]}, {ids[13], ids[14]}})

	for i, c := range []struct {
		ours, theirs int
		sharedDirs   int // directory levels both sides changed, root included
	}{{11, 12, 3}, {13, 14, 1}} {
		cs := newCounting(s)
		res, err := Merge(cs, ids[c.ours], ids[c.theirs], Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Clean() || res.Tree != gits[i].tree {
			t.Fatalf("merge %d: %v %s, git %s", i, res.Conflicts, res.Tree, gits[i].tree)
		}
		trees, blobs, commits := cs.reads[plumbing.TreeObject], cs.reads[plumbing.BlobObject], cs.reads[plumbing.CommitObject]
		t.Logf("merge %d: %d tree reads, %d blob reads, %d commit reads", i, trees, blobs, commits)
		if trees > 3*c.sharedDirs || blobs != 0 || commits > 3 {
			t.Errorf("merge %d read %d trees (bound %d), %d blobs, %d commits", i, trees, 3*c.sharedDirs, blobs, commits)
		}
	}
}

// TestMergeBaseCostNearBase: in a 10,000-commit history, two commits one
// step past a common tip find their base after reading a handful of
// commits, not the history.
func TestMergeBaseCostNearBase(t *testing.T) {
	repo := newMTRepo(t)
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	const n = 10000
	for i := 1; i <= n; i++ {
		fmt.Fprintf(w, "commit refs/heads/main\nmark :%d\ncommitter t <t@example.invalid> %d +0000\ndata 2\nc\n", i, 1600000000+i)
		if i == 1 {
			fmt.Fprintf(w, "M 100644 inline f\ndata 2\n0\n")
		}
		w.WriteString("\n")
	}
	for k, br := range []string{"a", "b"} {
		fmt.Fprintf(w, "commit refs/heads/%s\nmark :%d\ncommitter t <t@example.invalid> %d +0000\ndata 2\nc\nfrom :%d\nM 100644 inline %s\ndata 2\n%d\n\n", br, n+1+k, 1600000000+n+1, n-5, br, k)
	}
	w.Flush()
	ids := repo.importStream(buf.Bytes())
	cs := newCounting(repo.store())
	bases, err := MergeBases(cs, ids[n+1], ids[n+2])
	if err != nil {
		t.Fatal(err)
	}
	if len(bases) != 1 || bases[0] != ids[n-5] {
		t.Fatalf("bases %v, want %s", bases, ids[n-5])
	}
	if r := cs.reads[plumbing.CommitObject]; r > 10 {
		t.Errorf("read %d commits to find a base 1 step away", r)
	}
	// And the far case: the main tip against the first commit's child.
	cs = newCounting(repo.store())
	b, err := MergeBase(cs, ids[n], ids[1])
	if err != nil || b != ids[1] {
		t.Fatalf("base of tip and root: %s %v", b, err)
	}
}
