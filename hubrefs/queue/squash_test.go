package queue

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/mergetree"
)

// Golden squash step: the bytes every runner must build for these inputs.
// A change of them changes every squash step's id, so published squash
// steps stop being recognised and CI verdicts on them are lost; it must
// come with a new mergetree.Algorithm, like a change of the merge
// (mergetree/golden_test.go), and then this test's constants move with it.
const (
	goldenSquashAlgorithm = "gitplus-merge-1"
	goldenSquashID        = "266c18584a39416d3dcf89502e8ba282e139df3b"
)

func TestSquashGolden(t *testing.T) {
	p, h, tr := tip0, plumbing.NewHash(hex("h")), plumbing.NewHash(hex("t"))
	got := Squash(p, h, 5, 9, []byte("Ann Author <ann@example.com> 1700000000 +0200"), tr, prID("a"), "refs/heads/release/1", "Fix\nthe thing")
	want := "tree " + tr.String() + "\nparent " + p.String() +
		"\nauthor Ann Author <ann@example.com> 1700000000 +0200\ncommitter " + Ident + " 9 +0000\n\n" +
		"Fix the thing\n\nSquashed from pull request " + prID("a") + " into release/1.\n\n" +
		"Git-Plus-PR: " + prID("a") + "\nGit-Plus-Head: " + h.String() + "\n"
	if string(got) != want {
		t.Fatalf("squash step bytes changed:\n%s\nwant\n%s", got, want)
	}
	if mergetree.Algorithm != goldenSquashAlgorithm || CandidateID(got).String() != goldenSquashID {
		t.Fatalf("squash step %s under %s; recorded %s under %s: bump mergetree.Algorithm with any change of the bytes, then record the new id here", CandidateID(got), mergetree.Algorithm, goldenSquashID, goldenSquashAlgorithm)
	}
	b, found, err := SquashTrailers(got[strings.Index(string(got), "\n\n")+2:])
	if !found || err != nil || b.PR != prID("a") || b.Head != h {
		t.Errorf("trailers of the golden step: %+v %v %v", b, found, err)
	}
}

// TestBuildSquash: the squash step built through git's object store has
// git merge-tree's tree, the one parent, the head's author, the queue's
// committer dated as a merge step is, passes git fsck --strict, and is
// the same commit on every build.
func TestBuildSquash(t *testing.T) {
	r := gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	base := r.commit("", "a.txt", "a\n", 1700000000)
	r.git("read-tree", base.String())
	main := r.commit(base.String(), "m.txt", "m\n", 1700003000)
	r.git("read-tree", base.String())
	head := r.commit(base.String(), "h.txt", "h\n", 1700002000)
	r.git("read-tree", base.String())
	clash := r.commit(base.String(), "m.txt", "clash\n", 1700002500)

	id, conflicts, err := BuildSquash(r, r, main, head, prID("a"), "refs/heads/main", "Add h")
	if err != nil || conflicts != nil {
		t.Fatal(err, conflicts)
	}
	if again, _, _ := BuildSquash(r, r, main, head, prID("a"), "refs/heads/main", "Add h"); again != id {
		t.Fatalf("second build %s, first %s", again, id)
	}
	body := r.git("cat-file", "-p", id.String())
	tree := r.git("merge-tree", "--write-tree", main.String(), head.String())
	for _, want := range []string{
		"tree " + tree + "\nparent " + main.String() + "\nauthor T <t@x> 1700002000 +0000\n",
		"committer git+ queue <queue@git-plus.invalid> 1700003000 +0000\n",
		"\n\nAdd h\n\nSquashed from pull request " + prID("a") + " into main.\n\nGit-Plus-PR: " + prID("a") + "\nGit-Plus-Head: " + head.String(),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("squash step lacks %q:\n%s", want, body)
		}
	}
	// git reads the same trailers.
	if got := r.git("log", "-1", "--format=%(trailers:key=Git-Plus-PR,valueonly)%(trailers:key=Git-Plus-Head,valueonly)", id.String()); got != prID("a")+"\n"+head.String() {
		t.Errorf("git reads the trailers as %q", got)
	}
	r.git("update-ref", "refs/heads/main", id.String())
	r.git("fsck", "--strict", "--no-dangling")
	if _, conflicts, err := BuildSquash(r, r, main, clash, prID("c"), "refs/heads/main", "x"); err != nil || len(conflicts) != 1 {
		t.Errorf("conflict: %v %v", conflicts, err)
	}
}

func TestSquashTrailers(t *testing.T) {
	pr, h := prID("a"), hex("h")
	for _, c := range []struct {
		msg   string
		found bool
		want  string // "" = binds pr at h
	}{
		{"x\n\nGit-Plus-PR: " + pr + "\nGit-Plus-Head: " + h + "\n", true, ""},
		{"x\n\nSigned-off-by: A <a>\ngit-plus-pr: " + pr + "\nGIT-PLUS-HEAD: " + h, true, ""},
		{"x\n\nnothing here\n", false, "x"},
		{"x\n\nGit-Plus-PR: " + pr + "\n", true, "Git-Plus-Head appears 0 times"},
		{"x\n\nGit-Plus-PR: " + pr + "\nGit-Plus-Head: " + h + "\nGit-Plus-Head: " + h + "\n", true, "appears 2 times"},
		{"x\n\nGit-Plus-PR: " + pr + "\nGit-Plus-PR: " + pr + "\nGit-Plus-Head: " + h + "\n", true, "appears 2 times"},
		{"Git-Plus-PR: " + pr + "\n\nGit-Plus-PR: " + pr + "\nGit-Plus-Head: " + h + "\n", true, "outside the trailers"},
		{"x\n\nGit-Plus-PR: " + pr + "\nGit-Plus-Head: abc\n", true, "Git-Plus-Head"},
		{"x\n\nGit-Plus-PR:\nGit-Plus-Head: " + h + "\n", true, "empty"},
	} {
		b, found, err := SquashTrailers([]byte(c.msg))
		switch {
		case found != c.found:
			t.Errorf("%q: found %v", c.msg, found)
		case c.want == "" && (err != nil || b.PR != pr || b.Head.String() != h):
			t.Errorf("%q: %+v %v", c.msg, b, err)
		case c.found && c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want %q", c.msg, err, c.want)
		}
	}
}

// TestValidateSquashCandidate: a queue.candidate has the merge step's two
// parents [C_{i-1}, head] or the squash step's one [S_{i-1}].
func TestValidateSquashCandidate(t *testing.T) {
	h, p, s := hex("h"), hex("p"), hex("s")
	for _, c := range []struct {
		parents []string
		ok      bool
	}{
		{[]string{p, h}, true},
		{[]string{p}, true},
		{[]string{p, p}, false},
		{[]string{}, false},
		{[]string{p, h, h}, false},
		{[]string{"x"}, false},
	} {
		raw, _ := json.Marshal(map[string]any{"type": hubrefs.TypeQueueCandidate, "repo": repoID, "pr": prID("a"), "head": h, "step": s, "parents": c.parents, "branch": Branch(main, prID("a"))})
		_, err := Validate(hubrefs.Event{Type: hubrefs.TypeQueueCandidate, Repo: repoID, Payload: raw})
		if (err == nil) != c.ok {
			t.Errorf("parents %v: %v", c.parents, err)
		}
	}
}

// TestSquashMessageTitle: whatever the title, the queue's own squash step
// binds its pull request and head (a title shaped as a trailer cannot make
// it unlandable).
func TestSquashMessageTitle(t *testing.T) {
	h := hex("h")
	for _, title := range []string{"", "Fix", "Git-Plus-Head: " + hex("x"), " git-plus-pr : other", "a\nGit-Plus-PR: x", "Git-Plus-Head:"} {
		b, found, err := SquashTrailers([]byte(SquashMessage(prID("a"), h, main, title)))
		if !found || err != nil || b.PR != prID("a") || b.Head.String() != h {
			t.Errorf("title %q: %+v %v %v", title, b, found, err)
		}
	}
}
