package queue

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/mergetree"
)

// gitRepo is a throwaway repository driven by the git binary; it serves as
// the mergetree Store and ObjectWriter of the test.
type gitRepo struct {
	t   *testing.T
	dir string
}

func (r gitRepo) run(stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "HOME="+r.dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes(), nil
}

func (r gitRepo) git(args ...string) string {
	r.t.Helper()
	out, err := r.run(nil, args...)
	if err != nil {
		r.t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func (r gitRepo) ReadObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	typ, err := r.run(nil, "cat-file", "-t", h.String())
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", h, mergetree.ErrMissingObject)
	}
	t, err := plumbing.ParseObjectType(strings.TrimSpace(string(typ)))
	if err != nil {
		return 0, nil, err
	}
	body, err := r.run(nil, "cat-file", t.String(), h.String())
	return t, body, err
}

func (r gitRepo) WriteObject(t plumbing.ObjectType, content []byte) (plumbing.Hash, error) {
	out, err := r.run(content, "hash-object", "-w", "-t", t.String(), "--stdin")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return plumbing.NewHash(strings.TrimSpace(string(out))), nil
}

func (r gitRepo) commit(parent, file, content string, when int) plumbing.Hash {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, file), []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.git("add", file)
	tree := r.git("write-tree")
	args := []string{"-c", "user.name=T", "-c", "user.email=t@x", "commit-tree", tree, "-m", file}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	date := fmt.Sprintf("@%d +0000", when)
	cmd.Env = append(os.Environ(), "HOME="+r.dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatal(err, errb.String())
	}
	return plumbing.NewHash(strings.TrimSpace(string(out)))
}

func TestBuildCandidate(t *testing.T) {
	r := gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	base := r.commit("", "a.txt", "a\n", 1700000000)
	r.git("read-tree", base.String())
	main := r.commit(base.String(), "m.txt", "m\n", 1700003000)
	r.git("read-tree", base.String())
	head := r.commit(base.String(), "h.txt", "h\n", 1700002000)
	r.git("read-tree", base.String())
	clash := r.commit(base.String(), "a.txt", "clash\n", 1700002500)
	r.git("read-tree", main.String())
	clash2 := r.commit(main.String(), "a.txt", "other\n", 1700003500)

	id, conflicts, err := BuildCandidate(r, r, main, head, prID("a"), "refs/heads/main", "Add h")
	if err != nil || conflicts != nil {
		t.Fatal(err, conflicts)
	}
	again, _, err := BuildCandidate(r, r, main, head, prID("a"), "refs/heads/main", "Add h")
	if err != nil || again != id {
		t.Fatalf("second build %s, first %s (%v)", again, id, err)
	}
	if other, _, _ := BuildCandidate(r, r, main, head, prID("a"), "refs/heads/main", "Other title"); other == id {
		t.Error("title does not reach the id")
	}
	body := r.git("cat-file", "-p", id.String())
	for _, want := range []string{
		"parent " + main.String() + "\nparent " + head.String() + "\n",
		"author git+ queue <queue@git-plus.invalid> 1700003000 +0000\ncommitter git+ queue <queue@git-plus.invalid> 1700003000 +0000\n",
		"\n\nMerge pull request " + prID("a") + " into main\n\nAdd h",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("commit lacks %q:\n%s", want, body)
		}
	}
	if got := r.git("ls-tree", "--name-only", id.String()); got != "a.txt\nh.txt\nm.txt" {
		t.Errorf("tree: %q", got)
	}
	// git's own merge gives the same tree.
	if want := r.git("merge-tree", "--write-tree", main.String(), head.String()); !strings.HasPrefix(body, "tree "+want+"\n") {
		t.Errorf("tree differs from git merge-tree %s:\n%s", want, body)
	}
	r.git("update-ref", "refs/heads/queue/main/x", id.String())
	r.git("fsck", "--strict", "--no-dangling")

	// The committer date is the later parent's, whichever side it is on.
	id2, _, err := BuildCandidate(r, r, head, clash2, prID("b"), "refs/heads/main", "")
	if err == nil {
		if b := r.git("cat-file", "-p", id2.String()); !strings.Contains(b, "> 1700003500 +0000") || !strings.HasSuffix(b, "into main") {
			t.Errorf("date/message:\n%s", b)
		}
	} else {
		t.Fatal(err)
	}

	// A conflict returns the paths and no commit.
	id3, conflicts, err := BuildCandidate(r, r, clash2, clash, prID("c"), "refs/heads/main", "x")
	if err != nil || !id3.IsZero() || len(conflicts) != 1 || conflicts[0].Path != "a.txt" {
		t.Errorf("conflict: %s %v %v", id3, conflicts, err)
	}
	// A tree is not a commit.
	tree := plumbing.NewHash(r.git("rev-parse", main.String()+"^{tree}"))
	if _, _, err := BuildCandidate(r, r, tree, head, prID("a"), "refs/heads/main", ""); err == nil {
		t.Error("tree accepted as a commit")
	}
}

func TestCandidatePure(t *testing.T) {
	p, h, tr := tip0, plumbing.NewHash(hex("h")), plumbing.NewHash(hex("t"))
	a := Candidate(p, h, 5, 9, tr, prID("a"), "refs/heads/release/1", "T\nx")
	want := "tree " + tr.String() + "\nparent " + p.String() + "\nparent " + h.String() +
		"\nauthor " + Ident + " 9 +0000\ncommitter " + Ident + " 9 +0000\n\nMerge pull request " + prID("a") + " into release/1\n\nT x\n"
	if string(a) != want {
		t.Errorf("got\n%s\nwant\n%s", a, want)
	}
	if CandidateID(a) != plumbing.ComputeHash(plumbing.CommitObject, []byte(want)) {
		t.Error("id")
	}
	if Branch("refs/heads/release/1", "x") != "refs/heads/queue/release/1/x" {
		t.Error(Branch("refs/heads/release/1", "x"))
	}
	tree := "tree " + plumbing.ZeroHash.String() + "\n"
	for raw, want := range map[string]int64{
		tree + "author A <a> 7 +0100\ncommitter A <a> 42 +0100\n\nmsg":             42,
		tree + "author A <a> 7 +0100\ncommitter A <a> 42 +0100\nencoding x\n\nmsg": 42,
		tree + "\nauthor A <a> 7 +0100\ncommitter A <a> 42 +0100\n":                -1,
		tree + "author A <a> 7 +0100\ncommitter A <a> notanumber +0000\n":          -1,
		"committer A <a> 42 +0000\n":                                               -1, // no tree line: not a commit to git
		tree + "encoding x\nauthor A <a> 7 +0100\ncommitter A <a> 42 +0100\n":      -1, // fsck's missingAuthor
	} {
		got, err := CommitTime([]byte(raw))
		if (err != nil) != (want < 0) || (err == nil && got != want) {
			t.Errorf("CommitTime(%q) = %d, %v", raw, got, err)
		}
	}
}
