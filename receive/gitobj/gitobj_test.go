package gitobj

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

const (
	au = "author A U Thor <a@example.com> 1700000000 +0100\n"
	co = "committer C O Mitter <c@example.com> 1700000001 -0130\n"
	tl = "tree " + emptyTree + "\n"
)

func TestParseCommit(t *testing.T) {
	raw := []byte(tl + "parent " + idA + "\nparent " + idB + "\n" + au + co + "encoding ISO-8859-1\ngpgsig -----BEGIN-----\n line\n -----END-----\n\nsubject\n\nbody\n")
	c, err := ParseCommit(raw)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tree.String() != emptyTree || len(c.Parents) != 2 || c.Parents[0].String() != idA || c.Parents[1].String() != idB {
		t.Fatalf("tree %s parents %v", c.Tree, c.Parents)
	}
	if string(c.Author) != strings.TrimSuffix(au[len("author "):], "\n") || c.CommitTime != 1700000001 {
		t.Fatalf("author %q, commit time %d", c.Author, c.CommitTime)
	}
	if len(c.Extra) != 2 || c.Extra[0].Name != "encoding" || c.Extra[1].Name != "gpgsig" || string(c.Extra[1].Value) != "-----BEGIN-----\nline\n-----END-----" {
		t.Fatalf("extra headers %+v", c.Extra)
	}
	if g := c.Extra[1]; !bytes.HasPrefix(raw[g.Start:], []byte("gpgsig ")) || !bytes.HasSuffix(raw[:g.End], []byte("-----END-----\n")) || raw[g.End] != '\n' {
		t.Fatalf("gpgsig range %d..%d: %q", g.Start, g.End, raw[g.Start:g.End])
	}
	if !c.HasMessage || string(c.Message) != "subject\n\nbody\n" {
		t.Fatalf("message %q", c.Message)
	}
	if c, err := ParseCommit([]byte(tl + au + co)); err != nil || c.HasMessage || c.Message != nil {
		t.Fatalf("no message: %v %+v", err, c)
	}
	up, err := ParseCommit([]byte("tree " + strings.ToUpper(emptyTree) + "\n" + au + co + "\n"))
	if err != nil || up.Tree != plumbing.NewHash(emptyTree) {
		t.Fatalf("upper-case tree id: %v", err)
	}
}

// TestParseCommitFaults: each fault git's fsck names, and git+'s one
// stricter rule, refused with its name.
func TestParseCommitFaults(t *testing.T) {
	P := "parent " + idA + "\n"
	for _, tc := range []struct{ fault, raw string }{
		{"missingTree", P + tl + au + co + "\n"},
		{"unterminatedHeader", ""},
		{"badTreeSha1", "tree " + emptyTree[:39] + "\n" + au + co + "\n"},
		{"badTreeSha1", "tree " + emptyTree[:39] + "g\n" + au + co + "\n"},
		{"badTreeSha1", "tree " + emptyTree + " \n" + au + co + "\n"},
		{"badParentSha1", tl + "parent " + idA[:38] + "\n" + au + co + "\n"},
		{"missingAuthor", tl + "tree " + idC + "\n" + P + au + co + "\n"}, // attack 1
		{"missingAuthor", tl + "encoding UTF-8\n" + P + au + co + "\n"},   // attack 5
		{"missingAuthor", tl + "mergetag object " + idC + "\n" + P + au + co + "\n"},
		{"missingAuthor", tl + "gpgsig x\n" + P + au + co + "\n"},
		{"missingCommitter", tl + au + P + co + "\n"}, // attack 2
		{"missingCommitter", tl + au},
		{"multipleAuthors", tl + au + au + co + "\n"},
		{"repeatedHeader", tl + au + co + "tree " + idC + "\n\n"},
		{"repeatedHeader", tl + au + co + "parent " + idA + "\n\n"},
		{"repeatedHeader", tl + au + co + "author x <y> 1 +0000\n\n"},
		{"missingNameBeforeEmail", tl + "author <a> 1 +0000\n" + co + "\n"},
		{"badName", tl + "author a> <a> 1 +0000\n" + co + "\n"},
		{"missingEmail", tl + "author a 1 +0000\n" + co + "\n"},
		{"missingSpaceBeforeEmail", tl + "author a<a> 1 +0000\n" + co + "\n"},
		{"badEmail", tl + "author a <a<b> 1 +0000\n" + co + "\n"},
		{"missingSpaceBeforeDate", tl + "author a <a>1 +0000\n" + co + "\n"},
		{"zeroPaddedDate", tl + "author a <a> 01 +0000\n" + co + "\n"},
		{"badDateOverflow", tl + "author a <a> -1 +0000\n" + co + "\n"},
		{"badDateOverflow", tl + "author a <a> 99999999999999999999 +0000\n" + co + "\n"},
		{"badDateOverflow", tl + "author a <a> 9223372036854775808 +0000\n" + co + "\n"},
		{"badDate", tl + "author a <a> x +0000\n" + co + "\n"},
		{"badDate", tl + "author a <a> 1+0000\n" + co + "\n"},
		{"badTimezone", tl + "author a <a> 1 +000\n" + co + "\n"},
		{"badTimezone", tl + "author a <a> 1 0000\n" + co + "\n"},
		{"badTimezone", tl + "author a <a> 1 +0000 \n" + co + "\n"},
		{"unterminatedHeader", tl + au + strings.TrimSuffix(co, "\n")},
		{"nulInHeader", tl + au + co + "x \x00\n\nm\n"},
		{"nulInCommit", tl + au + co + "\nm\x00\n"},
	} {
		_, err := ParseCommit([]byte(tc.raw))
		if !errors.Is(err, ErrMalformedCommit) || !strings.Contains(err.Error(), tc.fault+":") {
			t.Errorf("%q: got %v, want %s", tc.raw, err, tc.fault)
		}
	}
	// Accepted as git accepts them.
	for _, raw := range []string{
		tl + au + co,
		tl + au + "committer c <c> 0 +0000\n\n",
		tl + au + "committer c <c>  +7 +0000\n\n",
		tl + au + "committer <c> 1 +0000\n\n"[:0] + "committer  <c> 1 +0000\n\n",
		tl + au + co + " leading continuation\n\n",
		tl + au + co + "x\n\n",
		tl + au + "committer c <c> 9223372036854775807 +0000\n\n",
	} {
		if _, err := ParseCommit([]byte(raw)); err != nil {
			t.Errorf("%q: %v", raw, err)
		}
	}
	// A header-only prefix does not see a NUL in the message.
	if _, err := ParseCommitHeader([]byte(tl + au + co + "\nm\x00")); err != nil {
		t.Errorf("ParseCommitHeader: %v", err)
	}
}

func TestParseTree(t *testing.T) {
	raw := cat(ent("100644", "a.txt", 1), ent("100755", "b", 2), ent("40000", "b.d", 3), ent("120000", "link", 4), ent("160000", "sub", 5), ent("100644", "z", 6))
	es, err := ParseTree(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{ModeFile, "a.txt", h(1)}, {ModeExec, "b", h(2)}, {ModeTree, "b.d", h(3)}, {ModeSymlink, "link", h(4)}, {ModeGitlink, "sub", h(5)}, {ModeFile, "z", h(6)}}
	if len(es) != len(want) {
		t.Fatalf("%d entries", len(es))
	}
	for i := range want {
		if es[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, es[i], want[i])
		}
	}
	if es, err := ParseTree(nil); err != nil || len(es) != 0 {
		t.Fatalf("empty tree: %v %v", es, err)
	}
	stop := errors.New("stop")
	if err := WalkTree(raw, func(uint32, []byte, []byte) error { return stop }); err != stop {
		t.Fatalf("WalkTree returned %v, want fn's error", err)
	}
}

func h(b byte) plumbing.Hash {
	var x plumbing.Hash
	for i := range x {
		x[i] = b
	}
	return x
}

// TestTreeFaults: each fault of issue #14's attack 6 and each spelling of
// .git and .gitmodules, refused with fsck's name for it.
func TestTreeFaults(t *testing.T) {
	for _, tc := range []struct {
		fault string
		raw   []byte
	}{
		{"badTree", []byte("100644 a")},
		{"badTree", ent("100644", "a", 1)[:20]},
		{"badTree", []byte("100644 \x00" + strings.Repeat("\x01", 20))},
		{"badFilemode", []byte(" a\x00" + strings.Repeat("\x01", 20))},
		{"badFilemode", ent("100664", "a", 1)},
		{"badFilemode", ent("100600", "a", 1)},
		{"badFilemode", ent("400000100644", "a", 1)},
		{"badFilemode", ent("10064x", "a", 1)},
		{"zeroPaddedFilemode", ent("040000", "d", 1)},
		{"zeroPaddedFilemode", ent("0100644", "f", 1)},
		{"fullPathname", ent("100644", "a/b", 1)},
		{"hasDot", ent("40000", ".", 1)},
		{"hasDotdot", ent("40000", "..", 1)},
		{"nullSha1", ent("100644", "a", 0)},
		{"nullSha1", ent("160000", "sub", 0)},
		{"treeNotSorted", cat(ent("100644", "b", 1), ent("100644", "a", 1))},
		{"treeNotSorted", cat(ent("40000", "a", 1), ent("100644", "a.b", 1))}, // a/ sorts after a.b
		{"duplicateEntries", cat(ent("100644", "f.txt", 1), ent("100644", "f.txt", 2))},
		{"duplicateEntries", cat(ent("100644", "f", 1), ent("40000", "f", 2))},
		{"duplicateEntries", cat(ent("100644", "f", 1), ent("100644", "f.txt", 2), ent("100644", "f.txt.x", 2), ent("40000", "f", 3))},
		{"duplicateEntries", cat(ent("100644", "f", 1), ent("100644", "f.a", 2), ent("40000", "f.a", 2), ent("40000", "f", 3))},
	} {
		_, err := ParseTree(tc.raw)
		if !errors.Is(err, ErrMalformedTree) || !strings.Contains(err.Error(), tc.fault+":") {
			t.Errorf("%q: got %v, want %s", tc.raw, err, tc.fault)
		}
	}
	dotgit := []string{".git", ".GIT", ".Git", ".git.", ".git ", ".git. . ", ".git::$INDEX_ALLOCATION", ".git:x", ".git\\hooks", "git~1", "GIT~1", "Git~1. ",
		"x\\.git", "a\\b\\git~1", ".g\u200cit", "\u200e.git", ".git\u200f", "\ufeff.GiT", ".gi\u206at", ".git\xff", ".git\xed\xa0\x80"}
	for _, name := range dotgit {
		for _, mode := range []string{"100644", "40000", "120000"} {
			if _, err := ParseTree(ent(mode, name, 1)); err == nil || !strings.Contains(err.Error(), "hasDotgit:") {
				t.Errorf("%s %q: got %v, want hasDotgit", mode, name, err)
			}
		}
	}
	gitmodules := []string{".gitmodules", ".GITMODULES", ".gitmodules .", ".gitmodules:$DATA", "gitmod~1", "GITMOD~4", "gi7eba~1", "gi7eb~12", "g~123456", "~1234567",
		".gitmodules\u200c", ".\u200dgitmodules", "x\\.gitmodules"}
	for _, name := range gitmodules {
		if _, err := ParseTree(ent("120000", name, 1)); err == nil || !strings.Contains(err.Error(), "gitmodulesSymlink:") {
			t.Errorf("symlink %q: got %v, want gitmodulesSymlink", name, err)
		}
		if _, err := ParseTree(ent("100644", name, 1)); err != nil {
			t.Errorf("file %q: %v (only a symlink is refused)", name, err)
		}
	}
	// Names near those that git takes.
	for _, name := range []string{".github", ".gitignore", ".gitattributes", ".gitx", "git~2", "git~10", ".git~1", "..git", "a.git", "git", "GIT",
		".gitmodulesx", "gitmod~5", "gitmod~0", ".g\u200bit", ".gi", ".g", "...", ". ", ".. ", "x\\y", "\\"} {
		if _, err := ParseTree(ent("120000", name, 1)); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}
