package hubrefs

import (
	"crypto/ed25519"
	"sync"
	"sync/atomic"

	"github.com/gitplus/gitplus/hubrefs/edverify"
)

// Ed25519 keys that sign many events are verified with a precomputed table
// (package edverify: the verdicts of crypto/ed25519.Verify, about four
// times faster, docs/scale.md). A table costs ~2.5 ms and ~0.5 MiB to
// build, so a key gets one only once it has verified fastAfter signatures
// in this process: a hook judging a few events never builds one, a cold
// read of a long log or an audit builds one per signer.
const (
	fastAfter    = 128  // verifications by a key before its table is built
	maxFastKeys  = 32   // tables kept per process
	maxFastSeen  = 4096 // keys counted per process; others always use crypto/ed25519
	fastKeyBytes = ed25519.PublicKeySize
)

// fastEntry counts a key's verifications and holds its table once built.
type fastEntry struct {
	n    atomic.Int64
	once sync.Once
	key  *edverify.Key // nil until built, or when no table may be built
}

var (
	fastKeys   sync.Map // string(public key) → *fastEntry
	fastSeen   atomic.Int64
	fastTables atomic.Int64
)

// fastEntryFor returns the process's entry for an Ed25519 public key, nil
// when too many keys were seen.
func fastEntryFor(pub []byte) *fastEntry {
	if e, ok := fastKeys.Load(string(pub)); ok {
		return e.(*fastEntry)
	}
	if fastSeen.Load() >= maxFastSeen {
		return nil
	}
	e, loaded := fastKeys.LoadOrStore(string(pub), &fastEntry{})
	if !loaded {
		fastSeen.Add(1)
	}
	return e.(*fastEntry)
}

// verifyEd25519 is ed25519.Verify(pub, msg, sig), through e's table when
// the key has earned one.
func verifyEd25519(e *fastEntry, pub ed25519.PublicKey, msg, sig []byte) bool {
	if e != nil && e.n.Add(1) > fastAfter {
		e.once.Do(func() {
			if fastTables.Add(1) > maxFastKeys {
				return
			}
			if k, err := edverify.NewKey(pub); err == nil {
				e.key = k
			}
		})
		if e.key != nil {
			return e.key.Verify(msg, sig)
		}
	}
	return ed25519.Verify(pub, msg, sig)
}
