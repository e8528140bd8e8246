package hubrefs

import (
	"bytes"
	"fmt"
	"hash"
)

// VerifyDetached checks an armored SSH signature (one "-----BEGIN SSH
// SIGNATURE-----" block) over msg in namespace "git", as git writes for a
// signed push certificate (docs/serving.md). It returns the signing key and
// says nothing about whether the key is trusted.
func VerifyDetached(msg, armored []byte) (PublicKey, error) {
	if !bytes.HasPrefix(armored, []byte(sigBegin)) {
		return nil, fmt.Errorf("signature is not an armored SSH signature (sign with gpg.format=ssh): %w", ErrBadSignature)
	}
	sig, err := decodeSig(armored, nil, "signature")
	if err != nil {
		return nil, err
	}
	return sig.check("signature", func(h hash.Hash) { h.Write(msg) })
}
