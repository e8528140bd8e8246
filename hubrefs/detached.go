package hubrefs

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/pem"
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
	block, rest := pem.Decode(armored)
	if block == nil || block.Type != sigPEMType || len(block.Headers) != 0 {
		return nil, fmt.Errorf("signature is not a well-formed SSH signature block: %w", ErrBadSignature)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("signature holds more than one block, want exactly one: %w", ErrBadSignature)
	}
	sig, err := parseSSHSig(block.Bytes, nil)
	if err != nil {
		return nil, fmt.Errorf("signature does not parse as SSHSIG: %v: %w", err, ErrBadSignature)
	}
	if sig.namespace != SigNamespace {
		return nil, fmt.Errorf("signature is in namespace %q, want %q: %w", sig.namespace, SigNamespace, ErrBadSignature)
	}
	var h hash.Hash = sha256.New()
	if sig.hash == "sha512" {
		h = sha512.New()
	}
	h.Write(msg)
	signed := append([]byte("SSHSIG"), appendSSHString(nil, SigNamespace)...)
	signed = appendSSHString(signed, "")
	signed = appendSSHString(signed, sig.hash)
	signed = appendSSHString(signed, h.Sum(nil))
	if err := sig.pub.verify(signed, sig.format, sig.blob); err != nil {
		return nil, fmt.Errorf("signature by %s key %s does not verify: %v: %w", sig.pub.Type(), Fingerprint(sig.pub), err, ErrBadSignature)
	}
	return sig.pub, nil
}
