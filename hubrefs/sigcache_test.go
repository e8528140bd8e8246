package hubrefs

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/matryer/is"
)

func TestReadLogWithVerifiedCache(t *testing.T) {
	is := is.New(t)
	st := newMemStore()
	root := put(t, st, 10)
	a := put(t, st, 20, root)
	tip := put(t, st, 30, a)

	plain, err := ReadLog(st, tip, Ceilings{})
	is.NoErr(err)
	vc := NewVerifiedCache()
	for round := 0; round < 2; round++ { // cold, then every signature a hit
		got, err := ReadLogWith(st, tip, Ceilings{}, vc)
		is.NoErr(err)
		is.Equal(len(got), len(plain))
		for i := range got {
			is.Equal(got[i].ID, plain[i].ID)
			is.Equal(string(got[i].Payload), string(plain[i].Payload))
			is.True(SameKey(got[i].Signer, plain[i].Signer))
		}
		is.Equal(vc.Len(), 3)
	}

	// The cache is keyed by content, not by id: a store handing out other
	// bytes under a cached id (corruption, a lying store) is verified and
	// refused.
	obj, err := st.EncodedObject(plumbing.CommitObject, a)
	is.NoErr(err)
	raw := rawOf(t, obj)
	forged := bytes.Replace(raw, []byte(`"thread":"t`), []byte(`"thread":"t1`), 1)
	is.True(!bytes.Equal(forged, raw))
	m := &plumbing.MemoryObject{}
	m.SetType(plumbing.CommitObject)
	m.Write(forged)
	st.objs[a] = lyingObject{m, a}
	_, err = ReadLogWith(st, tip, Ceilings{}, vc)
	is.True(errors.Is(err, ErrBadSignature))
	_, err = ReadLog(st, tip, Ceilings{})
	is.True(errors.Is(err, ErrBadSignature))

	// Round trip through WriteTo / ReadVerifiedCache.
	var buf bytes.Buffer
	_, err = vc.WriteTo(&buf)
	is.NoErr(err)
	back, err := ReadVerifiedCache(bytes.NewReader(buf.Bytes()), 0)
	is.NoErr(err)
	is.Equal(back.Len(), vc.Len())
	for k, pub := range vc.m {
		is.True(SameKey(back.m[k], pub))
	}
	_, err = ReadVerifiedCache(bytes.NewReader(buf.Bytes()), 2)
	is.True(errors.Is(err, ErrCeiling))
	_, err = ReadVerifiedCache(bytes.NewReader(buf.Bytes()[:buf.Len()-1]), 0)
	is.True(errors.Is(err, ErrMalformed))
	_, err = ReadVerifiedCache(bytes.NewReader([]byte("junk")), 0)
	is.True(errors.Is(err, ErrMalformed))
}

// lyingObject reports an id that is not the hash of its content.
type lyingObject struct {
	*plumbing.MemoryObject
	id plumbing.Hash
}

func (o lyingObject) Hash() plumbing.Hash { return o.id }
