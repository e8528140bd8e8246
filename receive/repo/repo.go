package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/gitio"
)

// Repo is a git+ repository: its git directory, the remote its hub refs
// are read from and written to, and its objects.
type Repo struct {
	GitDir string // absolute git directory
	Bare   bool
	Remote string // "." or the remote the hub refs live on
	// NoRemote: a clone with no remote given, no upstream and no origin;
	// readers read its own refs, writers refuse (ErrNoRemote).
	NoRemote bool
	// OnAppend, when set, is called with every event appended.
	OnAppend func(Written)
	// OnPush, when set, is called with every branch pushed to the remote
	// (pr open's --push): old is "" for a new branch.
	OnPush func(ref, old, new string)

	store *filesystem.Storage        // refs (and init's objects)
	objs  storer.EncodedObjectStorer // event reads: package receive's pack reader
}

// Written is an event a writer appended.
type Written struct {
	Ref    string
	Type   string
	ID     plumbing.Hash
	Parent plumbing.Hash // zero for the first event of a ref
	Remote string
}

// Sentinel errors callers branch on.
var (
	// ErrNoRemote is a writer run in a clone that has no remote to write
	// to: writing into the clone's own refs would be seen by nobody.
	ErrNoRemote = errors.New("no remote to write to")
	// ErrAmbiguousID and ErrUnknownID are failed id resolutions.
	ErrAmbiguousID = errors.New("ambiguous id")
	ErrUnknownID   = errors.New("no such id")
)

// Git runs git with --git-dir (when gitDir is not "") and returns its
// trimmed output; the error carries git's stderr.
func Git(gitDir string, args ...string) (string, error) {
	if gitDir != "" {
		args = append([]string{"--git-dir=" + gitDir}, args...)
	}
	out, stderr, err := gitio.RunGit(context.Background(), "", nil, args...)
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr))
	}
	return string(bytes.TrimSpace(out)), nil
}

// FindGitDir is gitio.FindGitDir: git's own discovery of dir's git
// directory ("" is the current directory), and whether it is bare.
func FindGitDir(dir string) (gitDir string, bare bool, err error) { return gitio.FindGitDir(dir) }

// Open opens the repository dir ("" is the current one) with remote ("":
// the default, DefaultRemote) and, for a remote other than ".", fetches
// its hub refs so reads and appends start from the remote's events.
func Open(dir, remote string) (*Repo, error) {
	gitDir, bare, err := FindGitDir(dir)
	if err != nil {
		return nil, err
	}
	r := &Repo{GitDir: gitDir, Bare: bare, Remote: remote}
	if r.Remote == "" {
		r.Remote, r.NoRemote = DefaultRemote(gitDir, bare)
	}
	if r.Remote != "." {
		if err := hubrefs.Fetch(context.Background(), gitDir, r.Remote); err != nil {
			return nil, fmt.Errorf("fetching hub refs from %s into %s (check the remote, or pass --remote .): %w", r.Remote, gitDir, err)
		}
	}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

// OpenLocal opens the git directory gitDir as its own remote, fetching
// nothing (the server's view: a hook, git+ serve, git+ init).
func OpenLocal(gitDir string) (*Repo, error) {
	r := &Repo{GitDir: gitDir, Remote: "."}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

// DefaultRemote chooses the remote a verb without --remote reads and
// writes, as git chooses where to push (docs/cli.md, "Which remote"): "."
// in a bare repository (it is the server); in a clone, the current branch's
// upstream remote (branch.<name>.remote), then origin. noRemote is true
// when a clone has neither: readers then read the clone's own refs,
// writers refuse.
func DefaultRemote(gitDir string, bare bool) (remote string, noRemote bool) {
	if bare {
		return ".", false
	}
	if b, err := Git(gitDir, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil && b != "" {
		if r, err := Git(gitDir, "config", "--get", "branch."+b+".remote"); err == nil && r != "" {
			return r, false
		}
	}
	if _, err := Git(gitDir, "config", "--get", "remote.origin.url"); err == nil {
		return "origin", false
	}
	return ".", true
}

func (r *Repo) open() error {
	r.store = filesystem.NewStorageWithOptions(osfs.New(r.GitDir), cache.NewObjectLRUDefault(), filesystem.Options{})
	objs, err := receive.OpenStore(r.GitDir, receive.QuarantineEnv{})
	if err != nil {
		return fmt.Errorf("opening the objects of %s: %w", r.GitDir, err)
	}
	r.objs = objs
	return nil
}

// Reopen opens the object store again, to see objects fetched since.
func (r *Repo) Reopen() error { return r.open() }

// Refresh fetches the remote's hub refs again (for a remote other than
// ".") and reopens the object store: a writer that lost a race reads the
// winner's events.
func (r *Repo) Refresh() error {
	if r.Remote != "." {
		if err := hubrefs.Fetch(context.Background(), r.GitDir, r.Remote); err != nil {
			return err
		}
	}
	return r.open()
}

// Objects is the repository's object store (package receive's reader).
func (r *Repo) Objects() storer.EncodedObjectStorer { return r.objs }

// Close releases the object store's files (packs mapped in memory).
func (r *Repo) Close() error {
	if st, ok := r.objs.(*receive.Store); ok {
		return st.Close()
	}
	return nil
}

// Ref returns the value of ref, or the zero hash when it does not exist.
// It reads through gitio, as git reads refs (loose, then packed-refs), so
// git's own pack-refs beside a verb never makes a ref look missing.
func (r *Repo) Ref(name string) (plumbing.Hash, error) {
	id, symbolic, err := gitio.ReadRefOwn(r.GitDir, name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("reading %s in %s: %w", name, r.GitDir, err)
	}
	if symbolic {
		return plumbing.ZeroHash, fmt.Errorf("%s in %s is a symbolic ref; hub refs must hold an event id", name, r.GitDir)
	}
	return id, nil
}

// TrustCeilings are generous: reading is the client's; the boundary
// enforces the rules' ceilings.
var TrustCeilings = hubrefs.Ceilings{EventsPerRef: 1 << 20, EventBytes: 16 << 20, Parents: 64}

// EventCeilings are the rules' ceilings for pull request and queue logs.
func EventCeilings(t *trust.State) hubrefs.Ceilings {
	c := t.Rules.Ceilings
	return hubrefs.Ceilings{EventsPerRef: c.EventsPerRef, EventBytes: c.EventBytes, Parents: c.ParentsPerEvent}
}

// Trust reads and folds refs/hub/trust.
func (r *Repo) Trust() (*trust.State, error) {
	tip, err := r.Ref(hubrefs.TrustRef)
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, fmt.Errorf("%s has no %s: run `git+ init` first", r.Where(), hubrefs.TrustRef)
	}
	st, err := r.Reader(TrustCeilings).Trust(tip)
	if err != nil {
		return nil, fmt.Errorf("reading and folding %s in %s: %w", hubrefs.TrustRef, r.GitDir, err)
	}
	return st, nil
}

// Reader reads hub logs and folds through the repository's fold cache,
// which the hook fills as it accepts pushes: a warm read verifies no
// signature again (docs/scale.md). Logs not in the cache are read from the
// objects within c, verified, and stored.
func (r *Repo) Reader(c hubrefs.Ceilings) *policy.Reader {
	return &policy.Reader{Objects: r.objs, Cache: receive.NewDirCache(r.GitDir), Ceilings: c}
}

// Where names the repository in messages, with its remote.
func (r *Repo) Where() string {
	if r.Remote != "." {
		return fmt.Sprintf("%s (remote %s)", r.GitDir, r.Remote)
	}
	return r.GitDir
}

// PRState reads and folds refs/hub/pr/<id> (id: a full id or an
// unambiguous prefix of one).
func (r *Repo) PRState(id string, t *trust.State) (*pr.State, []hubrefs.Event, error) {
	id, err := r.ResolveID(hubrefs.PRRefPrefix, "pull request", id)
	if err != nil {
		return nil, nil, err
	}
	ref := hubrefs.PRRefPrefix + id
	tip, err := r.Ref(ref)
	if err != nil {
		return nil, nil, err
	}
	if tip.IsZero() {
		return nil, nil, fmt.Errorf("no pull request %s in %s (no %s; see `git+ pr list --all`)", id, r.Where(), ref)
	}
	evs, err := r.Reader(EventCeilings(t)).Log(tip)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s in %s: %w", ref, r.GitDir, err)
	}
	st, err := pr.Fold(evs, t)
	if err != nil {
		return nil, nil, fmt.Errorf("folding %s in %s: %w", ref, r.GitDir, err)
	}
	if st.ID != id {
		return nil, nil, fmt.Errorf("%s in %s holds pull request %s, not %s", ref, r.GitDir, st.ID, id)
	}
	return st, evs, nil
}

// PRIDs lists the pull request ids under refs/hub/pr/, sorted.
func (r *Repo) PRIDs() ([]string, error) { return r.RefIDs(hubrefs.PRRefPrefix) }

// RefIDs lists the names under prefix (ending in "/"), sorted. Refs are
// read with receive's reader, not go-git's: go-git reads git's transient
// <ref>.lock files as refs and fails on them ("ref file is empty") while
// another process updates a ref, which concurrent queue runners do.
func (r *Repo) RefIDs(prefix string) ([]string, error) {
	refs, err := receive.ReadRefsUnder(r.GitDir, []string{prefix}, nil)
	if err != nil {
		return nil, fmt.Errorf("listing refs in %s: %w", r.GitDir, err)
	}
	ids := make([]string, 0, len(refs))
	for n := range refs {
		ids = append(ids, strings.TrimPrefix(n, prefix))
	}
	sort.Strings(ids)
	return ids, nil
}

// MinPrefix is the shortest abbreviation of an id accepted, as git's
// shortest abbreviated object name.
const MinPrefix = 4

// ValidPrefix reports whether s may abbreviate a UUID: 4 to 36 characters,
// hex digits and dashes.
func ValidPrefix(s string) error {
	if len(s) < MinPrefix || len(s) > 36 {
		return fmt.Errorf("%q is not an id or an abbreviation of one (at least %d characters of it)", Clip(s), MinPrefix)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return fmt.Errorf("%q is not an id: only hex digits and dashes", Clip(s))
		}
	}
	return nil
}

// ResolveID expands arg, a full id or an unambiguous prefix of one, against
// the refs under prefix (refs/hub/pr/ or refs/hub/queue/); docs/cli.md,
// "Abbreviated ids". kind names the record in messages ("pull request",
// "queue").
func (r *Repo) ResolveID(prefix, kind, arg string) (string, error) {
	if trust.ValidUUID(arg) == nil {
		return arg, nil
	}
	if err := ValidPrefix(arg); err != nil {
		return "", fmt.Errorf("%s id: %w", kind, err)
	}
	ids, err := r.RefIDs(prefix)
	if err != nil {
		return "", err
	}
	return MatchPrefix(ids, strings.ToLower(arg), kind, r.Where())
}

// MatchPrefix picks the one id in ids starting with p.
func MatchPrefix(ids []string, p, kind, where string) (string, error) {
	var matches []string
	for _, id := range ids {
		if strings.HasPrefix(id, p) {
			matches = append(matches, id)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("%w: no %s id in %s starts with %s", ErrUnknownID, kind, where, p)
	}
	return "", fmt.Errorf("%w: %s is the start of %d %s ids in %s; give more of it:\n  %s",
		ErrAmbiguousID, p, len(matches), kind, where, strings.Join(matches, "\n  "))
}

// ResolveCommit resolves rev to a full commit id in the repository.
func (r *Repo) ResolveCommit(rev string) (string, error) {
	if rev == "" {
		return "", errors.New("empty revision")
	}
	out, err := Git(r.GitDir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || len(out) != 40 {
		return "", fmt.Errorf("revision %q is not a commit in %s (fetch or push it first)", rev, r.GitDir)
	}
	return out, nil
}

// BranchRef turns a short branch name (main) into refs/heads/main.
func BranchRef(b string) (string, error) {
	if b == "" {
		return "", errors.New("empty branch name")
	}
	if !strings.HasPrefix(b, "refs/") {
		b = "refs/heads/" + b
	}
	if err := trust.ValidBranch(b); err != nil {
		return "", fmt.Errorf("branch %q: %w", b, err)
	}
	return b, nil
}

// RemoteRef reads ref on the receiving side (the repository itself for
// remote ".", else `git ls-remote`): zero when absent.
func (r *Repo) RemoteRef(ref string) (plumbing.Hash, error) {
	id, err := gitio.RemoteRef(context.Background(), r.GitDir, r.Remote, ref, nil)
	if err != nil && r.Remote != "." {
		return plumbing.ZeroHash, fmt.Errorf("reading %s on %s (check the remote): %w", ref, r.Remote, err)
	}
	return id, err
}

// QueueLog is one queue ref read and folded.
type QueueLog struct {
	State *queue.State
}

// QueueLog reads and folds refs/hub/queue/<id> (a full id or an
// unambiguous prefix); a missing ref is an error naming what to do. The
// fold goes through the fold cache's queue states (policy.Reader.Queue): a
// read after a few new events decodes those events only (docs/scale.md).
func (r *Repo) QueueLog(id string, t *trust.State) (*QueueLog, error) {
	id, err := r.ResolveID(hubrefs.QueueRefPrefix, "queue", id)
	if err != nil {
		return nil, err
	}
	ref := hubrefs.QueueRefPrefix + id
	tip, err := r.Ref(ref)
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, fmt.Errorf("no queue %s in %s (no %s; see `git+ queue list`)", id, r.Where(), ref)
	}
	st, err := r.Reader(EventCeilings(t)).Queue(t.Tip, t, tip)
	if err != nil {
		return nil, fmt.Errorf("reading and folding %s in %s: %w", ref, r.GitDir, err)
	}
	if st.ID != id {
		return nil, fmt.Errorf("%s in %s holds queue %s, not %s", ref, r.GitDir, st.ID, id)
	}
	return &QueueLog{State: st}, nil
}

// QueueLogs reads every queue; one that cannot be read is skipped with a
// warning (a broken loser queue must not freeze a branch).
func (r *Repo) QueueLogs(t *trust.State) (map[string]*QueueLog, []string, error) {
	ids, err := r.RefIDs(hubrefs.QueueRefPrefix)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]*QueueLog{}
	var warnings []string
	for _, id := range ids {
		q, err := r.QueueLog(id, t)
		if err != nil {
			warnings = append(warnings, "skipped: "+err.Error())
			continue
		}
		out[id] = q
	}
	return out, warnings, nil
}

// SelectLog is the queue counting for target among logs
// (queue.SelectQueue), or nil.
func SelectLog(logs map[string]*QueueLog, target string) *QueueLog {
	var states []*queue.State
	for _, q := range logs {
		states = append(states, q.State)
	}
	s := queue.SelectQueue(states, target)
	if s == nil {
		return nil
	}
	return logs[s.ID]
}

// Clip shortens an argument quoted in a message.
func Clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// Short abbreviates a commit id to 12 characters.
func Short(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
}
