// Package treemerge is `git+ merge-tree` as an importable package: git's
// `git merge-tree --write-tree` on a repository on disk, computed by package
// mergetree (docs/merge.md).
//
// Decisions: objects are read through package receive's store (lazy pack
// index, its own pack reader). Like git, a merge writes the merged blobs and
// trees into the repository (builder mode) so `git cat-file` can show the
// result; on a conflict nothing is written. Revisions resolve as git
// resolves them: a full hex id, a ref name tried by git's rules, or an
// unambiguous hex prefix, peeled to a commit. Refs and id prefixes are read
// through go-git's filesystem storage, kept out of package receive so the
// lean hook binary (cmd/git+hook) does not link it.
package treemerge

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/gitio"
)

// Session merges commits of one repository; the merges of a session share
// one merge cache. It is not safe for concurrent use.
type Session struct {
	objs  *receive.Store
	store receive.Objects
	revs  *Resolver
	cache *mergetree.Cache
}

// Open opens the repository at gitDir for merging.
func Open(gitDir string) (*Session, error) {
	if _, err := os.Stat(filepath.Join(gitDir, "objects")); err != nil {
		return nil, fmt.Errorf("not a git directory: %s", gitDir)
	}
	objs, err := receive.OpenStore(gitDir, receive.QuarantineEnv{})
	if err != nil {
		return nil, err
	}
	store := receive.Objects{Store: objs}
	return &Session{objs: objs, store: store, revs: NewResolver(gitDir, objs), cache: mergetree.NewCache()}, nil
}

// Close releases the repository's files.
func (s *Session) Close() error {
	s.revs.Close()
	return s.objs.Close()
}

// Merge resolves ours and theirs to commits and merges them, writing the
// result's blobs and trees into the repository when it is clean.
func (s *Session) Merge(ours, theirs string) (mergetree.Result, error) {
	o, err := s.revs.Commit(ours)
	if err != nil {
		return mergetree.Result{}, err
	}
	t, err := s.revs.Commit(theirs)
	if err != nil {
		return mergetree.Result{}, err
	}
	return mergetree.Merge(s.store, o, t, mergetree.Options{Writer: s.store, Cache: s.cache})
}

// Resolver resolves revisions of one repository, reading its refs and
// objects through gitio.
type Resolver struct {
	gitDir string
	objs   *gitio.Store
	store  receive.Objects
}

// NewResolver returns a resolver of gitDir's refs whose objects are read from
// objs (tags are peeled through it).
func NewResolver(gitDir string, objs *gitio.Store) *Resolver {
	return &Resolver{gitDir: gitDir, objs: objs, store: receive.Objects{Store: objs}}
}

// Close releases the files the resolver keeps open.
func (r *Resolver) Close() error { return nil }

// Commit resolves a revision to a commit id the way git does for these
// forms: a full hex id; a ref name tried by git's rules (as given, refs/,
// refs/tags/, refs/heads/, refs/remotes/, refs/remotes/*/HEAD), HEAD
// included; then an unambiguous hex prefix of 4 or more digits. Annotated
// tags are peeled to the commit they name.
func (r *Resolver) Commit(rev string) (plumbing.Hash, error) {
	h, err := r.name(rev)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for range 10 { // peel tags
		t, data, err := r.store.ReadObject(h)
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

func (r *Resolver) name(rev string) (plumbing.Hash, error) {
	if len(rev) == 40 && plumbing.IsHash(strings.ToLower(rev)) {
		return plumbing.NewHash(strings.ToLower(rev)), nil
	}
	for _, rule := range plumbing.RefRevParseRules {
		if h, err := gitio.ReadRef(r.gitDir, fmt.Sprintf(rule, rev)); err == nil {
			return h, nil
		}
	}
	// Anything not 4 to 39 hex digits is no abbreviated id: unknown.
	found, err := r.objs.HashesWithPrefix(rev)
	switch {
	case errors.Is(err, gitio.ErrBadPrefix):
	case err != nil:
		return plumbing.ZeroHash, fmt.Errorf("revision %q: %w", rev, err)
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return plumbing.ZeroHash, fmt.Errorf("short revision %q is ambiguous", rev)
	}
	return plumbing.ZeroHash, fmt.Errorf("unknown revision %q", rev)
}

// GitDir picks the git directory `git+ merge-tree` works in: explicit
// (--git-dir, then the global --repo) when given, else $GIT_DIR, else the
// repository containing wd (DiscoverGitDir).
func GitDir(explicit string, getenv func(string) string, wd string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if d := getenv("GIT_DIR"); d != "" {
		return d, nil
	}
	return DiscoverGitDir(wd)
}

// DiscoverGitDir is gitio.DiscoverGitDir: the repository containing wd,
// found without running git.
func DiscoverGitDir(wd string) (string, error) { return gitio.DiscoverGitDir(wd) }

// ErrBatchInput is a malformed line of a batch (Session.Batch).
var ErrBatchInput = errors.New("malformed batch line")

// Batch runs git merge-tree --stdin's protocol: one `OURS THEIRS` pair per
// line of in (blank lines skipped), one line per merge on out — the tree id
// when clean, `conflict <path> <path>...` otherwise, or with asJSON the
// merge's mergetree.ResultJSON on one line. It stops at the first error
// (an unknown revision, a missing object, a malformed line), naming the
// line; what was written before it stays written.
func (s *Session) Batch(in io.Reader, out io.Writer, asJSON bool) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	w := bufio.NewWriter(out)
	defer w.Flush()
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return fmt.Errorf("stdin line %d: want OURS THEIRS, got %q: %w", line, sc.Text(), ErrBatchInput)
		}
		res, err := s.Merge(f[0], f[1])
		switch {
		case err != nil:
			return fmt.Errorf("stdin line %d: %w", line, err)
		case asJSON:
			writeJSON(w, res)
		case res.Clean():
			fmt.Fprintln(w, res.Tree)
		default:
			w.WriteString("conflict")
			for _, cf := range res.Conflicts {
				w.WriteString(" " + cf.Path)
			}
			w.WriteString("\n")
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	return nil
}

// One merges ours and theirs and prints the result as `git+ merge-tree
// OURS THEIRS` does (docs/cli.md): the merged tree's id when the merge is
// clean, else a "CONFLICT (<kind>): <path>" line per conflicted path; with
// asJSON, one line of mergetree.ResultJSON either way. It reports whether
// the merge was clean.
func (s *Session) One(ours, theirs string, out io.Writer, asJSON bool) (clean bool, err error) {
	res, err := s.Merge(ours, theirs)
	if err != nil {
		return false, err
	}
	switch {
	case asJSON:
		writeJSON(out, res)
	case res.Clean():
		fmt.Fprintln(out, res.Tree)
	default:
		for _, cf := range res.Conflicts {
			fmt.Fprintf(out, "CONFLICT (%s): %s\n", cf.Kind, cf.Path)
		}
	}
	return res.Clean(), nil
}

// writeJSON prints res as one line of mergetree.ResultJSON.
func writeJSON(w io.Writer, res mergetree.Result) {
	b, _ := json.Marshal(res.JSON())
	fmt.Fprintf(w, "%s\n", b)
}
