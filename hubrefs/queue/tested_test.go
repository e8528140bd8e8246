package queue

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestBuildTested: a partition step is the step the branch's method builds
// on its parent (git merge-tree's tree, the parents, the queue's dates),
// with the Git-Plus-Tested trailer naming the tested candidate that git
// reads too; it passes git fsck --strict and is the same commit on every
// build; its squash shape still binds its pull request and head.
func TestBuildTested(t *testing.T) {
	r := gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	base := r.commit("", "a.txt", "a\n", 1700000000)
	r.git("read-tree", base.String())
	tip := r.commit(base.String(), "m.txt", "m\n", 1700003000)
	r.git("read-tree", base.String())
	head := r.commit(base.String(), "h.txt", "h\n", 1700002000)
	tested, _, err := BuildCandidate(r, r, base, head, prID("a"), "refs/heads/main", "Add h")
	if err != nil {
		t.Fatal(err)
	}
	tree := r.git("merge-tree", "--write-tree", tip.String(), head.String())
	for _, squash := range []bool{false, true} {
		id, conflicts, err := BuildTested(r, r, tip, head, tested, prID("a"), "refs/heads/main", "Add h", squash)
		if err != nil || conflicts != nil {
			t.Fatal(err, conflicts)
		}
		if again, _, _ := BuildTested(r, r, tip, head, tested, prID("a"), "refs/heads/main", "Add h", squash); again != id {
			t.Fatalf("second build %s, first %s", again, id)
		}
		body := r.git("cat-file", "-p", id.String())
		parents := "parent " + tip.String() + "\nparent " + head.String() + "\n"
		if squash {
			parents = "parent " + tip.String() + "\nauthor T <t@x> 1700002000 +0000\n"
		}
		for _, want := range []string{"tree " + tree + "\n" + parents, "committer git+ queue <queue@git-plus.invalid> 1700003000 +0000\n", "\nGit-Plus-Tested: " + tested.String()} {
			if !strings.Contains(body, want) {
				t.Errorf("squash %v: the step lacks %q:\n%s", squash, want, body)
			}
		}
		if got := r.git("log", "-1", "--format=%(trailers:key=Git-Plus-Tested,valueonly)", id.String()); got != tested.String() {
			t.Errorf("git reads the trailer as %q", got)
		}
		msg := body[strings.Index(body, "\n\n")+2:]
		c, found, err := TestedTrailer([]byte(msg))
		if !found || err != nil || c != tested {
			t.Errorf("squash %v: TestedTrailer %s %v %v", squash, c, found, err)
		}
		if squash {
			b, found, err := SquashTrailers([]byte(msg))
			if !found || err != nil || b.PR != prID("a") || b.Head != head {
				t.Errorf("squash trailers of the partition step: %+v %v %v", b, found, err)
			}
		}
		r.git("update-ref", "refs/heads/p", id.String())
		r.git("fsck", "--strict", "--no-dangling")
	}
}

func TestTestedTrailer(t *testing.T) {
	c := hex("c")
	for _, tc := range []struct {
		msg   string
		found bool
		want  string // "" = names c
	}{
		{"Merge\n\nGit-Plus-Tested: " + c + "\n", true, ""},
		{"Merge\n\ntitle\n\nSigned-off-by: x\ngit-plus-tested :  " + c, true, ""},
		{"Merge\n\nnothing\n", false, "x"},
		{"Git-Plus-Tested: " + c + "\n\nGit-Plus-Tested: " + c + "\n", true, "outside the trailers"},
		{"x\n\nGit-Plus-Tested: " + c + "\nGit-Plus-Tested: " + c + "\n", true, "appears 2 times"},
		{"x\n\nGit-Plus-Tested: abc\n", true, "Git-Plus-Tested"},
		{"x\n\nGit-Plus-Tested:\n", true, "Git-Plus-Tested"},
	} {
		got, found, err := TestedTrailer([]byte(tc.msg))
		switch {
		case found != tc.found:
			t.Errorf("%q: found %v", tc.msg, found)
		case tc.want == "" && (err != nil || got.String() != c):
			t.Errorf("%q: %s %v", tc.msg, got, err)
		case tc.found && tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want %q", tc.msg, err, tc.want)
		}
	}
	// Whatever the title, the queue's own partition step names its
	// candidate (and, squashed, binds its pull request and head).
	h := hex("h")
	for _, title := range []string{"", "Fix", "Git-Plus-Tested: " + hex("x"), " git-plus-tested : other", "Git-Plus-Head: " + hex("x")} {
		for _, msg := range []string{TestedMessage(prID("a"), main, title, plumbing.NewHash(c)), TestedSquashMessage(prID("a"), h, main, title, plumbing.NewHash(c))} {
			got, found, err := TestedTrailer([]byte(msg))
			if !found || err != nil || got.String() != c {
				t.Errorf("title %q: %s %v %v in %q", title, got, found, err, msg)
			}
		}
		b, found, err := SquashTrailers([]byte(TestedSquashMessage(prID("a"), h, main, title, plumbing.NewHash(c))))
		if !found || err != nil || b.PR != prID("a") || b.Head.String() != h {
			t.Errorf("title %q: %+v %v %v", title, b, found, err)
		}
	}
}

// FuzzTestedTrailer: the trailer reader never panics, and what it accepts
// is a full commit id that a message built around it names again.
func FuzzTestedTrailer(f *testing.F) {
	f.Add([]byte("Merge\n\nGit-Plus-Tested: " + hex("c") + "\n"))
	f.Add([]byte("x\n\nGit-Plus-Tested: " + hex("c") + "\nGit-Plus-Tested: x\n"))
	f.Add([]byte("Git-Plus-Tested:\n\n\n"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		c, found, err := TestedTrailer(msg)
		if err != nil || !found {
			return
		}
		again, found, err := TestedTrailer([]byte(TestedMessage(prID("a"), main, "t", c)))
		if err != nil || !found || again != c {
			t.Fatalf("%q names %s, which a step's message does not name again: %s %v", msg, c, again, err)
		}
	})
}
