package receive

// The fold cache (docs/foldcache.md): results of folding hub refs, keyed by
// each hub ref's tip id, and merge facts, kept under the git directory so
// the hook's cost does not grow with history. It is trusted state, exactly
// like the git directory it lives in: a well-formed entry (a merge fact,
// the trust state) is believed whole, so whoever can write here can change
// verdicts, as whoever can write refs can. git never transfers it (clone
// and fetch carry objects and refs only), and git+ verify reaches every
// verdict without it. A missing, unreadable or damaged entry reads as a
// miss and the fold is recomputed.
//
// Layout: <gitdir>/gitplus/foldcache/<40 hex digits>, one flat directory
// (no fan-out as in objects/: creating a fan-out directory costs more than
// the entry on some file systems, and the cache holds one entry per hub ref
// tip seen, not one per object).
// Each file is a 32-byte SHA-256 of (key id, content) followed by the content;
// a file whose checksum does not match is a miss. Files are written to a
// temporary name in the same directory and renamed into place, so a reader
// never sees a partial entry and concurrent hooks writing the same key are
// harmless. Write failures (read-only git directory, full disk) are ignored:
// a missing entry only costs time.

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/receive/gitio"
)

// FoldCacheDir is the cache's directory relative to the git directory.
const FoldCacheDir = "gitplus/foldcache"

// maxCacheEntry bounds what Get reads: an entry larger than this is ignored.
const maxCacheEntry = 64 << 20

// DirCache is a policy fold cache stored as files under a git directory.
// The zero value is unusable; use NewDirCache. It is safe for concurrent use
// by several goroutines and processes.
type DirCache struct {
	dir string
}

// NewDirCache returns the fold cache of the git directory gitDir. Nothing is
// created until the first Put.
func NewDirCache(gitDir string) *DirCache {
	return &DirCache{dir: filepath.Join(gitDir, filepath.FromSlash(FoldCacheDir))}
}

// Dir is the directory holding the entries.
func (c *DirCache) Dir() string { return c.dir }

func (c *DirCache) path(h plumbing.Hash) string {
	return filepath.Join(c.dir, h.String())
}

func cacheSum(h plumbing.Hash, data []byte) [sha256.Size]byte {
	d := sha256.New()
	d.Write(h[:])
	d.Write(data)
	var sum [sha256.Size]byte
	copy(sum[:], d.Sum(nil))
	return sum
}

// Get returns the entry stored for h; false when there is none or it is
// damaged.
func (c *DirCache) Get(h plumbing.Hash) ([]byte, bool) {
	if c == nil || h.IsZero() {
		return nil, false
	}
	// One stat sizes the buffer: a large entry (a queue state, the pull
	// request view: megabytes at 10,000 entries) is then read into one
	// buffer instead of growing one 4× at a time; a missing entry costs
	// the stat alone.
	p := c.path(h)
	fi, err := os.Stat(p)
	if err != nil || fi.Size() > maxCacheEntry {
		return nil, false
	}
	buf, err := gitio.ReadFile(p, int(fi.Size())+1, maxCacheEntry)
	if err != nil || len(buf) < sha256.Size {
		return nil, false
	}
	sum := cacheSum(h, buf[sha256.Size:])
	if !bytes.Equal(sum[:], buf[:sha256.Size]) {
		return nil, false
	}
	return buf[sha256.Size:], true
}

// FreshGets marks DirCache as a policy.FreshCache: Get reads each file into
// a new buffer and keeps no reference to it, so a decoder may use it as the
// bytes of the strings it returns (docs/scale.md).
func (c *DirCache) FreshGets() {}

// Drop deletes the entry for h, if any (policy.Dropper: the hook drops a hub
// ref's old tip once the ref has moved on). Errors are ignored.
func (c *DirCache) Drop(h plumbing.Hash) {
	if c == nil || h.IsZero() {
		return
	}
	_ = os.Remove(c.path(h))
}

// Put stores data for h, atomically; errors are ignored (see the file
// comment).
func (c *DirCache) Put(h plumbing.Hash, data []byte) {
	_ = c.put(h, data)
}

func (c *DirCache) put(h plumbing.Hash, data []byte) error {
	if c == nil || h.IsZero() || len(data) > maxCacheEntry-sha256.Size {
		return nil
	}
	p := c.path(h)
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sum := cacheSum(h, data)
	return gitio.WriteFileAtomic(p, ".tmp-*", 0, sum[:], data)
}
