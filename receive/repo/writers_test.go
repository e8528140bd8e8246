package repo_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/receive/repo"
)

// TestWritersJudgeFirst: a writer whose event the boundary would refuse
// writes nothing and says why; an accepted one is reported through
// OnAppend with its ref, type and parent.
func TestWritersJudgeFirst(t *testing.T) {
	dir := t.TempDir()
	alice, bob := newKey(dir, "alice"), newKey(dir, "bob")
	in, r := initRepo(t, dir, alice)
	var written []repo.Written
	r.OnAppend = func(w repo.Written) { written = append(written, w) }
	admin := signing(t, r, alice)
	if _, err := admin.AddMember("bob", bob.Authorized(), []string{"hub.review"}); err != nil {
		t.Fatal(err)
	}
	admin = signing(t, r, alice) // a Signing is the trust state as it was opened
	if _, err := admin.AddMember("bob", bob.Authorized(), []string{"hub.review"}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("adding bob twice: %v, want already exists", err)
	}
	work := filepath.Join(dir, "work")
	git(dir, "clone", "-q", in.GitDir, work)
	commit(work, "a", "a\n")
	git(work, "push", "-q", "origin", "HEAD:refs/heads/main", "HEAD:refs/heads/feat")

	admin = signing(t, r, alice)
	reviewer := signing(t, r, bob)
	if _, _, _, err := reviewer.OpenPR(repo.OpenPR{Base: "main", Head: "feat", Title: "t"}); err == nil || !strings.Contains(err.Error(), "lacks capability hub.pr") {
		t.Fatalf("bob opening a pull request: %v, want lacks capability hub.pr", err)
	}
	if _, _, _, err := admin.OpenPR(repo.OpenPR{Base: "main", Head: "feat", Title: "t", Push: true}); !errors.Is(err, repo.ErrUsage) {
		t.Fatalf("--push to the repository itself: %v, want ErrUsage", err)
	}
	if ids, _ := r.PRIDs(); len(ids) != 0 {
		t.Fatalf("refused opens wrote pull requests %v", ids)
	}
	p, _, _, err := admin.OpenPR(repo.OpenPR{Base: "main", Head: "feat", Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	last := written[len(written)-1]
	if last.Ref != hubrefs.PRRefPrefix+p.ID || last.Type != hubrefs.TypePROpened || !last.Parent.IsZero() {
		t.Fatalf("OnAppend got %+v for pr.opened", last)
	}
	prTip := func() plumbing.Hash {
		tip, err := r.Ref(hubrefs.PRRefPrefix + p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return tip
	}
	tip := prTip()
	if last.ID != tip {
		t.Fatalf("OnAppend id %s, ref at %s", last.ID, tip)
	}
	p, err = admin.PR(p.ID[:8]) // an abbreviated id
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ResolveThread("01a2b3c4-0000-7000-8000-000000000000", ""); err == nil || !strings.Contains(err.Error(), "has no thread") {
		t.Fatalf("resolving a missing thread: %v", err)
	}
	if prTip() != tip {
		t.Fatal("a refused thread.resolved moved the pull request")
	}
	rp, err := reviewer.PR(p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rp.Review(pr.Approve, ""); err != nil {
		t.Fatal(err)
	}
	if last = written[len(written)-1]; last.Parent != tip || last.Type != hubrefs.TypeReviewSubmit {
		t.Fatalf("OnAppend got %+v for the review, want parent %s", last, tip)
	}

	qid, counting, err := admin.OpenQueue("main")
	if err != nil || counting != nil {
		t.Fatalf("OpenQueue: %v, counting %v", err, counting)
	}
	if _, err := admin.EnterQueue(p.ID, qid, ""); err != nil {
		t.Fatal(err)
	}
	qtip, _ := r.Ref(hubrefs.QueueRefPrefix + qid)
	if _, err := admin.EnterQueue(p.ID, qid, ""); err == nil || !strings.Contains(err.Error(), "refused, nothing written") {
		t.Fatalf("entering twice: %v, want refused", err)
	}
	if again, _ := r.Ref(hubrefs.QueueRefPrefix + qid); again != qtip {
		t.Fatal("a refused queue.entered moved the queue")
	}
	e, err := admin.EnterQueue(p.ID, "", "high")
	if err != nil || !e.Requeued || e.WasPriority != "normal" || e.Priority != "high" {
		t.Fatalf("re-entering with priority high: %+v, %v", e, err)
	}
	if _, _, err := admin.CloseQueue(qid); err != nil {
		t.Fatal(err)
	}
	if _, _, err := admin.CloseQueue(qid); err == nil || !strings.Contains(err.Error(), "already closed") {
		t.Fatalf("closing twice: %v", err)
	}
	if _, err := os.Stat(filepath.Join(in.GitDir, "refs")); err != nil {
		t.Fatal(err)
	}
}

func signing(t *testing.T, r *repo.Repo, k *repo.Key) *repo.Signing {
	t.Helper()
	s, err := repo.OpenSigning(r, k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// initRepo points git at a private configuration under dir (t.Setenv), makes
// dir/app.git with git+ init, alice (key) its first member, and opens it
// (closed when the test ends).
func initRepo(t *testing.T, dir string, key *repo.Key) (*repo.Initialised, *repo.Repo) {
	t.Helper()
	for _, kv := range fixtures.GitEnv(dir) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	in, err := repo.Init(repo.InitOptions{Dir: filepath.Join(dir, "app.git"), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	r, err := repo.Open(in.GitDir, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return in, r
}
