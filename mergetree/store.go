package mergetree

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Sentinel errors callers branch on. Errors returned by this package wrap
// them with %w and name the object at fault.
var (
	// ErrMissingObject: an object the merge needs cannot be read. A merge
	// never reads "missing" as "absent": it fails instead of returning a
	// partial tree.
	ErrMissingObject = errors.New("missing object")
	// ErrUnrelated: the two commits have no common ancestor.
	ErrUnrelated = errors.New("unrelated histories")
	// ErrCorrupt: an object has the wrong type or cannot be parsed.
	ErrCorrupt = errors.New("corrupt object")
)

// Store is the read side of an object database: all mergetree needs.
// ReadObject returns the object's type and its content (without the
// "<type> <size>\0" header). A missing object must be reported with an error
// wrapping ErrMissingObject. The returned bytes are not modified by
// mergetree, and a Store may return shared buffers.
type Store interface {
	ReadObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error)
}

// HeaderReader is an optional extension of Store: ReadObjectHeader returns
// an object's type and a prefix of its content that holds at least its
// header (everything up to and including the first blank line), or all of
// it. Commits are read through it when the Store has it, so the merge-base
// walk need not inflate commit messages. On any error the merge reads the
// object again with ReadObject, which reports the fault.
type HeaderReader interface {
	ReadObjectHeader(h plumbing.Hash) (plumbing.ObjectType, []byte, error)
}

// PrefixReader is an optional extension of Store: ReadObjectPrefix returns
// an object's type and its first n bytes (all of it when shorter), which
// need not be checked against the rest of the object. When the Store has
// it, a content merge first reads the first 8000 bytes of each version, and
// when one is binary (git's test) reports the binary conflict without
// reading any version whole: a conflict builds nothing from the bytes. On
// any error the merge reads the objects with ReadObject, which reports the
// fault. See docs/objects.md, "Reading large objects".
type PrefixReader interface {
	ReadObjectPrefix(h plumbing.Hash, n int) (plumbing.ObjectType, []byte, error)
}

// ObjectWriter stores new objects. It is used only in builder mode
// (Options.Writer); the verifier hashes results in memory and writes nothing.
type ObjectWriter interface {
	WriteObject(t plumbing.ObjectType, content []byte) (plumbing.Hash, error)
}

// GoGitStore adapts a go-git storer.EncodedObjectStorer (a repository's
// filesystem storage, memory storage, or a layered quarantine store) to
// Store and ObjectWriter.
type GoGitStore struct {
	S storer.EncodedObjectStorer
}

// NewGoGitStore returns a Store (and ObjectWriter) over s.
func NewGoGitStore(s storer.EncodedObjectStorer) *GoGitStore { return &GoGitStore{S: s} }

// ReadObject implements Store.
func (g *GoGitStore) ReadObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	obj, err := g.S.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return plumbing.InvalidObject, nil, fmt.Errorf("%w: %s", ErrMissingObject, h)
		}
		return plumbing.InvalidObject, nil, fmt.Errorf("read object %s: %w", h, err)
	}
	r, err := obj.Reader()
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("read object %s: %w", h, err)
	}
	defer r.Close()
	size := obj.Size()
	if size < 0 || size > 1<<40 {
		return plumbing.InvalidObject, nil, fmt.Errorf("%w: %s has size %d", ErrCorrupt, h, size)
	}
	// The size comes from the object's header: believe it up to a ceiling
	// and let the data prove the rest (docs/objects.md, "Reading large
	// objects").
	var buf bytes.Buffer
	buf.Grow(int(min(size+bytes.MinRead, maxTrustedSize))) // MinRead: room to see the end without growing
	if _, err := buf.ReadFrom(io.LimitReader(r, size+1)); err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("read object %s: %w", h, err)
	}
	if int64(buf.Len()) != size {
		return plumbing.InvalidObject, nil, fmt.Errorf("%w: %s has %d bytes, its header says %d", ErrCorrupt, h, buf.Len(), size)
	}
	return obj.Type(), buf.Bytes(), nil
}

// WriteObject implements ObjectWriter.
func (g *GoGitStore) WriteObject(t plumbing.ObjectType, content []byte) (plumbing.Hash, error) {
	obj := g.S.NewEncodedObject()
	obj.SetType(t)
	obj.SetSize(int64(len(content)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write %s object: %w", t, err)
	}
	if _, err := w.Write(content); err != nil {
		w.Close()
		return plumbing.ZeroHash, fmt.Errorf("write %s object: %w", t, err)
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write %s object: %w", t, err)
	}
	h, err := g.S.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write %s object %s: %w", t, obj.Hash(), err)
	}
	return h, nil
}

// maxTrustedSize is the most an object's header makes ReadObject allocate
// before reading.
const maxTrustedSize = 256 << 20

// hashObject is git's object id of content of type t.
func hashObject(t plumbing.ObjectType, content []byte) plumbing.Hash {
	return plumbing.ComputeHash(t, content)
}
