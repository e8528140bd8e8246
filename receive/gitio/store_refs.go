package gitio

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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

// readRefs reads the refs under prefixes (loose files under the matching
// directories override packed-refs) and the loose or packed refs named in
// names, resolving symbolic refs.
func readRefs(gitDir string, prefixes, names []string) (map[string]plumbing.Hash, error) {
	packed, err := loadPackedRefs(gitDir)
	if err != nil {
		return nil, err
	}
	defer packed.close()
	return readRefsPacked(gitDir, packed, prefixes, names)
}

// readRefsPacked is readRefs with packed-refs already read.
func readRefsPacked(gitDir string, packed *packedRefs, prefixes, names []string) (map[string]plumbing.Hash, error) {
	var err error
	under := func(name string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	direct := map[string]plumbing.Hash{}
	for _, prefix := range prefixes {
		if err := packed.each(prefix, func(name string, id plumbing.Hash) { direct[name] = id }); err != nil {
			return nil, err
		}
	}
	symbolic := map[string]string{}
	set := func(name string, v refValue) {
		if v.target != "" {
			symbolic[name] = v.target
			delete(direct, name)
		} else {
			direct[name] = v.id
		}
	}
	for _, prefix := range prefixes {
		root := filepath.Join(gitDir, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && path == root {
					return filepath.SkipDir
				}
				return err
			}
			if d.IsDir() || strings.HasSuffix(d.Name(), ".lock") {
				return nil
			}
			rel, err := filepath.Rel(gitDir, path)
			if err != nil {
				return err
			}
			name := filepath.ToSlash(rel)
			data, err := readLineFile(path, 128, maxRefFile)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // deleted while we walked
				}
				return err
			}
			v, err := parseRefFile(name, data)
			if err != nil {
				return err
			}
			set(name, v)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read refs of %s: %w", gitDir, err)
		}
	}
	for _, name := range names {
		if under(name) {
			continue
		}
		if !validRefName(name) {
			return nil, fmt.Errorf("ref %s: %w: bad name", name, ErrBadRef)
		}
		v, found, err := readRefIn(gitDir, name, packed)
		if err != nil {
			return nil, err
		}
		if found {
			set(name, v)
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
			if id, err := ReadRef(gitDir, target); err == nil {
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
	return resolveRef(gitDir, name, nil)
}

// resolveRef is ReadRef with packed-refs already read (nil: read it when a
// name is not loose).
func resolveRef(gitDir, name string, packed *packedRefs) (plumbing.Hash, error) {
	orig := name
	for depth := 0; depth <= maxSymrefDepth; depth++ {
		if !validRefName(name) {
			return plumbing.ZeroHash, fmt.Errorf("ref %s: %w: bad name %q", orig, ErrBadRef, name)
		}
		v, found, err := readRefIn(gitDir, name, packed)
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

// looseSymbolicRef returns the target of name when its loose ref file is
// a symbolic ref; ok is false for an id, a missing file or a directory.
func looseSymbolicRef(gitDir, name string) (target string, ok bool, err error) {
	if !validRefName(name) {
		return "", false, fmt.Errorf("ref %s: %w: bad name", name, ErrBadRef)
	}
	path := filepath.Join(gitDir, filepath.FromSlash(name))
	data, err := readLineFile(path, 128, maxRefFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || isDirErr(path) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("read ref %s: %w", name, err)
	}
	v, err := parseRefFile(name, data)
	return v.target, err == nil && v.target != "", err
}

func readOneRef(gitDir, name string) (refValue, bool, error) {
	return readRefIn(gitDir, name, nil)
}

// readRefIn reads name's loose ref file, else its packed-refs line: from
// packed when the caller has read packed-refs already, else from the file.
func readRefIn(gitDir, name string, packed *packedRefs) (refValue, bool, error) {
	path := filepath.Join(gitDir, filepath.FromSlash(name))
	data, err := readLineFile(path, 128, maxRefFile)
	if err == nil {
		v, err := parseRefFile(name, data)
		return v, err == nil, err
	}
	if !errors.Is(err, fs.ErrNotExist) && !isDirErr(path) {
		return refValue{}, false, fmt.Errorf("read ref %s: %w", name, err)
	}
	if !strings.HasPrefix(name, "refs/") {
		return refValue{}, false, nil
	}
	if packed == nil {
		if packed, err = loadPackedRefs(gitDir); err != nil {
			return refValue{}, false, err
		}
		defer packed.close()
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

// Refs reads the refs of one repository with packed-refs read once, when
// it is opened: the hook reads the refs it judges first and then, on
// demand, each pull request ref policy asks for (policy.RefSource). A
// repository keeps one ref per pull request ever opened, loose until git gc
// packs them, and a landing needs only the few its pull request index names.
type Refs struct {
	gitDir string
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
func (r *Refs) Close() { r.packed.close() }

// Read is ReadRefsUnder with the packed-refs read at OpenRefs.
func (r *Refs) Read(prefixes, names []string) (map[string]plumbing.Hash, error) {
	return readRefsPacked(r.gitDir, r.packed, prefixes, names)
}

// Ref resolves one ref; a missing ref is the zero id.
func (r *Refs) Ref(name string) (plumbing.Hash, error) {
	id, err := resolveRef(r.gitDir, name, r.packed)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	return id, err
}

// Under lists the refs whose names start with prefix.
func (r *Refs) Under(prefix string) (map[string]plumbing.Hash, error) {
	return readRefsPacked(r.gitDir, r.packed, []string{prefix}, nil)
}
