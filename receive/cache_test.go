package receive

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/matryer/is"

	"github.com/gitplus/gitplus/policy"
)

var (
	_ policy.Cache   = (*DirCache)(nil)
	_ policy.Dropper = (*DirCache)(nil)
)

func TestDirCache(t *testing.T) {
	is := is.New(t)
	gitDir := t.TempDir()
	c := NewDirCache(gitDir)
	a, b := plumbing.Hash{1, 2, 3}, plumbing.Hash{4, 5, 6}

	_, ok := c.Get(a)
	is.True(!ok) // nothing yet, and nothing created
	_, err := os.Stat(c.Dir())
	is.True(os.IsNotExist(err))

	big := bytes.Repeat([]byte("x"), 20000) // longer than the first read buffer
	c.Put(a, []byte("entry a"))
	c.Put(b, big)
	got, ok := c.Get(a)
	is.True(ok)
	is.Equal(string(got), "entry a")
	got, ok = c.Get(b)
	is.True(ok)
	is.True(bytes.Equal(got, big))
	is.Equal(filepath.Dir(c.path(a)), c.Dir()) // one flat directory

	// An entry copied under another key, or damaged, reads as a miss.
	raw, err := os.ReadFile(c.path(a))
	is.NoErr(err)
	is.NoErr(os.WriteFile(c.path(b), raw, 0o644))
	_, ok = c.Get(b)
	is.True(!ok)
	raw[len(raw)-1] ^= 1
	is.NoErr(os.WriteFile(c.path(a), raw, 0o644))
	_, ok = c.Get(a)
	is.True(!ok)
	is.NoErr(os.WriteFile(c.path(a), []byte("short"), 0o644))
	_, ok = c.Get(a)
	is.True(!ok)

	// Drop removes an entry; dropping what is not there is harmless.
	c.Put(a, []byte("again"))
	c.Drop(a)
	_, ok = c.Get(a)
	is.True(!ok)
	c.Drop(a)
	c.Drop(plumbing.ZeroHash)

	// The zero key and a nil cache store nothing and fail nothing.
	c.Put(plumbing.ZeroHash, []byte("zero"))
	_, ok = c.Get(plumbing.ZeroHash)
	is.True(!ok)
	var none *DirCache
	none.Put(a, []byte("x"))
	none.Drop(a)
	_, ok = none.Get(a)
	is.True(!ok)

	// No temporary files are left behind.
	left, err := filepath.Glob(filepath.Join(c.Dir(), ".tmp-*"))
	is.NoErr(err)
	is.Equal(len(left), 0)
}
