package mergetree

// Test helpers: build repositories with git (isolated config) and ask
// `git merge-tree --write-tree` for its verdict, the oracle.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

func mtGitEnv(home string) []string {
	env := []string{
		"GIT_CONFIG_NOSYSTEM=1",
		"HOME=" + home,
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
		"GIT_AUTHOR_DATE=1600000000 +0000", "GIT_COMMITTER_DATE=1600000000 +0000",
		"LC_ALL=C",
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	return env
}

// mtRepo is a throwaway bare repository.
type mtRepo struct {
	t    testing.TB
	dir  string
	home string
}

func newMTRepo(t testing.TB) *mtRepo {
	t.Helper()
	root := t.TempDir()
	r := &mtRepo{t: t, dir: filepath.Join(root, "r.git"), home: root}
	r.git(nil, "init", "-q", "--bare", r.dir)
	return r
}

// git runs git in the repository and returns stdout; a non-zero exit fails
// the test unless the command is merge-tree (exit 1 = conflict).
func (r *mtRepo) git(stdin []byte, args ...string) []byte {
	r.t.Helper()
	out, code, stderr := r.gitCode(stdin, args...)
	if code != 0 && !(code == 1 && len(args) > 0 && args[0] == "merge-tree") {
		r.t.Fatalf("git %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return out
}

func (r *mtRepo) gitCode(stdin []byte, args ...string) ([]byte, int, string) {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	if r.dir != "" && (len(args) == 0 || args[0] != "init") {
		cmd.Env = append(mtGitEnv(r.home), "GIT_DIR="+r.dir)
	} else {
		cmd.Env = mtGitEnv(r.home)
	}
	cmd.Dir = r.home
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			r.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return out.Bytes(), code, errb.String()
}

func (r *mtRepo) store() *GoGitStore {
	fs := filesystem.NewStorageWithOptions(osfs.New(r.dir), cache.NewObjectLRUDefault(),
		filesystem.Options{KeepDescriptors: true})
	r.t.Cleanup(func() { fs.Close() })
	return NewGoGitStore(fs)
}

// mtFile is one path's version in a generated tree.
type mtFile struct {
	mode    uint32 // modeFile, modeExec, modeSymlink, modeGitlink
	content string // blob content, symlink target, or gitlink hex id
}

type mtTree map[string]mtFile

// mtCase is a three-way tree case: ours and theirs are commits whose only
// parent is base.
type mtCase struct {
	name               string
	base, ours, theirs mtTree
}

// fastImport builds every case with ONE git fast-import run and returns the
// (base, ours, theirs) commit ids per case.
func (r *mtRepo) fastImport(cases []mtCase) [][3]plumbing.Hash {
	r.t.Helper()
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	data := func(s string) { fmt.Fprintf(w, "data %d\n%s\n", len(s), s) }
	commit := func(mark int, from int, msg string, tr mtTree) {
		fmt.Fprintf(w, "commit refs/heads/t\nmark :%d\ncommitter t <t@example.invalid> 1600000000 +0000\n", mark)
		data(msg)
		if from > 0 {
			fmt.Fprintf(w, "from :%d\n", from)
		}
		fmt.Fprintf(w, "deleteall\n")
		paths := make([]string, 0, len(tr))
		for p := range tr {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			f := tr[p]
			if f.mode == modeGitlink {
				fmt.Fprintf(w, "M 160000 %s %s\n", f.content, p)
				continue
			}
			fmt.Fprintf(w, "M %o inline %s\n", f.mode, p)
			data(f.content)
		}
		w.WriteString("\n")
	}
	for i, c := range cases {
		m := 3*i + 1
		fmt.Fprintf(w, "reset refs/heads/t\n")
		commit(m, 0, fmt.Sprintf("case %d base %s", i, c.name), c.base)
		commit(m+1, m, fmt.Sprintf("case %d ours", i), c.ours)
		commit(m+2, m, fmt.Sprintf("case %d theirs", i), c.theirs)
	}
	w.Flush()
	marks := filepath.Join(r.home, "marks")
	r.git(buf.Bytes(), "fast-import", "--quiet", "--export-marks="+marks)
	mb, err := os.ReadFile(marks)
	if err != nil {
		r.t.Fatal(err)
	}
	ids := map[int]plumbing.Hash{}
	for _, line := range strings.Split(strings.TrimSpace(string(mb)), "\n") {
		f := strings.Fields(line)
		n, _ := strconv.Atoi(strings.TrimPrefix(f[0], ":"))
		ids[n] = plumbing.NewHash(f[1])
	}
	out := make([][3]plumbing.Hash, len(cases))
	for i := range cases {
		m := 3*i + 1
		out[i] = [3]plumbing.Hash{ids[m], ids[m+1], ids[m+2]}
	}
	return out
}

// gitMerge is one verdict of `git merge-tree --write-tree --stdin`.
type gitMerge struct {
	clean    bool
	tree     plumbing.Hash
	paths    []string // conflicted paths (index entries), deduplicated
	types    []string // message types ("CONFLICT (contents)", "Auto-merging", ...)
	rename   bool     // some message mentions a rename
	messages string
}

// mergeTreeStdin runs ONE `git merge-tree --write-tree --stdin` over all
// pairs. In git 2.39 its --stdin output is NUL-separated per merge:
// "<1|0>\0<tree>\0", then for a conflict the conflicted index entries
// "<mode> <oid> <stage>\t<path>\0"..., an empty field, the messages as
// "<npaths>\0<path>\0...<type>\0<text>\0"..., and for every merge a closing
// empty field (after a submodule conflict, the closing field is git's
// submodule advice text instead).
func (r *mtRepo) mergeTreeStdin(pairs [][2]plumbing.Hash) []gitMerge {
	r.t.Helper()
	var in bytes.Buffer
	for _, p := range pairs {
		fmt.Fprintf(&in, "%s %s\n", p[0], p[1])
	}
	out := r.git(in.Bytes(), "merge-tree", "--write-tree", "--stdin")
	return parseMergeTreeStdin(r.t, out, len(pairs))
}

func parseMergeTreeStdin(t testing.TB, out []byte, n int) []gitMerge {
	t.Helper()
	f := strings.Split(string(out), "\x00")
	pos := 0
	next := func() string {
		if pos >= len(f) {
			t.Fatalf("merge-tree --stdin output ended early")
		}
		s := f[pos]
		pos++
		return s
	}
	res := make([]gitMerge, 0, n)
	for i := 0; i < n; i++ {
		var g gitMerge
		switch st := next(); st {
		case "1":
			g.clean = true
		case "0":
		default:
			t.Fatalf("merge %d: unexpected status %q", i, st)
		}
		g.tree = plumbing.NewHash(next())
		if !g.clean {
			seen := map[string]bool{}
			for {
				e := next()
				if e == "" {
					break
				}
				tab := strings.IndexByte(e, '\t')
				p := e[tab+1:]
				if !seen[p] {
					seen[p] = true
					g.paths = append(g.paths, p)
				}
			}
			var msgs strings.Builder
			for {
				np := next()
				if np == "" {
					break
				}
				if strings.HasPrefix(np, "Recursive merging with submodules") {
					// git 2.39 prints its submodule advice right
					// before the record's closing NUL.
					break
				}
				k, err := strconv.Atoi(np)
				if err != nil {
					t.Fatalf("merge %d: bad message path count %q", i, np)
				}
				pos += k
				typ := next()
				text := next()
				g.types = append(g.types, typ)
				msgs.WriteString(text)
				if strings.Contains(strings.ToLower(typ+text), "rename") {
					g.rename = true
				}
			}
			g.messages = msgs.String()
		} else if e := next(); e != "" {
			t.Fatalf("merge %d: expected end of record, got %q", i, e)
		}
		res = append(res, g)
	}
	return res
}

// renamesInvolved runs ONE `git diff-tree --stdin -r -M` over the
// base→ours and base→theirs pairs of every case and reports, per case,
// whether either side shows a rename.
func (r *mtRepo) renamesInvolved(ids [][3]plumbing.Hash) []bool {
	r.t.Helper()
	var in bytes.Buffer
	owner := map[string]int{}
	for i, c := range ids {
		for _, side := range []plumbing.Hash{c[1], c[2]} {
			// "<commit> <other>" diffs other → commit and heads the
			// output with the commit's id alone.
			owner[side.String()] = i
			fmt.Fprintf(&in, "%s %s\n", side, c[0])
		}
	}
	out := r.git(in.Bytes(), "diff-tree", "--stdin", "-r", "-M", "--name-status")
	res := make([]bool, len(ids))
	cur := -1
	for _, line := range strings.Split(string(out), "\n") {
		if i, ok := owner[line]; ok {
			cur = i
			continue
		}
		if cur >= 0 && strings.HasPrefix(line, "R") {
			res[cur] = true
		}
	}
	return res
}

// lsTree lists a tree recursively as "mode type id\tpath" lines.
func (r *mtRepo) lsTree(h plumbing.Hash) string {
	return string(r.git(nil, "ls-tree", "-r", "-t", "--full-tree", h.String()))
}
