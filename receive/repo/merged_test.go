package repo_test

import (
	"path/filepath"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive/repo"
)

// TestMergeNamesTheTrustOfItsPush: pr merge records pr.merged naming the
// trust tip of the push (docs/events.md, "pr.merged"), read when it
// appends: the trust log moved since the writer read it, and the record
// still names its tip, which the hook requires.
func TestMergeNamesTheTrustOfItsPush(t *testing.T) {
	dir := t.TempDir()
	alice, bob, carol := newKey(dir, "alice"), newKey(dir, "bob"), newKey(dir, "carol")
	in, r := initRepo(t, dir, alice)
	if _, err := signing(t, r, alice).AddMember("bob", bob.Authorized(), []string{"hub.review"}); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	git(dir, "clone", "-q", in.GitDir, work)
	commit(work, "a", "a\n")
	git(work, "push", "-q", "origin", "HEAD:refs/heads/main")
	commit(work, "b", "b\n")
	git(work, "push", "-q", "origin", "HEAD:refs/heads/feat")

	stale := signing(t, r, alice) // the trust as it is now
	p, _, _, err := stale.OpenPR(repo.OpenPR{Base: "main", Head: "feat", Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signing(t, r, alice).AddMember("carol", carol.Authorized(), []string{"hub.review"}); err != nil {
		t.Fatal(err)
	}
	if _, err := stale.Merge(p.ID); err != nil {
		t.Fatalf("pr merge with a trust log that moved since it was read: %v", err)
	}
	st, _, err := r.PRState(p.ID, stale.Trust)
	if err != nil {
		t.Fatal(err)
	}
	tip, err := r.Ref(hubrefs.TrustRef)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Merged) != 1 || st.Merged[0].Trust != tip.String() || tip == stale.Trust.Tip {
		t.Fatalf("pr.merged %+v, want it to name the trust tip %s (read at %s)", st.Merged, tip, stale.Trust.Tip)
	}
}
