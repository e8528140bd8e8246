package hubrefs

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// TestVerifyDetached: a signature made by hiddeco/sshsig (an independent
// implementation of PROTOCOL.sshsig) verifies; a changed message, another
// namespace or a damaged block does not.
func TestVerifyDetached(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("certificate version 0.1\npusher x\n\n0000 1111 refs/heads/main\n")
	sign := func(ns string, h sshsig.HashAlgorithm) []byte {
		s, err := sshsig.Sign(bytes.NewReader(msg), signer, h, ns)
		if err != nil {
			t.Fatal(err)
		}
		return sshsig.Armor(s)
	}
	for _, h := range []sshsig.HashAlgorithm{sshsig.HashSHA256, sshsig.HashSHA512} {
		pub, err := VerifyDetached(msg, sign("git", h))
		if err != nil || !SameKey(pub, signer.PublicKey()) {
			t.Fatalf("%s: %v", h, err)
		}
	}
	good := sign("git", sshsig.HashSHA512)
	for name, c := range map[string]struct{ msg, sig []byte }{
		"changed message": {append([]byte("x"), msg...), good},
		"other namespace": {msg, sign("file", sshsig.HashSHA512)},
		"not armored":     {msg, []byte("-----BEGIN PGP SIGNATURE-----\n")},
		"two blocks":      {msg, append(append([]byte{}, good...), good...)},
		"truncated":       {msg, good[:len(good)/2]},
	} {
		if _, err := VerifyDetached(c.msg, c.sig); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: %v, want ErrBadSignature", name, err)
		}
	}
}

func FuzzVerifyDetached(f *testing.F) {
	f.Add([]byte("m"), []byte(sigBegin+"AAAA\n-----END SSH SIGNATURE-----\n"))
	f.Fuzz(func(t *testing.T, msg, sig []byte) {
		if pub, err := VerifyDetached(msg, sig); err == nil && pub == nil {
			t.Fatal("no error and no key")
		}
	})
}
