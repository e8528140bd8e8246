package gitio

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
)

// linearRefs parses packed-refs data line by line (the reference the
// searches are checked against).
func linearRefs(t testing.TB, data []byte) map[string]plumbing.Hash {
	t.Helper()
	m := map[string]plumbing.Hash{}
	if err := eachPackedRef("packed-refs", data, func(n string, id plumbing.Hash) bool { m[n] = id; return true }); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkPacked compares get and each on data with the line-by-line parse,
// for every name held, names around them and prefixes of them.
func checkPacked(t *testing.T, what string, data []byte, searched bool) {
	t.Helper()
	want := linearRefs(t, data)
	p := parsePackedRefs("packed-refs", data)
	probes := []string{"", "refs/", "refs/a", "refs/zzzz", "refs/heads/", "refs/tags/v", "a", "~"}
	for n := range want {
		probes = append(probes, n, n+"0", n[:len(n)-1], n+"/", n[:len(n)/2])
	}
	for _, n := range probes {
		id, ok, err := p.get(n)
		wid, wok := want[n]
		if err != nil || ok != wok || id != wid {
			t.Fatalf("%s: get(%q) = %s %v %v; want %s %v", what, n, id, ok, err, wid, wok)
		}
		got := map[string]plumbing.Hash{}
		if err := p.each(n, func(name string, id plumbing.Hash) { got[name] = id }); err != nil {
			t.Fatalf("%s: each(%q): %v", what, n, err)
		}
		for name, id := range want {
			if strings.HasPrefix(name, n) && got[name] != id {
				t.Fatalf("%s: each(%q) misses %s", what, n, name)
			}
		}
		for name := range got {
			if !strings.HasPrefix(name, n) || want[name] != got[name] {
				t.Fatalf("%s: each(%q) gives %s", what, n, name)
			}
		}
	}
	if searched && (!p.sorted || p.all != nil) {
		t.Fatalf("%s: a sorted file as git writes it was read whole, not searched", what)
	}
}

func genPacked(r *rand.Rand, n int, header string, peel, crlf bool) []byte {
	names := map[string]bool{}
	for len(names) < n {
		parts := []string{"refs", []string{"heads", "tags", "hub/pr", "remotes/origin", "queue/main"}[r.Intn(5)]}
		for k := r.Intn(3); k >= 0; k-- {
			parts = append(parts, fmt.Sprintf("%x", r.Intn(1<<uint(4+r.Intn(12)))))
		}
		names[strings.Join(parts, "/")] = true
	}
	sorted := make([]string, 0, n)
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	nl := "\n"
	if crlf {
		nl = "\r\n"
	}
	var b strings.Builder
	if header != "" {
		b.WriteString(header + nl)
	}
	for _, name := range sorted {
		fmt.Fprintf(&b, "%040x %s%s", r.Uint64(), name, nl)
		if peel && r.Intn(3) == 0 {
			fmt.Fprintf(&b, "^%040x%s", r.Uint64(), nl)
		}
	}
	return []byte(b.String())
}

// TestPackedRefsSearch: binary search over a sorted packed-refs file gives
// exactly what reading it line by line gives; files without the sorted
// trait, or not as git writes them, are read whole.
func TestPackedRefsSearch(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	const sortedHeader = "# pack-refs with: peeled fully-peeled sorted "
	for i := 0; i < 60; i++ {
		n := []int{0, 1, 2, 3, 7, 50, 300}[i%7]
		checkPacked(t, fmt.Sprintf("sorted %d refs", n), genPacked(r, n, sortedHeader, i%2 == 0, false), true)
		checkPacked(t, fmt.Sprintf("sorted %d refs, CRLF", n), genPacked(r, n, sortedHeader, true, true), true)
		checkPacked(t, fmt.Sprintf("no header, %d refs", n), genPacked(r, n, "", i%2 == 0, false), false)
		checkPacked(t, fmt.Sprintf("unsorted trait, %d refs", n), genPacked(r, n, "# pack-refs with: peeled ", true, false), false)
	}
	// Not as git writes a sorted file: a blank line, a comment, no final
	// newline. Read whole instead, with the same answers.
	base := genPacked(r, 40, sortedHeader, true, false)
	lines := strings.SplitAfter(string(base), "\n")
	checkPacked(t, "blank line", []byte(strings.Join(lines[:20], "")+"\n"+strings.Join(lines[20:], "")), false)
	checkPacked(t, "comment line", []byte(strings.Join(lines[:20], "")+"# note\n"+strings.Join(lines[20:], "")), false)
	checkPacked(t, "no final newline", []byte(strings.TrimSuffix(string(base), "\n")), true)
	// A file over mapPackedRefs is mapped, searched the same, and released.
	big := genPacked(r, 6000, sortedHeader, true, false)
	if len(big) <= mapPackedRefs {
		t.Fatalf("test file of %d bytes is not over %d", len(big), mapPackedRefs)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "packed-refs"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	mp, err := loadPackedRefs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if mp.release == nil {
		t.Fatal("a large packed-refs was not mapped")
	}
	want := linearRefs(t, big)
	for name, id := range want {
		if got, ok, err := mp.get(name); err != nil || !ok || got != id {
			t.Fatalf("mapped: get(%s) = %s %v %v, want %s", name, got, ok, err, id)
		}
	}
	if !mp.sorted || mp.all != nil {
		t.Fatal("mapped: read whole, not searched")
	}
	mp.close()
	if mp.data != nil || mp.release != nil {
		t.Fatal("close left the mapping")
	}
	// A malformed line is an error when reached, never a wrong answer.
	bad := parsePackedRefs("packed-refs", []byte(sortedHeader+"\nnot a ref line at all\n"))
	if _, _, err := bad.get("refs/heads/main"); err == nil {
		t.Fatal("a malformed packed-refs line read as no ref")
	}
}

// TestPackedRefsAgainstGit: after git pack-refs, every ref reads as git
// for-each-ref gives it (annotated tags peeled in the file, not here).
func TestPackedRefsAgainstGit(t *testing.T) {
	dir := t.TempDir()
	makeHistory(t, dir, 3)
	var stdin strings.Builder
	head := fixtures.Git(t, dir, "rev-parse", "HEAD")
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&stdin, "create refs/%s/%03d/x%d %s\n", []string{"heads", "tags", "hub/pr"}[i%3], i%37, i, head)
	}
	fixtures.GitRaw(t, dir, []byte(stdin.String()), "update-ref", "--stdin")
	fixtures.GitRaw(t, dir, nil, "tag", "-a", "-m", "annotated", "v2")
	fixtures.GitRaw(t, dir, nil, "pack-refs", "--all")
	gitDir := filepath.Join(dir, ".git")
	data, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.SplitN(string(data), "\n", 2)[0], " sorted") {
		t.Fatalf("git %s wrote no sorted trait: %q", fixtures.GitRaw(t, dir, nil, "version"), strings.SplitN(string(data), "\n", 2)[0])
	}
	p, err := loadPackedRefs(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	out := fixtures.GitRaw(t, dir, nil, "for-each-ref", "--format=%(objectname) %(refname)")
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		id, name, _ := strings.Cut(line, " ")
		got, ok, err := p.get(name)
		if err != nil || !ok || got.String() != id {
			t.Fatalf("%s: packed %s %v %v, git %s", name, got, ok, err, id)
		}
		n++
	}
	if n < 500 {
		t.Fatalf("only %d refs", n)
	}
	if !p.sorted || p.all != nil {
		t.Fatal("git's packed-refs was read whole, not searched")
	}
	all, err := ReadRefsUnder(gitDir, []string{"refs/hub/"}, nil)
	if err != nil || len(all) != 166 {
		t.Fatalf("refs/hub/: %d refs (%v), want 166", len(all), err)
	}
}

func FuzzPackedRefs(f *testing.F) {
	r := rand.New(rand.NewSource(2))
	f.Add(genPacked(r, 5, "# pack-refs with: peeled fully-peeled sorted ", true, false), "refs/heads/")
	f.Add([]byte("# pack-refs with: sorted\n^0000\n"), "refs/")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		p := parsePackedRefs("packed-refs", data)
		id, ok, err := p.get(name)
		seen := map[string]plumbing.Hash{}
		eachErr := p.each(name, func(n string, id plumbing.Hash) { seen[n] = id })
		// Where the whole file parses, is sorted by name without
		// duplicates, the answers are the line-by-line ones.
		var names []string
		m := map[string]plumbing.Hash{}
		body := parsePackedRefs("packed-refs", data).data
		if eachPackedRef("packed-refs", body, func(n string, id plumbing.Hash) bool { names = append(names, n); m[n] = id; return true }) != nil {
			return
		}
		if !sort.StringsAreSorted(names) || len(m) != len(names) {
			return
		}
		if err != nil || eachErr != nil {
			t.Fatalf("a well-formed file: get %v, each %v", err, eachErr)
		}
		if wid, wok := m[name]; ok != wok || id != wid {
			t.Fatalf("get(%q) = %s %v, want %s %v", name, id, ok, wid, wok)
		}
		for n, id := range m {
			if strings.HasPrefix(n, name) && seen[n] != id {
				t.Fatalf("each(%q) misses %s", name, n)
			}
		}
		for n := range seen {
			if !strings.HasPrefix(n, name) {
				t.Fatalf("each(%q) gives %s", name, n)
			}
		}
	})
}

// BenchmarkPackedRefs: what the hook reads of packed-refs in a repository
// of 100,000 packed refs: a few names by binary search, against parsing
// every line (what it did before).
func BenchmarkPackedRefs(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&sb, "%040x refs/tags/v%08d\n", i+1, i)
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "packed-refs"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	names := []string{"refs/hub/trust", "refs/heads/main", "refs/tags/v00050000", "refs/hub/pr/x"}
	b.Run("search", func(b *testing.B) {
		for range b.N {
			p, err := loadPackedRefs(dir)
			if err != nil {
				b.Fatal(err)
			}
			for _, n := range names {
				if _, _, err := p.get(n); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("parse-all", func(b *testing.B) {
		for range b.N {
			p, err := loadPackedRefs(dir)
			if err != nil {
				b.Fatal(err)
			}
			if err := p.parseAll(); err != nil || len(p.all) != 100000 {
				b.Fatal(err)
			}
		}
	})
}
