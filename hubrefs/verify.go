package hubrefs

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/receive/gitobj"
)

const sigBegin = "-----BEGIN SSH SIGNATURE-----\n"

// rawCommit is a commit object's body split into the parts events use.
type rawCommit struct {
	tree      plumbing.Hash
	parents   []plumbing.Hash
	author    []byte
	committer []byte
	sigs      int      // number of gpgsig headers
	sig       []byte   // unfolded value of the first gpgsig header, each line ending in \n
	raw       []byte   // the whole body
	drop      [][2]int // byte ranges of raw held by gpgsig and gpgsig-sha256 headers
	message   []byte   // everything after the blank line; nil if there is none
	hasBody   bool     // a blank line ended the headers
	// strict is empty when the headers are exactly tree, parent*, author,
	// committer, gpgsig? in that order; otherwise it says what is wrong.
	strict string
}

// parseCommit splits a commit body (the object's content, without the
// "commit <size>\0" prefix). The headers are read by gitobj.ParseCommit,
// git+'s one commit parser: a commit git would read differently, or that
// git fsck refuses, is an error (docs/objects.md). Shape problems for
// events (the stricter rules events follow) are left in strict.
func parseCommit(raw []byte) (*rawCommit, error) {
	gc, err := gitobj.ParseCommit(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrMalformed)
	}
	rc := &rawCommit{raw: raw, tree: gc.Tree, parents: gc.Parents, author: gc.Author, committer: gc.Committer, message: gc.Message, hasBody: gc.HasMessage}
	bad := func(format string, args ...any) {
		if rc.strict == "" {
			rc.strict = fmt.Sprintf(format, args...)
		}
	}
	// Ids as git writes them: lower-case hex (git reads either case).
	if n := len("tree \n") + 40 + len(rc.parents)*(len("parent \n")+40); bytes.ContainsAny(raw[:n], "ABCDEF") {
		bad("upper-case hex in the tree or parent lines")
	}
	for _, h := range gc.Extra {
		switch h.Name {
		case "gpgsig":
			rc.sigs++ // a second one is Verify's to refuse
			if rc.sigs == 1 {
				rc.sig = append(append(make([]byte, 0, len(h.Value)+1), h.Value...), '\n')
			}
		case "gpgsig-sha256":
			bad("unexpected header %q", h.Name)
		default:
			bad("unexpected header %.40q", h.Name)
			continue
		}
		rc.drop = append(rc.drop, [2]int{h.Start, h.End})
	}
	return rc, nil
}

// parseIdentTime returns the time of an ident "Name <email> <unix> <tz>".
func parseIdentTime(id []byte) (int64, bool) {
	lt := bytes.IndexByte(id, '<')
	gt := bytes.LastIndexByte(id, '>')
	if lt < 0 || gt < lt {
		return 0, false
	}
	rest := id[gt+1:]
	if len(rest) < 2 || rest[0] != ' ' {
		return 0, false
	}
	ts, tz, ok := bytes.Cut(rest[1:], []byte{' '})
	if !ok || len(tz) != 5 || (tz[0] != '+' && tz[0] != '-') {
		return 0, false
	}
	for _, c := range tz[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	t, err := strconv.ParseInt(string(ts), 10, 64)
	if err != nil || t < 0 {
		return 0, false
	}
	return t, true
}

// Verify checks git's SSH signature of a commit: raw is the commit object's
// content (no "commit <size>\0" prefix). The gpgsig header must hold exactly
// one armored SSHSIG block in namespace "git"; it is verified with the hash
// algorithm the signature names (sha256 or sha512) over raw without its
// gpgsig (and gpgsig-sha256) headers. It returns the signing key. Verify
// says nothing about whether the key is trusted.
func Verify(raw []byte) (PublicKey, error) {
	rc, err := parseCommit(raw)
	if err != nil {
		return nil, err
	}
	return verifyParsed(rc)
}

func verifyParsed(rc *rawCommit) (PublicKey, error) {
	return verifyWith(rc, nil)
}

// KeyCache remembers parsed public keys by their wire form within one read
// (events of a ref are signed by a handful of keys). It only saves parsing:
// every signature is still verified. A nil KeyCache parses every time.
type KeyCache map[string]*sshKey

// maxCachedKeys bounds a KeyCache.
const maxCachedKeys = 256

// Parse is ParsePublicKey, parsing each wire form once.
func (kc KeyCache) Parse(wire []byte) (PublicKey, error) {
	k, err := kc.parse(wire)
	if err != nil {
		return nil, err
	}
	return k, nil
}

func (kc KeyCache) parse(wire []byte) (*sshKey, error) {
	if pub, ok := kc[string(wire)]; ok {
		return pub, nil
	}
	pub, err := parseKey(wire)
	if err == nil && kc != nil && len(kc) < maxCachedKeys {
		kc[string(wire)] = pub
	}
	return pub, err
}

// sshString reads one SSH wire string (uint32 big-endian length, bytes).
func sshString(b []byte) (val, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	n := uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
	if n > uint64(len(b)-4) {
		return nil, nil, false
	}
	return b[4 : 4+n], b[4+n:], true
}

// appendSSHString appends v as an SSH wire string (uint32 big-endian
// length, bytes).
func appendSSHString[T string | []byte](b []byte, v T) []byte {
	n := len(v)
	b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	return append(b, v...)
}

// sshSig is a parsed SSHSIG blob (PROTOCOL.sshsig): the same checks as
// sshsig.ParseSignature, without reflection.
type sshSig struct {
	pub       *sshKey
	namespace string
	hash      string // "sha256" or "sha512"
	format    string // the signature's algorithm
	blob      []byte
}

// sigPEMType is the armor type of an SSH signature.
const sigPEMType = "SSH SIGNATURE"

func parseSSHSig(b []byte, kc KeyCache) (*sshSig, error) {
	const magic = "SSHSIG"
	if len(b) < len(magic)+4 || string(b[:len(magic)]) != magic {
		return nil, errors.New("invalid magic preamble")
	}
	b = b[len(magic):]
	if v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]); v != 1 {
		return nil, fmt.Errorf("unsupported signature version %d", v)
	}
	b = b[4:]
	var fields [5][]byte // public key, namespace, reserved, hash algorithm, signature
	for i := range fields {
		var ok bool
		if fields[i], b, ok = sshString(b); !ok {
			return nil, errors.New("truncated signature blob")
		}
	}
	if len(b) != 0 {
		return nil, errors.New("data after the signature blob")
	}
	out := &sshSig{namespace: string(fields[1]), hash: string(fields[3])}
	if out.hash != "sha256" && out.hash != "sha512" {
		return nil, fmt.Errorf("unsupported hash algorithm %q", out.hash)
	}
	format, rest, ok := sshString(fields[4])
	if !ok {
		return nil, errors.New("truncated signature")
	}
	blob, rest, ok := sshString(rest)
	if !ok {
		return nil, errors.New("truncated signature")
	}
	_ = rest // extra signature fields (security keys') are not read, as x/crypto's verifiers do not
	out.format, out.blob = string(format), blob
	pub, err := kc.parse(fields[0])
	if err != nil {
		return nil, err
	}
	if pub.Type() == KeyRSA && out.format != SigRSASHA256 && out.format != SigRSASHA512 {
		return nil, fmt.Errorf("invalid signature format %q: expected %q or %q", out.format, SigRSASHA256, SigRSASHA512)
	}
	out.pub = pub
	return out, nil
}

// verifyWith verifies rc's signature: the hash the signature names is taken
// over the body without its gpgsig headers, read in place (no copy), and the
// SSHSIG signed data is checked with the signing key.
func verifyWith(rc *rawCommit, kc KeyCache) (PublicKey, error) {
	switch {
	case rc.sigs == 0:
		return nil, fmt.Errorf("commit has no gpgsig header; sign it with an SSH key (gpg.format=ssh): %w", ErrUnsigned)
	case rc.sigs > 1:
		return nil, fmt.Errorf("commit has %d gpgsig headers, want exactly one: %w", rc.sigs, ErrBadSignature)
	}
	if !bytes.HasPrefix(rc.sig, []byte(sigBegin)) {
		if bytes.HasPrefix(rc.sig, []byte("-----BEGIN PGP")) {
			return nil, fmt.Errorf("commit is signed with OpenPGP, not SSH: %w", ErrBadSignature)
		}
		return nil, fmt.Errorf("commit signature is not an armored SSH signature: %w", ErrBadSignature)
	}
	sig, err := decodeSig(rc.sig, kc, "commit signature")
	if err != nil {
		return nil, err
	}
	return sig.check("commit signature", func(h hash.Hash) {
		at := 0
		for _, d := range rc.drop {
			h.Write(rc.raw[at:d[0]])
			at = d[1]
		}
		h.Write(rc.raw[at:])
	})
}

// decodeSig decodes armored, one SSH signature block of an SSHSIG in
// namespace "git"; what ("commit signature", "signature") names it in
// errors.
func decodeSig(armored []byte, kc KeyCache, what string) (*sshSig, error) {
	block, rest := pem.Decode(armored)
	if block == nil || block.Type != sigPEMType || len(block.Headers) != 0 {
		return nil, fmt.Errorf("%s is not a well-formed SSH signature block: %w", what, ErrBadSignature)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("%s holds more than one block, want exactly one: %w", what, ErrBadSignature)
	}
	sig, err := parseSSHSig(block.Bytes, kc)
	if err != nil {
		return nil, fmt.Errorf("%s does not parse as SSHSIG: %v: %w", what, err, ErrBadSignature)
	}
	if sig.namespace != SigNamespace {
		return nil, fmt.Errorf("%s is in namespace %q, want %q: %w", what, sig.namespace, SigNamespace, ErrBadSignature)
	}
	return sig, nil
}

// check verifies sig over the message message writes into the hash sig
// names, and returns its key; what names the signature in errors.
func (sig *sshSig) check(what string, message func(h hash.Hash)) (PublicKey, error) {
	var h hash.Hash
	if sig.hash == "sha256" {
		h = sha256.New()
	} else {
		h = sha512.New()
	}
	message(h)
	var sum [64]byte
	// The signed data of PROTOCOL.sshsig: "SSHSIG", namespace, reserved,
	// hash algorithm, H(message), each but the first an SSH string.
	msg := make([]byte, 0, 6+4+len(SigNamespace)+4+4+len(sig.hash)+4+len(sum))
	msg = append(msg, "SSHSIG"...)
	msg = appendSSHString(msg, SigNamespace)
	msg = appendSSHString(msg, "")
	msg = appendSSHString(msg, string(sig.hash))
	msg = appendSSHString(msg, string(h.Sum(sum[:0])))
	if err := sig.pub.verify(msg, sig.format, sig.blob); err != nil {
		return nil, fmt.Errorf("%s by %s key %s does not verify: %v: %w",
			what, sig.pub.Type(), Fingerprint(sig.pub), err, ErrBadSignature)
	}
	return sig.pub, nil
}
