package mergetree

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func f644(s string) mtFile { return mtFile{mode: modeFile, content: s} }
func f755(s string) mtFile { return mtFile{mode: modeExec, content: s} }
func lnk(s string) mtFile  { return mtFile{mode: modeSymlink, content: s} }
func sub(n int) mtFile     { return mtFile{mode: modeGitlink, content: fmt.Sprintf("%040x", n)} }

// TestTreeRules checks every tree-level rule of docs/merge.md against its
// expected outcome and against git merge-tree (verdict and tree).
func TestTreeRules(t *testing.T) {
	const lines = "1\n2\n3\n4\n5\n6\n7\n"
	cases := []struct {
		name               string
		base, ours, theirs mtTree
		conflict           string // "path kind, path kind", or "" for clean
		want               mtTree // expected merged tree when clean (nil: don't check)
	}{
		{"one-sided modify", mtTree{"f": f644("a\n"), "g": f644("g\n")}, mtTree{"f": f644("b\n"), "g": f644("g\n")}, mtTree{"f": f644("a\n"), "g": f644("g\n")},
			"", mtTree{"f": f644("b\n"), "g": f644("g\n")}},
		{"deleted on both sides", mtTree{"f": f644("a\n"), "g": f644("g\n")}, mtTree{"g": f644("g\n")}, mtTree{"g": f644("g2\n")},
			"", mtTree{"g": f644("g2\n")}},
		{"deleted vs unchanged", mtTree{"f": f644("a\n"), "g": f644("g\n")}, mtTree{"g": f644("g\n")}, mtTree{"f": f644("a\n"), "g": f644("g2\n")},
			"", mtTree{"g": f644("g2\n")}},
		{"modify/delete", mtTree{"f": f644("a\n")}, mtTree{"f": f644("b\n")}, mtTree{},
			"f modify/delete", nil},
		{"mode change vs delete", mtTree{"f": f644("a\n"), "g": f644("")}, mtTree{"g": f644("")}, mtTree{"f": f755("a\n"), "g": f644("")},
			"f modify/delete", nil},
		{"chmod vs content edit", mtTree{"f": f644(lines)}, mtTree{"f": f755(lines)}, mtTree{"f": f644(strings.Replace(lines, "4", "four", 1))},
			"", mtTree{"f": f755(strings.Replace(lines, "4", "four", 1))}},
		{"both chmod, one edits", mtTree{"f": f644(lines)}, mtTree{"f": f755(lines)}, mtTree{"f": f755(lines + "8\n")},
			"", mtTree{"f": f755(lines + "8\n")}},
		{"add/add same content 644 vs 755", mtTree{"g": f644("")}, mtTree{"f": f644("x\n"), "g": f644("")}, mtTree{"f": f755("x\n"), "g": f644("")},
			"f add/add", nil},
		{"add/add identical", mtTree{"g": f644("")}, mtTree{"f": f644("x\n"), "g": f644("")}, mtTree{"f": f644("x\n"), "g": f644("g\n")},
			"", mtTree{"f": f644("x\n"), "g": f644("g\n")}},
		{"add/add different", mtTree{"g": f644("")}, mtTree{"f": f644("x\n")}, mtTree{"f": f644("y\n")},
			"f add/add", nil},
		{"add/add against the empty blob", mtTree{"g": f644("")}, mtTree{"f": f644(""), "g": f644("")}, mtTree{"f": f644("y\n"), "g": f644("")},
			"", mtTree{"f": f644("y\n"), "g": f644("")}},
		{"one-sided file to symlink", mtTree{"f": f644("a\n"), "g": f644("")}, mtTree{"f": lnk("t"), "g": f644("")}, mtTree{"f": f644("a\n"), "g": f644("g\n")},
			"", mtTree{"f": lnk("t"), "g": f644("g\n")}},
		{"one-sided file to gitlink", mtTree{"f": f644("a\n"), "g": f644("")}, mtTree{"f": f644("a\n"), "g": f644("g\n")}, mtTree{"f": sub(7), "g": f644("")},
			"", mtTree{"f": sub(7), "g": f644("g\n")}},
		{"symlinks changed differently", mtTree{"l": lnk("a")}, mtTree{"l": lnk("b")}, mtTree{"l": lnk("c")},
			"l content", nil},
		{"symlinks changed alike", mtTree{"l": lnk("a"), "g": f644("")}, mtTree{"l": lnk("b"), "g": f644("")}, mtTree{"l": lnk("b"), "g": f644("g\n")},
			"", mtTree{"l": lnk("b"), "g": f644("g\n")}},
		{"gitlinks changed differently", mtTree{"s": sub(1)}, mtTree{"s": sub(2)}, mtTree{"s": sub(3)},
			"s submodule", nil},
		{"distinct types", mtTree{"f": f644("a\n")}, mtTree{"f": lnk("a")}, mtTree{"f": f644("b\n")},
			"f distinct types", nil},
		{"file to directory, other side unchanged", mtTree{"d": f644("a\n"), "g": f644("")}, mtTree{"d/x": f644("x\n"), "g": f644("")}, mtTree{"d": f644("a\n"), "g": f644("g\n")},
			"", mtTree{"d/x": f644("x\n"), "g": f644("g\n")}},
		{"file to directory vs modified file", mtTree{"d": f644("a\n")}, mtTree{"d/x": f644("x\n")}, mtTree{"d": f644("b\n")},
			"d file/directory", nil},
		{"file added vs directory added", mtTree{"g": f644("")}, mtTree{"d": f644("a\n"), "g": f644("")}, mtTree{"d/x": f644("x\n"), "g": f644("")},
			"d file/directory", nil},
		{"directory emptied vs replaced by file", mtTree{"d/x": f644("x\n"), "g": f644("")}, mtTree{"g": f644("")}, mtTree{"d": f644("new\n"), "g": f644("")},
			"", mtTree{"d": f644("new\n"), "g": f644("")}},
		{"directory modified vs replaced by file", mtTree{"d/x": f644("x\n")}, mtTree{"d/x": f644("y\n")}, mtTree{"d": f644("new\n")},
			"d file/directory, d/x modify/delete", nil},
		{"empty directory vanishes", mtTree{"d/x": f644("x\n"), "d/y": f644("y\n")}, mtTree{"d/y": f644("y\n")}, mtTree{"d/x": f644("x\n")},
			"", mtTree{}},
		{"binary", mtTree{"b": f644("a\x00\n")}, mtTree{"b": f644("b\x00\n")}, mtTree{"b": f644("c\x00\n")},
			"b binary", nil},
		{"binary base only", mtTree{"b": f644("a\x00\n" + lines)}, mtTree{"b": f644("0\n" + lines)}, mtTree{"b": f644("a\n" + lines + "9\n")},
			"b binary", nil},
		{"content conflict", mtTree{"f": f644(lines)}, mtTree{"f": f644(strings.Replace(lines, "4", "x", 1))}, mtTree{"f": f644(strings.Replace(lines, "4", "y", 1))},
			"f content", nil},
		{"clean content merge", mtTree{"f": f644(lines)}, mtTree{"f": f644(strings.Replace(lines, "2", "x", 1))}, mtTree{"f": f644(strings.Replace(lines, "6", "y", 1))},
			"", mtTree{"f": f644(strings.Replace(strings.Replace(lines, "2", "x", 1), "6", "y", 1))}},
		{"git order: a.b, a/, a=", mtTree{"a/x": f644("1\n"), "a.b": f644("2\n"), "a=": f644("")}, mtTree{"a/x": f644("1x\n"), "a.b": f644("2\n"), "a=": f644("")}, mtTree{"a/x": f644("1\n"), "a.b": f644("2\n"), "a=": f644("3\n"), "a-": f644("")},
			"", mtTree{"a/x": f644("1x\n"), "a.b": f644("2\n"), "a=": f644("3\n"), "a-": f644("")}},
		{"nested one-sided changes", mtTree{"a/b/c": f644("1\n"), "a/d/e": f644("2\n")}, mtTree{"a/b/c": f644("1x\n"), "a/d/e": f644("2\n")}, mtTree{"a/b/c": f644("1\n"), "a/d/e": f644("2\n"), "a/d/f": f755("3\n")},
			"", mtTree{"a/b/c": f644("1x\n"), "a/d/e": f644("2\n"), "a/d/f": f755("3\n")}},
	}
	var all []mtCase
	for _, c := range cases {
		all = append(all, mtCase{name: c.name, base: c.base, ours: c.ours, theirs: c.theirs})
		if c.want != nil { // the expected tree, as a case of its own to get its id
			all = append(all, mtCase{name: c.name + " (want)", base: c.want, ours: c.want, theirs: c.want})
		}
	}
	repo := newMTRepo(t)
	ids := repo.fastImport(all)
	var pairs [][2]plumbing.Hash
	for _, id := range ids {
		pairs = append(pairs, [2]plumbing.Hash{id[1], id[2]})
	}
	gits := repo.mergeTreeStdin(pairs)
	s := repo.store()
	k := 0
	for _, c := range cases {
		id, gm := ids[k], gits[k]
		k++
		t.Run(c.name, func(t *testing.T) {
			res, err := Merge(s, id[1], id[2], Options{})
			if err != nil {
				t.Fatal(err)
			}
			if gm.clean != (c.conflict == "") {
				t.Errorf("git disagrees with the expectation: clean=%v %v", gm.clean, gm.types)
			}
			if c.conflict == "" {
				if !res.Clean() {
					t.Fatalf("conflicts %v, want clean", res.Conflicts)
				}
				if res.Tree != gm.tree {
					t.Errorf("tree %s, git %s", res.Tree, gm.tree)
				}
				return
			}
			var got []string
			for _, cf := range res.Conflicts {
				got = append(got, cf.Path+" "+cf.Kind)
			}
			if strings.Join(got, ", ") != c.conflict {
				t.Errorf("conflicts %q, want %q", got, c.conflict)
			}
			if !res.Tree.IsZero() {
				t.Errorf("conflicted merge returned tree %s", res.Tree)
			}
		})
		if c.want != nil {
			wantTree := readCommitTree(t, s, ids[k][0])
			k++
			if gm.clean && gm.tree != wantTree {
				t.Errorf("%s: git's tree %s is not the expected %s", c.name, gm.tree, wantTree)
			}
		}
	}
}

func readCommitTree(t *testing.T, s Store, h plumbing.Hash) plumbing.Hash {
	t.Helper()
	c, err := newCommits(s).get(h)
	if err != nil {
		t.Fatal(err)
	}
	return c.tree
}
