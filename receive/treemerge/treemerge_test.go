package treemerge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
)

// TestResolverAgreesWithGit: every revision form the resolver takes
// resolves to the commit `git rev-parse REV^{commit}` names (git is the
// oracle), loose and packed refs alike; what git refuses, it refuses.
func TestResolverAgreesWithGit(t *testing.T) {
	w := filepath.Join(t.TempDir(), "w")
	fixtures.Git(t, ".", "init", "-q", "-b", "main", w)
	for i, name := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(w, name), []byte(strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		fixtures.Git(t, w, "add", name)
		fixtures.Git(t, w, "commit", "-qm", name)
	}
	fixtures.Git(t, w, "branch", "side", "HEAD~1")
	fixtures.Git(t, w, "tag", "-a", "-m", "annotated", "v1", "HEAD~2")
	fixtures.Git(t, w, "tag", "-a", "-m", "tag of a tag", "v1-again", "v1")
	fixtures.Git(t, w, "tag", "light", "side")
	fixtures.Git(t, w, "update-ref", "refs/remotes/origin/main", "HEAD~1")
	fixtures.Git(t, w, "pack-refs", "--all")
	fixtures.Git(t, w, "branch", "loose", "HEAD") // after pack-refs: a loose ref
	tree := fixtures.Git(t, w, "rev-parse", "HEAD^{tree}")
	fixtures.Git(t, w, "tag", "treetag", tree)
	gitDir := filepath.Join(w, ".git")

	s, err := Open(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	head := fixtures.Git(t, w, "rev-parse", "HEAD")
	for _, rev := range []string{"HEAD", "main", "refs/heads/main", "side", "loose", "v1", "v1-again", "light", "origin/main", head, strings.ToUpper(head), head[:7], "tags/v1"} {
		want := fixtures.Git(t, w, "rev-parse", "--verify", rev+"^{commit}")
		got, err := s.revs.Commit(rev)
		if err != nil || got.String() != want {
			t.Errorf("Commit(%q) = %s, %v; git says %s", rev, got, err, want)
		}
	}
	for _, rev := range []string{"nosuch", "treetag", tree, "abc", head[:3]} {
		if got, err := s.revs.Commit(rev); err == nil {
			t.Errorf("Commit(%q) = %s; git refuses it", rev, got)
		}
	}
}

// TestSessionMergeAgreesWithGit: a clean merge writes the tree git's
// merge-tree computes (and git can read it); a conflict names the path.
func TestSessionMergeAgreesWithGit(t *testing.T) {
	w := filepath.Join(t.TempDir(), "w")
	fixtures.Git(t, ".", "init", "-q", "-b", "main", w)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(w, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("f", "1\n2\n3\n4\n5\n")
	write("g", "g\n")
	fixtures.Git(t, w, "add", ".")
	fixtures.Git(t, w, "commit", "-qm", "base")
	fixtures.Git(t, w, "checkout", "-qb", "side")
	write("f", "1\n2\n3\n4\nfive\n")
	write("g", "side\n")
	fixtures.Git(t, w, "commit", "-qam", "side")
	fixtures.Git(t, w, "checkout", "-q", "main")
	write("f", "one\n2\n3\n4\n5\n")
	write("g", "main\n")
	fixtures.Git(t, w, "commit", "-qam", "main")
	fixtures.Git(t, w, "checkout", "-qb", "clean", "main~1")
	write("f", "1\n2\nthree\n4\n5\n")
	fixtures.Git(t, w, "commit", "-qam", "clean")

	s, err := Open(filepath.Join(w, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Merge("side", "clean")
	if err != nil || !res.Clean() {
		t.Fatalf("side + clean: %+v, %v", res, err)
	}
	if want := fixtures.Git(t, w, "merge-tree", "--write-tree", "side", "clean"); res.Tree.String() != want {
		t.Fatalf("side + clean = %s, git says %s", res.Tree, want)
	}
	if got := fixtures.Git(t, w, "cat-file", "-t", res.Tree.String()); got != "tree" {
		t.Fatalf("the merged tree was not written: cat-file -t says %q", got)
	}
	res, err = s.Merge("main", "side")
	if err != nil || res.Clean() || len(res.Conflicts) != 1 || res.Conflicts[0].Path != "g" {
		t.Fatalf("main + side: %+v, %v; want one conflict in g", res, err)
	}
	if j := res.JSON(); j.Clean || len(j.Conflicts) != 1 || j.Conflicts[0].Kind != "content" {
		t.Fatalf("JSON of the conflict: %+v", j)
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Fatal("Open of a directory without objects succeeded")
	}
}

// TestDiscoverGitDir: a work tree's .git directory from a subdirectory, a
// linked worktree's .git file, and a bare repository itself.
func TestDiscoverGitDir(t *testing.T) {
	root := t.TempDir()
	w := filepath.Join(root, "w")
	fixtures.Git(t, ".", "init", "-q", "-b", "main", w)
	fixtures.Git(t, w, "commit", "-q", "--allow-empty", "-m", "one")
	sub := filepath.Join(w, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(root, "linked")
	fixtures.Git(t, w, "worktree", "add", "-q", linked)
	bare := fixtures.BareRepo(t)
	for _, tc := range []struct{ from, want string }{
		{sub, filepath.Join(w, ".git")},
		{linked, fixtures.Git(t, linked, "rev-parse", "--absolute-git-dir")},
		{bare, bare},
	} {
		got, err := DiscoverGitDir(tc.from)
		if err != nil {
			t.Errorf("DiscoverGitDir(%s): %v", tc.from, err)
			continue
		}
		if a, b := evalPath(t, got), evalPath(t, tc.want); a != b {
			t.Errorf("DiscoverGitDir(%s) = %s, want %s", tc.from, a, b)
		}
	}
}

func evalPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
