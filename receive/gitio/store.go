package gitio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// ErrQuarantineWrite is returned by SetEncodedObject inside a hook: the
// boundary writes no objects (docs/architecture.md).
var ErrQuarantineWrite = errors.New("object writes are refused inside the receive quarantine")

// maxAlternateDepth follows git: alternates of alternates are read up to
// five levels deep.
const maxAlternateDepth = 5

// QuarantineEnv carries the object-directory variables git sets for hooks.
// The zero value means "not in a hook": the repository's own objects/ only.
type QuarantineEnv struct {
	QuarantinePath             string // GIT_QUARANTINE_PATH
	ObjectDirectory            string // GIT_OBJECT_DIRECTORY
	AlternateObjectDirectories string // GIT_ALTERNATE_OBJECT_DIRECTORIES, colon-separated
}

// InQuarantine reports whether the environment describes a receive-pack
// quarantine (a pre-receive hook).
func (e QuarantineEnv) InQuarantine() bool { return e.QuarantinePath != "" }

// QuarantineFromEnviron picks the quarantine variables out of an environment
// in os.Environ form; the last assignment of a name wins, as in a shell.
func QuarantineFromEnviron(environ []string) QuarantineEnv {
	var e QuarantineEnv
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch name {
		case "GIT_QUARANTINE_PATH":
			e.QuarantinePath = value
		case "GIT_OBJECT_DIRECTORY":
			e.ObjectDirectory = value
		case "GIT_ALTERNATE_OBJECT_DIRECTORIES":
			e.AlternateObjectDirectories = value
		}
	}
	return e
}

// Store is a read-mostly, layered git object store: the primary object
// directory, then every alternate (see the package documentation). It
// implements go-git's storer.EncodedObjectStorer and is safe for concurrent
// use.
type Store struct {
	gitDir     string
	primary    string // where loose objects are written
	quarantine bool
	cache      *objectCache

	mu     sync.RWMutex
	layers []*objDir

	last atomic.Pointer[pack] // the pack that answered last: tried first
}

var _ storer.EncodedObjectStorer = (*Store)(nil)

// objDir is one object directory: loose objects and pack/.
type objDir struct {
	path string

	mu       sync.RWMutex
	scanned  bool
	packs    []*pack
	packSeen map[string]bool
	stamp    time.Time // pack/ mtime at the last scan
}

// OpenStore opens the object store of the git directory gitDir as seen by a
// process running with env. It reads directory listings only; pack indexes
// are mapped on first use.
func OpenStore(gitDir string, env QuarantineEnv) (*Store, error) {
	absGit, err := filepath.Abs(gitDir)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", gitDir, err)
	}
	mainObjects := filepath.Join(absGit, "objects")
	primary := mainObjects
	switch {
	case env.ObjectDirectory != "":
		primary = env.ObjectDirectory
	case env.QuarantinePath != "":
		primary = env.QuarantinePath
	}
	if primary, err = filepath.Abs(primary); err != nil {
		return nil, fmt.Errorf("open store %s: object directory %s: %w", gitDir, primary, err)
	}
	if st, err := os.Stat(primary); err != nil {
		return nil, fmt.Errorf("open store %s: object directory: %w", gitDir, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("open store %s: object directory %s is not a directory", gitDir, primary)
	}
	s := &Store{gitDir: absGit, primary: primary, quarantine: env.InQuarantine(), cache: newObjectCache(defaultCacheBytes)}
	seen := map[string]bool{}
	type pending struct {
		path  string
		depth int
	}
	queue := []pending{{primary, 0}}
	if env.QuarantinePath != "" {
		queue = append(queue, pending{env.QuarantinePath, 0})
	}
	for _, a := range strings.Split(env.AlternateObjectDirectories, ":") {
		if a != "" {
			queue = append(queue, pending{a, 0})
		}
	}
	queue = append(queue, pending{mainObjects, 0})
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		p, err := filepath.Abs(d.path) // also cleans "/x/r.git/./objects"
		if err != nil || seen[p] {
			continue
		}
		seen[p] = true
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			continue // git warns about a missing alternate and carries on
		}
		s.layers = append(s.layers, &objDir{path: p})
		if d.depth >= maxAlternateDepth {
			continue
		}
		alts, err := readAlternates(p)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", gitDir, err)
		}
		for _, a := range alts {
			queue = append(queue, pending{a, d.depth + 1})
		}
	}
	return s, nil
}

// readAlternates lists objects/info/alternates of an object directory;
// relative entries are relative to that directory.
func readAlternates(objects string) ([]string, error) {
	path := filepath.Join(objects, "info", "alternates")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read alternates %s: %w", path, err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		out = append(out, line)
	}
	return out, nil
}

// ObjectDirs lists the object directories the store reads, in lookup order.
func (s *Store) ObjectDirs() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, len(s.layers))
	for i, l := range s.layers {
		out[i] = l.path
	}
	return out
}

// InQuarantine reports whether the store was opened inside a hook, where it
// refuses writes.
func (s *Store) InQuarantine() bool { return s.quarantine }

func (s *Store) dirs() []*objDir {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.layers
}

// Close releases every mapped pack and index. Slices returned by ReadRaw stay
// valid (they never point into a mapping).
func (s *Store) Close() error {
	var err error
	for _, l := range s.dirs() {
		l.mu.Lock()
		for _, p := range l.packs {
			if e := p.close(); e != nil && err == nil {
				err = e
			}
		}
		l.packs, l.packSeen, l.scanned = nil, nil, false
		l.mu.Unlock()
	}
	s.last.Store(nil)
	return err
}

// packList returns the directory's packs, listing pack/ on first use.
func (d *objDir) packList() []*pack {
	d.mu.RLock()
	if d.scanned {
		ps := d.packs
		d.mu.RUnlock()
		return ps
	}
	d.mu.RUnlock()
	d.rescan(true)
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.packs
}

// rescan lists pack/ again when it changed since the last listing (or
// always, with force) and adds packs not seen before. It reports whether any
// were added.
func (d *objDir) rescan(force bool) bool {
	dir := filepath.Join(d.path, "pack")
	st, err := os.Stat(dir)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.scanned = true
		return false
	}
	if d.scanned && !force && st.ModTime().Equal(d.stamp) {
		return false
	}
	if d.scanned && force {
		return false // another caller listed it meanwhile
	}
	d.stamp = st.ModTime()
	d.scanned = true
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	if d.packSeen == nil {
		d.packSeen = map[string]bool{}
	}
	var added []*pack
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "pack-") || !strings.HasSuffix(name, ".idx") || d.packSeen[name] {
			continue
		}
		base := strings.TrimSuffix(name, ".idx")
		pst, err := os.Stat(filepath.Join(dir, base+".pack"))
		if err != nil {
			continue // an index whose pack is not (yet) there
		}
		d.packSeen[name] = true
		added = append(added, &pack{idxPath: filepath.Join(dir, name), packPath: filepath.Join(dir, base+".pack"), mtime: pst.ModTime()})
	}
	// Newest first, as git searches them: what a push judges (its own
	// objects, recent candidates and events) sits in recent packs, and a
	// pack is opened (its index and data mapped) only when it is searched.
	all := append(append([]*pack(nil), d.packs...), added...)
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].mtime.Equal(all[j].mtime) {
			return all[i].mtime.After(all[j].mtime)
		}
		return all[i].idxPath < all[j].idxPath
	})
	d.packs = all
	return len(added) > 0
}

// location of an object found in a pack.
type location struct {
	p   *pack
	off int64
}

// findPacked looks h up in every pack index. It returns the first pack that
// failed to open alongside a miss, so a miss can say why it may be wrong.
func (s *Store) findPacked(h plumbing.Hash) (location, bool, error) {
	if p := s.last.Load(); p != nil && p.idx != nil {
		if i, ok := p.idx.Lookup(h); ok {
			off, err := p.idx.OffsetAt(i)
			return location{p, off}, err == nil, err
		}
	}
	var openErr error
	for _, d := range s.dirs() {
		for _, p := range d.packList() {
			if err := p.open(); err != nil {
				if openErr == nil {
					openErr = err
				}
				continue
			}
			if i, ok := p.idx.Lookup(h); ok {
				off, err := p.idx.OffsetAt(i)
				if err != nil {
					return location{}, false, err
				}
				s.last.Store(p)
				return location{p, off}, true, nil
			}
		}
	}
	return location{}, false, openErr
}

func (s *Store) notFound(h plumbing.Hash, packErr error) error {
	if packErr != nil {
		return fmt.Errorf("object %s: %w (a pack could not be read: %w)", h, plumbing.ErrObjectNotFound, packErr)
	}
	return fmt.Errorf("object %s: %w", h, plumbing.ErrObjectNotFound)
}

// refresh rescans every pack directory that changed; it reports whether new
// packs appeared (a repack or a push landed meanwhile).
func (s *Store) refresh() bool {
	added := false
	for _, d := range s.dirs() {
		if d.rescan(false) {
			added = true
		}
	}
	return added
}

// ReadRaw returns the type and content of object h. The content may be
// shared with the store's cache: callers must not modify it. A missing
// object is an error wrapping plumbing.ErrObjectNotFound that names h.
func (s *Store) ReadRaw(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return s.readRaw(h, 0)
}

func (s *Store) readRaw(h plumbing.Hash, depth int) (plumbing.ObjectType, []byte, error) {
	if depth > maxAlternateDepth*10 {
		return 0, nil, fmt.Errorf("object %s: %w: ref-delta bases form a cycle", h, ErrCorruptObject)
	}
	return find(s, h, func(loc location) (plumbing.ObjectType, []byte, error) {
		return s.packObject(loc.p, loc.off, h)
	}, func(dir string) (plumbing.ObjectType, []byte, error) {
		return readLoose(dir, h)
	})
}

// find is the one search for object h, which every read shares: its pack
// entry (read with packed), else the loose file of each object directory in
// order (read with loose, which reports os.ErrNotExist when the directory
// has none); when neither holds it, the pack directories are rescanned and,
// if new packs appeared (a repack may have moved h from a loose file into a
// pack meanwhile), searched once more. Not found at all is s.notFound.
func find[V any](s *Store, h plumbing.Hash, packed func(location) (plumbing.ObjectType, V, error), loose func(dir string) (plumbing.ObjectType, V, error)) (plumbing.ObjectType, V, error) {
	var none V
	for attempt := 0; ; attempt++ {
		loc, ok, packErr := s.findPacked(h)
		if ok {
			return packed(loc)
		}
		for _, d := range s.dirs() {
			t, v, err := loose(d.path)
			if err == nil {
				return t, v, nil
			}
			if !errors.Is(err, os.ErrNotExist) {
				return 0, none, err
			}
		}
		if attempt > 0 || !s.refresh() {
			return 0, none, s.notFound(h, packErr)
		}
	}
}

// info returns the type and size of h without reading all of it when it
// can: a packed object's header and delta header only.
func (s *Store) info(h plumbing.Hash) (plumbing.ObjectType, int64, error) {
	return find(s, h, func(loc location) (plumbing.ObjectType, int64, error) {
		if t, d, ok := s.cache.get(loc.p, loc.off); ok {
			return t, int64(len(d)), nil
		}
		return s.packEntryInfo(loc.p, loc.off, h)
	}, func(dir string) (plumbing.ObjectType, int64, error) {
		return looseInfo(dir, h)
	})
}

// HasObject reports whether h is in the store. It reads no object data.
func (s *Store) HasObject(h plumbing.Hash) (bool, error) {
	_, _, err := find(s, h, func(location) (plumbing.ObjectType, struct{}, error) {
		return 0, struct{}{}, nil
	}, func(dir string) (plumbing.ObjectType, struct{}, error) {
		_, err := os.Stat(loosePath(dir, h))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("object %s: %w", h, err)
		}
		return 0, struct{}{}, err
	})
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return false, nil
	}
	return err == nil, err
}

// ObjectInfo returns the type and size of h.
func (s *Store) ObjectInfo(h plumbing.Hash) (plumbing.ObjectType, int64, error) {
	return s.info(h)
}

// NewEncodedObject implements storer.EncodedObjectStorer.
func (s *Store) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

// EncodedObject implements storer.EncodedObjectStorer. The object returned
// is read-only and carries its id without rehashing.
func (s *Store) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	typ, data, err := s.ReadRaw(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && t != typ {
		return nil, fmt.Errorf("object %s is a %s, not a %s: %w", h, typ, t, plumbing.ErrObjectNotFound)
	}
	return &Object{id: h, typ: typ, data: data}, nil
}

// HasEncodedObject implements storer.EncodedObjectStorer.
func (s *Store) HasEncodedObject(h plumbing.Hash) error {
	ok, err := s.HasObject(h)
	if err != nil {
		return err
	}
	if !ok {
		return s.notFound(h, nil)
	}
	return nil
}

// EncodedObjectSize implements storer.EncodedObjectStorer.
func (s *Store) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	_, size, err := s.info(h)
	return size, err
}

// SetEncodedObject implements storer.EncodedObjectStorer: it writes o as a
// loose object into the primary object directory, unless the object is
// already present. Inside a hook it refuses with ErrQuarantineWrite.
func (s *Store) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	if s.quarantine {
		return plumbing.ZeroHash, fmt.Errorf("write object %s: %w", o.Hash(), ErrQuarantineWrite)
	}
	switch o.Type() {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	default:
		return plumbing.ZeroHash, fmt.Errorf("write object: %w: %s", plumbing.ErrInvalidType, o.Type())
	}
	r, err := o.Reader()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write object: read content: %w", err)
	}
	content, err := io.ReadAll(r)
	_ = r.Close()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write object: read content: %w", err)
	}
	return s.WriteRaw(o.Type(), content)
}

// WriteRaw stores content as a loose object of type t (see SetEncodedObject).
func (s *Store) WriteRaw(t plumbing.ObjectType, content []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(t, content)
	if s.quarantine {
		return plumbing.ZeroHash, fmt.Errorf("write object %s: %w", h, ErrQuarantineWrite)
	}
	if ok, err := s.HasObject(h); err != nil {
		return plumbing.ZeroHash, err
	} else if ok {
		return h, nil
	}
	if err := writeLoose(s.primary, h, t, content); err != nil {
		return plumbing.ZeroHash, err
	}
	return h, nil
}

// AddAlternate implements storer.EncodedObjectStorer: it adds an object
// directory (or a git directory's objects/) as a further read layer for this
// Store only; nothing is written to info/alternates.
func (s *Store) AddAlternate(remote string) error {
	p, err := filepath.Abs(remote)
	if err != nil {
		return fmt.Errorf("add alternate %s: %w", remote, err)
	}
	if st, err := os.Stat(filepath.Join(p, "objects")); err == nil && st.IsDir() {
		p = filepath.Join(p, "objects")
	}
	if st, err := os.Stat(p); err != nil {
		return fmt.Errorf("add alternate %s: %w", remote, err)
	} else if !st.IsDir() {
		return fmt.Errorf("add alternate %s: not a directory", remote)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.layers {
		if l.path == p {
			return nil
		}
	}
	s.layers = append(append([]*objDir(nil), s.layers...), &objDir{path: p})
	return nil
}

// IterEncodedObjects implements storer.EncodedObjectStorer. It lists every
// id first (pack indexes and loose directories) and reads objects as the
// iterator advances; a slow path meant for tools, not the hook.
func (s *Store) IterEncodedObjects(t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	seen := map[plumbing.Hash]bool{}
	var ids []plumbing.Hash
	add := func(h plumbing.Hash) {
		if !seen[h] {
			seen[h] = true
			ids = append(ids, h)
		}
	}
	for _, d := range s.dirs() {
		for _, p := range d.packList() {
			if err := p.open(); err != nil {
				return nil, err
			}
			for i := 0; i < p.idx.Len(); i++ {
				add(p.idx.HashAt(i))
			}
		}
		if err := forEachLoose(d.path, add); err != nil {
			return nil, err
		}
	}
	return &objectIter{s: s, t: t, ids: ids}, nil
}

type objectIter struct {
	s   *Store
	t   plumbing.ObjectType
	ids []plumbing.Hash
}

func (it *objectIter) Next() (plumbing.EncodedObject, error) {
	for len(it.ids) > 0 {
		h := it.ids[0]
		it.ids = it.ids[1:]
		if it.t != plumbing.AnyObject {
			typ, _, err := it.s.info(h)
			if err != nil {
				return nil, err
			}
			if typ != it.t {
				continue
			}
		}
		return it.s.EncodedObject(plumbing.AnyObject, h)
	}
	return nil, io.EOF
}

func (it *objectIter) ForEach(f func(plumbing.EncodedObject) error) error {
	defer it.Close()
	for {
		o, err := it.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := f(o); err != nil {
			if err == storer.ErrStop {
				return nil
			}
			return err
		}
	}
}

func (it *objectIter) Close() { it.ids = nil }

// Object is an object read from a Store: a read-only plumbing.EncodedObject
// that knows its id. Its content may be shared with the store's cache.
type Object struct {
	id   plumbing.Hash
	typ  plumbing.ObjectType
	data []byte
}

// ErrReadOnlyObject is returned by (*Object).Writer.
var ErrReadOnlyObject = errors.New("object read from the store is read-only")

// Hash implements plumbing.EncodedObject.
func (o *Object) Hash() plumbing.Hash { return o.id }

// Type implements plumbing.EncodedObject.
func (o *Object) Type() plumbing.ObjectType { return o.typ }

// SetType implements plumbing.EncodedObject.
func (o *Object) SetType(t plumbing.ObjectType) { o.typ = t }

// Size implements plumbing.EncodedObject.
func (o *Object) Size() int64 { return int64(len(o.data)) }

// SetSize implements plumbing.EncodedObject; the size of a read object is
// its content's and does not change.
func (o *Object) SetSize(int64) {}

// Bytes returns the content; callers must not modify it.
func (o *Object) Bytes() []byte { return o.data }

// Reader implements plumbing.EncodedObject. The reader also seeks.
func (o *Object) Reader() (io.ReadCloser, error) {
	return readSeekNopCloser{bytes.NewReader(o.data)}, nil
}

type readSeekNopCloser struct{ *bytes.Reader }

func (readSeekNopCloser) Close() error { return nil }

// Writer implements plumbing.EncodedObject; it always fails.
func (o *Object) Writer() (io.WriteCloser, error) {
	return nil, fmt.Errorf("object %s: %w", o.id, ErrReadOnlyObject)
}

// ConcurrentReads reports that a Store may be read from several goroutines
// at once (policy.ConcurrentReader): packs and indexes are mapped read-only,
// and the object cache and directory lists are locked.
func (s *Store) ConcurrentReads() bool { return true }
