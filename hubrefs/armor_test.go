package hubrefs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// TestArmorSignatureIsSSHKeygens: for keys of every kind, ssh-keygen -Y
// sign's file is byte for byte ArmorSignature of its blob, and
// CanonicalSignature accepts it.
func TestArmorSignatureIsSSHKeygens(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("no ssh-keygen")
	}
	dir := t.TempDir()
	msg := filepath.Join(dir, "msg")
	if err := os.WriteFile(msg, []byte("certificate version 0.1\npusher x\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for name, priv := range map[string]any{"rsa": rsaKey, "ecdsa": ecKey, "ed25519": edKey} {
		block, err := ssh.MarshalPrivateKey(priv, "")
		if err != nil {
			t.Fatal(err)
		}
		keyFile := filepath.Join(dir, name)
		if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Remove(msg + ".sig")
		if out, err := exec.Command(keygen, "-Y", "sign", "-n", "git", "-f", keyFile, msg).CombinedOutput(); err != nil {
			t.Fatalf("%s: ssh-keygen: %v\n%s", name, err, out)
		}
		armored, err := os.ReadFile(msg + ".sig")
		if err != nil {
			t.Fatal(err)
		}
		blob, err := CanonicalSignature(armored)
		if err != nil {
			t.Fatalf("%s: ssh-keygen's armor refused: %v\n%s", name, err, armored)
		}
		if got := ArmorSignature(blob); !bytes.Equal(got, armored) {
			t.Fatalf("%s: ArmorSignature\n%s\nssh-keygen\n%s", name, got, armored)
		}
	}
}

// TestCanonicalSignature: every other layout of the same blob is refused.
func TestCanonicalSignature(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := sshsig.Sign(strings.NewReader("m"), signer, sshsig.HashSHA512, "git")
	if err != nil {
		t.Fatal(err)
	}
	blob := sig.Marshal()
	good := ArmorSignature(blob)
	if got, err := CanonicalSignature(good); err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("canonical armor: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(good), "\n"), "\n")
	inner := strings.Join(lines[1:len(lines)-1], "")
	wrap := func(n int) string {
		var b strings.Builder
		b.WriteString(lines[0] + "\n")
		for s := inner; len(s) > 0; {
			k := min(n, len(s))
			b.WriteString(s[:k] + "\n")
			s = s[k:]
		}
		return b.String() + lines[len(lines)-1] + "\n"
	}
	if wrap(70) != string(good) {
		t.Fatal("the test's wrapping is not ArmorSignature's")
	}
	for name, armored := range map[string]string{
		"whitespace line after END": string(good) + " \n",
		"newline after END":         string(good) + "\n",
		"no newline after END":      strings.TrimSuffix(string(good), "\n"),
		"wrapped at 64 (PEM)":       string(sshsig.Armor(sig)),
		"wrapped at 64":             wrap(64),
		"wrapped at 76":             wrap(76),
		"one line":                  wrap(1 << 20),
		"blank line inside":         strings.Replace(string(good), "\n", "\n\n", 2),
		"space at line end":         strings.Replace(string(good), lines[1], lines[1]+" ", 1),
		"CR line ends":              strings.ReplaceAll(string(good), "\n", "\r\n"),
		"header":                    strings.Replace(string(good), "\n", "\nComment: x\n\n", 1),
		"two blocks":                string(good) + string(good),
		"PGP":                       "-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----\n",
		"no END":                    lines[0] + "\n" + lines[1] + "\n",
		"empty":                     lines[0] + "\n" + lines[len(lines)-1] + "\n",
		"no padding":                strings.Replace(string(good), "=\n-----END", "\n-----END", 1),
	} {
		if armored == string(good) {
			t.Fatalf("%s: the case is the canonical armor", name)
		}
		if _, err := CanonicalSignature([]byte(armored)); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: %v, want ErrBadSignature", name, err)
		}
	}
}

// FuzzCanonicalSignature: what is accepted is exactly the armor of what it
// returns.
func FuzzCanonicalSignature(f *testing.F) {
	f.Add([]byte(sigBegin + "AAAA\n" + sigEnd))
	f.Add(ArmorSignature(bytes.Repeat([]byte{7}, 105)))
	f.Fuzz(func(t *testing.T, armored []byte) {
		blob, err := CanonicalSignature(armored)
		if err != nil {
			return
		}
		if !bytes.Equal(ArmorSignature(blob), armored) {
			t.Fatalf("accepted %q, which is not the armor of its blob", armored)
		}
	})
}
