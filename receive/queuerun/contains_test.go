package queuerun

import (
	"fmt"
	"math/rand"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/receive"
)

// TestContainsAgreesWithGit: the in-process ancestry answer equals git's
// (`git rev-list A` lists exactly the ancestors of A) for every pair of commits of a random history
// with merges, side branches, an unrelated root and committer dates that go
// backwards (a date-ordered walk that stopped early would be wrong there).
func TestContainsAgreesWithGit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	fixtures.Git(t, ".", "init", "-q", "--bare", dir)
	rng := rand.New(rand.NewSource(7))
	tree := strings.TrimSpace(fixtures.Git(t, dir, "hash-object", "-t", "tree", "-w", "/dev/null"))
	var ids []string
	mk := func(i int, parents ...string) string {
		args := []string{"commit-tree", tree, "-m", fmt.Sprint("c", i)}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		// Dates jump around: some children are older than their parents.
		when := fmt.Sprintf("%d +0000", 1700000000+rng.Intn(100000))
		cmd := exec.Command("git", append([]string{"--git-dir=" + dir}, args...)...)
		cmd.Env = append(fixtures.GitEnv(t.TempDir()), "GIT_COMMITTER_DATE="+when, "GIT_AUTHOR_DATE="+when)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git commit-tree: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	ids = append(ids, mk(0))
	for i := 1; i < 40; i++ {
		switch r := rng.Intn(10); {
		case i == 20:
			ids = append(ids, mk(i)) // a second root
		case r < 3 && len(ids) > 2:
			ids = append(ids, mk(i, ids[rng.Intn(len(ids))], ids[rng.Intn(len(ids))]))
		default:
			ids = append(ids, mk(i, ids[rng.Intn(len(ids))]))
		}
	}
	store, err := receive.OpenStore(dir, receive.QuarantineEnv{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r := &runner{o: Options{GitDir: dir}, anc: map[[2]plumbing.Hash]bool{}}
	in := r.containsIn(receive.Objects{Store: store})
	yes := 0
	for _, a := range ids {
		anc := map[string]bool{}
		for _, l := range strings.Fields(fixtures.Git(t, dir, "rev-list", a)) {
			anc[l] = true
		}
		for _, b := range ids {
			tip, rev := plumbing.NewHash(a), plumbing.NewHash(b)
			got, want := in(tip, rev), anc[b]
			if got != want {
				t.Fatalf("contains(%s, %s) = %v, git rev-list says %v", a, b, got, want)
			}
			if want {
				yes++
			}
		}
	}
	// The fallback (one git process) agrees on a few pairs.
	for i := 0; i+1 < len(ids); i += 13 {
		tip, rev := plumbing.NewHash(ids[i+1]), plumbing.NewHash(ids[i])
		if v, sure := r.contains(tip, rev); !sure || in(tip, rev) != v {
			t.Fatalf("git merge-base --is-ancestor %s %s disagrees (or gave no answer: %v)", ids[i], ids[i+1], !sure)
		}
	}
	if yes <= len(ids) || yes == len(ids)*len(ids) {
		t.Fatalf("%d of %d pairs related: the history tests nothing", yes, len(ids)*len(ids))
	}
}

// TestAncestryMemo: answers saved for one tip are read back by the next
// runner for that tip only; a damaged entry gives none.
func TestAncestryMemo(t *testing.T) {
	c := receive.NewDirCache(t.TempDir())
	tip, other := plumbing.NewHash(strings.Repeat("a", 40)), plumbing.NewHash(strings.Repeat("b", 40))
	revs := []plumbing.Hash{plumbing.NewHash(strings.Repeat("1", 40)), plumbing.NewHash(strings.Repeat("2", 40))}
	r := &runner{anc: map[[2]plumbing.Hash]bool{}, ancSaved: map[plumbing.Hash]int{}}
	r.loadAncestry(c, tip)
	r.anc[[2]plumbing.Hash{tip, revs[0]}] = true
	r.anc[[2]plumbing.Hash{tip, revs[1]}] = false
	r.anc[[2]plumbing.Hash{other, revs[0]}] = false
	r.saveAncestry(c, tip)

	r2 := &runner{anc: map[[2]plumbing.Hash]bool{}, ancSaved: map[plumbing.Hash]int{}}
	r2.loadAncestry(c, tip)
	r2.loadAncestry(c, other)
	want := map[[2]plumbing.Hash]bool{{tip, revs[0]}: true, {tip, revs[1]}: false}
	if !reflect.DeepEqual(r2.anc, want) {
		t.Fatalf("read back %v, want %v", r2.anc, want)
	}
	// The entry of tip copied under other's key is not read for other.
	b, _ := c.Get(ancestryKey(tip))
	c.Put(ancestryKey(other), b)
	r3 := &runner{anc: map[[2]plumbing.Hash]bool{}, ancSaved: map[plumbing.Hash]int{}}
	r3.loadAncestry(c, other)
	if len(r3.anc) != 0 {
		t.Fatalf("answers for %s read as %s's: %v", tip, other, r3.anc)
	}
	// A damaged entry (a flag that is neither 0 nor 1) gives nothing.
	bad := append([]byte(nil), b...)
	bad[len(bad)-1] = 7
	c.Put(ancestryKey(tip), bad)
	r4 := &runner{anc: map[[2]plumbing.Hash]bool{}, ancSaved: map[plumbing.Hash]int{}}
	r4.loadAncestry(c, tip)
	if len(r4.anc) != 0 {
		t.Fatalf("a damaged entry gave %v", r4.anc)
	}
}

// TestAncestryOfFailingGitNotKept: a commit unreadable in process goes to
// git; when git fails too (a missing object: exit 128) the answer is "no"
// for the pass, the round is marked (no idle pass memo), and the ancestry
// entry does not keep it; git's own "no" (exit 1) is sure.
func TestAncestryOfFailingGitNotKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	fixtures.Git(t, ".", "init", "-q", "--bare", dir)
	tree := strings.TrimSpace(fixtures.Git(t, dir, "hash-object", "-t", "tree", "-w", "/dev/null"))
	root := func(m string) plumbing.Hash {
		cmd := exec.Command("git", "--git-dir="+dir, "commit-tree", tree, "-m", m)
		cmd.Env = fixtures.GitEnv(t.TempDir())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git commit-tree: %v", err)
		}
		return plumbing.NewHash(strings.TrimSpace(string(out)))
	}
	a, b := root("a"), root("b")
	if v, sure := (&runner{o: Options{GitDir: dir}}).contains(a, b); v || !sure {
		t.Fatalf("git on two roots: %v, sure %v; want no, sure", v, sure)
	}
	store, err := receive.OpenStore(dir, receive.QuarantineEnv{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	missing := plumbing.NewHash(strings.Repeat("7", 40))
	r := &runner{o: Options{GitDir: dir}, anc: map[[2]plumbing.Hash]bool{}, ancSaved: map[plumbing.Hash]int{}}
	if r.containsIn(receive.Objects{Store: store})(a, missing) {
		t.Fatal("a missing commit is contained")
	}
	if !r.gitAnswered {
		t.Fatal("git was not asked about a missing commit (the test tests nothing)")
	}
	c := receive.NewDirCache(dir)
	r.saveAncestry(c, a)
	if _, ok := c.Get(ancestryKey(a)); ok {
		t.Fatal("the answer of a failing git was kept")
	}
}
