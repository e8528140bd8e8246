package hubrefs

// The armor of an SSH signature exactly as ssh-keygen writes it
// (docs/serving.md "Replayed certificates").
//
// Decisions:
//   - ssh-keygen -Y sign writes "-----BEGIN SSH SIGNATURE-----\n", the
//     signature blob in standard padded base64 cut into lines of 70
//     characters (the last one shorter or equal, never empty), each ending
//     in "\n", and "-----END SSH SIGNATURE-----\n". git 2.39 stores that
//     file's bytes unchanged at the end of a push certificate.
//   - CanonicalSignature accepts exactly that layout and nothing else: other
//     line lengths, blank lines, spaces, headers, padding variants or bytes
//     after the END line are refused. PEM decoders accept all of those, so
//     every one of them is a way to change a certificate's bytes without
//     touching what its signature covers.

import (
	"bytes"
	"encoding/base64"
	"fmt"
)

// sigEnd ends an armored SSH signature.
const sigEnd = "-----END SSH SIGNATURE-----\n"

// armorLine is the length of ssh-keygen's base64 lines.
const armorLine = 70

// ArmorSignature armors an SSHSIG blob as ssh-keygen does.
func ArmorSignature(blob []byte) []byte {
	enc := base64.StdEncoding.EncodedLen(len(blob))
	out := make([]byte, 0, len(sigBegin)+enc+enc/armorLine+1+len(sigEnd))
	out = append(out, sigBegin...)
	b64 := make([]byte, enc)
	base64.StdEncoding.Encode(b64, blob)
	for len(b64) > 0 {
		n := min(armorLine, len(b64))
		out = append(out, b64[:n]...)
		out = append(out, '\n')
		b64 = b64[n:]
	}
	return append(out, sigEnd...)
}

// CanonicalSignature returns the SSHSIG blob of armored if armored is
// exactly ArmorSignature of it, and an error wrapping ErrBadSignature
// otherwise. It does not parse or verify the blob.
func CanonicalSignature(armored []byte) ([]byte, error) {
	if !bytes.HasPrefix(armored, []byte(sigBegin)) {
		return nil, fmt.Errorf("the signature does not start with %q (sign with gpg.format=ssh): %w", sigBegin[:len(sigBegin)-1], ErrBadSignature)
	}
	body := armored[len(sigBegin):]
	end := bytes.Index(body, []byte(sigEnd))
	if end < 0 {
		return nil, fmt.Errorf("the signature has no %q line: %w", sigEnd[:len(sigEnd)-1], ErrBadSignature)
	}
	if end+len(sigEnd) != len(body) {
		return nil, fmt.Errorf("%d bytes follow the signature's END line: %w", len(body)-end-len(sigEnd), ErrBadSignature)
	}
	body = body[:end]
	b64 := make([]byte, 0, len(body))
	for len(body) > 0 {
		line, rest, ok := bytes.Cut(body, []byte("\n"))
		if !ok || len(line) == 0 || len(line) > armorLine || (len(rest) > 0 && len(line) != armorLine) {
			return nil, fmt.Errorf("the signature's base64 is not in lines of %d characters as ssh-keygen writes them: %w", armorLine, ErrBadSignature)
		}
		b64 = append(b64, line...)
		body = rest
	}
	blob := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
	n, err := base64.StdEncoding.Strict().Decode(blob, b64)
	if err != nil {
		return nil, fmt.Errorf("the signature's base64 does not decode: %v: %w", err, ErrBadSignature)
	}
	blob = blob[:n]
	if len(blob) == 0 || base64.StdEncoding.EncodeToString(blob) != string(b64) {
		return nil, fmt.Errorf("the signature's base64 is not in canonical form: %w", ErrBadSignature)
	}
	return blob, nil
}
