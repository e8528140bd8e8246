package gitio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
)

// TestRefs: the pull request refs policy asks for are read loose, else
// from packed-refs as it is after the loose read (read again when git
// replaced it since the refs were opened); a missing ref is zero;
// symbolic refs resolve (and a loop is an error, not a hang); listing a
// prefix merges loose over packed and leaves out what resolves to nothing.
func TestRefs(t *testing.T) {
	dir := t.TempDir()
	gitDir := filepath.Join(dir, "r.git")
	fixtures.GitRaw(t, dir, nil, "init", "-q", "--bare", gitDir)
	a := "1111111111111111111111111111111111111111"
	b := "2222222222222222222222222222222222222222"
	c := "3333333333333333333333333333333333333333"
	write(t, filepath.Join(gitDir, "packed-refs"), "# pack-refs with: peeled fully-peeled sorted \n"+
		a+" refs/hub/pr/packed\n"+a+" refs/hub/pr/both\n")
	write(t, filepath.Join(gitDir, "refs", "hub", "pr", "both"), b+"\n")
	write(t, filepath.Join(gitDir, "refs", "hub", "pr", "loose"), c+"\n")
	write(t, filepath.Join(gitDir, "refs", "hub", "pr", "sym"), "ref: refs/hub/pr/loose\n")
	write(t, filepath.Join(gitDir, "refs", "hub", "pr", "loop1"), "ref: refs/hub/pr/loop2\n")
	write(t, filepath.Join(gitDir, "refs", "hub", "pr", "loop2"), "ref: refs/hub/pr/loop1\n")
	write(t, filepath.Join(gitDir, "refs", "hub", "pr", "moved"), c+"\n")
	src, err := OpenRefs(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	// git pack-refs after the push's refs were opened: refs/hub/pr/moved
	// goes from its loose file into a new packed-refs (renamed over the old
	// one) and the loose file is deleted. A read after that finds it in the
	// new file: packed-refs is checked after every loose miss, not read once.
	tmp := filepath.Join(gitDir, "packed-refs.new")
	write(t, tmp, "# pack-refs with: peeled fully-peeled sorted \n"+
		a+" refs/hub/pr/both\n"+c+" refs/hub/pr/moved\n"+a+" refs/hub/pr/packed\n")
	if err := os.Rename(tmp, filepath.Join(gitDir, "packed-refs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(gitDir, "refs", "hub", "pr", "moved")); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"refs/hub/pr/packed": a, "refs/hub/pr/both": b, "refs/hub/pr/loose": c, "refs/hub/pr/sym": c,
		"refs/hub/pr/moved": c, "refs/hub/pr/absent": plumbing.ZeroHash.String(),
	} {
		got, err := src.Ref(name)
		if err != nil || got.String() != want {
			t.Errorf("Ref(%s) = %s, %v; want %s", name, got, err, want)
		}
	}
	if _, err := src.Ref("refs/hub/pr/loop1"); err == nil {
		t.Error("a symbolic ref loop resolved")
	}
	if _, err := src.Ref("refs/hub/pr/../trust"); err == nil {
		t.Error("a bad ref name was read")
	}
	// Listing leaves out what resolves to nothing (the loop), as ReadRefs does.
	all, err := src.Under("refs/hub/pr/")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"refs/hub/pr/packed": a, "refs/hub/pr/both": b, "refs/hub/pr/loose": c, "refs/hub/pr/sym": c, "refs/hub/pr/moved": c}
	if len(all) != len(want) {
		t.Fatalf("Under = %v, want %v", all, want)
	}
	for n, id := range want {
		if all[n].String() != id {
			t.Errorf("Under[%s] = %s, want %s", n, all[n], id)
		}
	}
}
