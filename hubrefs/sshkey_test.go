package hubrefs

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/fixtures"
)

func TestAuthorizedKeyRoundTrip(t *testing.T) {
	is := is.New(t)
	k := genKey(t, "ecdsa")
	line := AuthorizedKey(k.signer.PublicKey())
	is.True(!strings.HasSuffix(line, "\n"))
	pub, err := ParseAuthorizedKey(line + " alice@laptop")
	is.NoErr(err)
	is.True(SameKey(pub, k.signer.PublicKey()))
	is.True(!SameKey(pub, genKey(t, "ecdsa").signer.PublicKey()))
	is.True(!SameKey(pub, nil))
	_, err = ParseAuthorizedKey("ssh-ed25519 notbase64")
	is.True(errors.Is(err, ErrKey))
}

// xKeys are keys of every supported type, as x/crypto signers.
func xKeys(t testing.TB) []ssh.Signer {
	t.Helper()
	var out []ssh.Signer
	for _, kind := range fixtures.KeyKinds {
		out = append(out, fixtures.NewKeyOf(t, t.TempDir(), kind, kind).Signer)
	}
	return out
}

// TestKeysAgreeWithXCrypto: parsing, re-encoding, fingerprints and
// signature verification agree with golang.org/x/crypto/ssh on valid and
// damaged signatures of every supported key type.
func TestKeysAgreeWithXCrypto(t *testing.T) {
	for _, s := range xKeys(t) {
		xpub := s.PublicKey()
		t.Run(xpub.Type(), func(t *testing.T) {
			is := is.New(t)
			pub, err := ParsePublicKey(xpub.Marshal())
			is.NoErr(err)
			is.Equal(pub.Type(), xpub.Type())
			is.Equal(pub.Marshal(), xpub.Marshal())
			is.Equal(Fingerprint(pub), ssh.FingerprintSHA256(xpub))
			is.Equal(AuthorizedKey(pub)+"\n", string(ssh.MarshalAuthorizedKey(xpub)))
			k := pub.(*sshKey)

			_, err = ParsePublicKey(append(xpub.Marshal(), 0))
			is.True(err != nil) // trailing junk

			algos := []string{xpub.Type()}
			if xpub.Type() == ssh.KeyAlgoRSA {
				algos = []string{ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSASHA512}
			}
			for _, algo := range algos {
				data := []byte("the signed data of an event " + algo)
				var sig *ssh.Signature
				if as, ok := s.(ssh.AlgorithmSigner); ok && xpub.Type() == ssh.KeyAlgoRSA {
					sig, err = as.SignWithAlgorithm(rand.Reader, data, algo)
				} else {
					sig, err = s.Sign(rand.Reader, data)
				}
				is.NoErr(err)
				check := func(what string, data []byte, sig *ssh.Signature) {
					t.Helper()
					want := xpub.Verify(data, sig)
					got := k.verify(data, sig.Format, sig.Blob)
					if (want == nil) != (got == nil) {
						t.Fatalf("%s %s: x/crypto says %v, ours %v", algo, what, want, got)
					}
				}
				check("valid", data, sig)
				is.NoErr(k.verify(data, sig.Format, sig.Blob))
				check("other data", append(data, '!'), sig)
				for _, i := range []int{0, len(sig.Blob) / 2, len(sig.Blob) - 1} {
					bad := *sig
					bad.Blob = bytes.Clone(sig.Blob)
					bad.Blob[i] ^= 0x40
					check(fmt.Sprintf("bit flipped at %d", i), data, &bad)
				}
				short := *sig
				short.Blob = sig.Blob[:len(sig.Blob)-1]
				check("truncated", data, &short)
				other := *sig
				other.Format = ssh.KeyAlgoED25519
				if xpub.Type() == ssh.KeyAlgoED25519 {
					other.Format = ssh.KeyAlgoRSASHA256
				}
				check("wrong format", data, &other)
				if xpub.Type() == ssh.KeyAlgoRSA {
					// a signature with a leading zero byte dropped is padded by both
					found := false
					for tries := 0; tries < 4096 && !found; tries++ {
						d := []byte(fmt.Sprintf("%s %d", data, tries))
						sg, err := s.(ssh.AlgorithmSigner).SignWithAlgorithm(rand.Reader, d, algo)
						is.NoErr(err)
						if sg.Blob[0] == 0 {
							sg.Blob = sg.Blob[1:]
							check("short rsa signature", d, sg)
							is.NoErr(k.verify(d, sg.Format, sg.Blob))
							found = true
						}
					}
					is.True(found) // a signature starting with a zero byte (1 in 256)
				}
			}
		})
	}
}

// FuzzParsePublicKey: a wire form we accept, x/crypto accepts as the same
// key; one x/crypto accepts of a supported type, we accept (but for RSA
// moduli x/crypto takes as negative numbers, which no key has).
func FuzzParsePublicKey(f *testing.F) {
	for _, s := range xKeys(f) {
		f.Add(s.PublicKey().Marshal())
	}
	f.Fuzz(func(t *testing.T, wire []byte) {
		ours, err := ParsePublicKey(wire)
		theirs, xerr := ssh.ParsePublicKey(wire)
		if err == nil {
			if xerr != nil {
				t.Fatalf("we accept a key x/crypto refuses (%v)", xerr)
			}
			if !bytes.Equal(ours.Marshal(), theirs.Marshal()) || ours.Type() != theirs.Type() {
				t.Fatalf("the same wire form parses to different keys")
			}
			return
		}
		if xerr != nil {
			return
		}
		switch theirs.Type() {
		case ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521:
		case ssh.KeyAlgoRSA:
			if ck, ok := theirs.(ssh.CryptoPublicKey); ok {
				if rk, ok := ck.CryptoPublicKey().(*rsa.PublicKey); ok && rk.N.Sign() <= 0 {
					return
				}
			}
		default:
			return // a type git+ does not take
		}
		t.Fatalf("x/crypto accepts a %s key we refuse: %v", theirs.Type(), err)
	})
}

// FuzzVerifySignature: any key, format and signature blob give an answer,
// never a panic, and the same answer as x/crypto for the keys it parses
// too.
func FuzzVerifySignature(f *testing.F) {
	for _, s := range xKeys(f) {
		data := []byte("data")
		sig, err := s.Sign(rand.Reader, data)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(s.PublicKey().Marshal(), sig.Format, sig.Blob, data)
	}
	f.Fuzz(func(t *testing.T, wire []byte, format string, blob, data []byte) {
		k, err := parseKey(wire)
		if err != nil {
			return
		}
		got := k.verify(data, format, blob)
		xk, err := ssh.ParsePublicKey(wire)
		if err != nil {
			t.Fatalf("we parse a %s key x/crypto refuses: %v", k.typ, err)
		}
		if k.typ == KeyRSA && format != SigRSASHA256 && format != SigRSASHA512 {
			return // SHA-1 ssh-rsa signatures: refused here by design, accepted by x/crypto
		}
		want := xk.Verify(data, &ssh.Signature{Format: format, Blob: blob})
		if (got == nil) != (want == nil) {
			t.Fatalf("%s %q: ours %v, x/crypto %v", k.typ, format, got, want)
		}
	})
}
