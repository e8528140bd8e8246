package hubrefs

import (
	"bytes"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

const sigBegin = "-----BEGIN SSH SIGNATURE-----\n"

// rawCommit is a commit object's body split into the parts events use.
type rawCommit struct {
	tree      plumbing.Hash
	parents   []plumbing.Hash
	author    []byte
	committer []byte
	sigs      int    // number of gpgsig headers
	sig       []byte // unfolded value of the first gpgsig header, each line ending in \n
	signed    []byte // the body without gpgsig and gpgsig-sha256 headers
	message   []byte // everything after the blank line; nil if there is none
	hasBody   bool   // a blank line ended the headers
	// strict is empty when the headers are exactly tree, parent*, author,
	// committer, gpgsig? in that order; otherwise it says what is wrong.
	strict string
}

// parseCommit splits a commit body (the object's content, without the
// "commit <size>\0" prefix). It fails only when the header block itself is
// broken; shape problems for events are left in strict.
func parseCommit(raw []byte) (*rawCommit, error) {
	rc := &rawCommit{}
	signed := make([]byte, 0, len(raw))
	// state: 0 expect tree, 1 parents or author, 2 committer, 3 gpgsig or end, 4 end
	state := 0
	bad := func(format string, args ...any) {
		if rc.strict == "" {
			rc.strict = fmt.Sprintf(format, args...)
		}
	}
	pos := 0
	for pos < len(raw) {
		if raw[pos] == '\n' {
			signed = append(signed, raw[pos:]...)
			rc.message = raw[pos+1:]
			rc.hasBody = true
			break
		}
		end := bytes.IndexByte(raw[pos:], '\n')
		if end < 0 {
			return nil, fmt.Errorf("commit header %.40q does not end in a newline: %w", raw[pos:], ErrMalformed)
		}
		end += pos
		line := raw[pos:end]
		next := end + 1
		if line[0] == ' ' {
			// continuation of a header that is not a signature (mergetag, ...)
			bad("unexpected continuation line in the header")
			signed = append(signed, raw[pos:next]...)
			pos = next
			continue
		}
		key, val, _ := bytes.Cut(line, []byte{' '})
		switch string(key) {
		case "gpgsig", "gpgsig-sha256":
			first := string(key) == "gpgsig"
			if first {
				rc.sigs++
			}
			if !first {
				bad("unexpected header %q", key)
			} else if state == 3 {
				state = 4
			} else if state != 4 { // a second gpgsig is Verify's to refuse
				bad("gpgsig header out of place")
			}
			collect := first && rc.sigs == 1
			if collect {
				rc.sig = append(append(rc.sig, val...), '\n')
			}
			for next < len(raw) && raw[next] == ' ' {
				e := bytes.IndexByte(raw[next:], '\n')
				if e < 0 {
					return nil, fmt.Errorf("signature header does not end in a newline: %w", ErrMalformed)
				}
				e += next
				if collect {
					rc.sig = append(append(rc.sig, raw[next+1:e]...), '\n')
				}
				next = e + 1
			}
			pos = next
			continue
		case "tree":
			if state != 0 {
				bad("tree header out of place")
			}
			state = 1
			h, ok := parseHex(val)
			if !ok {
				return nil, fmt.Errorf("commit tree %.50q is not an object id: %w", val, ErrMalformed)
			}
			rc.tree = h
		case "parent":
			if state != 1 {
				bad("parent header out of place")
			}
			h, ok := parseHex(val)
			if !ok {
				return nil, fmt.Errorf("commit parent %.50q is not an object id: %w", val, ErrMalformed)
			}
			rc.parents = append(rc.parents, h)
		case "author":
			if state != 1 {
				bad("author header out of place")
			}
			state = 2
			rc.author = val
		case "committer":
			if state != 2 {
				bad("committer header out of place")
			}
			state = 3
			rc.committer = val
		default:
			bad("unexpected header %.40q", key)
		}
		signed = append(signed, raw[pos:next]...)
		pos = next
	}
	if state < 3 {
		bad("tree, author or committer header missing")
	}
	rc.signed = signed
	return rc, nil
}

func parseHex(b []byte) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(b) != 2*len(h) {
		return h, false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return h, false // git writes lower-case hex only
		}
	}
	if _, err := hex.Decode(h[:], b); err != nil {
		return h, false
	}
	return h, true
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
func Verify(raw []byte) (ssh.PublicKey, error) {
	rc, err := parseCommit(raw)
	if err != nil {
		return nil, err
	}
	return verifyParsed(rc)
}

func verifyParsed(rc *rawCommit) (ssh.PublicKey, error) {
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
	block, rest := pem.Decode(rc.sig)
	if block == nil || block.Type != sshsig.PEMType || len(block.Headers) != 0 {
		return nil, fmt.Errorf("commit signature is not a well-formed SSH signature block: %w", ErrBadSignature)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("commit signature holds more than one block, want exactly one: %w", ErrBadSignature)
	}
	sig, err := sshsig.ParseSignature(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("commit signature does not parse as SSHSIG: %v: %w", err, ErrBadSignature)
	}
	if sig.Namespace != SigNamespace {
		return nil, fmt.Errorf("commit signature is in namespace %q, want %q: %w", sig.Namespace, SigNamespace, ErrBadSignature)
	}
	if err := sig.HashAlgorithm.Available(); err != nil {
		return nil, fmt.Errorf("commit signature: %v: %w", err, ErrBadSignature)
	}
	if err := sshsig.Verify(bytes.NewReader(rc.signed), sig, sig.PublicKey, sig.HashAlgorithm, SigNamespace); err != nil {
		return nil, fmt.Errorf("commit signature by %s key %s does not verify: %v: %w",
			sig.PublicKey.Type(), ssh.FingerprintSHA256(sig.PublicKey), err, ErrBadSignature)
	}
	return sig.PublicKey, nil
}
