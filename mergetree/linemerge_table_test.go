package mergetree

import (
	"bytes"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// L builds text from space-separated lines, each ended by "\n".
func lmText(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(strings.ReplaceAll(s, " ", "\n") + "\n")
}

type lmTable struct {
	name               string
	base, ours, theirs []byte
	clean              bool
	want               []byte // when clean
}

func lmTableCases() []lmTable {
	big := bytes.Repeat([]byte("l\n"), 4001) // 8002 bytes
	nulLate := append(append([]byte(nil), big...), "n\x00\n"...)
	return []lmTable{
		// docs/merge.md, "The line merge": the placement of an ambiguous insertion.
		{"insertion slides down", lmText("A B A"), lmText("A B A B A"), lmText("A X A"), true, lmText("A X A B A")},
		{"insertion touches edit", lmText("A B A"), lmText("A B A B A"), lmText("A B X"), false, nil},
		{"insertion touches edit, swapped", lmText("A B A"), lmText("A B X"), lmText("A B A B A"), false, nil},
		// docs/merge.md, "The line merge": touching hunks conflict, one untouched line between is clean.
		{"adjacent edits", lmText("a b c d"), lmText("a B c d"), lmText("a b C d"), false, nil},
		{"edits one line apart", lmText("a b c d e"), lmText("a B c d e"), lmText("a b c D e"), true, lmText("a B c D e")},
		{"insert next to edit", lmText("a b c"), lmText("a B c"), lmText("a b X c"), false, nil},
		{"insert before edit", lmText("a b c"), lmText("a B c"), lmText("a X b c"), false, nil},
		{"same-point insertions", lmText("a b"), lmText("a X b"), lmText("a Y b"), false, nil},
		{"same-point identical insertions", lmText("a b c d"), lmText("a X b c d Z"), lmText("a X b c d"), true, lmText("a X b c d Z")},
		{"adjacent deletions", lmText("a b c d"), lmText("a c d"), lmText("a b d"), false, nil},
		{"identical deletion and edit", lmText("a b c d e"), lmText("a c d E"), lmText("a c d e"), true, lmText("a c d E")},
		{"superset edit", lmText("a b c d e"), lmText("a B C d e"), lmText("a B C D e"), false, nil},
		{"edits at both ends", lmText("a b c d"), lmText("A b c d"), lmText("a b c D"), true, lmText("A b c D")},
		{"theirs appends", lmText("a b c"), lmText("A b c"), lmText("a b c d"), true, lmText("A b c d")},
		// Missing final newline: the last line is a different line.
		{"append after unterminated line", []byte("a\nb"), []byte("a\nb\nc"), []byte("A\nb"), false, nil},
		{"unterminated line kept", []byte("a\nb\nc"), []byte("A\nb\nc"), []byte("a\nb\nC"), true, []byte("A\nb\nC")},
		{"newline added vs edit above", []byte("a\nb\nc"), []byte("a\nb\nc\n"), []byte("a\nB\nc"), false, nil},
		{"newline added far from edit", []byte("a\nb\nc\nd"), []byte("a\nb\nc\nd\n"), []byte("A\nb\nc\nd"), true, []byte("A\nb\nc\nd\n")},
		// CR is content.
		{"CR content", []byte("a\r\nb\r\nc\r\n"), []byte("a\nb\r\nc\r\n"), []byte("a\r\nb\r\nC\r\n"), true, []byte("a\nb\r\nC\r\n")},
		{"CR vs LF same line", []byte("a\nb\nc\n"), []byte("a\nb\r\nc\n"), []byte("a\nb\nc\r\n"), false, nil},
		// Empty base (add/add) and empty sides.
		{"add/add different", nil, lmText("x"), lmText("y"), false, nil},
		{"add/add same", nil, lmText("x y"), lmText("x y"), true, lmText("x y")},
		{"add/add empty ours", nil, nil, lmText("y"), true, lmText("y")},
		{"add/add empty theirs", nil, lmText("x"), nil, true, lmText("x")},
		{"add/add prefix", nil, lmText("x"), lmText("x y"), false, nil},
		{"both emptied", lmText("a b"), nil, nil, true, nil},
		{"ours emptied, theirs edits", lmText("a b"), nil, lmText("a B"), false, nil},
		// Short-circuits before the binary check.
		{"binary unchanged ours", []byte("a\x00"), []byte("a\x00"), []byte("b\x00"), true, []byte("b\x00")},
		{"binary same both", []byte("a\x00"), []byte("c\x00"), []byte("c\x00"), true, []byte("c\x00")},
		// Binary: a NUL in the first 8000 bytes of any of the three.
		{"NUL in base", []byte("n\x00\na\nb\nc\n"), []byte("n\x00\nA\nb\nc\n"), []byte("n\x00\na\nb\nC\n"), false, nil},
		{"NUL in theirs only", lmText("a b c"), lmText("A b c"), []byte("a\nb\nc\x00\n"), false, nil},
		{"NUL after 8000 bytes", append(lmText("a b"), nulLate...), append(lmText("A b"), nulLate...), append(lmText("a b"), append(nulLate, 'z', '\n')...), true, append(lmText("A b"), append(nulLate, 'z', '\n')...)},
	}
}

func TestMergeFileTable(t *testing.T) {
	cases := lmTableCases()
	for _, c := range cases {
		got, clean := MergeFile(c.base, c.ours, c.theirs)
		if clean != c.clean {
			t.Errorf("%s: clean = %v, want %v (merged %q)", c.name, clean, c.clean, got)
			continue
		}
		if clean && !bytes.Equal(got, c.want) {
			t.Errorf("%s: merged %q, want %q", c.name, got, c.want)
		}
	}
	// The expectations themselves are git's.
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found: expectations not re-checked against git")
	}
	triples := make([]lmCase, len(cases))
	for i, c := range cases {
		triples[i] = lmCase{c.base, c.ours, c.theirs}
	}
	for i, g := range lmGitMergeFiles(t, triples, false) {
		c := cases[i]
		if g.clean != c.clean || (g.clean && !bytes.Equal(g.merged, c.want)) {
			t.Errorf("%s: table says clean=%v %q, git says clean=%v %q", c.name, c.clean, c.want, g.clean, g.merged)
		}
	}
}

func TestIsBinary(t *testing.T) {
	b := bytes.Repeat([]byte{'a'}, 9000)
	if IsBinary(b) || IsBinary(nil) {
		t.Fatal("text reported binary")
	}
	b[7999] = 0
	if !IsBinary(b) {
		t.Fatal("NUL at byte 7999 not seen")
	}
	b[7999] = 'a'
	b[8000] = 0
	if IsBinary(b) {
		t.Fatal("NUL at byte 8000 must not count")
	}
}

// TestMergeFileResultIndependent checks that a content-merged result does
// not share memory with the inputs. (The short-circuits return an input
// itself, as documented on MergeFile.)
func TestMergeFileResultIndependent(t *testing.T) {
	base, ours, theirs := lmText("a b c d e"), lmText("A b c d e"), lmText("a b c d E")
	got, clean := MergeFile(base, ours, theirs)
	if !clean {
		t.Fatal("conflict")
	}
	ours[0], theirs[8] = 'Q', 'Q'
	if !bytes.Equal(got, lmText("A b c d E")) {
		t.Fatalf("result changed with its inputs: %q", got)
	}
}

// TestDiffCompaction pins the change groups of single diffs (compacted),
// the step everything else follows from.
func TestDiffCompaction(t *testing.T) {
	type hunk = change
	cases := []struct {
		a, b []byte
		want []hunk
	}{
		// An insertion in a repeated run slides down as far as it can.
		{lmText("A B A"), lmText("A B A B A"), []hunk{{3, 3, 0, 2}}},
		{lmText("x x x"), lmText("x x x x"), []hunk{{3, 3, 0, 1}}},
		// A deletion in a run slides down too.
		{lmText("x x x y"), lmText("x x y"), []hunk{{2, 2, 1, 0}}},
		// Replacements (as `git diff --histogram --no-indent-heuristic`).
		{lmText("a b c b"), lmText("a X b"), []hunk{{1, 1, 2, 1}}},
		{lmText("a b c d b e"), lmText("a b X e"), []hunk{{2, 2, 3, 1}}},
		{nil, lmText("a"), []hunk{{0, 0, 0, 1}}},
		{lmText("a"), nil, []hunk{{0, 0, 1, 0}}},
		{lmText("a"), []byte("a"), []hunk{{0, 0, 1, 1}}},
	}
	for _, c := range cases {
		ls := newLineSet(countLines(c.a) + countLines(c.b))
		fa, fb := ls.split(c.a, countLines(c.a)), ls.split(c.b, countLines(c.b))
		got := compactedScript(newXdiffer(ls.nids()).diff(fa.ids, fb.ids))
		if len(got) != len(c.want) {
			t.Errorf("%q→%q: hunks %v, want %v", c.a, c.b, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q→%q: hunks %v, want %v", c.a, c.b, got, c.want)
				break
			}
		}
	}
}

// FuzzMergeFile checks that MergeFile never panics and that its results
// keep the properties git's merge has: a side equal to the base yields the
// other side; swapping ours and theirs changes neither cleanliness nor the
// clean bytes (git's merge is symmetric in this sense: the differential
// test checks git on swapped pairs); a conflict carries no bytes.
func FuzzMergeFile(f *testing.F) {
	for _, c := range lmTableCases() {
		f.Add(c.base, c.ours, c.theirs)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		c := lmGenCase(r)
		f.Add(c.base, c.ours, c.theirs)
	}
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		got, clean := MergeFile(base, ours, theirs)
		if m, ok := MergeFile(base, base, theirs); !ok || !bytes.Equal(m, theirs) {
			t.Fatalf("MergeFile(b, b, x) = %q, %v; want x", m, ok)
		}
		if m, ok := MergeFile(base, ours, base); !ok || !bytes.Equal(m, ours) {
			t.Fatalf("MergeFile(b, x, b) = %q, %v; want x", m, ok)
		}
		swapped, sclean := MergeFile(base, theirs, ours)
		if clean != sclean {
			t.Fatalf("clean %v but swapped clean %v", clean, sclean)
		}
		if clean && !bytes.Equal(got, swapped) {
			t.Fatalf("merged %q but swapped merged %q", got, swapped)
		}
		if !clean && got != nil {
			t.Fatalf("conflict with bytes %q", got)
		}
	})
}
