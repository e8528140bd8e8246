package receive

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"

	"os"
	"runtime/debug"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// BuildID names the running code, for memos of what it computed (the idle
// queue pass's, `pr list`'s; docs/scale.md): the build information of the
// binary (module versions, VCS revision and state) and the executable's
// path, size and modification time, so that another build, a rebuilt
// binary included, is another name. nil when either cannot be read: no
// memo then.
var BuildID = sync.OnceValue(func() []byte {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return nil
	}
	h := sha256.New()
	h.Write([]byte(bi.String()))
	h.Write([]byte("\x00" + exe + "\x00" + strconv.FormatInt(fi.Size(), 10) + "\x00" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)))
	return h.Sum(nil)
})

// RefsDigest is what a memo of something computed from exactly refs is
// kept under (the idle pass's, `pr list`'s; docs/scale.md): SHA-256 over
// parts, each as its length (uvarint) and bytes, then the number of refs
// (uvarint) and every ref in name order as name, NUL, id.
func RefsDigest(parts []string, refs map[string]plumbing.Hash) [32]byte {
	size := 2 * binary.MaxVarintLen64
	for _, p := range parts {
		size += binary.MaxVarintLen64 + len(p)
	}
	names := make([]string, 0, len(refs))
	for n := range refs {
		names = append(names, n)
		size += len(n) + 1 + len(plumbing.ZeroHash)
	}
	slices.Sort(names)
	b := make([]byte, 0, size)
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		id := refs[n]
		b = append(append(append(b, n...), 0), id[:]...)
	}
	return sha256.Sum256(b)
}
