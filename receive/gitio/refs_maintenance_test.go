package gitio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
)

// TestRefsBesideMaintenance: git pack-refs --all and git gc --auto run in
// a loop while a writer keeps making loose refs (in directories of their
// own, which pack-refs deletes again) and readers list and resolve refs
// every way gitio offers. Every ref exists throughout, so every read must
// find every ref with one of the two values the writer gives it: 0 errors,
// 0 missing. Reading packed-refs before the loose refs (a ref packed in
// between is in neither) or failing on a directory pack-refs deleted
// during the walk both fail it. GITPLUS_REFS_ROUNDS sets the writer's
// rounds (default 12).
func TestRefsBesideMaintenance(t *testing.T) {
	dir := t.TempDir()
	makeHistory(t, dir, 2)
	gitDir := filepath.Join(dir, ".git")
	old := plumbing.NewHash(fixtures.Git(t, dir, "rev-parse", "HEAD~1"))
	cur := plumbing.NewHash(fixtures.Git(t, dir, "rev-parse", "HEAD"))
	var names []string
	for d := 0; d < 30; d++ {
		for i := 0; i < 4; i++ {
			names = append(names, fmt.Sprintf("refs/heads/d%02d/b%d", d, i))
			names = append(names, fmt.Sprintf("refs/hub/pr/p%02d%d", d, i))
		}
	}
	names = append(names, "refs/hub/trust")
	setAll := func(id plumbing.Hash) {
		var script strings.Builder
		for _, n := range names {
			fmt.Fprintf(&script, "update %s %s\n", n, id)
		}
		// git pack-refs locks each loose ref it prunes: an update that
		// meets the lock fails whole (no ref moves) and is tried again.
		for try := 0; ; try++ {
			_, err := fixtures.GitErr(t, dir, []byte(script.String()), "update-ref", "--stdin")
			if err == nil {
				return
			}
			if try == 50 {
				t.Fatal(err)
			}
		}
	}
	setAll(old)
	rounds := 12
	if v := os.Getenv("GITPLUS_REFS_ROUNDS"); v != "" {
		fmt.Sscan(v, &rounds)
	}

	m := fixtures.Maintain(t, gitDir)
	var stop atomic.Bool
	var reads, failures atomic.Int64
	var mu sync.Mutex
	var first []string
	fail := func(format string, args ...any) {
		failures.Add(1)
		mu.Lock()
		if len(first) < 5 {
			first = append(first, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}
	ok := func(id plumbing.Hash) bool { return id == old || id == cur }
	check := func(how string, refs map[string]plumbing.Hash, want []string) {
		for _, n := range want {
			if id, found := refs[n]; !found {
				fail("%s: %s missing", how, n)
			} else if !ok(id) {
				fail("%s: %s = %s", how, n, id)
			}
		}
	}
	readers := []func(i int){
		func(int) { // a listing of everything
			refs, err := ReadRefs(gitDir)
			if err != nil {
				fail("ReadRefs: %v", err)
				return
			}
			check("ReadRefs", refs, names)
		},
		func(int) { // the hook's: prefixes and names
			refs, err := ReadRefsUnder(gitDir, []string{"refs/hub/"}, []string{"refs/heads/d07/b1", "refs/heads/d29/b3"})
			if err != nil {
				fail("ReadRefsUnder: %v", err)
				return
			}
			var want []string
			for _, n := range names {
				if strings.HasPrefix(n, "refs/hub/") {
					want = append(want, n)
				}
			}
			check("ReadRefsUnder", refs, append(want, "refs/heads/d07/b1", "refs/heads/d29/b3"))
		},
		func(i int) { // single reads
			n := names[i%len(names)]
			id, err := ReadRef(gitDir, n)
			if err != nil {
				fail("ReadRef(%s): %v", n, err)
				return
			}
			check("ReadRef", map[string]plumbing.Hash{n: id}, []string{n})
		},
		func(i int) { // the hook's Refs: opened, then read on demand
			src, err := OpenRefs(gitDir)
			if err != nil {
				fail("OpenRefs: %v", err)
				return
			}
			defer src.Close()
			refs, err := src.Read(nil, []string{"refs/hub/trust", "refs/heads/d03/b2"})
			if err != nil {
				fail("Refs.Read: %v", err)
				return
			}
			check("Refs.Read", refs, []string{"refs/hub/trust", "refs/heads/d03/b2"})
			for k := 0; k < 8; k++ {
				n := names[(i*8+k)%len(names)]
				id, err := src.Ref(n)
				if err != nil {
					fail("Refs.Ref(%s): %v", n, err)
					continue
				}
				if id.IsZero() {
					fail("Refs.Ref: %s missing", n)
					continue
				}
				check("Refs.Ref", map[string]plumbing.Hash{n: id}, []string{n})
			}
			under, err := src.Under("refs/hub/pr/")
			if err != nil {
				fail("Refs.Under: %v", err)
				return
			}
			var want []string
			for _, n := range names {
				if strings.HasPrefix(n, "refs/hub/pr/") {
					want = append(want, n)
				}
			}
			check("Refs.Under", under, want)
		},
	}
	var wg sync.WaitGroup
	for r := range readers {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				readers[r](i)
				reads.Add(1)
			}
		}(r)
	}
	for round := 0; round < rounds; round++ {
		// Every ref loose again, in directories pack-refs deleted.
		if round%2 == 0 {
			setAll(cur)
		} else {
			setAll(old)
		}
	}
	stop.Store(true)
	wg.Wait()
	runs, errs := m.Stop()
	if runs == 0 {
		t.Fatal("git's maintenance never ran beside the readers")
	}
	t.Logf("%d reads beside %d maintenance passes (%d failed: %v)", reads.Load(), runs, len(errs), errs)
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d of %d reads failed or missed a ref beside git pack-refs; first: %s", n, reads.Load(), strings.Join(first, "; "))
	}
	// And the end state is git's.
	refs, err := ReadRefs(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(fixtures.Git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		name, id, _ := strings.Cut(line, " ")
		if refs[name].String() != id {
			t.Errorf("%s = %s, git says %s", name, refs[name], id)
		}
	}
	_, err = ReadRef(gitDir, "refs/heads/none")
	if !errors.Is(err, plumbing.ErrReferenceNotFound) {
		t.Errorf("a ref that does not exist: %v", err)
	}
}
