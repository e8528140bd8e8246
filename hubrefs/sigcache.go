package hubrefs

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// VerifiedCache is an opt-in record of signatures already verified, keyed
// by content: the SHA-256 of an event's whole commit body (headers,
// gpgsig and message), mapped to the key whose signature verified over it.
// A hit therefore means these exact bytes were verified before, so the
// signature check is skipped; every other check of Decode still runs.
// Misses are verified and recorded; failures are never recorded.
//
// Only ReadLogWith consults it, and only when given one:
// ReadLog, ReadNew, ReadEvent and Decode always verify. A VerifiedCache
// vouches for signatures, so whoever can write it can make a read accept a
// forged event: load a persisted one (ReadVerifiedCache) only from where
// only the repository's owner writes (under the git directory), and never
// from a push or a remote. It is safe for concurrent use.
type VerifiedCache struct {
	mu sync.RWMutex
	m  map[[32]byte]PublicKey
}

// NewVerifiedCache returns an empty cache.
func NewVerifiedCache() *VerifiedCache {
	return &VerifiedCache{m: map[[32]byte]PublicKey{}}
}

// Len is the number of signatures recorded.
func (vc *VerifiedCache) Len() int {
	vc.mu.RLock()
	defer vc.mu.RUnlock()
	return len(vc.m)
}

// contentKey is the cache key of a commit body.
func contentKey(raw []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte("gitplus verified commit\x00"))
	h.Write(raw)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (vc *VerifiedCache) lookup(k [32]byte) (PublicKey, bool) {
	vc.mu.RLock()
	defer vc.mu.RUnlock()
	pub, ok := vc.m[k]
	return pub, ok
}

func (vc *VerifiedCache) add(k [32]byte, pub PublicKey) {
	vc.mu.Lock()
	vc.m[k] = pub
	vc.mu.Unlock()
}

// verifier verifies signatures for one goroutine: a key cache, and the
// caller's VerifiedCache if any.
type verifier struct {
	kc KeyCache
	vc *VerifiedCache
}

func (v *verifier) verify(rc *rawCommit) (PublicKey, error) {
	if v == nil {
		return verifyWith(rc, nil)
	}
	if v.vc == nil {
		return verifyWith(rc, v.kc)
	}
	k := contentKey(rc.raw)
	if pub, ok := v.vc.lookup(k); ok {
		return pub, nil
	}
	pub, err := verifyWith(rc, v.kc)
	if err == nil {
		v.vc.add(k, pub)
	}
	return pub, err
}

// ReadLogWith is ReadLog consulting and filling vc (see VerifiedCache); a
// nil vc is ReadLog.
func ReadLogWith(store storer.EncodedObjectStorer, tip plumbing.Hash, c Ceilings, vc *VerifiedCache) ([]Event, error) {
	c = c.norm()
	if tip.IsZero() {
		return nil, nil // an absent ref holds no events
	}
	evs, err := walkDecode(store, tip, c, "hub log at "+tip.String(), vc)
	if err != nil {
		return nil, err
	}
	return CausalOrder(evs)
}

const verifiedMagic = "gitplus verified signatures v1\n"

// WriteTo writes the cache in a form ReadVerifiedCache reads: a header line,
// then per entry the 32-byte key, a big-endian uint32 length and the signing
// key in SSH wire form.
func (vc *VerifiedCache) WriteTo(w io.Writer) (int64, error) {
	vc.mu.RLock()
	defer vc.mu.RUnlock()
	bw := bufio.NewWriter(w)
	n, _ := bw.WriteString(verifiedMagic)
	total := int64(n)
	for k, pub := range vc.m {
		wire := pub.Marshal()
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(wire)))
		bw.Write(k[:])
		bw.Write(l[:])
		bw.Write(wire)
		total += int64(len(k) + len(l) + len(wire))
	}
	return total, bw.Flush()
}

// ReadVerifiedCache reads what WriteTo wrote, at most max entries (0: no
// bound). Anything malformed is an error; the caller then starts from an
// empty cache (see VerifiedCache on where a cache may come from).
func ReadVerifiedCache(r io.Reader, max int) (*VerifiedCache, error) {
	br := bufio.NewReader(r)
	head := make([]byte, len(verifiedMagic))
	if _, err := io.ReadFull(br, head); err != nil || string(head) != verifiedMagic {
		return nil, fmt.Errorf("not a verified-signature cache: %w", ErrMalformed)
	}
	vc := NewVerifiedCache()
	kc := KeyCache{}
	for {
		var k [32]byte
		if _, err := io.ReadFull(br, k[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return vc, nil
			}
			return nil, fmt.Errorf("verified-signature cache: %v: %w", err, ErrMalformed)
		}
		if max > 0 && len(vc.m) >= max {
			return nil, fmt.Errorf("verified-signature cache holds more than %d entries: %w", max, ErrCeiling)
		}
		var l [4]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			return nil, fmt.Errorf("verified-signature cache: %v: %w", err, ErrMalformed)
		}
		n := binary.BigEndian.Uint32(l[:])
		if n > 16<<10 {
			return nil, fmt.Errorf("verified-signature cache: key of %d bytes: %w", n, ErrMalformed)
		}
		wire := make([]byte, n)
		if _, err := io.ReadFull(br, wire); err != nil {
			return nil, fmt.Errorf("verified-signature cache: %v: %w", err, ErrMalformed)
		}
		pub, err := kc.parse(wire)
		if err != nil {
			return nil, fmt.Errorf("verified-signature cache: %v: %w", err, ErrMalformed)
		}
		vc.m[k] = pub
	}
}
