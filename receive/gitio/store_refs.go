package gitio

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
)

// maxSymrefDepth bounds chains of symbolic refs, as git does.
const maxSymrefDepth = 5

// Bounds on what ref reading loads: a loose ref file holds one id or one
// "ref: <name>" line; packed-refs one line per ref.
const (
	maxRefFile    = 64 << 10
	maxPackedRefs = 1 << 30
)

// ErrBadRef reports a ref file or packed-refs line that cannot be parsed,
// or a ref name that is not acceptable.
var ErrBadRef = errors.New("malformed ref")

// refValue is a ref read from disk: an id or a symbolic target.
type refValue struct {
	id     plumbing.Hash
	target string // non-empty for symbolic refs
}

func parseRefFile(name string, data []byte) (refValue, error) {
	line := strings.TrimRight(string(data), "\r\n")
	if t, ok := strings.CutPrefix(line, "ref:"); ok {
		return refValue{target: strings.TrimSpace(t)}, nil
	}
	if len(line) < 40 || !plumbing.IsHash(line[:40]) {
		return refValue{}, fmt.Errorf("ref %s: %w: %q", name, ErrBadRef, line)
	}
	return refValue{id: plumbing.NewHash(line[:40])}, nil
}

// validRefName accepts HEAD-like top-level names and refs/…, rejecting
// anything that could leave the git directory.
func validRefName(name string) bool {
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") {
		return false
	}
	if strings.HasPrefix(name, "refs/") {
		return true
	}
	return !strings.Contains(name, "/") && strings.ToUpper(name) == name
}

func eachPackedRef(path string, data []byte, f func(string, plumbing.Hash) bool) error {
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		if len(line) < 42 || line[40] != ' ' || !plumbing.IsHash(string(line[:40])) {
			return fmt.Errorf("packed refs %s: %w: %q", path, ErrBadRef, line)
		}
		if !f(string(line[41:]), plumbing.NewHash(string(line[:40]))) {
			return nil
		}
	}
	return nil
}

// ReadRefs returns every ref of the repository at gitDir (loose refs under
// refs/ override packed-refs) and HEAD, with symbolic refs resolved to ids.
// A symbolic ref that resolves to nothing (an unborn HEAD) is left out.
func ReadRefs(gitDir string) (map[string]plumbing.Hash, error) {
	return readRefs(gitDir, []string{"refs/"}, []string{"HEAD"})
}

// ReadRefsUnder returns the refs of the repository at gitDir whose names
// start with one of prefixes (each ending in "/", such as "refs/hub/"),
// plus the refs named in names that exist, resolved as ReadRefs resolves
// them. It reads only those parts of the ref store: the pre-receive hook
// needs the hub refs and the refs being updated, not every branch and tag
// of a large repository.
func ReadRefsUnder(gitDir string, prefixes, names []string) (map[string]plumbing.Hash, error) {
	for _, p := range prefixes {
		if !strings.HasPrefix(p, "refs/") || !strings.HasSuffix(p, "/") || !validRefName(strings.TrimSuffix(p, "/")) {
			return nil, fmt.Errorf("ref prefix %q: %w: want a directory under refs/ ending in /", p, ErrBadRef)
		}
	}
	return readRefs(gitDir, prefixes, names)
}

// readRefs reads the refs under prefixes and the refs named in names,
// resolving symbolic refs: Refs.Read without a packed-refs read in advance.
func readRefs(gitDir string, prefixes, names []string) (map[string]plumbing.Hash, error) {
	r := &Refs{gitDir: gitDir}
	defer r.Close()
	return r.Read(prefixes, names)
}

// vanished reports a path that a concurrent writer removed while it was
// read: a loose ref deleted or packed (git pack-refs deletes the loose file
// and then every directory it leaves empty), a directory where a file was,
// or a file where a directory was. None of these is an error of the
// reader: what was loose is in packed-refs, which is read after the loose
// refs (docs/operating.md, "git's maintenance beside git+").
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR)
}

// walkLoose reads the loose refs under prefix into loose. A directory or
// file that vanishes during the walk is skipped, not an error.
func (r *Refs) walkLoose(prefix string, loose map[string]refValue) error {
	root := filepath.Join(r.gitDir, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if vanished(err) {
				return nil // the directory went (packed and pruned) while we walked
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(d.Name(), ".lock") {
			return nil
		}
		rel, err := filepath.Rel(r.gitDir, path)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		data, err := readLineFile(path, 128, maxRefFile)
		if err != nil {
			if vanished(err) || isDirErr(path) {
				return nil // deleted or packed while we walked: packed-refs has it
			}
			return err
		}
		v, err := parseRefFile(name, data)
		if err != nil {
			return err
		}
		loose[name] = v
		return nil
	})
	if err != nil {
		return fmt.Errorf("read refs of %s: %w", r.gitDir, err)
	}
	return nil
}

// read reads the refs under prefixes (loose files under the matching
// directories override packed-refs) and the loose or packed refs named in
// names, resolving symbolic refs. It reads as git does: every loose ref
// first, packed-refs after (re-read if it changed since it was last read),
// so a ref that git pack-refs moves from a loose file into packed-refs
// meanwhile is found in one or the other.
func (r *Refs) read(prefixes, names []string) (map[string]plumbing.Hash, error) {
	under := func(name string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	loose := map[string]refValue{}
	for _, prefix := range prefixes {
		if err := r.walkLoose(prefix, loose); err != nil {
			return nil, err
		}
	}
	var single []string // names outside the prefixes, not loose
	for _, name := range names {
		if under(name) {
			continue
		}
		if !validRefName(name) {
			return nil, fmt.Errorf("ref %s: %w: bad name", name, ErrBadRef)
		}
		v, found, err := readLooseRef(r.gitDir, name)
		if err != nil {
			return nil, err
		}
		if found {
			loose[name] = v
		} else {
			single = append(single, name)
		}
	}
	direct := map[string]plumbing.Hash{}
	if len(prefixes) > 0 || len(single) > 0 {
		packed, err := r.packedNow()
		if err != nil {
			return nil, err
		}
		for _, prefix := range prefixes {
			if err := packed.each(prefix, func(name string, id plumbing.Hash) { direct[name] = id }); err != nil {
				return nil, err
			}
		}
		for _, name := range single {
			if !strings.HasPrefix(name, "refs/") {
				continue // HEAD-like names are never packed
			}
			id, ok, err := packed.get(name)
			if err != nil {
				return nil, err
			}
			if ok {
				direct[name] = id
			}
		}
	}
	symbolic := map[string]string{}
	for name, v := range loose {
		if v.target != "" {
			symbolic[name] = v.target
			delete(direct, name)
		} else {
			direct[name] = v.id
		}
	}
	for name, target := range symbolic {
		resolved := false
		for depth := 0; depth < maxSymrefDepth; depth++ {
			if id, ok := direct[target]; ok {
				direct[name] = id
				resolved = true
				break
			}
			next, ok := symbolic[target]
			if !ok {
				break
			}
			target = next
		}
		if !resolved && !under(target) {
			// The target lies outside what was read: resolve it alone.
			if id, err := r.resolve(target); err == nil {
				direct[name] = id
			} else if !errors.Is(err, plumbing.ErrReferenceNotFound) {
				return nil, err
			}
		}
	}
	return direct, nil
}

// ReadRef resolves one ref (a full name such as refs/heads/main, or HEAD)
// of the repository at gitDir, following symbolic refs. A missing or unborn
// ref is an error wrapping plumbing.ErrReferenceNotFound.
func ReadRef(gitDir, name string) (plumbing.Hash, error) {
	r := &Refs{gitDir: gitDir}
	defer r.Close()
	return r.resolve(name)
}

// resolve is ReadRef through r's packed-refs.
func (r *Refs) resolve(name string) (plumbing.Hash, error) {
	orig := name
	for depth := 0; depth <= maxSymrefDepth; depth++ {
		if !validRefName(name) {
			return plumbing.ZeroHash, fmt.Errorf("ref %s: %w: bad name %q", orig, ErrBadRef, name)
		}
		v, found, err := r.readOne(name)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if !found {
			return plumbing.ZeroHash, fmt.Errorf("ref %s: %w", orig, plumbing.ErrReferenceNotFound)
		}
		if v.target == "" {
			return v.id, nil
		}
		name = v.target
	}
	return plumbing.ZeroHash, fmt.Errorf("ref %s: %w: symbolic refs nest deeper than %d", orig, ErrBadRef, maxSymrefDepth)
}

// ReadSymbolicRef returns the target of a symbolic ref (HEAD → refs/heads/main)
// without resolving it further; ok is false when name is not symbolic.
func ReadSymbolicRef(gitDir, name string) (target string, ok bool, err error) {
	if !validRefName(name) {
		return "", false, fmt.Errorf("ref %s: %w: bad name", name, ErrBadRef)
	}
	v, found, err := readOneRef(gitDir, name)
	if err != nil {
		return "", false, err
	}
	if !found {
		return "", false, fmt.Errorf("ref %s: %w", name, plumbing.ErrReferenceNotFound)
	}
	return v.target, v.target != "", nil
}

// ReadRefOwn returns the id ref name itself holds, without following a
// symbolic ref: symbolic is true (and id zero) when name is one. A missing
// ref wraps plumbing.ErrReferenceNotFound. Hub refs hold an event id, never
// a symbolic ref, and their readers say so rather than follow one.
func ReadRefOwn(gitDir, name string) (id plumbing.Hash, symbolic bool, err error) {
	if !validRefName(name) {
		return plumbing.ZeroHash, false, fmt.Errorf("ref %s: %w: bad name", name, ErrBadRef)
	}
	v, found, err := readOneRef(gitDir, name)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	if !found {
		return plumbing.ZeroHash, false, fmt.Errorf("ref %s: %w", name, plumbing.ErrReferenceNotFound)
	}
	return v.id, v.target != "", nil
}

// looseSymbolicRef returns the target of name when its loose ref file is
// a symbolic ref; ok is false for an id, a missing file or a directory.
func looseSymbolicRef(gitDir, name string) (target string, ok bool, err error) {
	if !validRefName(name) {
		return "", false, fmt.Errorf("ref %s: %w: bad name", name, ErrBadRef)
	}
	path := filepath.Join(gitDir, filepath.FromSlash(name))
	data, err := readLineFile(path, 128, maxRefFile)
	if err != nil {
		if vanished(err) || isDirErr(path) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("read ref %s: %w", name, err)
	}
	v, err := parseRefFile(name, data)
	return v.target, err == nil && v.target != "", err
}

func readOneRef(gitDir, name string) (refValue, bool, error) {
	r := &Refs{gitDir: gitDir}
	defer r.Close()
	return r.readOne(name)
}

// readLooseRef reads name's loose ref file; found is false when there is
// none (missing, or a directory stands there).
func readLooseRef(gitDir, name string) (refValue, bool, error) {
	path := filepath.Join(gitDir, filepath.FromSlash(name))
	data, err := readLineFile(path, 128, maxRefFile)
	if err == nil {
		v, err := parseRefFile(name, data)
		return v, err == nil, err
	}
	if vanished(err) || isDirErr(path) {
		return refValue{}, false, nil
	}
	return refValue{}, false, fmt.Errorf("read ref %s: %w", name, err)
}

// readOne reads name's loose ref file, else its packed-refs line, as git
// does: the loose file first, then packed-refs as it is after that read
// (re-read when it changed since r last read it), so a ref packed between
// the two reads is found, not missing.
func (r *Refs) readOne(name string) (refValue, bool, error) {
	v, found, err := readLooseRef(r.gitDir, name)
	if err != nil || found || !strings.HasPrefix(name, "refs/") {
		return v, found, err
	}
	packed, err := r.packedNow()
	if err != nil {
		return refValue{}, false, err
	}
	id, ok, err := packed.get(name)
	return refValue{id: id}, ok, err
}

func isDirErr(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// SymbolicTarget returns the ref that an update of name writes: name itself
// unless it is a symbolic ref, else the end of its chain of symbolic refs
// (which need not exist yet). A chain deeper than git follows is an error.
// Only loose ref files are read: packed-refs holds no symbolic ref, so a
// push of packed or new refs costs no packed-refs read here.
func SymbolicTarget(gitDir, name string) (string, error) {
	cur := name
	for depth := 0; depth <= maxSymrefDepth; depth++ {
		target, ok, err := looseSymbolicRef(gitDir, cur)
		if err != nil {
			return "", err
		}
		if !ok {
			return cur, nil
		}
		if !validRefName(target) {
			return "", fmt.Errorf("ref %s: %w: symbolic ref to %q", cur, ErrBadRef, target)
		}
		cur = target
	}
	return "", fmt.Errorf("ref %s: %w: symbolic refs nest deeper than %d", name, ErrBadRef, maxSymrefDepth)
}

// Refs reads the refs of one repository with packed-refs read at most
// once per change of the file: the hook reads the refs it judges first and
// then, on demand, each pull request ref policy asks for
// (policy.RefSource). A repository keeps one ref per pull request ever
// opened, loose until git gc packs them, and a landing needs only the few
// its pull request index names. Whenever a read needs packed-refs (after
// the loose refs it reads), the file is checked against what was read
// (its inode, size and modification time, as git checks its own snapshot)
// and read again when git replaced it meanwhile. A Refs is safe for
// concurrent use.
type Refs struct {
	gitDir string
	mu     sync.Mutex // held through every read: packedNow may replace packed
	packed *packedRefs
}

// OpenRefs reads gitDir's packed-refs (mapped when large: Close unmaps it).
func OpenRefs(gitDir string) (*Refs, error) {
	packed, err := loadPackedRefs(gitDir)
	if err != nil {
		return nil, fmt.Errorf("reading the refs of %s: %w", gitDir, err)
	}
	return &Refs{gitDir: gitDir, packed: packed}, nil
}

// Close releases packed-refs.
func (r *Refs) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.packed.close()
	r.packed = nil
}

// packedNow returns packed-refs as it is now: the one read before when the
// file is unchanged since, else the file read again. Called with r.mu held.
func (r *Refs) packedNow() (*packedRefs, error) {
	if r.packed != nil {
		now, err := stampPath(r.packed.path)
		if err != nil {
			return nil, fmt.Errorf("reading the refs of %s: %w", r.gitDir, err)
		}
		if now == r.packed.stamp {
			return r.packed, nil
		}
	}
	p, err := loadPackedRefs(r.gitDir)
	if err != nil {
		return nil, fmt.Errorf("reading the refs of %s: %w", r.gitDir, err)
	}
	r.packed.close()
	r.packed = p
	return p, nil
}

// Read is ReadRefsUnder through r's packed-refs.
func (r *Refs) Read(prefixes, names []string) (map[string]plumbing.Hash, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.read(prefixes, names)
}

// Ref resolves one ref; a missing ref is the zero id.
func (r *Refs) Ref(name string) (plumbing.Hash, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, err := r.resolve(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	return id, err
}

// Under lists the refs whose names start with prefix.
func (r *Refs) Under(prefix string) (map[string]plumbing.Hash, error) {
	return r.Read([]string{prefix}, nil)
}
