package gitobj

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrMalformedTree is wrapped by every tree that git would read
// differently from us, that `git fsck --strict` refuses, or that is not
// written exactly as git writes trees.
var ErrMalformedTree = errors.New("malformed tree")

// Tree entry modes: the only five a tree may hold, each spelled exactly as
// git writes it ("40000", never "040000"; 100664 and other file modes git
// would silently read as 100644 are refused).
const (
	ModeTree    uint32 = 0o40000
	ModeFile    uint32 = 0o100644
	ModeExec    uint32 = 0o100755
	ModeSymlink uint32 = 0o120000
	ModeGitlink uint32 = 0o160000
)

// Entry is one tree entry.
type Entry struct {
	Mode uint32
	Name string
	ID   plumbing.Hash
}

// ParseTree reads a tree object's content and checks it (see WalkTree).
func ParseTree(raw []byte) ([]Entry, error) {
	es := make([]Entry, 0, bytes.Count(raw, []byte{0}))
	err := WalkTree(raw, func(mode uint32, name, id []byte) error {
		var h plumbing.Hash
		copy(h[:], id)
		es = append(es, Entry{Mode: mode, Name: string(name), ID: h})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return es, nil
}

func treeFault(code, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrMalformedTree, code, fmt.Sprintf(format, a...))
}

// WalkTree checks a tree object's content entry by entry and calls fn with
// each entry's mode, name and 20-byte id (both slices alias raw). It fails,
// with an error wrapping ErrMalformedTree that names the entry and the
// fault, on a truncated entry; a mode other than the five git writes,
// spelled as git writes it; an empty name, a name with '/', ".", "..", or
// any spelling of ".git" that git, HFS+ or NTFS would take for it; a
// symlink any such spelling of ".gitmodules"; the zero id; entries not in
// git's order, or two entries of the same name (a file and a directory
// included). An error from fn stops the walk and is returned as it is.
// See docs/objects.md.
func WalkTree(raw []byte, fn func(mode uint32, name, id []byte) error) error {
	var (
		prev     []byte
		prevTree bool
		files    [][]byte // files that a later directory of the same name could repeat
		n        int
	)
	for len(raw) > 0 {
		n++
		sp := bytes.IndexByte(raw, ' ')
		if sp < 0 {
			return treeFault("badTree", "entry %d has no mode", n)
		}
		modeField := raw[:sp]
		var mode uint32
		switch string(modeField) {
		case "100644":
			mode = ModeFile
		case "100755":
			mode = ModeExec
		case "40000":
			mode = ModeTree
		case "120000":
			mode = ModeSymlink
		case "160000":
			mode = ModeGitlink
		}
		raw = raw[sp+1:]
		nul := bytes.IndexByte(raw, 0)
		if nul < 0 || len(raw) < nul+21 {
			return treeFault("badTree", "entry %d is truncated", n)
		}
		name := raw[:nul]
		id := raw[nul+1 : nul+21]
		raw = raw[nul+21:]
		if mode == 0 {
			if len(modeField) > 0 && modeField[0] == '0' && octal(modeField) {
				return treeFault("zeroPaddedFilemode", "entry %q has the zero-padded mode %q", name, modeField)
			}
			return treeFault("badFilemode", "entry %q has mode %q; a tree holds only 100644, 100755, 120000, 40000 and 160000", name, modeField)
		}
		if err := checkName(name, mode); err != nil {
			return err
		}
		if isZero(id) {
			return treeFault("nullSha1", "entry %q names the zero object id", name)
		}
		isTree := mode == ModeTree
		if prev != nil && !entryLess(prev, prevTree, name, isTree) {
			if bytes.Equal(prev, name) {
				return treeFault("duplicateEntries", "entry %q appears twice", name)
			}
			return treeFault("treeNotSorted", "entry %q comes after %q; git sorts entries by name, a directory's as if it ended in '/'", name, prev)
		}
		// A file F and a directory F are apart when names F<c>... with c
		// before '/' lie between them: keep the files that such names
		// still follow (a stack of prefixes), and look for a directory's
		// name in it.
		for len(files) > 0 {
			top := files[len(files)-1]
			if isTree && bytes.Equal(top, name) {
				return treeFault("duplicateEntries", "%q is both a file and a directory", name)
			}
			if len(name) > len(top) && bytes.HasPrefix(name, top) && name[len(top)] < '/' {
				break
			}
			files = files[:len(files)-1]
		}
		if !isTree {
			files = append(files, name)
		}
		prev, prevTree = name, isTree
		if err := fn(mode, name, id); err != nil {
			return err
		}
	}
	return nil
}

func octal(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '7' {
			return false
		}
	}
	return true
}

func isZero(id []byte) bool {
	for _, c := range id {
		if c != 0 {
			return false
		}
	}
	return true
}

// entryLess orders tree entries as git does: bytewise by name, a tree's
// name compared as if it ended in '/'.
func entryLess(a []byte, aTree bool, b []byte, bTree bool) bool {
	n := min(len(a), len(b))
	if c := bytes.Compare(a[:n], b[:n]); c != 0 {
		return c < 0
	}
	return nextByte(a, n, aTree) < nextByte(b, n, bTree)
}

func nextByte(name []byte, n int, tree bool) int {
	if n < len(name) {
		return int(name[n])
	}
	if tree {
		return '/'
	}
	return 0
}

// EntryLess reports whether entry (a, aMode) sorts before (b, bMode) in a
// tree, as git orders entries.
func EntryLess(a string, aMode uint32, b string, bMode uint32) bool {
	n := min(len(a), len(b))
	if a[:n] != b[:n] {
		return a[:n] < b[:n]
	}
	ca, cb := 0, 0
	if n < len(a) {
		ca = int(a[n])
	} else if aMode == ModeTree {
		ca = '/'
	}
	if n < len(b) {
		cb = int(b[n])
	} else if bMode == ModeTree {
		cb = '/'
	}
	return ca < cb
}

// checkName applies git's fsck rules for one entry name.
func checkName(name []byte, mode uint32) error {
	if len(name) == 0 {
		return treeFault("badTree", "an entry has an empty name")
	}
	if bytes.IndexByte(name, '/') >= 0 {
		return treeFault("fullPathname", "entry %q has a '/' in its name", name)
	}
	switch c := name[0]; {
	case c == '.' || c == 'g' || c == 'G' || c >= 0x80 || c == '~':
		// the slow checks below
	default:
		if bytes.IndexByte(name, '\\') < 0 {
			return nil
		}
	}
	if string(name) == "." {
		return treeFault("hasDot", "an entry is named \".\"")
	}
	if string(name) == ".." {
		return treeFault("hasDotdot", "an entry is named \"..\"")
	}
	if isHFSDot(name, "git") || isNTFSDotGit(name) {
		return treeFault("hasDotgit", "entry %q is .git to git, HFS+ or NTFS", name)
	}
	if mode == ModeSymlink && (isHFSDot(name, "gitmodules") || isNTFSDot(name, "gitmodules", "gi7eba")) {
		return treeFault("gitmodulesSymlink", "entry %q is .gitmodules to git, HFS+ or NTFS, and a symlink", name)
	}
	// NTFS also splits names at '\\': each part after one must not be .git
	// (nor a .gitmodules symlink) either.
	for rest := name; ; {
		i := bytes.IndexByte(rest, '\\')
		if i < 0 {
			break
		}
		rest = rest[i+1:]
		if isNTFSDotGit(rest) {
			return treeFault("hasDotgit", "entry %q holds .git after a backslash", name)
		}
		if mode == ModeSymlink && isNTFSDot(rest, "gitmodules", "gi7eba") {
			return treeFault("gitmodulesSymlink", "entry %q holds .gitmodules after a backslash, and is a symlink", name)
		}
	}
	return nil
}
