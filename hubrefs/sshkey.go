package hubrefs

// SSH public keys and signature verification, without golang.org/x/crypto/ssh.
//
// Decisions:
//   - Verifying needs only the standard library: the hook links this package
//     on every push, and x/crypto/ssh (with its ciphers, key exchanges and
//     agent protocol) costs about 1.5 ms of process start-up on its own.
//     Signing (ssh-agent, private key files) lives in hubrefs/sshsign.
//   - PublicKey is the part of ssh.PublicKey that records need (Type,
//     Marshal), so an ssh.PublicKey is a PublicKey and code that signs can
//     pass its keys here unchanged. Keys compare by their wire form.
//   - The key types are those members may hold: ssh-ed25519,
//     ecdsa-sha2-nistp256/384/521 and ssh-rsa (rsa-sha2-256/512 signatures).
//     Parsing and verifying follow x/crypto/ssh exactly for these types (the
//     tests check both agree): the wire form is re-encoded canonically, an
//     RSA exponent must be odd, at least 3 and at most 24 bits, an RSA
//     modulus at most 16,384 bits, an ECDSA point uncompressed and on its
//     curve, and a short RSA signature is left-padded to the modulus size.
//     Other types (certificates, security keys, DSA) do not parse: an event
//     they sign is refused as badly signed.

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Key types.
const (
	KeyEd25519   = "ssh-ed25519"
	KeyECDSA256  = "ecdsa-sha2-nistp256"
	KeyECDSA384  = "ecdsa-sha2-nistp384"
	KeyECDSA521  = "ecdsa-sha2-nistp521"
	KeyRSA       = "ssh-rsa"
	SigRSASHA256 = "rsa-sha2-256"
	SigRSASHA512 = "rsa-sha2-512"
)

// PublicKey is an SSH public key: its type and its wire form (RFC 4253
// §6.6). Every ssh.PublicKey of x/crypto is one.
type PublicKey interface {
	Type() string
	Marshal() []byte
}

// sshKey is a parsed public key of one of the supported types.
type sshKey struct {
	typ  string
	wire []byte // canonical wire form
	ed   ed25519.PublicKey
	ec   *ecdsa.PublicKey
	rsa  *rsa.PublicKey
}

func (k *sshKey) Type() string    { return k.typ }
func (k *sshKey) Marshal() []byte { return bytes.Clone(k.wire) }

// ParsePublicKey parses a public key's wire form. Trailing bytes, unknown
// types and malformed keys are errors.
func ParsePublicKey(wire []byte) (PublicKey, error) {
	k, err := parseKey(wire)
	if err != nil {
		return nil, err
	}
	return k, nil
}

func parseKey(wire []byte) (*sshKey, error) {
	typ, rest, ok := sshString(wire)
	if !ok {
		return nil, errors.New("ssh: short read in public key")
	}
	k := &sshKey{typ: string(typ)}
	switch k.typ {
	case KeyEd25519:
		pub, r, ok := sshString(rest)
		if !ok {
			return nil, errors.New("ssh: short read in ed25519 public key")
		}
		if len(pub) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("ssh: invalid size %d for Ed25519 public key", len(pub))
		}
		if len(r) != 0 {
			return nil, errors.New("ssh: trailing junk in public key")
		}
		k.ed = ed25519.PublicKey(bytes.Clone(pub))
		k.wire = appendSSHString(appendSSHString(nil, k.typ), pub)
	case KeyECDSA256, KeyECDSA384, KeyECDSA521:
		curveName, r, ok := sshString(rest)
		if !ok {
			return nil, errors.New("ssh: short read in ecdsa public key")
		}
		if "ecdsa-sha2-"+string(curveName) != k.typ {
			return nil, fmt.Errorf("ssh: algorithm type mismatch: expected %q, found curve %q", k.typ, curveName)
		}
		point, r, ok := sshString(r)
		if !ok {
			return nil, errors.New("ssh: short read in ecdsa public key")
		}
		if len(r) != 0 {
			return nil, errors.New("ssh: trailing junk in public key")
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(curveOf(k.typ), point)
		if err != nil {
			return nil, errors.New("ssh: invalid curve point")
		}
		k.ec = pub
		k.wire = appendSSHString(appendSSHString(appendSSHString(nil, k.typ), curveName), point)
	case KeyRSA:
		e, r, err := parseMPInt(rest)
		if err != nil {
			return nil, err
		}
		n, r, err := parseMPInt(r)
		if err != nil {
			return nil, err
		}
		if len(r) != 0 {
			return nil, errors.New("ssh: trailing junk in public key")
		}
		if n.BitLen() > 16384 {
			return nil, errors.New("ssh: rsa modulus too large")
		}
		if e.BitLen() > 24 {
			return nil, errors.New("ssh: exponent too large")
		}
		if ev := e.Int64(); ev < 3 || ev&1 == 0 {
			return nil, errors.New("ssh: incorrect exponent")
		}
		k.rsa = &rsa.PublicKey{N: n, E: int(e.Int64())}
		k.wire = appendMPInt(appendMPInt(appendSSHString(nil, k.typ), e), n)
	default:
		return nil, fmt.Errorf("ssh: unsupported key type %q (git+ takes ed25519, ecdsa and rsa keys)", typ)
	}
	return k, nil
}

func curveOf(typ string) elliptic.Curve {
	switch typ {
	case KeyECDSA256:
		return elliptic.P256()
	case KeyECDSA384:
		return elliptic.P384()
	default:
		return elliptic.P521()
	}
}

// parseMPInt reads a non-negative SSH mpint (RFC 4251 §5).
func parseMPInt(b []byte) (*big.Int, []byte, error) {
	v, rest, ok := sshString(b)
	if !ok {
		return nil, nil, errors.New("ssh: short read in mpint")
	}
	if len(v) > 0 && v[0]&0x80 != 0 {
		return nil, nil, errors.New("ssh: negative mpint")
	}
	return new(big.Int).SetBytes(v), rest, nil
}

// appendMPInt appends the canonical encoding of a non-negative n.
func appendMPInt(b []byte, n *big.Int) []byte {
	v := n.Bytes()
	if len(v) > 0 && v[0]&0x80 != 0 {
		v = append([]byte{0}, v...)
	}
	return appendSSHString(b, v)
}

// verify checks a signature of data in format with blob, as x/crypto's
// PublicKey.Verify does for the key's type.
func (k *sshKey) verify(data []byte, format string, blob []byte) error {
	switch k.typ {
	case KeyEd25519:
		if format != k.typ {
			return fmt.Errorf("ssh: signature type %q for key type %q", format, k.typ)
		}
		if !ed25519.Verify(k.ed, data, blob) {
			return errors.New("ssh: signature did not verify")
		}
		return nil
	case KeyECDSA256, KeyECDSA384, KeyECDSA521:
		if format != k.typ {
			return fmt.Errorf("ssh: signature type %q for key type %q", format, k.typ)
		}
		var digest []byte
		switch k.typ {
		case KeyECDSA256:
			d := sha256.Sum256(data)
			digest = d[:]
		case KeyECDSA384:
			d := sha512.Sum384(data)
			digest = d[:]
		default:
			d := sha512.Sum512(data)
			digest = d[:]
		}
		r, rest, err := parseSigInt(blob)
		if err != nil {
			return err
		}
		s, rest, err := parseSigInt(rest)
		if err != nil {
			return err
		}
		if len(rest) != 0 {
			return errors.New("ssh: trailing data in ecdsa signature")
		}
		if !ecdsa.Verify(k.ec, digest, r, s) {
			return errors.New("ssh: signature did not verify")
		}
		return nil
	case KeyRSA:
		var h crypto.Hash
		var digest []byte
		switch format {
		case SigRSASHA256:
			d := sha256.Sum256(data)
			h, digest = crypto.SHA256, d[:]
		case SigRSASHA512:
			d := sha512.Sum512(data)
			h, digest = crypto.SHA512, d[:]
		default:
			return fmt.Errorf("ssh: signature type %q for key type %q", format, k.typ)
		}
		if size := k.rsa.Size(); len(blob) < size {
			padded := make([]byte, size)
			copy(padded[size-len(blob):], blob)
			blob = padded
		}
		return rsa.VerifyPKCS1v15(k.rsa, h, digest, blob)
	}
	return fmt.Errorf("ssh: unsupported key type %q", k.typ)
}

// parseSigInt reads an mpint of an ECDSA signature; x/crypto reads these
// as signed integers, and ecdsa.Verify refuses zero or negative values.
func parseSigInt(b []byte) (*big.Int, []byte, error) {
	v, rest, ok := sshString(b)
	if !ok {
		return nil, nil, errors.New("ssh: short read in ecdsa signature")
	}
	n := new(big.Int).SetBytes(v)
	if len(v) > 0 && v[0]&0x80 != 0 {
		// two's complement negative: never a valid r or s
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(v))))
	}
	return n, rest, nil
}

// SameKey reports whether a and b are the same public key.
func SameKey(a, b PublicKey) bool {
	if a == nil || b == nil {
		return false
	}
	return bytes.Equal(a.Marshal(), b.Marshal())
}

// Fingerprint is the key's SHA256 fingerprint as ssh-keygen -l prints it
// ("SHA256:" and unpadded base64).
func Fingerprint(pub PublicKey) string {
	sum := sha256.Sum256(pub.Marshal())
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// AuthorizedKey renders pub as an authorized_keys line without comment or
// newline ("ssh-ed25519 AAAA...").
func AuthorizedKey(pub PublicKey) string {
	return pub.Type() + " " + base64.StdEncoding.EncodeToString(pub.Marshal())
}

// ParseAuthorizedKeyLine parses "<type> <base64> [comment]" as x/crypto's
// ParseAuthorizedKey reads a line without options: the first field is
// skipped, the second is the key's wire form in base64, the rest is the
// comment (trimmed).
func ParseAuthorizedKeyLine(line string) (PublicKey, string, error) {
	line = strings.TrimSpace(line)
	i := strings.IndexAny(line, " \t")
	if i < 0 {
		return nil, "", errors.New("ssh: no key found")
	}
	rest := strings.TrimLeft(line[i:], " \t")
	b64, comment := rest, ""
	if j := strings.IndexAny(rest, " \t"); j >= 0 {
		b64, comment = rest[:j], strings.TrimSpace(rest[j:])
	}
	wire, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, "", fmt.Errorf("ssh: key is not base64: %w", err)
	}
	k, err := parseKey(wire)
	if err != nil {
		return nil, "", err
	}
	return k, comment, nil
}

// ParseAuthorizedKey parses one authorized_keys line (options and comment
// allowed, as in member.added's "key"): the key starts at the first field
// that names a supported key type and parses with the field after it.
func ParseAuthorizedKey(line string) (PublicKey, error) {
	if k, _, err := ParseAuthorizedKeyLine(line); err == nil {
		return k, nil
	}
	fields := strings.Fields(line)
	for i := 0; i+1 < len(fields); i++ {
		switch fields[i] {
		case KeyEd25519, KeyECDSA256, KeyECDSA384, KeyECDSA521, KeyRSA:
			if k, _, err := ParseAuthorizedKeyLine(strings.Join(fields[i:], " ")); err == nil {
				return k, nil
			}
		}
	}
	return nil, fmt.Errorf("parsing authorized key %q: not an ed25519, ecdsa or rsa key line: %w", line, ErrKey)
}
