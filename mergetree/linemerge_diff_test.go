package mergetree

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// lmGitEnv is an isolated environment for the git oracle: no system or
// global config, a throwaway HOME, fixed identities and dates.
func lmGitEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "HOME" || k == "XDG_CONFIG_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.invalid",
		"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000",
		// glibc returns freed memory to the kernel eagerly; fast-import then
		// spends most of its time in brk on a busy machine.
		"GLIBC_TUNABLES=glibc.malloc.top_pad=67108864:glibc.malloc.trim_threshold=268435456",
	)
}

// lmGit runs git in dir with stdin and returns its raw stdout.
func lmGit(t testing.TB, dir, home string, stdin io.Reader, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = lmGitEnv(home)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	t.Logf("git %s: %v", args[0], time.Since(start).Round(time.Millisecond))
	return out.Bytes()
}

type lmCase struct{ base, ours, theirs []byte }

// lmGitResult is git's verdict on one case: clean and the merged blob, and
// when asked for, the compacted hunks of base→ours and base→theirs as
// `git diff-tree --histogram --no-indent-heuristic -U0` reports them
// (haveDiffs is false for binary content).
type lmGitResult struct {
	clean                bool
	merged               []byte
	haveDiffs            bool
	diffOurs, diffTheirs []change
}

// lmGitMergeFiles merges every case with `git merge-tree --write-tree
// --stdin` in one throwaway repository: one fast-import run builds, per
// case, a base commit with file f and two children (ours, theirs) whose
// only parent is the base; one merge-tree run merges all pairs; one
// cat-file run reads every clean result.
func lmGitMergeFiles(t testing.TB, cases []lmCase, withDiffs bool) []lmGitResult {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	home := t.TempDir()
	repo := filepath.Join(home, "repo")
	lmGit(t, home, home, nil, "init", "-q", "--bare", repo)

	var fi bytes.Buffer
	commit := func(mark, from int, content []byte) {
		fmt.Fprintf(&fi, "commit refs/heads/x\nmark :%d\ncommitter T <t@example.invalid> 1700000000 +0000\ndata 0\n", mark)
		if from > 0 {
			fmt.Fprintf(&fi, "from :%d\n", from)
		}
		fmt.Fprintf(&fi, "M 100644 inline f\ndata %d\n", len(content))
		fi.Write(content)
		fi.WriteString("\n")
	}
	for i, c := range cases {
		fi.WriteString("reset refs/heads/x\n")
		commit(3*i+1, 0, c.base)
		commit(3*i+2, 3*i+1, c.ours)
		commit(3*i+3, 3*i+1, c.theirs)
	}
	marksFile := filepath.Join(home, "marks")
	lmGit(t, repo, home, &fi, "fast-import", "--quiet", "--depth=0", "--export-marks="+marksFile)
	marksData, err := os.ReadFile(marksFile)
	if err != nil {
		t.Fatal(err)
	}
	marks := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(marksData)), "\n") {
		m, oid, _ := strings.Cut(line, " ")
		n, err := strconv.Atoi(strings.TrimPrefix(m, ":"))
		if err != nil {
			t.Fatalf("marks line %q", line)
		}
		marks[n] = oid
	}

	var in bytes.Buffer
	for i := range cases {
		fmt.Fprintf(&in, "%s %s\n", marks[3*i+2], marks[3*i+3])
	}
	out := lmGit(t, repo, home, &in, "merge-tree", "--write-tree", "--no-messages", "--stdin")
	// Per merge: status NUL tree NUL [conflict entries NUL...] NUL.
	fields := bytes.Split(out, []byte{0})
	res := make([]lmGitResult, len(cases))
	trees := make([]string, len(cases))
	k := 0
	for i := range cases {
		if k+2 > len(fields) {
			t.Fatalf("merge-tree output too short at case %d", i)
		}
		status, tree := string(fields[k]), string(fields[k+1])
		k += 2
		for len(fields[k]) > 0 {
			k++
		}
		k++
		switch status {
		case "1":
			res[i].clean = true
			trees[i] = tree
		case "0":
		default:
			t.Fatalf("case %d: merge-tree status %q", i, status)
		}
	}

	var req bytes.Buffer
	for i := range cases {
		if res[i].clean {
			fmt.Fprintf(&req, "%s:f\n", trees[i])
		}
	}
	blobs := bufio.NewReader(bytes.NewReader(lmGit(t, repo, home, &req, "cat-file", "--batch")))
	for i := range cases {
		if !res[i].clean {
			continue
		}
		hdr, err := blobs.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Fields(hdr)
		if len(parts) != 3 || parts[1] != "blob" {
			t.Fatalf("case %d: cat-file header %q", i, hdr)
		}
		size, _ := strconv.Atoi(parts[2])
		buf := make([]byte, size+1)
		if _, err := io.ReadFull(blobs, buf); err != nil {
			t.Fatal(err)
		}
		res[i].merged = buf[:size]
	}
	if withDiffs {
		lmGitDiffs(t, repo, home, cases, marks, res)
	}
	return res
}

// lmGitDiffs fills in git's hunks of every ours and theirs commit against the
// base, from one `git diff-tree --stdin` run.
func lmGitDiffs(t testing.TB, repo, home string, cases []lmCase, marks map[int]string, res []lmGitResult) {
	t.Helper()
	var in bytes.Buffer
	for i := range cases {
		fmt.Fprintf(&in, "%s\n%s\n", marks[3*i+2], marks[3*i+3])
	}
	out := lmGit(t, repo, home, &in, "diff-tree", "--stdin", "--always", "-p", "-U0",
		"--histogram", "--no-indent-heuristic", "--no-color", "--no-ext-diff", "--no-renames")
	lines := strings.Split(string(out), "\n")
	k := 0
	for i := range cases {
		res[i].haveDiffs = true
		for side := range 2 {
			sha := marks[3*i+2+side]
			if k >= len(lines) || lines[k] != sha {
				t.Fatalf("diff-tree output out of step at case %d (line %q)", i, lines[min(k, len(lines)-1)])
			}
			k++
			hunks := []change{}
			for ; k < len(lines) && !lmIsHexID(lines[k]); k++ {
				l := lines[k]
				if strings.HasPrefix(l, "Binary files") {
					res[i].haveDiffs = false
				}
				if !strings.HasPrefix(l, "@@ -") {
					continue
				}
				var a, b, c, d int
				old, nw, _ := strings.Cut(strings.TrimPrefix(l, "@@ -"), " +")
				nw, _, _ = strings.Cut(nw, " @@")
				a, b = lmParseRange(t, old)
				c, d = lmParseRange(t, nw)
				if b > 0 {
					a--
				}
				if d > 0 {
					c--
				}
				hunks = append(hunks, change{i1: a, chg1: b, i2: c, chg2: d})
			}
			if side == 0 {
				res[i].diffOurs = hunks
			} else {
				res[i].diffTheirs = hunks
			}
		}
	}
}

func lmIsHexID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// lmParseRange parses "start[,count]" of a hunk header.
func lmParseRange(t testing.TB, s string) (start, count int) {
	a, b, ok := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil {
		t.Fatalf("hunk range %q", s)
	}
	count = 1
	if ok {
		if count, err = strconv.Atoi(b); err != nil {
			t.Fatalf("hunk range %q", s)
		}
	}
	return start, count
}

// lmScript is the compacted hunk list of our diff a → b.
func lmScript(a, b []byte) []change {
	ls := newLineSet(countLines(a) + countLines(b))
	fa, fb := ls.split(a, countLines(a)), ls.split(b, countLines(b))
	return compactedScript(newXdiffer(ls.nids()).diff(fa.ids, fb.ids))
}

func lmEnvInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err == nil {
			return n
		}
	}
	return def
}

// lmGenLines returns n lines drawn from alphabet.
func lmGenLines(r *rand.Rand, alphabet []string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = alphabet[r.IntN(len(alphabet))]
	}
	return out
}

// lmMutate applies a few random replace/insert/delete edits; an inserted
// line is a fresh (nearly unique) line with probability 1/uniq.
func lmMutate(r *rand.Rand, lines, alphabet []string, maxEdits, maxRun, uniq int) []string {
	out := append([]string(nil), lines...)
	for e := r.IntN(maxEdits + 1); e > 0; e-- {
		pos := r.IntN(len(out) + 1)
		del := min(r.IntN(maxRun+1), len(out)-pos)
		ins := lmGenLines(r, alphabet, r.IntN(maxRun+1))
		for i := range ins {
			if r.IntN(uniq) == 0 {
				ins[i] = fmt.Sprintf("u%d\n", r.IntN(1000))
			}
		}
		out = append(out[:pos], append(ins, out[pos+del:]...)...)
	}
	return out
}

// lmInsertBlocks inserts one to three blocks of 5 to 250 lines, mostly new
// (nearly unique) lines with some "x" lines among them, and may delete a
// few lines.
func lmInsertBlocks(r *rand.Rand, lines []string) []string {
	out := append([]string(nil), lines...)
	for range 1 + r.IntN(3) {
		block := make([]string, 5+r.IntN(246))
		xs := 5 + r.IntN(40) // percent of "x" lines
		for i := range block {
			if r.IntN(100) < xs {
				block[i] = "x\n"
			} else {
				block[i] = fmt.Sprintf("u%d\n", r.IntN(100000))
			}
		}
		pos := r.IntN(len(out) + 1)
		del := min(r.IntN(4), len(out)-pos)
		out = append(out[:pos], append(block, out[pos+del:]...)...)
	}
	return out
}

func lmJoin(r *rand.Rand, lines []string) []byte {
	b := []byte(strings.Join(lines, ""))
	if len(b) > 0 && b[len(b)-1] == '\n' && r.IntN(8) == 0 {
		b = b[:len(b)-1] // missing final newline
	}
	return b
}

// lmGenCase makes one random triple. Small alphabets of repeated lines make
// the placement of hunks ambiguous, which is where diffs differ.
func lmGenCase(r *rand.Rand) lmCase {
	var alphabet []string
	n, edits, run, uniq, regen := r.IntN(12), 3, 3, 12, 20
	thin := false
	switch k := r.IntN(40); {
	case k == 0: // big, far apart, all lines frequent: Myers cost limits
		alphabet = []string{"x\n", "y\n"}
		n, edits, run, uniq, regen = 1500+r.IntN(1500), 30, 80, 50, 4
	case k < 2 && r.IntN(2) == 0: // frequent lines mostly dropped by a side
		alphabet = []string{"x\n", "z\n"}
		n, edits, run, uniq, thin = 150+r.IntN(200), 5, 5, 3, true
	case k < 3: // long blocks of new lines with a few frequent ones in a
		// region that falls back to Myers: exercises its discarding of
		// lines and its 100-line scan window
		base := lmGenLines(r, append(slices.Repeat([]string{"x\n"}, 60), "y\n"), 80+r.IntN(300))
		c := lmCase{lmJoin(r, base), lmJoin(r, lmInsertBlocks(r, base)), lmJoin(r, lmInsertBlocks(r, base))}
		if r.IntN(2) == 0 { // the blocks in the base instead
			c.base, c.ours = c.ours, c.base
		}
		return c
	case k < 4: // one line repeated > 64 times: the fall-back to Myers
		alphabet = append(slices.Repeat([]string{"x\n"}, 30), "y\n")
		n, edits, run, uniq = 65+r.IntN(200), 6, 6, 2
	case k < 24: // tiny alphabets
		alphabet = []string{"a\n", "b\n", "c\n", "d\n"}[:2+r.IntN(3)]
	case k < 28: // line-ending variants are distinct lines
		alphabet = []string{"a\n", "a\r\n", "a", "b\n", "\n"}
	case k < 32: // frequent lines
		alphabet = []string{"x\n", "x\n", "x\n", "x\n", "x\n", "x\n", "y\n", "z\n"}
		n, edits, run = 60+r.IntN(120), 6, 5
	case k < 36: // medium files with a larger alphabet
		alphabet = []string{"a\n", "b\n", "c\n", "d\n", "e\n", "f\n", "g\n", "}\n", "\n"}
		n, edits, run = 10+r.IntN(60), 5, 4
	default: // blank-heavy
		alphabet = []string{"\n", "\n", "}\n", "x\n"}
		n = r.IntN(20)
	}
	base := lmGenLines(r, alphabet, n)
	var ours, theirs []string
	if r.IntN(regen) == 0 {
		ours = lmGenLines(r, alphabet, r.IntN(n+3))
	} else {
		ours = lmMutate(r, base, alphabet, edits, run, uniq)
	}
	if r.IntN(regen) == 0 {
		theirs = lmGenLines(r, alphabet, r.IntN(n+3))
	} else {
		theirs = lmMutate(r, base, alphabet, edits, run, uniq)
	}
	if thin {
		ours = slices.DeleteFunc(ours, func(l string) bool { return l == "z\n" && r.IntN(8) != 0 })
		if r.IntN(2) == 0 {
			theirs = slices.DeleteFunc(theirs, func(l string) bool { return l == "z\n" && r.IntN(8) != 0 })
		}
	}
	c := lmCase{lmJoin(r, base), lmJoin(r, ours), lmJoin(r, theirs)}
	if r.IntN(40) == 0 {
		// A NUL byte in one of the three.
		p := []*[]byte{&c.base, &c.ours, &c.theirs}[r.IntN(3)]
		*p = append(append([]byte(nil), *p...), "n\x00l\n"...)
	}
	if r.IntN(30) == 0 {
		[]*[]byte{&c.base, &c.ours, &c.theirs}[r.IntN(3)] = new([]byte)
	}
	return c
}

// lmGenCases makes n random triples plus two big ones: tens of thousands of
// lines from a two-line alphabet, so the whole file falls back to Myers with
// enough diagonals (over 65536) that xdiff's snake heuristic runs before its
// cost limit.
func lmGenCases(seed uint64, n int) []lmCase {
	r := rand.New(rand.NewPCG(seed, 0x6d657267))
	cases := make([]lmCase, n, n+2)
	for i := range cases {
		cases[i] = lmGenCase(r)
	}
	for range 2 {
		alphabet := []string{"x\n", "y\n"}
		base := lmGenLines(r, alphabet, 34000+r.IntN(2000))
		ours := lmMutate(r, base, alphabet, 60, 120, 4)
		theirs := lmMutate(r, base, alphabet, 3, 3, 2)
		cases = append(cases, lmCase{lmJoin(r, base), lmJoin(r, ours), lmJoin(r, theirs)})
	}
	return cases
}

// TestMergeFileDifferential compares MergeFile with git merge-tree on
// random triples. GITPLUS_DIFF_CASES sets the number of cases (default
// 3000), GITPLUS_DIFF_SEED the seed.
func TestMergeFileDifferential(t *testing.T) {
	seed := uint64(lmEnvInt("GITPLUS_DIFF_SEED", 20260101))
	cases := lmGenCases(seed, lmEnvInt("GITPLUS_DIFF_CASES", 3000))
	n := len(cases)
	// Also ask git for some swapped merges, to check that git's merge is
	// symmetric (FuzzMergeFile relies on it).
	nswap := min(n, 500)
	for _, c := range cases[:nswap] {
		cases = append(cases, lmCase{c.base, c.theirs, c.ours})
	}
	want := lmGitMergeFiles(t, cases, true)
	for i := range nswap {
		a, b := want[i], want[n+i]
		if a.clean != b.clean || !bytes.Equal(a.merged, b.merged) {
			t.Errorf("git is not symmetric on case %d: %q %q %q", i, cases[i].base, cases[i].ours, cases[i].theirs)
		}
	}
	cases, want = cases[:n], want[:n]
	// The diffs themselves: every compacted hunk list must be git's.
	var diffsCompared, diffsDisagree int
	for i, c := range cases {
		w := want[i]
		if !w.haveDiffs {
			continue
		}
		for side, pair := range [][2][]byte{{c.base, c.ours}, {c.base, c.theirs}} {
			gw := [][]change{w.diffOurs, w.diffTheirs}[side]
			got := lmScript(pair[0], pair[1])
			diffsCompared++
			if !slices.Equal(got, gw) {
				diffsDisagree++
				if diffsDisagree <= 5 {
					t.Errorf("case %d: diff differs from git's:\n a: %q\n b: %q\n git:  %v\n ours: %v",
						i, pair[0], pair[1], gw, got)
				}
			}
		}
	}
	t.Logf("diffs %d: disagreements %d", diffsCompared, diffsDisagree)

	var cleanAgree, conflictAgree, disagree int
	for i, c := range cases {
		got, clean := MergeFile(c.base, c.ours, c.theirs)
		w := want[i]
		switch {
		case clean != w.clean:
		case !clean:
			conflictAgree++
			continue
		case bytes.Equal(got, w.merged):
			cleanAgree++
			continue
		}
		disagree++
		if disagree <= 10 {
			t.Errorf("case %d (seed %d) disagrees with git:\n base:   %q\n ours:   %q\n theirs: %q\n git:  clean=%v %q\n ours: clean=%v %q",
				i, seed, c.base, c.ours, c.theirs, w.clean, w.merged, clean, got)
		}
	}
	t.Logf("cases %d: clean agreements %d, conflict agreements %d, disagreements %d",
		n, cleanAgree, conflictAgree, disagree)
	if cleanAgree == 0 || conflictAgree == 0 {
		t.Errorf("degenerate case mix: %d clean, %d conflicting agreements", cleanAgree, conflictAgree)
	}
}
