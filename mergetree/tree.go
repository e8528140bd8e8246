package mergetree

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/receive/gitobj"
)

// Modes: the five a tree may hold (gitobj refuses any other, see
// docs/objects.md). Trees are written with exactly these strings ("40000",
// not "040000").
const (
	modeNone    uint32 = 0
	modeTree           = gitobj.ModeTree
	modeFile           = gitobj.ModeFile
	modeExec           = gitobj.ModeExec
	modeSymlink        = gitobj.ModeSymlink
	modeGitlink        = gitobj.ModeGitlink
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

// parseTree decodes raw tree bytes with gitobj.WalkTree, which refuses
// every tree git would read differently or git fsck refuses (see
// docs/objects.md): a tree it cannot trust is an error, never a partial
// tree. Modes are the five git writes, so they need no canonicalizing.
func parseTree(data []byte) ([]entry, error) {
	es := make([]entry, 0, bytes.Count(data, []byte{0}))
	err := gitobj.WalkTree(data, func(mode uint32, name, id []byte) error {
		e := entry{name: string(name), mode: mode}
		copy(e.id[:], id)
		es = append(es, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return es, nil
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
