package repo_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/repo"
)

// TestPRListMemo (docs/scale.md, "The pr list memo"): `pr list` prints
// what PRs says; a second listing over the same refs is read from the memo;
// a pull request that moves, a trust tip that moves, --all, another build
// and a damaged entry each make it list in full again; without build
// information nothing is stored. A pull request that cannot be read is
// left out with a warning naming it, and such a listing is not stored.
func TestPRListMemo(t *testing.T) {
	dir := t.TempDir()
	alice, bob := newKey(dir, "alice"), newKey(dir, "bob")
	in, r := initRepo(t, dir, alice)
	if _, err := signing(t, r, alice).AddMember("bob", bob.Authorized(), []string{"hub.review"}); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	git(dir, "clone", "-q", in.GitDir, work)
	commit(work, "a", "a\n")
	git(work, "push", "-q", "origin", "HEAD:refs/heads/main", "HEAD:refs/heads/f1", "HEAD:refs/heads/f2")
	admin := signing(t, r, alice)
	var ids []string
	for _, h := range []string{"f1", "f2"} {
		p, _, _, err := admin.OpenPR(repo.OpenPR{Base: "main", Head: h, Title: "change " + h})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	cache := receive.NewDirCache(in.GitDir)
	var warned []string // the last listing's warnings
	list := func(all bool) (got, want string) {
		t.Helper()
		tr := signing(t, r, alice).Trust
		b, w1, err := r.PRList(tr, all)
		if err != nil {
			t.Fatal(err)
		}
		views, w2, err := r.PRs(tr, all)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(w1, "\n") != strings.Join(w2, "\n") {
			t.Fatalf("PRList warned %q, PRs %q", w1, w2)
		}
		warned = w1
		var lines []string
		for _, v := range views {
			lines = append(lines, v.Line()+"\n")
		}
		return string(b), strings.Join(lines, "")
	}
	same := func(what string, all bool) string {
		t.Helper()
		got, want := list(all)
		if got != want || strings.Count(got, "\n") == 0 {
			t.Fatalf("%s: pr list printed\n%s\nwant\n%s", what, got, want)
		}
		return got
	}
	// fake plants a listing under the memo's digest for the refs as they
	// are: PRList returning it shows the memo is read.
	fake := func(all bool) (key string) {
		t.Helper()
		k, entry := repo.PRListEntry(r, signing(t, r, alice).Trust, all, "from the memo\n")
		cache.Put(k, entry)
		return k.String()
	}
	hit := func(what string, all bool) {
		t.Helper()
		if got, _ := list(all); got != "from the memo\n" {
			t.Fatalf("%s: the memo was not read:\n%s", what, got)
		}
	}

	same("first listing", false)
	key := fake(false)
	hit("same refs", false)

	// A pull request that moves: a review changes its approvals.
	p, err := signing(t, r, bob).PR(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write(hubrefs.Review{Base: hubrefs.Base{Type: hubrefs.TypeReviewSubmit, Repo: p.Trust.RepoID}, Head: p.State.Head, BaseRef: p.State.Base, Verdict: "approve"}); err != nil {
		t.Fatal(err)
	}
	if got := same("a pull request moved", false); !strings.Contains(got, "approvals=1") {
		t.Fatalf("the review is not in the listing:\n%s", got)
	}
	fake(false)
	hit("same refs again", false)

	// The trust tip moves.
	if _, err := signing(t, r, alice).AddMember("carol", newKey(dir, "carol").Authorized(), []string{"hub.pr"}); err != nil {
		t.Fatal(err)
	}
	same("the trust tip moved", false)

	// --all is another entry.
	fake(false)
	same("--all", true)
	hit("without --all, still", false)

	// Another build misses.
	restore := repo.SetBuildID(func() []byte { return []byte("another build") })
	same("another build", false)
	restore()

	// A damaged entry misses.
	fake(false)
	path := filepath.Join(cache.Dir(), key)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	same("a damaged entry", false)

	// A pull request that cannot be read (here a ref naming a commit that
	// is no event) is left out and named, and hides no other; a listing
	// that left one out is not stored, so the next one names it again.
	bad := hubrefs.PRRefPrefix + "01a25000-0000-7000-8000-000000000000"
	git(in.GitDir, "update-ref", bad, "refs/heads/main")
	for _, what := range []string{"an unreadable pull request", "again"} {
		got := same(what, false)
		if strings.Count(got, "\n") != 2 || len(warned) != 1 || !strings.Contains(warned[0], bad) || !strings.Contains(warned[0], "update-ref -d "+bad) {
			t.Fatalf("%s: listed\n%s\nwarned %q", what, got, warned)
		}
	}
	git(in.GitDir, "update-ref", "-d", bad)
	same("the unreadable one removed", false)
	if len(warned) != 0 {
		t.Fatalf("warned %q with every pull request readable", warned)
	}

	// Without build information nothing is stored.
	restore = repo.SetBuildID(func() []byte { return nil })
	defer restore()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	same("no build information", false)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("an entry was stored without build information: %v", err)
	}
}
