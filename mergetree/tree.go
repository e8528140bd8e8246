package mergetree

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

// Modes, canonicalized as git does when it reads a tree (a regular file is
// 100644 unless its owner-execute bit is set, then 100755). Trees are written
// with exactly these strings ("40000", not "040000").
const (
	modeNone    uint32 = 0
	modeTree    uint32 = 0o40000
	modeFile    uint32 = 0o100644
	modeExec    uint32 = 0o100755
	modeSymlink uint32 = 0o120000
	modeGitlink uint32 = 0o160000
)

// EmptyTree is the id of the tree with no entries.
var EmptyTree = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// entry is one tree entry; mode 0 means "absent".
type entry struct {
	name string
	mode uint32
	id   plumbing.Hash
}

func (e entry) present() bool { return e.mode != modeNone }
func (e entry) isTree() bool  { return e.mode == modeTree }

// same is git's "matches": both present with equal mode and id.
func same(x, y entry) bool { return x.mode != 0 && x.mode == y.mode && x.id == y.id }

// kind is the file type of a mode: tree, regular, symlink or gitlink.
func kind(mode uint32) uint32 { return mode & 0o170000 }

func canonMode(m uint32) (uint32, bool) {
	switch m & 0o170000 {
	case 0o100000:
		if m&0o100 != 0 {
			return modeExec, true
		}
		return modeFile, true
	case 0o120000:
		return modeSymlink, true
	case 0o040000:
		return modeTree, true
	case 0o160000:
		return modeGitlink, true
	}
	return 0, false
}

func modeString(m uint32) string {
	switch m {
	case modeTree:
		return "40000"
	case modeFile:
		return "100644"
	case modeExec:
		return "100755"
	case modeSymlink:
		return "120000"
	case modeGitlink:
		return "160000"
	}
	return strconv.FormatUint(uint64(m), 8)
}

// parseTree decodes raw tree bytes ("<octal mode> <name>\0<20-byte id>"
// repeated). It rejects empty names, names with '/', unknown modes,
// duplicate names and truncated entries: a tree it cannot trust is an error,
// never a partial tree. Modes are canonicalized.
func parseTree(data []byte) ([]entry, error) {
	n := bytes.Count(data, []byte{0})
	es := make([]entry, 0, n)
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 || sp > 7 {
			return nil, fmt.Errorf("bad mode field")
		}
		var m uint32
		for _, c := range data[:sp] {
			if c < '0' || c > '7' {
				return nil, fmt.Errorf("bad mode %q", data[:sp])
			}
			m = m<<3 | uint32(c-'0')
		}
		cm, ok := canonMode(m)
		if !ok {
			return nil, fmt.Errorf("bad mode %q", data[:sp])
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 {
			return nil, fmt.Errorf("truncated entry name")
		}
		name := data[:nul]
		if len(name) == 0 || bytes.IndexByte(name, '/') >= 0 {
			return nil, fmt.Errorf("bad entry name %q", name)
		}
		data = data[nul+1:]
		if len(data) < 20 {
			return nil, fmt.Errorf("truncated id of %q", name)
		}
		var id plumbing.Hash
		copy(id[:], data[:20])
		data = data[20:]
		es = append(es, entry{name: string(name), mode: cm, id: id})
	}
	// Names must be unique. In a tree in git order (every tree git
	// writes) equal names of the same kind are adjacent, and a file and a
	// directory of the same name are found by a binary search for the
	// file; any other tree is checked with a map.
	sorted := true
	for i := 1; i < len(es); i++ {
		if !gitLess(es[i-1], es[i]) {
			sorted = false
			break
		}
	}
	if sorted {
		for _, e := range es {
			if e.isTree() && findFile(es, e.name) >= 0 {
				return nil, fmt.Errorf("duplicate entry %q", e.name)
			}
		}
	} else if len(es) > 1 {
		seen := make(map[string]struct{}, len(es))
		for _, e := range es {
			if _, dup := seen[e.name]; dup {
				return nil, fmt.Errorf("duplicate entry %q", e.name)
			}
			seen[e.name] = struct{}{}
		}
	}
	return es, nil
}

// findFile returns the index of the non-tree entry called name in es (in
// git order), or -1.
func findFile(es []entry, name string) int {
	probe := entry{name: name, mode: modeFile}
	i := sort.Search(len(es), func(i int) bool { return !gitLess(es[i], probe) })
	if i < len(es) && es[i].name == name && !es[i].isTree() {
		return i
	}
	return -1
}

// gitCmp is gitLess as a three-way comparison.
func gitCmp(a, b entry) int {
	switch {
	case gitLess(a, b):
		return -1
	case gitLess(b, a):
		return 1
	}
	return 0
}

// gitLess orders entry names the way git writes trees: byte order, where a
// tree's name compares as if it ended in '/'.
func gitLess(a, b entry) bool {
	an, bn := a.name, b.name
	n := min(len(an), len(bn))
	if c := cmpString(an[:n], bn[:n]); c != 0 {
		return c < 0
	}
	ca, cb := nextByte(an, n, a.mode), nextByte(bn, n, b.mode)
	return ca < cb
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func nextByte(name string, n int, mode uint32) int {
	if n < len(name) {
		return int(name[n])
	}
	if mode == modeTree {
		return '/'
	}
	return 0
}

// encodeTree sorts es in git order and returns the raw tree bytes.
func encodeTree(es []entry) []byte {
	if !slices.IsSortedFunc(es, gitCmp) {
		slices.SortFunc(es, gitCmp)
	}
	size := 0
	for _, e := range es {
		size += 6 + 1 + len(e.name) + 1 + 20
	}
	buf := make([]byte, 0, size)
	for _, e := range es {
		buf = append(buf, modeString(e.mode)...)
		buf = append(buf, ' ')
		buf = append(buf, e.name...)
		buf = append(buf, 0)
		buf = append(buf, e.id[:]...)
	}
	return buf
}
