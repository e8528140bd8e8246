package mergetree

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestChangedPathsMatchesDiffTree holds ChangedPaths to git diff-tree -r
// --name-only over random trees (files, directories and file/directory
// clashes of the same name, symlinks, submodules): base against ours and
// ours against theirs, in both directions.
func TestChangedPathsMatchesDiffTree(t *testing.T) {
	g := &mtGen{r: rand.New(rand.NewPCG(29, 2))}
	cases := make([]mtCase, 60)
	for i := range cases {
		cases[i] = g.gen(i)
	}
	r := newMTRepo(t)
	ids := r.fastImport(cases)
	s := r.store()
	cache := NewCache() // every other case through a shared cache
	tree := func(c string) string {
		return strings.TrimSpace(string(r.git(nil, "rev-parse", c+"^{tree}")))
	}
	for i, id := range ids {
		for _, pair := range [][2]int{{0, 1}, {1, 0}, {1, 2}, {0, 2}} {
			a, b := id[pair[0]].String(), id[pair[1]].String()
			var want []string
			for _, l := range strings.Split(string(r.git(nil, "diff-tree", "-r", "--no-renames", "--name-only", a, b)), "\n") {
				if l != "" {
					want = append(want, l)
				}
			}
			ta, tb := tree(a), tree(b)
			var c *Cache
			if i%2 == 1 {
				c = cache
			}
			got, err := ChangedPaths(s, plumbing.NewHash(ta), plumbing.NewHash(tb), c)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("case %d (%s) %v: ChangedPaths = %q, git diff-tree = %q", i, cases[i].name, pair, got, want)
			}
		}
	}
}
