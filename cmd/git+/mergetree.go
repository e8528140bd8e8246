package main

// The merge-tree verb: git's `git merge-tree --write-tree`, computed by
// package mergetree.
//
// Objects are read through package receive's store (lazy pack index, its
// own pack reader), refs through go-git's filesystem storage.
//
// Decisions: like git, the verb writes the merged blobs and trees into the
// repository (builder mode) so `git cat-file` can show the result; on a
// conflict nothing is written. Exit codes follow git: 0 clean, 1 conflict,
// 128 errors (unknown revision, missing object, unrelated histories).
// With --stdin every merge is reported on its own line and the exit code is
// 0 unless an error stops the run (then 128).

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/receive"
)

func init() {
	register(&cli.Command{
		Name:      "merge-tree",
		Usage:     "merge two commits' trees as `git merge-tree --write-tree` does",
		ArgsUsage: "OURS THEIRS",
		Description: "Prints the merged tree id and exits 0 when the merge is clean; prints one\n" +
			"`CONFLICT (<kind>): <path>` line per conflicted path and exits 1 otherwise;\n" +
			"exits 128 on errors. With --stdin, reads one `OURS THEIRS` pair per line and\n" +
			"prints `<tree>` or `conflict <path> <path>...` per merge.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "git-dir", Usage: "git directory (default: --repo, then $GIT_DIR, then discovered from the current directory)"},
			&cli.BoolFlag{Name: "stdin", Usage: "read OURS THEIRS pairs from standard input, one per line"},
			jsonFlag(),
		},
		Action: mergeTreeAction,
	})
}

// errSilent ends a verb with an exit code and nothing more to print.
var errSilent = errors.New("")

func mergeTreeAction(c *cli.Context) error {
	stdin := c.Bool("stdin")
	if stdin && c.NArg() != 0 || !stdin && c.NArg() != 2 {
		return usageErr("usage: git+ merge-tree [--git-dir DIR] OURS THEIRS | --stdin")
	}
	dir, err := mergeTreeGitDir(c)
	if err != nil {
		return fail(128, err)
	}
	fs := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRUDefault(),
		filesystem.Options{KeepDescriptors: true})
	defer fs.Close()
	if _, err := os.Stat(filepath.Join(dir, "objects")); err != nil {
		return fail(128, fmt.Errorf("not a git directory: %s", dir))
	}
	objs, err := receive.OpenStore(dir, receive.QuarantineEnv{})
	if err != nil {
		return fail(128, err)
	}
	defer objs.Close()
	store := receive.Objects{Store: objs}
	cache := mergetree.NewCache() // shared by the merges of a --stdin run
	out := bufio.NewWriter(c.App.Writer)
	defer out.Flush()

	merge := func(ours, theirs string) (mergetree.Result, error) {
		o, err := resolveCommit(fs, store, ours)
		if err != nil {
			return mergetree.Result{}, err
		}
		t, err := resolveCommit(fs, store, theirs)
		if err != nil {
			return mergetree.Result{}, err
		}
		return mergetree.Merge(store, o, t, mergetree.Options{Writer: store, Cache: cache})
	}

	asJSON := wantJSON(c) // one mergeTreeJSON per merge (docs/cli.md)
	if !stdin {
		res, err := merge(c.Args().Get(0), c.Args().Get(1))
		if err != nil {
			return fail(128, err)
		}
		if asJSON {
			writeMergeJSON(out, res)
			if !res.Clean() {
				return fail(1, errSilent)
			}
			return nil
		}
		if res.Clean() {
			fmt.Fprintln(out, res.Tree)
			return nil
		}
		for _, cf := range res.Conflicts {
			fmt.Fprintf(out, "CONFLICT (%s): %s\n", cf.Kind, cf.Path)
		}
		return fail(1, errSilent)
	}

	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			out.Flush()
			return fail(128, fmt.Errorf("stdin line %d: want OURS THEIRS, got %q", line, sc.Text()))
		}
		res, err := merge(f[0], f[1])
		if err != nil {
			out.Flush()
			return fail(128, fmt.Errorf("stdin line %d: %w", line, err))
		}
		if asJSON {
			writeMergeJSON(out, res)
			continue
		}
		if res.Clean() {
			fmt.Fprintln(out, res.Tree)
			continue
		}
		out.WriteString("conflict")
		for _, cf := range res.Conflicts {
			out.WriteString(" ")
			out.WriteString(cf.Path)
		}
		out.WriteString("\n")
	}
	if err := sc.Err(); err != nil {
		return fail(128, fmt.Errorf("read stdin: %w", err))
	}
	return nil
}

// resolveCommit resolves a revision to a commit id the way git does for
// these forms: a full hex id; a ref name tried by git's rules (as given,
// refs/, refs/tags/, refs/heads/, refs/remotes/, refs/remotes/*/HEAD),
// HEAD included; then an unambiguous hex prefix of 4 or more digits.
// Annotated tags are peeled to the commit they name.
func resolveCommit(fs *filesystem.Storage, store mergetree.Store, rev string) (plumbing.Hash, error) {
	h, err := resolveName(fs, rev)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for range 10 { // peel tags
		t, data, err := store.ReadObject(h)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("revision %q: %w", rev, err)
		}
		switch t {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			line, _, _ := strings.Cut(string(data), "\n")
			target, ok := strings.CutPrefix(line, "object ")
			if !ok || !plumbing.IsHash(target) {
				return plumbing.ZeroHash, fmt.Errorf("revision %q: bad tag %s", rev, h)
			}
			h = plumbing.NewHash(target)
		default:
			return plumbing.ZeroHash, fmt.Errorf("revision %q is a %s (%s), not a commit", rev, t, h)
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("revision %q: tag chain too long", rev)
}

func resolveName(fs *filesystem.Storage, rev string) (plumbing.Hash, error) {
	if len(rev) == 40 && plumbing.IsHash(strings.ToLower(rev)) {
		return plumbing.NewHash(strings.ToLower(rev)), nil
	}
	for _, rule := range plumbing.RefRevParseRules {
		name := plumbing.ReferenceName(fmt.Sprintf(rule, rev))
		ref, err := storer.ResolveReference(fs, name)
		if err == nil && ref.Type() == plumbing.HashReference {
			return ref.Hash(), nil
		}
	}
	if len(rev) >= 4 && len(rev) < 40 && isHex(rev) {
		lower := strings.ToLower(rev)
		prefix := plumbing.NewHash(lower[:len(lower)&^1] + strings.Repeat("0", 40-len(lower)&^1))
		hs, err := fs.HashesWithPrefix(prefix[:len(lower)/2])
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("revision %q: %w", rev, err)
		}
		var found []plumbing.Hash
		for _, h := range hs {
			if strings.HasPrefix(h.String(), lower) {
				found = append(found, h)
			}
		}
		if len(found) == 1 {
			return found[0], nil
		}
		if len(found) > 1 {
			return plumbing.ZeroHash, fmt.Errorf("short revision %q is ambiguous", rev)
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("unknown revision %q", rev)
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// mergeTreeGitDir picks the git directory: --git-dir, the global --repo,
// $GIT_DIR, else the repository containing the current directory.
func mergeTreeGitDir(c *cli.Context) (string, error) {
	if d := c.String("git-dir"); d != "" {
		return d, nil
	}
	for _, cc := range c.Lineage() {
		if d := cc.String("repo"); d != "" {
			return d, nil
		}
	}
	if d := os.Getenv("GIT_DIR"); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if st, err := os.Stat(dotgit); err == nil {
			if st.IsDir() {
				return dotgit, nil
			}
			b, err := os.ReadFile(dotgit)
			if err == nil && strings.HasPrefix(string(b), "gitdir: ") {
				g := strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir: "))
				if !filepath.IsAbs(g) {
					g = filepath.Join(d, g)
				}
				return g, nil
			}
		}
		if isBareGitDir(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("not a git repository (or any parent up to /): %s", wd)
		}
	}
}

func isBareGitDir(d string) bool {
	for _, p := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(d, p)); err != nil {
			return false
		}
	}
	return true
}

// mergeTreeJSON is one merge with --json: the tree when clean, else every
// conflicted path with its kind.
type mergeTreeJSON struct {
	Clean     bool                `json:"clean"`
	Tree      string              `json:"tree,omitempty"`
	Conflicts []mergeConflictJSON `json:"conflicts"`
}

type mergeConflictJSON struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// writeMergeJSON writes res as one line of JSON.
func writeMergeJSON(w io.Writer, res mergetree.Result) {
	j := mergeTreeJSON{Clean: res.Clean(), Conflicts: []mergeConflictJSON{}}
	if j.Clean {
		j.Tree = res.Tree.String()
	}
	for _, cf := range res.Conflicts {
		j.Conflicts = append(j.Conflicts, mergeConflictJSON{Kind: fmt.Sprint(cf.Kind), Path: cf.Path})
	}
	b, _ := json.Marshal(j)
	w.Write(append(b, '\n'))
}
