package mergetree

import (
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// Conflict kinds, the words git's merge messages use. They are stable:
// callers and the CLI print them.
const (
	KindContent       = "content"
	KindAddAdd        = "add/add"
	KindModifyDelete  = "modify/delete"
	KindFileDirectory = "file/directory"
	KindBinary        = "binary"
	KindDistinctTypes = "distinct types"
	KindSubmodule     = "submodule"
)

// Algorithm names the merge this package computes. It changes with any
// change that could give a different result (tree or conflicts) for some
// pair of commits, so that results recorded elsewhere under it (policy's
// merge facts) are never read by a build that would merge differently.
const Algorithm = "gitplus-merge-1"

// Conflict is one conflicted path (slash-separated, relative to the root).
type Conflict struct {
	Path string
	Kind string
}

// Result of a merge. Tree is the merged tree's id when the merge is clean
// and the zero hash when there are conflicts. Conflicts are sorted by path;
// a path appears at most once.
type Result struct {
	Tree      plumbing.Hash
	Base      plumbing.Hash // the merge base commit (Merge only)
	Conflicts []Conflict
}

// Clean reports whether the merge had no conflict.
func (r Result) Clean() bool { return len(r.Conflicts) == 0 }

// Options select how a merge runs. The zero value is the verifier: new
// blobs and trees are hashed in memory and nothing is written.
type Options struct {
	// Writer, when set, makes the merge a builder: on a clean merge every
	// new blob and tree is written through it (children before parents).
	// On a conflict nothing is written.
	Writer ObjectWriter
	// Cache, when set, keeps parsed commits and decoded trees across
	// merges over the same store, as git's merge-tree --stdin keeps its
	// parsed objects for the whole run. Nil: a fresh cache per merge.
	Cache *Cache
}

// Cache holds parsed commits and decoded trees by id. Objects are
// immutable, so entries never go stale; the cache only has to belong to
// one store (or to stores that agree on the objects they hold). It is not
// safe for concurrent use. Decoded trees are dropped wholesale once more
// than maxCachedTrees are held, bounding memory on long runs.
type Cache struct {
	commits map[plumbing.Hash]*commit
	trees   map[plumbing.Hash][]entry
	epoch   uint32 // walks over commits so far (see commits.epoch)
}

const maxCachedTrees = 200000

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{commits: map[plumbing.Hash]*commit{}, trees: map[plumbing.Hash][]entry{}}
}

func (o Options) cache() *Cache {
	if o.Cache != nil {
		if len(o.Cache.trees) > maxCachedTrees {
			o.Cache.trees = map[plumbing.Hash][]entry{}
		}
		return o.Cache
	}
	return NewCache()
}

// Merge merges the trees of commits ours and theirs over their merge base
// (MergeBase). Errors: ErrUnrelated when there is no common ancestor,
// ErrMissingObject when an object it needs is missing, ErrCorrupt for
// objects it cannot parse.
func Merge(s Store, ours, theirs plumbing.Hash, opt Options) (Result, error) {
	c := opt.cache()
	cs := &commits{s: s, m: c.commits, epoch: &c.epoch}
	co, err := cs.get(ours)
	if err != nil {
		return Result{}, err
	}
	ct, err := cs.get(theirs)
	if err != nil {
		return Result{}, err
	}
	bases, err := cs.mergeBases(ours, theirs)
	if err != nil {
		return Result{}, err
	}
	cb, err := cs.get(bases[0])
	if err != nil {
		return Result{}, err
	}
	opt.Cache = c
	r, err := MergeTrees(s, cb.tree, co.tree, ct.tree, opt)
	r.Base = cb.id
	return r, err
}

// MergeTrees merges trees ours and theirs against base (the zero hash for
// no base: every path is then an add). It reads only the trees along paths
// where the two sides differ from each other and from the base.
func MergeTrees(s Store, base, ours, theirs plumbing.Hash, opt Options) (Result, error) {
	m := &merger{s: s, trees: opt.cache().trees}
	mk := func(h plumbing.Hash) entry {
		if h.IsZero() {
			return entry{}
		}
		return entry{mode: modeTree, id: h}
	}
	res, err := m.resolve("", mk(base), mk(ours), mk(theirs))
	if err != nil {
		return Result{}, err
	}
	var out Result
	if len(m.conflicts) > 0 {
		sort.Slice(m.conflicts, func(i, j int) bool { return m.conflicts[i].Path < m.conflicts[j].Path })
		out.Conflicts = m.conflicts
		return out, nil
	}
	switch {
	case !res.present():
		out.Tree = EmptyTree
		m.add(plumbing.TreeObject, EmptyTree, []byte{})
	case res.isTree():
		out.Tree = res.id
	default:
		return Result{}, fmt.Errorf("%w: merged root is not a tree", ErrCorrupt)
	}
	if opt.Writer != nil {
		for _, p := range m.pending {
			h, err := opt.Writer.WriteObject(p.t, p.data)
			if err != nil {
				return Result{}, err
			}
			if h != p.id {
				return Result{}, fmt.Errorf("writer stored %s object %s as %s", p.t, p.id, h)
			}
		}
	}
	return out, nil
}

type pendingObject struct {
	t    plumbing.ObjectType
	id   plumbing.Hash
	data []byte
}

// merger holds the state of one tree merge: a cache of decoded trees, the
// conflicts found and the new objects (written at the end in builder mode).
type merger struct {
	s         Store
	trees     map[plumbing.Hash][]entry
	conflicts []Conflict
	pending   []pendingObject
}

func (m *merger) add(t plumbing.ObjectType, id plumbing.Hash, data []byte) {
	m.pending = append(m.pending, pendingObject{t: t, id: id, data: data})
}

func (m *merger) conflict(path, kind string) {
	m.conflicts = append(m.conflicts, Conflict{Path: path, Kind: kind})
}

func (m *merger) readTree(h plumbing.Hash, path string) ([]entry, error) {
	if es, ok := m.trees[h]; ok {
		return es, nil
	}
	es, err := readTreeEntries(m.s, h, path) // diff.go
	if err != nil {
		return nil, err
	}
	m.trees[h] = es
	return es, nil
}

func (m *merger) readBlob(h plumbing.Hash, path string) ([]byte, error) {
	t, data, err := m.s.ReadObject(h)
	if err != nil {
		return nil, fmt.Errorf("read blob %s at %q: %w", h, path, err)
	}
	if t != plumbing.BlobObject {
		return nil, fmt.Errorf("%w: %s at %q is a %s, not a blob", ErrCorrupt, h, path, t)
	}
	return data, nil
}

func displayPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// resolve merges one path given its base, ours and theirs entries (each a
// tree, a non-tree or absent) and returns the merged entry (absent when the
// path vanishes). Conflicts are recorded on m; after a conflict the
// returned entry only tells whether something stays at the path.
//
// The rules, in order (docs/merge.md, "Tree level"):
//  1. all three the same → take it (an empty tree is kept);
//  2. trees taken by id without reading them: ours = theirs (both trees)
//     → ours, except that the empty tree vanishes there, as in git; base =
//     ours (trees) → theirs, whatever theirs is; base = theirs (trees) →
//     ours; a tree added on one side only → it;
//  3. three non-trees: one side unchanged or both the same → the other;
//  4. otherwise the directory parts are merged recursively and the file
//     parts by mergeFile; a file/directory clash resolves cleanly only when
//     the directory merges away or the file side resolves to a deletion.
func (m *merger) resolve(path string, o, a, b entry) (entry, error) {
	if r, ok := quickResolve(o, a, b); ok {
		return r, nil
	}
	return m.resolveSlow(path, o, a, b)
}

// quickResolve applies rules 1-3 of resolve, which decide by mode and id
// alone; ok is false when the path needs reading.
func quickResolve(o, a, b entry) (entry, bool) {
	switch {
	case same(o, a) && same(o, b):
		return a, true
	case a.isTree() && same(a, b):
		if a.id == EmptyTree {
			// git merges two identical trees entry by entry, so an
			// empty one vanishes. (Deviation: an empty tree nested in
			// identical non-empty trees is kept; see doc.go.)
			return entry{}, true
		}
		return a, true
	case o.isTree() && same(o, a):
		return b, true
	case o.isTree() && same(o, b):
		return a, true
	case !o.present() && a.isTree() && !b.present():
		return a, true
	case !o.present() && b.isTree() && !a.present():
		return b, true
	}
	if o.present() && a.present() && b.present() && !o.isTree() && !a.isTree() && !b.isTree() {
		switch {
		case same(a, b), same(o, b):
			return a, true
		case same(o, a):
			return b, true
		}
	}
	return entry{}, false
}

func (m *merger) resolveSlow(path string, o, a, b entry) (entry, error) {
	// Split into directory and file parts.
	var do, da, db, fo, fa, fb entry
	split := func(e entry, d, f *entry) {
		if e.isTree() {
			*d = e
		} else {
			*f = e
		}
	}
	split(o, &do, &fo)
	split(a, &da, &fa)
	split(b, &db, &fb)
	hasDir := do.present() || da.present() || db.present()
	hasFile := fo.present() || fa.present() || fb.present()

	var dir entry
	if hasDir {
		var err error
		dir, err = m.mergeDir(path, do, da, db)
		if err != nil {
			return entry{}, err
		}
	}
	if !hasFile {
		return dir, nil
	}
	if !hasDir || !dir.present() {
		// No directory left in the way: an ordinary file merge.
		return m.mergeFile(path, fo, fa, fb, false)
	}
	// The directory stays. A file only in the base is just gone; any
	// other file must move aside (git renames it to path~branch), which is
	// a conflict unless the file part resolves to a deletion.
	if !fa.present() && !fb.present() {
		return dir, nil
	}
	if _, err := m.mergeFile(path, fo, fa, fb, true); err != nil {
		return entry{}, err
	}
	return dir, nil
}

// mergeDir merges three trees (or absent entries) entry by entry and returns
// the new tree, or absent when nothing is left and nothing conflicted.
func (m *merger) mergeDir(path string, o, a, b entry) (entry, error) {
	var lists [3][]entry
	most := 0
	for i, e := range [3]entry{o, a, b} {
		if e.present() {
			es, err := m.readTree(e.id, path)
			if err != nil {
				return entry{}, err
			}
			lists[i] = es
			most = max(most, len(es))
		}
	}
	// Pair the entries by name: ts holds, per name, the index of its entry
	// in each list (-1: none).
	idx := make(map[string]int32, most)
	ts := make([][3]int32, 0, most+8)
	for i, es := range lists {
		for j := range es {
			name := es[j].name
			k, ok := idx[name]
			if !ok {
				k = int32(len(ts))
				idx[name] = k
				ts = append(ts, [3]int32{-1, -1, -1})
			}
			ts[k][i] = int32(j)
		}
	}
	nconf := len(m.conflicts)
	out := make([]entry, 0, len(ts))
	for _, t := range ts {
		var e [3]entry
		name := ""
		for i := 2; i >= 0; i-- {
			if t[i] >= 0 {
				e[i] = lists[i][t[i]]
				name = e[i].name
			}
		}
		r, ok := quickResolve(e[0], e[1], e[2])
		if !ok {
			var err error
			r, err = m.resolve(join(path, name), e[0], e[1], e[2])
			if err != nil {
				return entry{}, err
			}
		}
		if r.present() {
			r.name = name
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		if len(m.conflicts) > nconf {
			// Conflicted entries stay in git's tree: the directory too.
			return entry{mode: modeTree, id: EmptyTree}, nil
		}
		return entry{}, nil
	}
	data := encodeTree(out)
	id := hashObject(plumbing.TreeObject, data)
	m.add(plumbing.TreeObject, id, data)
	return entry{mode: modeTree, id: id}, nil
}

// mergeFile resolves the non-tree versions of a path (each may be absent).
// df is set when a directory stays at the path, so that any surviving
// file there is a file/directory conflict.
func (m *merger) mergeFile(path string, o, a, b entry, df bool) (entry, error) {
	fail := func(kind string, keep entry) (entry, error) {
		if df {
			kind = KindFileDirectory
		}
		m.conflict(path, kind)
		return keep, nil
	}
	sidesMatch, aMatchesO, bMatchesO := same(a, b), same(o, a), same(o, b)
	switch {
	case sidesMatch:
		if df {
			return fail(KindFileDirectory, a)
		}
		return a, nil
	case aMatchesO || bMatchesO:
		r := a
		if aMatchesO {
			r = b
		}
		if !r.present() {
			return entry{}, nil // deleted on one side, unchanged on the other
		}
		if df {
			return fail(KindFileDirectory, r)
		}
		return r, nil
	case a.present() && b.present():
		if kind(a.mode) != kind(b.mode) {
			return fail(KindDistinctTypes, a)
		}
		r, ok, k, err := m.mergeContent(path, o, a, b)
		if err != nil {
			return entry{}, err
		}
		if !ok {
			return fail(k, r)
		}
		if df {
			return fail(KindFileDirectory, r)
		}
		return r, nil
	case a.present() || b.present():
		r := a
		if !r.present() {
			r = b
		}
		if o.present() {
			return fail(KindModifyDelete, r)
		}
		if df {
			return fail(KindFileDirectory, r)
		}
		return r, nil
	}
	return entry{}, nil // deleted on both sides
}

// mergeContent merges two present non-tree entries of the same type. Modes
// merge on their own: if ours' mode is theirs' or the base's, theirs' mode;
// otherwise ours', clean only if theirs kept the base mode. Ids: one side
// unchanged (by id) takes the other; otherwise regular files merge line by
// line (against an empty base when the base is absent or of another type),
// and symlinks or gitlinks changed differently conflict.
func (m *merger) mergeContent(path string, o, a, b entry) (entry, bool, string, error) {
	r := entry{}
	clean := true
	if a.mode == b.mode || a.mode == o.mode {
		r.mode = b.mode
	} else {
		r.mode = a.mode
		clean = b.mode == o.mode
	}
	conflictKind := KindContent
	if !o.present() {
		conflictKind = KindAddAdd
	}
	switch {
	case a.id == b.id || a.id == o.id:
		r.id = b.id
	case b.id == o.id:
		r.id = a.id
	case kind(a.mode) == kind(modeFile):
		withBase := o.present() && kind(o.mode) == kind(a.mode)
		if m.binaryByPrefix(withBase, o.id, a.id, b.id) {
			r.id = a.id
			return r, false, KindBinary, nil
		}
		var base []byte
		if withBase {
			var err error
			if base, err = m.readBlob(o.id, path); err != nil {
				return r, false, "", err
			}
		}
		ours, err := m.readBlob(a.id, path)
		if err != nil {
			return r, false, "", err
		}
		theirs, err := m.readBlob(b.id, path)
		if err != nil {
			return r, false, "", err
		}
		if isBinary(base) || isBinary(ours) || isBinary(theirs) {
			r.id = a.id
			return r, false, KindBinary, nil
		}
		merged, ok := MergeFile(base, ours, theirs)
		if !ok {
			r.id = a.id
			return r, false, conflictKind, nil
		}
		r.id = hashObject(plumbing.BlobObject, merged)
		m.add(plumbing.BlobObject, r.id, merged)
	case a.mode == modeGitlink:
		r.id = a.id
		return r, false, KindSubmodule, nil
	default: // symlinks changed differently
		r.id = a.id
		return r, false, conflictKind, nil
	}
	return r, clean, conflictKind, nil
}

// binaryByPrefix reports whether the first binaryProbe bytes of one of the
// blobs ours, theirs and (withBase) base show it binary, reading only those
// bytes, when the Store is a PrefixReader. False means "read them whole":
// not binary, or not known (no PrefixReader, a read error, not a blob),
// and the whole reads decide and report faults as before.
func (m *merger) binaryByPrefix(withBase bool, base, ours, theirs plumbing.Hash) bool {
	pr, ok := m.s.(PrefixReader)
	if !ok {
		return false
	}
	ids := []plumbing.Hash{ours, theirs}
	if withBase {
		ids = append(ids, base)
	}
	binary := false
	for _, id := range ids {
		t, prefix, err := pr.ReadObjectPrefix(id, binaryProbe)
		if err != nil || t != plumbing.BlobObject {
			return false
		}
		binary = binary || isBinary(prefix)
	}
	return binary
}

// isBinary is git's test: a NUL byte within the first 8000 bytes.
func isBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	for _, c := range b {
		if c == 0 {
			return true
		}
	}
	return false
}
