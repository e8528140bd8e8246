package gitio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/matryer/is"

	"github.com/gitplus/gitplus/fixtures"
)

func TestReadRefsMatchesGit(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	makeHistory(t, dir, 3)
	gitDir := filepath.Join(dir, ".git")
	var script strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&script, "create refs/heads/b%03d HEAD~%d\n", i, i%3)
	}
	fixtures.GitRaw(t, dir, []byte(script.String()), "update-ref", "--stdin")
	fixtures.GitRaw(t, dir, nil, "pack-refs", "--all")
	// loose refs after packing: one new, one overriding a packed value
	fixtures.GitRaw(t, dir, nil, "update-ref", "refs/heads/b000", "HEAD~2")
	fixtures.GitRaw(t, dir, nil, "update-ref", "refs/hub/trust", "HEAD~1")
	fixtures.GitRaw(t, dir, nil, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/heads/b001")

	refs, err := ReadRefs(gitDir)
	is.NoErr(err)
	want := map[string]plumbing.Hash{}
	for _, line := range strings.Split(fixtures.Git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		name, id, _ := strings.Cut(line, " ")
		want[name] = plumbing.NewHash(id)
	}
	want["HEAD"] = plumbing.NewHash(fixtures.Git(t, dir, "rev-parse", "HEAD"))
	want["refs/remotes/origin/HEAD"] = want["refs/heads/b001"]
	is.Equal(len(refs), len(want))
	for name, id := range want {
		is.Equal(refs[name], id) // every ref as git sees it
		got, err := ReadRef(gitDir, name)
		is.NoErr(err)
		is.Equal(got, id)
	}
	target, ok, err := ReadSymbolicRef(gitDir, "HEAD")
	is.NoErr(err)
	is.True(ok)
	is.Equal(target, "refs/heads/main")

	_, err = ReadRef(gitDir, "refs/heads/nope")
	is.True(errors.Is(err, plumbing.ErrReferenceNotFound))
	is.True(strings.Contains(err.Error(), "refs/heads/nope"))
	_, err = ReadRef(gitDir, "refs/../../etc/passwd")
	is.True(errors.Is(err, ErrBadRef))

	// ReadRefsUnder: the refs under the prefixes and the named ones, each
	// as ReadRefs sees it, nothing else (loose, packed, overridden, symbolic
	// with a target outside the prefixes, missing names left out)
	sel, err := ReadRefsUnder(gitDir, []string{"refs/hub/", "refs/remotes/"}, []string{"refs/heads/b000", "refs/heads/b299", "refs/heads/nope", "HEAD"})
	is.NoErr(err)
	wantSel := map[string]plumbing.Hash{}
	for name, id := range refs {
		if strings.HasPrefix(name, "refs/hub/") || strings.HasPrefix(name, "refs/remotes/") || name == "refs/heads/b000" || name == "refs/heads/b299" || name == "HEAD" {
			wantSel[name] = id
		}
	}
	is.Equal(len(wantSel), 5)
	is.Equal(sel, wantSel)
	_, err = ReadRefsUnder(gitDir, []string{"refs/hub"}, nil)
	is.True(errors.Is(err, ErrBadRef)) // a prefix must end in "/"
	_, err = ReadRefsUnder(gitDir, []string{"refs/hub/"}, []string{"refs/../x"})
	is.True(errors.Is(err, ErrBadRef))

	// an unborn HEAD is absent, not an error
	bare := t.TempDir()
	fixtures.GitRaw(t, bare, nil, "init", "-q", "--bare", "-b", "main")
	refs, err = ReadRefs(bare)
	is.NoErr(err)
	is.Equal(len(refs), 0)
	_, err = ReadRef(bare, "HEAD")
	is.True(errors.Is(err, plumbing.ErrReferenceNotFound))

	// a broken ref file is reported with its name
	is.NoErr(os.WriteFile(filepath.Join(gitDir, "refs", "heads", "broken"), []byte("garbage\n"), 0o644))
	_, err = ReadRefs(gitDir)
	is.True(errors.Is(err, ErrBadRef))
	is.True(strings.Contains(err.Error(), "refs/heads/broken"))
}
